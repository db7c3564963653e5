"""
Is one system better than another? A paired comparison
======================================================

Two systems evaluated on the same queries should be compared query by query: the per-query
outcomes of one system are correlated with those of the other (an easy query is easy for
both), and a paired test uses that.  Hodosh, Young & Hockenmaier (2013, Sections 4.2.1 and
4.3.1) test recall at K with McNemar's test on the queries where exactly one system succeeds,
and rank statistics with Fisher's paired randomisation test.

This example compares the KCCA system (:class:`~kcca_desc.ImageSentenceRanker`) with the
paper's nearest-neighbour baseline (:class:`~kcca_desc.NearestNeighbour`, Section 3.1: rank
captions by their similarity to the captions of the image's nearest training images) on the
same test queries, with the tests of :mod:`kcca_desc.evaluate` and a bootstrap interval of
each difference.
"""

# %%
# Two systems, one pool of queries
# --------------------------------
# A larger test split than the other examples (100 queries per task) gives the tests some
# power.  The KCCA system uses one (n, κ) setting, which needs no dev set; both systems use
# small image codebooks and a one-level pyramid, so that the example runs in seconds.
import matplotlib.pyplot as plt
import numpy as np

from kcca_desc import ImageSentenceRanker, NearestNeighbour, evaluate_fitted, format_table, load_dataset
from kcca_desc.evaluate import bootstrap_ci, mcnemar_test, paired_randomization_test

data = load_dataset("synthetic", seed=0, n_images=250, image_size=64, split_fractions=(0.6, 0.0, 0.4))
train, test = data.subset("train"), data.view("test", "hodosh")
image_kernel_params = {"levels": 1, "n_words": {"colour": 32, "texture": 32, "sift": 32}}
kcca = ImageSentenceRanker(text_kernel="bow5", n_components=(16,), regs=(1.0,),
                           image_kernel_params=image_kernel_params, cache=False).fit(train)
nn = NearestNeighbour(image_kernel_params=image_kernel_params, cache=False).fit(train)
ours, baseline = evaluate_fitted(kcca, test), evaluate_fitted(nn, test)
print(format_table([ours, baseline]))

# %%
# Paired tests
# ------------
# ``result.ranks[task]`` holds the rank of the gold item of every query, in the same query
# order for both systems.  A hit at K is ``rank <= K``.  The interval of a difference is a
# percentile bootstrap over queries of the per-query difference, so it is paired too.
rows = []
for task in ("annotation", "search"):
    a, b = ours.ranks[task], baseline.ranks[task]
    for k in (1, 5, 10):
        hits_a, hits_b = a <= k, b <= k
        difference = 100 * (hits_a.astype(float) - hits_b)
        low, high = bootstrap_ci(difference, seed=0)
        rows.append((f"{task} R@{k}", difference.mean(), low, high, mcnemar_test(hits_a, hits_b).pvalue))
    # Mean rank: lower is better, so the difference is taken the other way round: positive
    # means that the KCCA system ranks the gold item higher.
    randomisation = paired_randomization_test(b, a, statistic="mean", seed=0)
    low, high = bootstrap_ci(b.astype(float) - a, seed=0)
    rows.append((f"{task} mean rank", randomisation.difference, low, high, randomisation.pvalue))

for name, difference, low, high, p in rows:
    print(f"{name:<22} KCCA - NN = {difference:+6.1f}  95% CI [{low:+6.1f}, {high:+6.1f}]  p = {p:.2g}")

# %%
# Plot
# ----
# Each row is one metric: the difference in favour of the KCCA system (recall points, or
# ranks gained) with its interval and its p-value (red below 0.05).  An interval that crosses
# zero and a large p say the same thing: on 100 queries that difference could be chance.
fig, ax = plt.subplots(figsize=(7, 4))
y = np.arange(len(rows))[::-1]
for yi, (name, difference, low, high, p) in zip(y, rows):
    ax.errorbar(difference, yi, xerr=[[difference - low], [high - difference]], fmt="o", capsize=4,
                color="C3" if p < 0.05 else "C0")
    ax.annotate(f"p = {p:.2g}", (high, yi), xytext=(6, -3), textcoords="offset points", fontsize=8)
ax.axvline(0, color="grey", lw=1)
ax.margins(x=0.15)  # room for the p-values
ax.set_yticks(y, [row[0] for row in rows])
ax.set_xlabel("difference in favour of KCCA (R@K: points; mean rank: ranks)")
ax.set_title("KCCA vs nearest neighbour, paired over the same test queries")
fig.tight_layout()
plt.show()
