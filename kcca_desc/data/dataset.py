"""The one data-set type of the toolkit and its retrieval protocol views.

A :class:`Dataset` holds image references, the captions of each image and the
named splits.  :meth:`Dataset.view` turns one split into a
:class:`RetrievalView` under one of two evaluation protocols (why these two,
and why caption ``#2``: ``docs/design.md``):

``hodosh``
    Each image keeps one caption (caption number ``hodosh_caption``, ``#2`` on
    Flickr8K, the caption the human judgments were collected on; the paper
    keeps one arbitrarily chosen caption).  The pools are n images × n
    captions with exactly one gold item per query in both directions
    (Hodosh, Young & Hockenmaier 2013, Sections 4.1.1-4.1.2).
``karpathy``
    Each image keeps all its captions.  Annotation ranks the 5n captions for
    each image (gold: its own 5); search ranks the n images for each of the 5n
    captions (gold: its image) (Karpathy & Fei-Fei 2015; Kiros et al. 2014).
"""

from __future__ import annotations

import hashlib

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from .._core.errors import DataError, ParameterError, warn_user
from .._core.progress import counted
from .._core.registry import UnknownNameError
from .images import ImageSource, require_image_source

__all__ = ["Dataset", "RetrievalView", "PROTOCOLS", "MissingSplitError", "SplitLeakWarning", "require_dataset",
           "require_view"]

#: The evaluation protocols of a split's view (:meth:`Dataset.view`): Hodosh et al. 2013's and Karpathy's.
PROTOCOLS = ("hodosh", "karpathy")


class SplitLeakWarning(UserWarning):
    """A system is fitted on a whole data set, its test split included.

    Its test figures would then measure images and captions it was trained on; fit on
    ``data.subset("train")``.
    """


class MissingSplitError(DataError, KeyError):
    """The data set has no split of that name (a ``KeyError``, as a missing key of ``splits``)."""

    def __str__(self) -> str:
        # KeyError would print the repr of its argument, quotes included.
        return str(self.args[0])


@dataclass(frozen=True, eq=False)
class Dataset:
    """Images, their captions and splits.

    Parameters
    ----------
    name : str
        Short name used in results (``"flickr8k"``, ``"synthetic"``...).
    images : ImageSource
        The images; ``images.ids`` are the image names.
    captions : sequence of sequence of str
        ``captions[i]`` are the raw captions of image ``i`` in caption-number
        order (caption ``k`` has id ``f"{image_id}#{k}"``).
    splits : mapping of str to sequence of int
        Split name to image indices (``"train"``, ``"dev"``, ``"test"``).
    hodosh_caption : int, default=2
        Caption number kept per image by the ``hodosh`` protocol.
    metadata : mapping, optional
        Facts about the source that loaders record (the data directory, the
        caption file used, the seed and scenes of synthetic data...).

    Raises
    ------
    ParameterError
        If ``images`` is not an ImageSource, ``captions[i]`` is a str rather
        than a list of captions, ``splits`` is not a mapping or
        ``hodosh_caption`` is not a non-negative int.
    DataError
        If the captions do not match the images, a caption is empty, an image
        id repeats, or a split is not a 1-D sequence of integer indices in
        range (floats and boolean masks are refused, not converted).
    """

    name: str
    images: ImageSource
    captions: tuple[tuple[str, ...], ...]
    splits: Mapping[str, np.ndarray]
    hodosh_caption: int = 2
    metadata: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self):
        require_image_source(self.images, f"dataset {self.name!r}: images")
        hodosh = self.hodosh_caption
        if isinstance(hodosh, bool) or not isinstance(hodosh, (int, np.integer)) or hodosh < 0:
            raise ParameterError(f"dataset {self.name!r}: hodosh_caption must be a non-negative int (the caption "
                                 f"number the hodosh protocol keeps), got {hodosh!r}")
        object.__setattr__(self, "hodosh_caption", int(hodosh))
        if not isinstance(self.splits, Mapping):
            raise ParameterError(f"dataset {self.name!r}: splits must be a mapping of split name to image indices, "
                                 f"got {type(self.splits).__name__}")
        for i, caps in enumerate(self.captions):
            # A str is a sequence too: tuple("dog") would make three one-letter captions.
            if isinstance(caps, str):
                raise ParameterError(
                    f"dataset {self.name!r}: captions[{i}] is a str ({caps!r:.50}), not a list of captions; "
                    f"captions[i] lists the captions of image i: wrap it in a list, [caption]")
            if not isinstance(caps, Iterable):
                raise ParameterError(f"dataset {self.name!r}: captions[{i}] must be a list of str (the captions "
                                     f"of image {i}), got {type(caps).__name__}")
        captions = tuple(tuple(c) for c in self.captions)
        object.__setattr__(self, "captions", captions)
        n = len(self.images)
        if len(captions) != n:
            raise DataError(
                f"dataset {self.name!r}: {n} images but captions for {len(captions)}"
            )
        seen: dict[str, int] = {}
        for i, image_id in enumerate(self.images.ids):
            if image_id in seen:
                raise DataError(
                    f"dataset {self.name!r}: duplicate image id {image_id!r} "
                    f"(items {seen[image_id]} and {i})"
                )
            seen[image_id] = i
        for i, caps in enumerate(captions):
            if not caps:
                raise DataError(f"dataset {self.name!r}: image {self.images.ids[i]!r} has no caption")
            for k, c in enumerate(caps):
                if not isinstance(c, str) or not c.strip():
                    raise DataError(
                        f"dataset {self.name!r}: caption {self.images.ids[i]}#{k} is empty"
                    )
        splits = {split: _split_indices(idx, f"dataset {self.name!r}: split {split!r}", n)
                  for split, idx in self.splits.items()}
        object.__setattr__(self, "splits", splits)

    def __repr__(self) -> str:
        # Short: the generated repr would print every caption (hundreds of kB for Flickr8K).
        splits = ", ".join(f"{split} {len(idx):,}" for split, idx in self.splits.items())
        n_captions = sum(len(caps) for caps in self.captions)
        return (f"<Dataset {self.name!r}: {len(self):,} images, {n_captions:,} captions"
                + (f"; splits {splits}" if splits else "") + ">")

    def fingerprint(self) -> str:
        """SHA-256 of what identifies the data: name, image ids, captions, splits and the hodosh caption.

        Recorded with results, so that two results files can be told to come from the same data.
        The pixels are not read (that would cost as much as the features); a data set whose images
        change under the same ids keeps its fingerprint.
        """
        cached = self.__dict__.get("_fingerprint")
        if cached is None:
            digest = hashlib.sha256()
            for part in (self.name, str(self.hodosh_caption), *self.images.ids):
                digest.update(part.encode("utf-8") + b"\0")
            for captions in self.captions:
                digest.update("\x1f".join(captions).encode("utf-8") + b"\0")
            for split in sorted(self.splits):
                digest.update(split.encode("utf-8") + b"\0" + np.asarray(self.splits[split], dtype="<i8").tobytes())
            cached = digest.hexdigest()
            object.__setattr__(self, "_fingerprint", cached)
        return cached

    # ------------------------------------------------------------------ access
    @property
    def image_ids(self) -> tuple[str, ...]:
        return self.images.ids

    def __len__(self) -> int:
        return len(self.images)

    def index_of(self, image_id: str) -> int:
        """Index of the image named ``image_id`` (KeyError naming it if unknown)."""
        try:
            return self._index[image_id]
        except KeyError:
            raise UnknownNameError(f"unknown image {image_id!r} in dataset {self.name!r}") from None

    @property
    def _index(self) -> dict[str, int]:
        cached = self.__dict__.get("_index_cache")
        if cached is None:
            cached = {image_id: i for i, image_id in enumerate(self.images.ids)}
            object.__setattr__(self, "_index_cache", cached)
        return cached

    def split_indices(self, split: str) -> np.ndarray:
        if split not in self.splits:
            raise MissingSplitError(
                f"dataset {self.name!r} has no split {split!r}; available: {sorted(self.splits)}"
            )
        return self.splits[split]

    def subset(self, split: str) -> "Dataset":
        """The images of one split as a data set of their own (split ``split`` = all)."""
        idx = self.split_indices(split)
        return Dataset(
            name=f"{self.name}:{split}",
            images=self.images.subset(idx),
            captions=tuple(self.captions[i] for i in idx),
            splits={split: np.arange(len(idx))},
            hodosh_caption=self.hodosh_caption,
            metadata=self.metadata,
        )

    def view(self, split: str, protocol: str = "hodosh") -> "RetrievalView":
        """Retrieval pools and gold mappings for ``split`` under ``protocol``."""
        if protocol not in PROTOCOLS:
            raise ParameterError(f"unknown protocol {protocol!r}; available: {', '.join(PROTOCOLS)}")
        idx = self.split_indices(split)
        texts, cap_ids, cap_image = [], [], []
        for pool_i, i in enumerate(idx):
            caps = self.captions[i]
            if protocol == "hodosh":
                if self.hodosh_caption >= len(caps):
                    raise DataError(
                        f"image {self.images.ids[i]!r} has {len(caps)} captions; the hodosh "
                        f"protocol needs caption #{self.hodosh_caption}"
                    )
                keep = [self.hodosh_caption]
            else:
                keep = range(len(caps))
            for k in keep:
                texts.append(caps[k])
                cap_ids.append(f"{self.images.ids[i]}#{k}")
                cap_image.append(pool_i)
        return RetrievalView(
            dataset=self.name,
            split=split,
            protocol=protocol,
            images=self.images.subset(idx),
            captions=tuple(texts),
            caption_ids=tuple(cap_ids),
            caption_image=np.asarray(cap_image, dtype=np.int64),
        )


def _split_indices(indices: object, where: str, n: int) -> np.ndarray:
    """``indices`` as a 1-D int64 array of image indices in ``[0, n)``; a DataError naming ``where`` otherwise.

    Floats are refused rather than truncated (``0.7`` would become image 0), and a boolean mask
    rather than read as the indices 0 and 1.
    """
    try:
        idx = np.asarray(indices)
    except (ValueError, TypeError):  # ragged nested lists
        idx = None
    if idx is None or idx.ndim != 1:
        shape = "" if idx is None else f", got shape {idx.shape}"
        raise DataError(f"{where} must be a 1-D sequence of image indices{shape}")
    if not idx.size:
        return np.zeros(0, dtype=np.int64)
    if idx.dtype.kind == "b":
        raise DataError(f"{where} is a boolean mask; pass its image indices, np.flatnonzero(mask)")
    if idx.dtype.kind not in "iu":
        kind = {"f": "floats", "U": "strings", "S": "bytes", "c": "complex numbers"}.get(idx.dtype.kind, str(idx.dtype))
        raise DataError(f"{where} must hold integer image indices, got {kind} such as {idx.tolist()[0]!r:.40}")
    if idx.min() < 0 or idx.max() >= n:
        bad = idx.min() if idx.min() < 0 else idx.max()
        raise DataError(f"{where} has an index out of range [0, {n}): {bad}")
    return idx.astype(np.int64, copy=False)


def require_dataset(value: object, owner: str, *, name: str = "train") -> Dataset:
    """``value`` if it is a :class:`Dataset`; otherwise one clear error naming ``owner`` and ``name``.

    The retrieval systems fit on images and captions, not on feature arrays, and choose their
    settings on a dev split themselves (``ImageSentenceRanker.fit(train, dev)``); the estimators
    that take arrays, and so scikit-learn's model selection, are :class:`~kcca_desc.kcca.KCCA`
    and its kin.

    A whole data set, a ``test`` split beside others, is taken with a :class:`SplitLeakWarning`:
    fitting on it trains on the images its test figures measure (``data.subset("train")`` keeps
    one split; a data set of the test split alone is taken as the caller's choice).

    Raises
    ------
    ParameterError
        If ``value`` is not a Dataset.
    """
    if not isinstance(value, Dataset):
        raise ParameterError(
            f"{owner}: {name} must be a Dataset of images and captions (kcca_desc.data.load_dataset), got "
            f"{type(value).__name__}; to fit on feature or kernel arrays use kcca_desc.kcca.KCCA, LinearCCA "
            "or kcca_desc.scale.LandmarkKCCA, which scikit-learn's model selection takes")
    if "test" in value.splits and len(value.splits) > 1:
        n_test = len(value.splits["test"])
        warn_user(f"{owner}: {name} is the whole data set {value.name!r} (splits {', '.join(sorted(value.splits))}), "
                  f"so it learns from its {counted(n_test, 'test image')}; pass "
                  f"{name}=data.subset({name!r}) to keep the test split unseen", SplitLeakWarning)
    return value


def require_view(value: object, owner: str, *, name: str = "dev") -> "RetrievalView":
    """``value`` if it is a :class:`RetrievalView`; otherwise one clear error naming ``owner`` and ``name``.

    Checked before any work: a wrong ``dev`` would otherwise fail only after the training.

    Raises
    ------
    ParameterError
        If ``value`` is not a RetrievalView.
    """
    if not isinstance(value, RetrievalView):
        split = "dev" if name == "dev" else "test"
        hint = (f"; take the view of a split with {name}=data.view({split!r}, 'hodosh')"
                if isinstance(value, Dataset) else "")
        raise ParameterError(f"{owner}: {name} must be a RetrievalView (Dataset.view), got "
                             f"{type(value).__name__}{hint}")
    return value


@dataclass(frozen=True, eq=False)
class RetrievalView:
    """The query and candidate pools of one split under one protocol.

    Score matrices over a view have shape ``(n_images, n_captions)``: row
    ``i`` scores image ``i`` against every caption.  Annotation queries are the
    rows, search queries the columns.

    Attributes
    ----------
    images : ImageSource
        The n pool images.
    captions : tuple of str
        The m pool captions (raw text).
    caption_ids : tuple of str
        ``"IMAGE#k"`` for each pool caption.
    caption_image : ndarray of shape (m,)
        Pool index of the image each caption belongs to.
    """

    dataset: str
    split: str
    protocol: str
    images: ImageSource
    captions: tuple[str, ...]
    caption_ids: tuple[str, ...]
    caption_image: np.ndarray

    def __repr__(self) -> str:
        return (f"<RetrievalView {self.dataset!r} {self.split} ({self.protocol}): {self.n_images:,} images, "
                f"{self.n_captions:,} captions>")

    @property
    def n_images(self) -> int:
        return len(self.images)

    @property
    def n_captions(self) -> int:
        return len(self.captions)

    @property
    def annotation_gold(self) -> list[np.ndarray]:
        """For each image query, the pool indices of its gold captions."""
        order = np.argsort(self.caption_image, kind="stable")
        bounds = np.searchsorted(self.caption_image[order], np.arange(self.n_images + 1))
        return [order[bounds[i]:bounds[i + 1]] for i in range(self.n_images)]

    @property
    def search_gold(self) -> list[np.ndarray]:
        """For each caption query, the pool indices of its gold images (one each)."""
        return [np.array([i]) for i in self.caption_image]

    def caption_lists(self) -> list[list[str]]:
        """Captions grouped by pool image."""
        return [[self.captions[j] for j in g] for g in self.annotation_gold]
