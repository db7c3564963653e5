"""Small deterministic models and data shared by tests in several folders.

Kept out of the test modules so that a test anywhere under ``tests/`` imports them by one name
(``tests/`` is on ``sys.path`` through its ``conftest.py``).
"""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np

from kcca_desc.adapters.base import Encoder
from kcca_desc.data.dataset import Dataset
from kcca_desc.data.images import ArrayImages

__all__ = ["TinyEncoder", "make_dataset", "LatentEncoder", "latent_dataset", "tagged_items", "poisoned_copy"]

COLOURS = {"red": (220, 30, 30), "green": (30, 200, 40), "blue": (30, 40, 220), "yellow": (230, 220, 30)}
THINGS = ["dog", "cat", "car", "ball"]


class TinyEncoder(Encoder):
    """Fixed random projections of colour histograms and hashed word counts."""

    name = "tiny"
    joint_space = True

    def __init__(self, dim: int = 16, seed: int = 0, batch_size: int = 3, cache: bool = True):
        super().__init__(batch_size=batch_size, cache=cache)
        self.out_dim = dim
        self.seed = seed
        self.calls = {"image": 0, "text": 0}

    @property
    def dim(self):
        return {"image": self.out_dim, "text": self.out_dim}

    def identity(self, modality):
        return {**super().identity(modality), "dim": self.out_dim, "seed": self.seed}

    def _projections(self):
        rng = np.random.default_rng(self.seed)
        return rng.normal(size=(24, self.out_dim)), rng.normal(size=(64, self.out_dim))

    def _encode_image_batch(self, arrays):
        self.calls["image"] += len(arrays)
        hist = np.stack([np.concatenate([np.histogram(a[..., c], bins=8, range=(0, 256))[0]
                                         for c in range(3)]) for a in arrays]).astype(float)
        return hist / hist.sum(axis=1, keepdims=True) @ self._projections()[0]

    def _encode_text_batch(self, texts):
        self.calls["text"] += len(texts)
        counts = np.zeros((len(texts), 64))
        for i, t in enumerate(texts):
            for w in t.lower().split():
                counts[i, zlib.crc32(w.encode()) % 64] += 1
        return counts @ self._projections()[1]


def make_dataset(n: int = 12, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    arrays, captions = [], []
    names = list(COLOURS)
    for i in range(n):
        colour = names[i % 4]
        thing = THINGS[(i // 4) % 4]
        img = np.clip(np.array(COLOURS[colour]) + rng.normal(0, 10, size=(16, 16, 3)), 0, 255).astype(np.uint8)
        arrays.append(img)
        captions.append([f"a {colour} {thing} number {k}" for k in range(5)])
    idx = np.arange(n)
    return Dataset("tiny", ArrayImages(arrays, [f"img{i}" for i in range(n)]), captions,
                   {"train": idx[: n // 2], "test": idx[n // 2:]})


# --------------------------------------------------------------- protocol

class LatentEncoder(Encoder):
    """Image and text features are different linear maps of one latent per item (+noise)."""

    name = "latent"

    def __init__(self, latents, noise=0.05, cache=False):
        super().__init__(batch_size=8, cache=cache)
        self.latents = latents
        self.noise = noise
        rng = np.random.default_rng(1)
        self.A = rng.normal(size=(latents.shape[1], 7))
        self.B = rng.normal(size=(latents.shape[1], 9))

    @property
    def dim(self):
        return {"image": 7, "text": 9}

    def _encode_image_batch(self, arrays):
        idx = [int(a[0, 0, 0]) for a in arrays]
        return self.latents[idx] @ self.A + self.noise * np.random.default_rng(idx[0]).normal(size=(len(idx), 7))

    def _encode_text_batch(self, texts):
        idx = [int(t.split()[0][4:]) for t in texts]
        return self.latents[idx] @ self.B + self.noise * np.random.default_rng(idx[0] + 99).normal(size=(len(idx), 9))


def as_training_set(data: Dataset) -> Dataset:
    """``data`` with all its images in one ``train`` split.

    For tests of training itself, which fit on every item knowingly: a whole data set, its test
    split included, is fitted with a SplitLeakWarning.
    """
    return Dataset(data.name, data.images, data.captions, {"train": np.arange(len(data))})


def latent_dataset(n=80, seed=0):
    arrays = [np.full((2, 2, 3), i, dtype=np.uint8) for i in range(n)]
    captions = [[f"item{i} a", f"item{i} b", f"item{i} c"] for i in range(n)]
    return Dataset("latent", ArrayImages(arrays, [f"i{i}" for i in range(n)]), captions,
                   {"train": np.arange(0, n, 2), "test": np.arange(1, n, 2)})


NOUNS = ["dog", "man", "ball", "boy", "girl", "water", "grass", "bike"]
VERBS = ["run", "jump", "ride", "swim", "play"]


def tagged_items(n_items, seed):
    rng = np.random.default_rng(seed)
    items, tags = [], []
    for _ in range(n_items):
        captions, caption_tags = [], []
        for _ in range(5):
            words = [str(rng.choice(NOUNS)), str(rng.choice(VERBS)), str(rng.choice(NOUNS))]
            captions.append(words)
            caption_tags.append(["NN", "VBZ", "NN"])
        items.append(captions)
        tags.append(caption_tags)
    return items, tags


def poisoned_copy(data: Dataset, poison: bool = False) -> Dataset:
    """``data`` with its images in memory; with ``poison``, every test image is noise and every test caption garbage.

    Both copies name their images alike, so the training and dev features are computed once (the cache):
    a system whose choices read only train and dev makes the same ones on both.
    """
    test = set(data.splits["test"].tolist()) if poison else set()
    rng = np.random.default_rng(0)
    arrays = [rng.integers(0, 255, size=data.images.load(i).shape, dtype=np.uint8) if i in test
              else data.images.load(i) for i in range(len(data.images))]
    captions = [["zq xv kk"] * len(c) if i in test else c for i, c in enumerate(data.captions)]
    return dataclasses.replace(data, images=ArrayImages(arrays, [f"p{i}" for i in range(len(arrays))]),
                               captions=captions)
