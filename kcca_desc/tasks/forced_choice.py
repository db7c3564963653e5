"""1-of-N forced choice: pick the matching caption among N candidates.

For each query image the gold caption and N − 1 seeded random captions of
other images are scored; the choice is correct when the gold caption scores
strictly highest.  Reported: accuracy and the mean scores of gold and of
distractor captions, each with a bootstrap interval over the queries
(:func:`~kcca_desc.tasks.intervals.forced_choice_intervals`).
"""

from __future__ import annotations

import numpy as np

from .._core.errors import DataError, ParameterError
from ..data.dataset import RetrievalView
from ..evaluate.scores import DirectionalScores, Scorer
from ..evaluate.statistics import CONFIDENCE, N_RESAMPLES
from .intervals import forced_choice_intervals

__all__ = ["forced_choice_candidates", "forced_choice_metrics", "evaluate_forced_choice"]


def forced_choice_candidates(caption_image: np.ndarray, *, n_choices: int = 6, seed: int = 0) -> np.ndarray:
    """(n_images, n_choices) caption indices: column 0 gold, the rest distractors.

    The gold caption of image i is its first caption in the pool; distractors
    are drawn without replacement from captions of other images.
    """
    caption_image = np.asarray(caption_image)
    n_images = int(caption_image.max()) + 1 if caption_image.size else 0
    if n_choices < 2:
        raise ParameterError(f"n_choices must be >= 2, got {n_choices}")
    rng = np.random.default_rng(seed)
    out = np.empty((n_images, n_choices), dtype=np.int64)
    for i in range(n_images):
        own = np.flatnonzero(caption_image == i)
        others = np.flatnonzero(caption_image != i)
        if own.size == 0 or others.size < n_choices - 1:
            raise DataError(f"image {i} needs a caption and {n_choices - 1} captions of other images")
        out[i, 0] = own[0]
        out[i, 1:] = rng.choice(others, size=n_choices - 1, replace=False)
    return out


def forced_choice_metrics(candidate_scores: np.ndarray, *, n_resamples: int = N_RESAMPLES,
                          confidence: float = CONFIDENCE, seed: int = 0) -> dict:
    """Metrics from an (n_queries, N) score matrix whose column 0 is the gold item.

    Besides the figures, ``"ci"`` holds their bootstrap intervals (queries resampled) and
    ``"ci_settings"`` the bootstrap's settings, as in a retrieval result.
    """
    s = np.asarray(candidate_scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] < 1 or s.shape[1] < 2:
        raise DataError(f"candidate_scores must be (n_queries >= 1, N >= 2), got shape {s.shape}")
    if not np.all(np.isfinite(s)):
        raise DataError("candidate_scores contain NaN or infinite values")
    return {
        "accuracy": float(100 * np.mean(s[:, 0] > s[:, 1:].max(axis=1))),
        "mean_positive": float(s[:, 0].mean()),
        "mean_negative": float(s[:, 1:].mean()),
        "n_queries": int(s.shape[0]),
        "n_choices": int(s.shape[1]),
        **forced_choice_intervals(s, n_resamples=n_resamples, confidence=confidence, seed=seed),
    }


def evaluate_forced_choice(method: Scorer, view: RetrievalView, *, n_choices: int = 6, seed: int = 0) -> dict:
    """1-of-N caption choice for every image of ``view``; ``seed`` draws the distractors and the bootstrap."""
    candidates = forced_choice_candidates(view.caption_image, n_choices=n_choices, seed=seed)
    scores = method.score(view.images, view.captions)
    if isinstance(scores, DirectionalScores):
        scores = scores.annotation
    scores = np.asarray(scores)
    return forced_choice_metrics(np.take_along_axis(scores, candidates, axis=1), seed=seed)
