"""
Choosing the KCCA models on a dev set
=====================================

Kernel CCA has two settings that the data must choose: the number of canonical dimensions
``n`` the items are projected onto, and the regulariser κ.  Hodosh, Young & Hockenmaier
(2013, Section 4.1.3) score every (n, κ) of a grid on a dev set, keep for each task the five
settings with the best R@1, the five best by R@5 and the five best by R@10, and fuse the 15
rankings by Borda count.  :class:`~kcca_desc.ImageSentenceRanker` does this when ``fit`` is
given a dev view; its ``dev_results_`` hold the dev figures of the whole grid and
``selected_`` the settings it fuses.

This example draws the dev grid as a heat map and marks the selected settings.  One
decomposition serves the whole grid: each κ costs one small eigensolve, each n none.
"""

# %%
# Fit with a grid and a dev set
# -----------------------------
# A 4 × 4 grid, with two settings kept per metric (``n_select=2``, six per task, instead of
# the paper's five); small image codebooks and a one-level pyramid keep the example fast.
import matplotlib.pyplot as plt
import numpy as np

from kcca_desc import ImageSentenceRanker, load_dataset

data = load_dataset("synthetic", seed=0, n_images=250, image_size=64)
n_components, regs = (4, 8, 16, 32), (0.01, 0.1, 1.0, 10.0)
ranker = ImageSentenceRanker(
    text_kernel="bow5", n_components=n_components, regs=regs, n_select=2, cache=False,
    image_kernel_params={"levels": 1, "n_words": {"colour": 32, "texture": 32, "sift": 32}},
)
ranker.fit(data.subset("train"), dev=data.view("dev", "hodosh"))
for task in ("annotation", "search"):
    print(f"{task}: fused settings (n, κ) {sorted(set(ranker.selected_[task]))}")

# %%
# The dev grid
# ------------
# Each cell is the dev R@5 of one (n, κ) setting; a dot marks a setting the ranker fuses for
# that task (a setting chosen by more than one metric counts once here).
fig, axes = plt.subplots(1, 2, figsize=(9, 4), sharey=True, layout="constrained")
for ax, task in zip(axes, ("annotation", "search")):
    grid = np.full((len(regs), len(n_components)), np.nan)
    for row in ranker.dev_results_:
        grid[regs.index(row["reg"]), n_components.index(row["n_components"])] = row[task]["R@5"]
    image = ax.imshow(grid, origin="lower", cmap="viridis")
    for n, reg in set(ranker.selected_[task]):
        ax.plot(n_components.index(n), regs.index(reg), "o", color="white", markeredgecolor="black")
    ax.set_xticks(range(len(n_components)), n_components)
    ax.set_yticks(range(len(regs)), regs)
    ax.set_xlabel("n (canonical dimensions)")
    ax.set_title(f"{task}: dev R@5 (%)")
    fig.colorbar(image, ax=ax, shrink=0.8)
axes[0].set_ylabel("κ (regulariser)")
plt.show()
