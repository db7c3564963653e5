"""
What the system retrieves: images for captions, captions for an image
=====================================================================

Recall figures say how often the gold item comes first; looking at what a system ranks
above it says why.  This example fits the KCCA system on the synthetic data, then shows the
top five images it retrieves for a few test captions (image search) and the top five
captions it retrieves for a test image (image annotation), the gold item framed in green.

The synthetic images are arrays (``data.images.load(i)`` gives an RGB ``uint8`` array), so
they are shown with :func:`matplotlib.pyplot.imshow`; images read from files work the same
way.
"""

# %%
# Fit and score
# -------------
# ``ranker.score(images, captions)`` scores every test image against every test caption:
# ``scores.search[:, j]`` ranks the images for caption ``j``, ``scores.annotation[i]`` the
# captions for image ``i`` (the two can differ when the system fuses different models per
# task).  One (n, κ) setting and small codebooks keep the example fast.
import textwrap

import matplotlib.pyplot as plt
import numpy as np

from kcca_desc import ImageSentenceRanker, load_dataset
from kcca_desc.evaluate import gold_ranks

data = load_dataset("synthetic", seed=0, n_images=250, image_size=64)
train, test = data.subset("train"), data.view("test", "hodosh")
ranker = ImageSentenceRanker(text_kernel="bow5", n_components=(16,), regs=(1.0,), cache=False,
                             image_kernel_params={"levels": 1, "n_words": {"colour": 32, "texture": 32, "sift": 32}})
scores = ranker.fit(train).score(test.images, test.captions)
top = 5

# %%
# :func:`~kcca_desc.evaluate.gold_ranks` gives the rank of each query's gold item (a search
# query is a column of ``scores.search``, hence the transpose).  The queries shown below are
# chosen from them: two captions whose image comes first, one whose image is not in the top
# five, and an image whose gold caption comes second to fifth.
search_ranks = gold_ranks(scores.search.T, test.search_gold)
annotation_ranks = gold_ranks(scores.annotation, test.annotation_gold)
queries = [int(j) for j in (*np.flatnonzero(search_ranks == 1)[:2], np.flatnonzero(search_ranks > top)[0])]
image = int(np.flatnonzero((annotation_ranks > 1) & (annotation_ranks <= top))[0])
print("caption queries shown:", queries, "their gold ranks:", search_ranks[queries])
print("image query shown:", image, "its gold rank:", annotation_ranks[image])

# %%
# Images retrieved for captions
# -----------------------------
# Each row is a query caption (its image in the pool is ``test.caption_image[j]``) and the
# five images with the highest scores, best first.
fig, axes = plt.subplots(len(queries), top + 1, figsize=(10, 2 * len(queries)),
                         gridspec_kw={"width_ratios": [2.2] + [1] * top})
for row, j in zip(axes, queries):
    ranked = np.argsort(-scores.search[:, j], kind="stable")[:top]
    row[0].text(0, 0.5, "\n".join(textwrap.wrap(test.captions[j], 28)), va="center", fontsize=9)
    for position, (ax, i) in enumerate(zip(row[1:], ranked), start=1):
        ax.imshow(test.images.load(int(i)))
        ax.set_title(f"#{position}", fontsize=9)
        if i == test.caption_image[j]:
            for spine in ax.spines.values():
                spine.set(color="green", linewidth=4)
    for ax in row:
        ax.set_xticks([])
        ax.set_yticks([])
    row[0].axis("off")
fig.suptitle("image search: the top 5 test images for each caption (gold framed in green)")
fig.tight_layout()
plt.show()

# %%
# Captions retrieved for an image
# -------------------------------
# The same scores read the other way: a row of ``scores.annotation`` ranks every test
# caption for one image.
ranked = np.argsort(-scores.annotation[image], kind="stable")[:top]
fig, (picture, listing) = plt.subplots(1, 2, figsize=(10, 2.8), gridspec_kw={"width_ratios": [1, 3.5]})
picture.imshow(test.images.load(image))
picture.set_title(test.images.ids[image], fontsize=9)
picture.axis("off")
for position, j in enumerate(ranked):
    gold = test.caption_image[j] == image
    listing.text(0, 1 - (position + 0.5) / top, f"#{position + 1}  {textwrap.shorten(test.captions[j], 90)}", va="center",
                 fontsize=9, color="green" if gold else "black", weight="bold" if gold else "normal")
    print(f"#{position + 1}{' (gold)' if gold else ''}: {test.captions[j]}")
listing.axis("off")
listing.set_title("image annotation: the top 5 test captions (gold in green)", fontsize=10)
fig.tight_layout()
plt.show()
