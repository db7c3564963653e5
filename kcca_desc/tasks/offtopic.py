"""Off-topic response detection (Rei 2017, visual prompts).

Every (image, text) pair of a data split is an on-topic example; pairing each
text with a seeded random *other* image gives an off-topic example.  A method
scores a multi-sentence text against an image as the mean of its sentences'
affinities.  Off-topic is the class to detect, so the ranking score is the
negated affinity.  Reported: average precision and P@50 for the off-topic
class, and accuracy of a leave-one-out optimised threshold, each with a
bootstrap interval over the pairs (:func:`~kcca_desc.tasks.intervals.off_topic_intervals`).

References
----------
Rei, M. (2017). Detecting off-topic responses to visual prompts. Proceedings of the 12th
Workshop on Innovative Use of NLP for Building Educational Applications (BEA), 188–197.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .._core.errors import DataError
from ..data.images import ImageSource
from ..evaluate.scores import DirectionalScores, Scorer
from ..evaluate.statistics import CONFIDENCE, N_RESAMPLES
from .intervals import off_topic_intervals
from .metrics import average_precision, leave_one_out_threshold_accuracy, precision_at_k

__all__ = ["off_topic_pairs", "mean_sentence_scores", "off_topic_metrics", "evaluate_off_topic"]


def off_topic_pairs(n_items: int, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Image index, text index and off-topic label of every evaluation pair.

    Pair k < n is (k, k, on-topic); pair n + k is (π_k, k, off-topic), π_k a
    seeded uniformly random image other than k.

    Parameters
    ----------
    n_items : int
        The number n of image–text items, at least 2.
    seed : int, default=0
        Seed of the off-topic images π.

    Returns
    -------
    images, texts, labels : ndarray of int of shape (2 n,)
        The image and text index of each pair, and its label (1: off-topic).

    Raises
    ------
    DataError
        If ``n_items`` is below 2.
    """
    if n_items < 2:
        raise DataError(f"off-topic detection needs at least 2 items, got {n_items}")
    rng = np.random.default_rng(seed)
    shift = rng.integers(1, n_items, size=n_items)  # never 0: never the text's own image
    items = np.arange(n_items)
    images = np.concatenate([items, (items + shift) % n_items])
    texts = np.concatenate([items, items])
    labels = np.concatenate([np.zeros(n_items, int), np.ones(n_items, int)])
    return images, texts, labels


def mean_sentence_scores(sentence_scores: np.ndarray, sentence_text: np.ndarray, n_texts: int) -> np.ndarray:
    """Average the columns of an (images × sentences) matrix per text: (images × texts)."""
    sentence_text = np.asarray(sentence_text)
    counts = np.bincount(sentence_text, minlength=n_texts)
    if np.any(counts == 0):
        raise DataError(f"text {int(np.flatnonzero(counts == 0)[0])} has no sentence")
    totals = np.zeros((sentence_scores.shape[0], n_texts))
    np.add.at(totals.T, sentence_text, sentence_scores.T)
    return totals / counts


def off_topic_metrics(affinity: np.ndarray, labels: np.ndarray, *, k: int = 50, n_resamples: int = N_RESAMPLES,
                      confidence: float = CONFIDENCE, seed: int = 0) -> dict:
    """AP, P@k and leave-one-out threshold accuracy for the off-topic class.

    Besides the figures, ``"ci"`` holds their bootstrap intervals (pairs resampled, on- and
    off-topic apart) and ``"ci_settings"`` the bootstrap's settings, as in a retrieval result.
    """
    off_topic_score = -np.asarray(affinity, dtype=np.float64)
    return {
        "AP": 100 * average_precision(off_topic_score, labels),
        f"P@{k}": 100 * precision_at_k(off_topic_score, labels, k),
        "accuracy": 100 * leave_one_out_threshold_accuracy(off_topic_score, labels),
        "n_pairs": int(len(labels)),
        **off_topic_intervals(off_topic_score, labels, k=k, n_resamples=n_resamples, confidence=confidence,
                              seed=seed),
    }


def evaluate_off_topic(method: Scorer, images: ImageSource,
                       texts: Sequence[Sequence[str]], *, seed: int = 0, k: int = 50) -> dict:
    """Score the on- and off-topic pairs of ``images`` with their ``texts`` (lists of sentences).

    ``seed`` draws the off-topic images and the bootstrap.
    """
    if len(texts) != len(images):
        raise DataError(f"{len(images)} images but {len(texts)} texts")
    sentences = [s for sents in texts for s in sents]
    sentence_text = np.array([t for t, sents in enumerate(texts) for _ in sents])
    scores = method.score(images, sentences)
    if isinstance(scores, DirectionalScores):
        scores = scores.annotation  # the text is judged given the image prompt
    per_text = mean_sentence_scores(np.asarray(scores), sentence_text, len(texts))
    image_idx, text_idx, labels = off_topic_pairs(len(texts), seed=seed)
    return off_topic_metrics(per_text[image_idx, text_idx], labels, k=k, seed=seed)
