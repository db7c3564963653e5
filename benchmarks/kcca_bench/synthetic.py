"""Inputs of the benchmarks that need no download: topic-structured kernels and a tiny data set."""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from kcca_desc.data import Dataset, load_dataset, make_synthetic
from kcca_desc.kcca import kernel_power, scale_diagonal
from kcca_desc.kernels.image.intersection import histogram_intersection

__all__ = ["QUICK_N_IMAGES", "QUICK_WORDS", "quick_dataset", "flickr8k_or_quick", "synthetic_items",
           "synthetic_image_kernel", "synthetic_text_kernel"]

#: Images of the synthetic data set of ``--quick`` runs (30 train, 10 dev, 10 test). Every quick
#: run uses the same one, so the image features one computes are cached for the others.
QUICK_N_IMAGES = 50

#: Query words of the neighbour benchmarks in quick runs: shapes of the quick data set's captions,
#: which name them by synonyms too (square / block / box, circle / disc / ball).
QUICK_WORDS = ("square", "circle")

_N_TOPICS = 60
_VISUAL_WORDS = 300
_VOCABULARY = 3000


def quick_dataset(n_images: int = QUICK_N_IMAGES) -> Dataset:
    """The small synthetic data set that ``--quick`` runs use in place of Flickr8K (seed 0).

    Image ``i`` depends only on the seed and ``i``, so a smaller one is the start of the default one.
    """
    return make_synthetic(n_images=n_images, seed=0)


def flickr8k_or_quick(root: str | os.PathLike | None, quick: bool) -> Dataset:
    """Flickr8K from ``root`` (None: ``$KCCA_DESC_FLICKR8K``), or :func:`quick_dataset` when ``quick``."""
    return quick_dataset() if quick else load_dataset("flickr8k", root=root)


def synthetic_items(n_images: int, captions_per_image: int, seed: int = 0) -> tuple[np.ndarray, sp.csr_matrix]:
    """Image histograms and caption bags of words that share latent topics.

    Each image draws one of 60 topics. Its histogram over 300 visual words is the normalised
    count of 120 draws from an even mixture of the topic's visual-word distribution
    (Dirichlet(0.05)) and a background distribution; each of its captions is 10 words drawn from
    the topic's distribution over 3,000 words (Dirichlet(0.02)), as an L2-normalised bag of words.
    The two views thus share real structure, as images and captions do, which a KCCA benchmark
    needs for its correlations to mean anything.

    Parameters
    ----------
    n_images : int
    captions_per_image : int
        Caption ``j`` belongs to image ``j // captions_per_image``.
    seed : int, default=0

    Returns
    -------
    histograms : ndarray of shape (n_images, 300)
    bow : csr_matrix of shape (n_images * captions_per_image, 3000)
    """
    rng = np.random.default_rng(seed)
    topics = rng.integers(_N_TOPICS, size=n_images)
    visual_topics = rng.dirichlet(np.full(_VISUAL_WORDS, 0.05), size=_N_TOPICS)
    word_topics = rng.dirichlet(np.full(_VOCABULARY, 0.02), size=_N_TOPICS)
    background = rng.dirichlet(np.ones(_VISUAL_WORDS))
    histograms = np.empty((n_images, _VISUAL_WORDS))
    for i, t in enumerate(topics):
        counts = rng.multinomial(120, 0.5 * visual_topics[t] + 0.5 * background)
        histograms[i] = counts / counts.sum()
    rows, cols = [], []
    for item in range(n_images * captions_per_image):
        words = rng.choice(_VOCABULARY, size=10, p=word_topics[topics[item // captions_per_image]])
        rows.extend([item] * len(words))
        cols.extend(words)
    bow = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_images * captions_per_image, _VOCABULARY))
    norms = np.sqrt(np.asarray(bow.multiply(bow).sum(axis=1))).ravel()
    bow = sp.diags(1.0 / norms) @ bow
    return histograms, bow.tocsr()


def synthetic_image_kernel(histograms: np.ndarray) -> np.ndarray:
    """Pyramid-like image kernel: histogram intersection raised to the power p = 2."""
    return kernel_power(histogram_intersection(histograms, dtype=np.float64), 2)


def synthetic_text_kernel(bow: sp.csr_matrix) -> np.ndarray:
    """Text-like kernel: cosine of the bags of words, diagonal multiplied by d = 2."""
    return scale_diagonal((bow @ bow.T).toarray(), 2.0)
