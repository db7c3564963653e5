"""Visual semantic textual similarity (vSTS; Lopez de Lacalle et al. 2020).

Each vSTS item pairs two (caption, image) items with a 0–5 similarity score.
Only the 455 STS2015 pairs have both images in Flickr8K; this module reads
the TSV files, keeps the pairs whose images exist in a given image directory,
and evaluates representations two ways:

* unsupervised: Pearson r between gold scores and cos(h_L, h_R) of text-only,
  image-only and concatenated [text/‖text‖, image/‖image‖] representations, each with a
  bootstrap interval over the sentence pairs (:func:`~kcca_desc.tasks.intervals.pearson_interval`);
* supervised: the authors' siamese regressor on [h_L ⊙ h_R, |h_L − h_R|]
  (one sigmoid hidden layer, linear output, MSE), trained on the authors'
  train split, hidden size chosen on dev, Pearson r on test.

Systems trained on Flickr8K train may have seen some pair images: see
:func:`seen_images`.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.neural_network import MLPRegressor

from .._core.errors import DataError, MissingDataFileError, ParameterError
from ..data.images import FileImages
from ..evaluate.statistics import CONFIDENCE, N_RESAMPLES
from .intervals import pearson_interval
from .metrics import pearson_r

__all__ = ["VSTSPairs", "load_vsts", "siamese_features", "fit_siamese_regressor",
           "cosine_similarity_correlations", "seen_images"]

COLUMNS = ("id", "source", "sent1", "image1", "sent2", "image2", "sim")
SPLIT_FILES = {"all": "visual_sts.v2.0.all.tsv", "train": "train-dev-test/visual_sts.v2.0.train.tsv",
               "dev": "train-dev-test/visual_sts.v2.0.dev.tsv", "test": "train-dev-test/visual_sts.v2.0.test.tsv"}


@dataclass(frozen=True)
class VSTSPairs:
    """vSTS pairs: ids, sources, both captions, both image file names, gold similarity."""

    ids: tuple[str, ...]
    sources: tuple[str, ...]
    sent1: tuple[str, ...]
    sent2: tuple[str, ...]
    image1: tuple[str, ...]
    image2: tuple[str, ...]
    sim: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    def select(self, mask: np.ndarray) -> "VSTSPairs":
        idx = np.flatnonzero(mask)
        pick = lambda seq: tuple(seq[i] for i in idx)  # noqa: E731
        return VSTSPairs(pick(self.ids), pick(self.sources), pick(self.sent1), pick(self.sent2),
                         pick(self.image1), pick(self.image2), self.sim[idx])

    def with_images_in(self, image_dir: str | os.PathLike) -> "VSTSPairs":
        """The pairs whose two images (matched on file name) exist in ``image_dir``."""
        image_dir = Path(image_dir)
        present = np.array([(image_dir / a).is_file() and (image_dir / b).is_file()
                            for a, b in zip(self.image1, self.image2)], dtype=bool)
        return self.select(present)

    def images(self, image_dir: str | os.PathLike, side: int) -> FileImages:
        """The left (``side=0``) or right (``side=1``) images as an image source."""
        names = (self.image1, self.image2)[side]
        return FileImages([Path(image_dir) / n for n in names], names)


def load_vsts(root: str | os.PathLike, split: str = "all") -> VSTSPairs:
    """Read a vSTS v2.0 TSV (quoting disabled: captions contain quote characters).

    Parameters
    ----------
    root : path-like
        Directory holding ``visual_sts.v2.0.all.tsv`` and ``train-dev-test/``.
    split : {"all", "train", "dev", "test"}

    Raises
    ------
    FileNotFoundError, ValueError
        Naming the file and line of a missing file, wrong header, wrong
        column count or a similarity outside [0, 5].
    """
    if split not in SPLIT_FILES:
        raise ParameterError(f"unknown vSTS split {split!r}; available: {', '.join(SPLIT_FILES)}")
    path = Path(root) / SPLIT_FILES[split]
    if not path.is_file():
        raise MissingDataFileError(f"vSTS file not found: {path}")
    rows = []
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if tuple(header or ()) != COLUMNS:
            raise DataError(f"{path}: expected header {COLUMNS}, got {header}")
        for line_no, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) != len(COLUMNS):
                raise DataError(f"{path}:{line_no}: expected {len(COLUMNS)} tab-separated columns, got {len(row)}")
            try:
                sim = float(row[6])
            except ValueError:
                raise DataError(f"{path}:{line_no}: similarity {row[6]!r} is not a number") from None
            if not 0.0 <= sim <= 5.0:
                raise DataError(f"{path}:{line_no}: similarity {sim} outside [0, 5]")
            rows.append((row[0], row[1], row[2], Path(row[3]).name, row[4], Path(row[5]).name, sim))
    if not rows:
        raise DataError(f"{path}: no pairs")
    ids, sources, s1, i1, s2, i2, sim = zip(*rows)
    return VSTSPairs(ids, sources, s1, s2, i1, i2, np.array(sim))


def seen_images(pairs: VSTSPairs, training_image_ids) -> dict:
    """How many pairs have 0, 1 or 2 of their images in ``training_image_ids``."""
    train = set(training_image_ids)
    seen = np.array([(a in train) + (b in train) for a, b in zip(pairs.image1, pairs.image2)])
    return {"pairs": len(pairs), "both_seen": int(np.sum(seen == 2)),
            "one_seen": int(np.sum(seen == 1)), "none_seen": int(np.sum(seen == 0))}


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def _representations(text: tuple[np.ndarray, np.ndarray], image: tuple[np.ndarray, np.ndarray]) -> dict:
    return {
        "text": text,
        "image": image,
        "concat": tuple(np.hstack([_unit(t), _unit(i)]) for t, i in zip(text, image)),
    }


def cosine_similarity_correlations(sim, text, image, *, n_resamples: int = N_RESAMPLES,
                                   confidence: float = CONFIDENCE, seed: int = 0) -> dict:
    """Pearson r of gold similarity with cos(h_L, h_R) for text, image and concatenation.

    ``text`` and ``image`` are (left, right) pairs of (n_pairs, d) arrays.  Returns r by
    representation (``"text"``, ``"image"``, ``"concat"``) and, as in a retrieval result,
    ``"ci"`` (each r's bootstrap interval, the pairs resampled; one seed, so the three are
    drawn from the same resampled pairs) and ``"ci_settings"``.
    """
    cosines = {name: np.sum(_unit(left) * _unit(right), axis=1)
               for name, (left, right) in _representations(text, image).items()}
    settings = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    figures = {name: pearson_r(cosine, sim) for name, cosine in cosines.items()}
    intervals = {name: pearson_interval(cosine, sim, **settings) for name, cosine in cosines.items()}
    return {**figures, "ci": {name: interval["ci"] for name, interval in intervals.items()},
            "ci_settings": next(iter(intervals.values()))["ci_settings"]}


def siamese_features(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``[h_L ⊙ h_R, |h_L − h_R|]`` (Tai et al. 2015; Lopez de Lacalle et al. 2020, eq. 2–3)."""
    left, right = np.asarray(left, float), np.asarray(right, float)
    if left.shape != right.shape or left.ndim != 2:
        raise DataError(f"left and right representations must have one 2-D shape, got {left.shape} and {right.shape}")
    return np.hstack([left * right, np.abs(left - right)])


def fit_siamese_regressor(train: tuple[np.ndarray, np.ndarray, np.ndarray],
                          dev: tuple[np.ndarray, np.ndarray, np.ndarray],
                          *, hidden_sizes=(50, 100, 200, 300), seed: int = 0) -> tuple[MLPRegressor, dict]:
    """Siamese MSE regressor, hidden size chosen by dev Pearson r.

    ``train``/``dev`` are (left, right, similarity).  Each candidate is an
    :class:`sklearn.neural_network.MLPRegressor` with one logistic hidden
    layer (h_s = σ(W[h_×, h_+] + b)), a linear output and squared loss,
    trained with Adam and early stopping, seeded.
    """
    Xtr, ytr = siamese_features(train[0], train[1]), np.asarray(train[2], float)
    Xdv, ydv = siamese_features(dev[0], dev[1]), np.asarray(dev[2], float)
    best, best_r, dev_r = None, -np.inf, {}
    for h in hidden_sizes:
        model = MLPRegressor(hidden_layer_sizes=(h,), activation="logistic", alpha=1e-4,
                             learning_rate_init=1e-3, max_iter=300, early_stopping=True,
                             n_iter_no_change=25, random_state=seed).fit(Xtr, ytr)
        pred = model.predict(Xdv)
        r = pearson_r(pred, ydv) if np.ptp(pred) > 0 else 0.0
        dev_r[h] = r
        if r > best_r:
            best, best_r = model, r
    return best, {"dev_pearson_by_hidden": dev_r, "hidden": best.hidden_layer_sizes[0]}
