"""
Recall at every K: the rank distribution of two systems
=======================================================

R@1, R@5 and R@10 are three points of one curve: the share of queries whose gold item is
ranked K or better, for every K, which is the cumulative distribution of the gold ranks.
Plotting the whole curve shows where two systems differ (at the top of the ranking or in
its tail) and how far both are from chance, whose recall at K is K / n on a pool of n
candidates.

This example compares two image kernels in the same KCCA system: the spatial pyramid over
colour, texture and SIFT words (``pyramid``) and a global colour histogram
(``colour_histo``).
"""

# %%
# Fit both systems
# ----------------
# One (n, κ) setting, which needs no dev set; the pyramid has small codebooks and one level
# so that the example runs in seconds.
import matplotlib.pyplot as plt
import numpy as np

from kcca_desc import ImageSentenceRanker, evaluate_fitted, format_table, load_dataset
from kcca_desc.evaluate import retrieval_metrics

data = load_dataset("synthetic", seed=0, n_images=250, image_size=64, split_fractions=(0.6, 0.0, 0.4))
train, test = data.subset("train"), data.view("test", "hodosh")
systems = {
    "pyramid": {"levels": 1, "n_words": {"colour": 32, "texture": 32, "sift": 32}},
    "colour_histo": {"n_words": {"colour": 32}},
}
results = [
    evaluate_fitted(ImageSentenceRanker(image_kernel=kind, image_kernel_params=params, text_kernel="bow5",
                                        n_components=(16,), regs=(1.0,), cache=False).fit(train), test)
    for kind, params in systems.items()
]
print(format_table(results))

# %%
# Recall at every K
# -----------------
# :func:`~kcca_desc.evaluate.retrieval_metrics` computes R@K for any cut-offs from the gold
# ranks kept in ``result.ranks``.
n = test.n_images
ks = np.arange(1, n + 1)
fig, axes = plt.subplots(1, 2, figsize=(9, 3.8), sharey=True)
for ax, task in zip(axes, ("annotation", "search")):
    for result in results:
        metrics = retrieval_metrics(result.ranks[task], ks=ks)
        ax.step(ks, [metrics[f"R@{k}"] for k in ks], where="post", label=result.system)
    ax.plot(ks, 100 * ks / n, color="grey", ls=":", label="chance")
    # The median rank is where the curve crosses 50%.
    ax.axhline(50, color="grey", lw=0.5)
    ax.set_xscale("log")
    ax.set_xlabel("K (log scale)")
    ax.set_title(f"{task}: {n} queries, {n} candidates each")
axes[0].set_ylabel("R@K (%)")
axes[0].legend(loc="upper left", fontsize=8)
fig.tight_layout()
plt.show()
