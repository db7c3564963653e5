"""An embedded synthetic image–caption data set, generated from a seed.

Images are coloured, textured backgrounds with one to three coloured,
textured shapes at different positions and sizes (:mod:`.synthetic_scenes`,
drawn by :mod:`.synthetic_render`); each image has captions from a small
grammar with synonyms and optional modifiers (:mod:`.synthetic_captions`).
Colour, texture and layout thus carry the signal the paper's image kernels
see, and the synonyms give lexical-similarity text kernels something to find.
It lets the whole pipeline run end to end, in seconds, with no download.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral

import numpy as np

from .._core.errors import DataError, ParameterError
from .dataset import Dataset
from .images import ArrayImages, ImageSource, array_key
from .synthetic_captions import describe_scene
from .synthetic_render import render_scene
from .synthetic_scenes import sample_scene
from .synthetic_vocabulary import ZipfVocabulary

__all__ = ["make_synthetic", "RenderedImages"]

SPLIT_NAMES = ("train", "dev", "test")
_MIN_IMAGE_SIZE = 16


def _check_integer(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _split_bounds(n_images: int, split_fractions: Sequence[float]) -> np.ndarray:
    fractions = np.asarray(split_fractions, dtype=float)
    if fractions.shape != (len(SPLIT_NAMES),) or not np.all(np.isfinite(fractions)) or np.any(fractions < 0):
        raise ParameterError(
            f"split_fractions must be {len(SPLIT_NAMES)} non-negative numbers for "
            f"{'/'.join(SPLIT_NAMES)}, got {split_fractions!r}"
        )
    if fractions.sum() > 1 + 1e-9:
        raise ParameterError(f"split_fractions must sum to at most 1, got {split_fractions!r} (sum {fractions.sum():g})")
    bounds = np.rint(np.concatenate([[0.0], np.cumsum(fractions)]) * n_images).astype(int)
    empty = [name for name, f, a, b in zip(SPLIT_NAMES, fractions, bounds, bounds[1:]) if f > 0 and a == b]
    if empty:
        raise ParameterError(f"n_images={n_images} is too few for split_fractions={split_fractions!r}: "
                         f"split(s) {', '.join(empty)} would be empty")
    return bounds


def _image_seed(seed: int, index: int) -> np.random.SeedSequence:
    """The seed of image ``index``'s random stream: the ``index``-th child of ``SeedSequence(seed)``."""
    return np.random.SeedSequence(seed, spawn_key=(index,))


def _draw_image(rng: np.random.Generator, image_size: int):
    """A scene and its rendered image, drawn from ``rng`` (which goes on to draw the captions)."""
    scene = sample_scene(rng)
    image = render_scene(scene, image_size, rng)
    image.flags.writeable = False  # the same image whether held or rendered again
    return scene, image


class RenderedImages(ImageSource):
    """Synthetic images rendered again from their seed on every :meth:`load`.

    Holds no pixels, so a COCO-sized synthetic data set (123,287 images) costs its ids and cache
    keys only; each load repeats the image's draw, byte for byte.  The keys are those of
    :class:`~kcca_desc.data.ArrayImages` holding the same images, so cached features are shared.

    Parameters
    ----------
    seed : int
        The data set's seed (:func:`make_synthetic`).
    image_size : int
        Side of the images, in pixels.
    indices : sequence of int
        Each image's position in the data set (its random stream).
    ids, keys : sequence of str
        Each image's name and cache key.
    """

    def __init__(self, seed: int, image_size: int, indices: Sequence[int], ids: Sequence[str],
                 keys: Sequence[str]):
        self.seed, self.image_size = seed, image_size
        self.indices, self.ids, self.keys = tuple(indices), tuple(ids), tuple(keys)
        if not len(self.indices) == len(self.ids) == len(self.keys):
            raise DataError("RenderedImages: indices, ids and keys differ in length")

    def load(self, index: int) -> np.ndarray:
        rng = np.random.default_rng(_image_seed(self.seed, self.indices[index]))
        return _draw_image(rng, self.image_size)[1]

    def key(self, index: int) -> str:
        return self.keys[index]

    def subset(self, indices: Sequence[int]) -> "RenderedImages":
        return RenderedImages(self.seed, self.image_size, [self.indices[i] for i in indices],
                              [self.ids[i] for i in indices], [self.keys[i] for i in indices])

    def check(self, index: int) -> str | None:
        """None: a drawn image always decodes (rendering every image to check it would double the cost)."""
        return None


def make_synthetic(
    *,
    n_images: int = 1000,
    seed: int = 0,
    image_size: int = 96,
    n_captions: int = 5,
    split_fractions: Sequence[float] = (0.6, 0.2, 0.2),
    vocabulary: int | None = None,
    keep_images: bool = True,
) -> Dataset:
    """Generate the synthetic data set.

    Parameters
    ----------
    n_images : int, default=1000
        Number of images.
    seed : int, default=0
        Seed of everything random.  The same seed gives byte-identical images
        and identical captions; image ``i`` depends only on ``seed`` and ``i``,
        so a larger data set starts with the images of a smaller one.
    image_size : int, default=96
        Side of the square RGB images, in pixels (at least 16).
    n_captions : int, default=5
        Captions per image.
    split_fractions : sequence of 3 floats, default=(0.6, 0.2, 0.2)
        Shares of ``train``, ``dev`` and ``test`` images (consecutive blocks;
        the images are independent draws).  If they sum to less than 1 the
        remaining images belong to no split.
    vocabulary : int, optional
        Add to every caption a few pseudo-words from a Zipfian vocabulary of this many word
        types (:class:`~kcca_desc.data.synthetic_vocabulary.ZipfVocabulary`; e.g. 25,000 for
        a COCO-sized vocabulary).  Drawn from a stream of their own, so the images and the
        scene words are those of ``vocabulary=None``.
    keep_images : bool, default=True
        Hold the rendered images in memory (:class:`~kcca_desc.data.ArrayImages`).  False
        keeps only their cache keys and renders each image again when it is loaded
        (:class:`RenderedImages`): the same pixels, for data sets too large to hold (a
        COCO-sized one at 48 pixels is 0.85 GB of pixels).

    Returns
    -------
    Dataset
        Named ``"synthetic"``; :class:`~kcca_desc.data.ArrayImages` (or
        :class:`RenderedImages`) of read-only ``uint8`` RGB images with ids ``"synthetic_00000"``...;
        ``hodosh_caption`` is 2 (or the last caption with fewer than 3);
        ``metadata["scenes"]`` holds each image's
        :class:`~kcca_desc.data.synthetic_scenes.Scene`.

    Examples
    --------
    >>> from kcca_desc.data import make_synthetic
    >>> data = make_synthetic(n_images=10, seed=1)
    >>> data.images.load(0).shape, len(data.captions[0])
    ((96, 96, 3), 5)
    """
    n_images = _check_integer("n_images", n_images, 1)
    seed = _check_integer("seed", seed, 0)
    image_size = _check_integer("image_size", image_size, _MIN_IMAGE_SIZE)
    n_captions = _check_integer("n_captions", n_captions, 1)
    bounds = _split_bounds(n_images, split_fractions)
    zipf = None if vocabulary is None else ZipfVocabulary(vocabulary)
    if not isinstance(keep_images, (bool, np.bool_)):
        raise ParameterError(f"keep_images must be True or False, got {keep_images!r}")

    # One independent stream per image, so image i does not depend on n_images.
    scenes, images, captions = [], [], []
    for i in range(n_images):
        stream = _image_seed(seed, i)
        rng = np.random.default_rng(stream)
        scene, image = _draw_image(rng, image_size)
        scenes.append(scene)
        images.append(image if keep_images else array_key(image))
        texts = [describe_scene(scene, rng) for _ in range(n_captions)]
        if zipf is not None:
            words_rng = np.random.default_rng(stream.spawn(1)[0])
            texts = [zipf.extend(text, scene, words_rng) for text in texts]
        captions.append(tuple(texts))

    ids = [f"synthetic_{i:05d}" for i in range(n_images)]
    return Dataset(
        name="synthetic",
        images=ArrayImages(images, ids) if keep_images else RenderedImages(seed, image_size, range(n_images),
                                                                            ids, images),
        captions=tuple(captions),
        splits={name: np.arange(a, b) for name, a, b in zip(SPLIT_NAMES, bounds, bounds[1:]) if b > a},
        hodosh_caption=min(2, n_captions - 1),
        metadata={"seed": seed, "image_size": image_size, "scenes": tuple(scenes), "vocabulary": vocabulary},
    )
