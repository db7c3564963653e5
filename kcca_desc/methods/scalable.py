"""The Hodosh et al. (2013) KCCA system at Flickr30K and MS-COCO size: landmark kernels in chunks.

:class:`ScalableRanker` runs the procedure of
:class:`~kcca_desc.methods.ranker.ImageSentenceRanker` (features, kernels, one KCCA
decomposition, the (n, κ) grid on dev, 5 + 5 + 5 selected models per task, Borda
fusion) without any n x n matrix: caption preprocessing and image features are
computed in partitions by the engine's workers, both kernels are Nyström
approximations on landmark items (:class:`~kcca_desc.scale.LandmarkKCCA`), and new
images and captions are mapped by their kernel columns against the landmarks only.
The grid reuses one factorisation: every κ is one small solve, every n a slice.
"""

from __future__ import annotations

import os
from typing import Iterable, Sequence

import numpy as np

from .._core.cache import cache_key
from ..data.dataset import Dataset
from ..data.images import ImageSource
from .._core.errors import ParameterError
from ..image.kernel import ImageKernel
from ..scale import (DEFAULT_CHUNK_SIZE, DEFAULT_RANK, LANDMARKS, ChunkStore, KernelView, LandmarkFeatures,
                     LandmarkKCCA, LocalEngine, map_chunks)
from ..evaluate.scores import DirectionalScores
from .._core.validation import HasMethods, POSITIVE_INT, Registered, StrOptions, check_is_fitted, invalid_parameter
from .fusion import borda_fuse
from .ranker import DEFAULT_N_COMPONENTS, DEFAULT_REGS, ImageSentenceRanker

__all__ = ["ScalableRanker"]

#: Bytes of the selected models' float64 scores that :meth:`ScalableRanker.score` holds at a
#: time: blocks of 4,096 COCO 5K images against 25,000 captions held five 0.8 GB matrices.
_SCORE_BLOCK_BYTES = 2**28


def _preprocess_part(captions: Sequence[str], *, preprocessor) -> tuple[list, list | None]:
    return preprocessor.process(list(captions))


def _shared_strings(sentences: Iterable[list[str]]) -> list[list[str]]:
    """The sentences with one string object per distinct word.

    Each partition's words arrive as separate objects: MS-COCO's 6.2 million training tokens
    would otherwise be as many strings (about 0.35 GB) in this process and in every worker the
    training items are sent to, where one object per word type (25,000) shares them, in memory
    and in the pickles that carry them.
    """
    canonical: dict[str, str] = {}
    return [[canonical.setdefault(word, word) for word in sentence] for sentence in sentences]


def _features_part(images: ImageSource, *, image_kernel: ImageKernel) -> dict:
    return image_kernel.features(images)


class ScalableRanker(ImageSentenceRanker):
    """Image–sentence ranking by landmark KCCA, for training sets too large for n x n kernels.

    Parameters
    ----------
    image_kernel, text_kernel, power
        As in :class:`ImageSentenceRanker`.
    diag : float, default=1.0
        Must stay 1: a diagonal added to the training kernel has no landmark approximation.
    n_components, regs, n_select, weight_power
        As in :class:`ImageSentenceRanker`.
    kcca_params : dict, optional
        Further :class:`~kcca_desc.scale.LandmarkKCCA` parameters.  Unless given,
        ``solve_dtype=numpy.float32`` (as for :class:`ImageSentenceRanker`) and
        ``clip_to_rank=True``.
    image_kernel_params, preprocessor, random_state, cache
        As in :class:`ImageSentenceRanker`.
    rank : int, default=DEFAULT_RANK
        Landmarks per view.
    landmarks : {"pivots", "uniform"}, default="pivots"
    chunk_size : int, default=DEFAULT_CHUNK_SIZE
        Rows per chunk of the factors, images and captions per partition of the features.
    pairs : {"image", "caption"}, default="image"
        Training pairs: each image with all its captions (the paper's items) or each caption
        with its image (5 pairs per image).
    engine : LocalEngine, DaskEngine or None
        Where partitions and chunks run (None: this process).
    store : path-like or None
        Chunk store of :class:`LandmarkKCCA` (None: ``cache_dir("scale")``).

    Attributes
    ----------
    kcca_ : LandmarkKCCA
    image_kernel_ : ImageKernel
        Fitted codebooks (``train_features_`` are kept out of it: see ``train_features_``).
    train_features_ : dict of str to array
        Pyramid histograms of the training images, computed in partitions (Zarr arrays of the
        chunk store with ``cache``, else NumPy arrays).
    """

    def __init__(self, *, image_kernel="pyramid", text_kernel="tri_sem", power=1.0, diag=1.0,
                 n_components=DEFAULT_N_COMPONENTS, regs=DEFAULT_REGS, n_select=5, weight_power=0.0,
                 kcca_params=None, image_kernel_params=None, preprocessor=None, random_state=0,
                 cache=True, rank=DEFAULT_RANK, landmarks="pivots", chunk_size=DEFAULT_CHUNK_SIZE,
                 pairs="image", engine=None, store=None):
        super().__init__(image_kernel=image_kernel, text_kernel=text_kernel, power=power, diag=diag,
                         n_components=n_components, regs=regs, n_select=n_select, weight_power=weight_power,
                         kcca_params=kcca_params, image_kernel_params=image_kernel_params,
                         preprocessor=preprocessor, random_state=random_state, cache=cache)
        self.rank = rank
        self.landmarks = landmarks
        self.chunk_size = chunk_size
        self.pairs = pairs
        self.engine = engine
        self.store = store

    _parameter_constraints = {
        **ImageSentenceRanker._parameter_constraints,
        "rank": [POSITIVE_INT],
        "landmarks": [Registered(LANDMARKS, "landmark choice")],
        "chunk_size": [POSITIVE_INT],
        "pairs": [StrOptions({"image", "caption"})],
        "engine": [HasMethods(["map", "map_reduce", "share"]), None],
        "store": [str, os.PathLike, None],
    }

    @property
    def name(self) -> str:
        """The system's label in results and tables: ``Landmark KCCA <text> (<image>, rank <rank>)``."""
        return f"Landmark KCCA {self.text_kernel} ({self.image_kernel}, rank {self._rank_shown()})"

    def _rank_shown(self) -> str:
        """``rank`` in :attr:`name`; once fitted with fewer landmarks, both: ``500→60``.

        Landmarks are distinct training items, so a ``rank`` above their number is cut (with a
        warning); the name, and the tables that show it, then say what the figures were made with.
        """
        used = getattr(self, "chosen_params_", {}).get("rank", self.rank)
        return str(self.rank) if used == self.rank else f"{self.rank}→{used}"

    def _used_params(self) -> dict:
        """Those of :meth:`ImageSentenceRanker._used_params` and ``rank``, the landmarks per view used.

        ``rank`` is the larger view's number of landmarks: a view of fewer distinct items has fewer.
        """
        fitted = self.kcca_
        return {**super()._used_params(), "rank": int(max(fitted.map_x_.rank, fitted.map_y_.rank))}

    def _stages(self, n_max: int):
        image_kernel, text_kernel, _ = super()._stages(n_max)
        return image_kernel, text_kernel, self._solver(n_max)

    def _stage_settings(self) -> dict:
        set_by = {"n_components": "n_components", "reg": "regs", "weight_power": "weight_power",
                  "rank": "rank", "landmarks": "landmarks",
                  "chunk_size": "chunk_size", "engine": "engine", "random_state": "random_state"}
        if "store" in self._get_param_names():  # ScalableMultipleKernelRanker has none
            set_by["store"] = "store"
        return {**super()._stage_settings(), "kcca_params": (LandmarkKCCA, set_by)}

    def _solver(self, n_max: int) -> LandmarkKCCA:
        return self._landmark_kcca(n_max, store=self.store)

    def _landmark_kcca(self, n_max: int, **params) -> LandmarkKCCA:
        """The unfitted :class:`LandmarkKCCA` of ``n_max`` components (``params``: further parameters of it)."""
        params = {"solve_dtype": np.float32, "clip_to_rank": True, **(self.kcca_params or {}), **params}
        return LandmarkKCCA(n_components=n_max, reg=min(self.regs), rank=self.rank, landmarks=self.landmarks,
                            chunk_size=self.chunk_size, engine=self.engine, random_state=self.random_state, **params)

    @property
    def _engine(self):
        return self.engine if self.engine is not None else LocalEngine()

    def _partitions(self, n: int) -> list[np.ndarray]:
        return [np.arange(start, min(start + self.chunk_size, n)) for start in range(0, n, self.chunk_size)]

    def _preprocess(self, captions: Sequence[str]) -> tuple[list, list | None]:
        """Tokens and tags of ``captions``, preprocessed in partitions by the engine."""
        captions = list(captions)
        parts = self._engine.map(_preprocess_part, [captions[p[0]:p[-1] + 1] for p in self._partitions(len(captions))],
                                 preprocessor=self._engine.share(self.preprocessor_))
        tokens = _shared_strings(s for part in parts for s in part[0])
        tags = None if parts[0][1] is None else _shared_strings(s for part in parts for s in part[1])
        return tokens, tags

    def _features(self, images: ImageSource) -> dict:
        """Pyramid histograms of ``images``, computed in partitions by the engine.

        With ``cache``, workers write them to a chunk store keyed by the images and the image
        kernel, and the result is a mapping of Zarr arrays read chunk by chunk (COCO's training
        histograms are several GB); a rerun reads the partitions already written.
        """
        store = ChunkStore(cache_key(kind="image_features", key=self._image_key(images)), self.store) \
            if self.cache else None
        return map_chunks(self._engine, _features_part, [images.subset(p) for p in self._partitions(len(images))],
                          len(images), self.chunk_size, store=store, image_kernel=self.image_kernel_)

    def _image_key(self, images: ImageSource) -> str:
        """What determines the features of ``images``: their identities, the image kernel's parameters
        and the fitted codebooks (learnt on the training images, so a fit on other training images
        is not served these histograms)."""
        params = {k: v for k, v in self.image_kernel_.get_params().items() if k != "progress"}
        return cache_key(images=[images.key(i) for i in range(len(images))], kernel=params,
                         histograms=self.image_kernel_.featurizer_.cache_params())

    def _key(self, **parts) -> str | None:
        """The chunk-store key of a view; None (nothing stored) when ``cache`` is off."""
        return cache_key(**parts) if self.cache else None

    def _image_view(self, features: dict, index=None, **key) -> KernelView:
        return KernelView(features, self.image_kernel_.kernel_function(), index=index, key=self._key(**key))

    def _text_view(self, items: list, **key) -> KernelView:
        return KernelView(items, self.text_kernel_.gram, key=self._key(**key))

    def _validate_params(self) -> None:
        """Those of :meth:`ImageSentenceRanker._validate_params`, then ``diag``, which must be 1."""
        super()._validate_params()
        if self.diag != 1:
            raise ParameterError(f"ScalableRanker: diag={self.diag!r}: a text-kernel diagonal has no landmark "
                                 "approximation; use diag=1 (or ImageSentenceRanker)")

    def _supported_n_components(self, n_train: int) -> tuple[int, ...]:
        """Those of :meth:`ImageSentenceRanker._supported_n_components`, each at most ``rank``.

        The landmark kernels have rank ``rank`` at most; a value above is an error, not dropped.
        """
        n_components = super()._supported_n_components(n_train)
        if max(n_components) > self.rank:
            raise invalid_parameter(self, "n_components", f"at most rank={self.rank} (the landmarks per view)",
                                    self.n_components)
        return n_components

    def _training_views(self, train: Dataset, image_kernel: ImageKernel, text_kernel) -> tuple[KernelView, KernelView]:
        """Fit the kernels on ``train``; the landmark views of the training pairs, computed in partitions."""
        sizes = [len(c) for c in train.captions]
        tokens, tags = self._timed("text_preprocess", self._preprocess, [c for caps in train.captions for c in caps])
        bounds = np.cumsum([0] + sizes)
        self.train_items_ = [tokens[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        train_tags = None if tags is None else [tags[a:b] for a, b in zip(bounds[:-1], bounds[1:])]

        self.image_kernel_ = self._timed("image_codebooks", image_kernel.fit_codebooks, train.images)
        self.train_features_ = self._timed("image_features", self._features, train.images)
        self.text_kernel_ = self._timed("text_kernel_fit", text_kernel.fit, self.train_items_, train_tags)
        del tokens, tags, train_tags  # the tags are not needed again (hundreds of MB at COCO size)

        image_key = self._image_key(train.images)
        text_key = cache_key(**self._text_cache_params())
        if self.pairs == "image":
            X = self._image_view(self.train_features_, image=image_key)
            Y = self._text_view(self.text_kernel_.train_items_, text=text_key)
        else:
            image_of = np.repeat(np.arange(len(sizes)), sizes)
            X = self._image_view(self.train_features_, index=image_of, image=image_key, pairs="caption")
            Y = self._text_view([[c] for item in self.train_items_ for c in item],
                                text=text_key, pairs="caption")
        return X, Y

    def score(self, images: ImageSource, captions: Sequence[str]) -> DirectionalScores:
        """Borda-fused scores of the selected models, fused one block of queries at a time.

        Borda fusion ranks each query's candidates independently, so fusing blocks of queries
        gives the fused matrix of :meth:`ImageSentenceRanker.score` while holding the selected
        models' scores of one block only (on a COCO 5K pool, 15 full score matrices are 15 GB),
        at most :data:`_SCORE_BLOCK_BYTES` of them.
        """
        check_is_fitted(self, "selected_")
        fx, fy = self._new_inputs(images, captions)
        fused = {}
        for task, axis in (("annotation", 1), ("search", 0)):
            settings = self.selected_[task]
            queries, candidates = (fx, fy) if axis == 1 else (fy, fx)
            out = np.empty((fx.values.shape[0], fy.values.shape[0]))
            rows = max(1, _SCORE_BLOCK_BYTES // (8 * candidates.values.shape[0] * len(settings)))
            for start in range(0, queries.values.shape[0], rows):
                block = slice(start, start + rows)
                part = LandmarkFeatures(queries.view, queries.values[block])
                pair = (part, fy) if axis == 1 else (fx, part)
                scores = dict(self._projections(*pair, settings))
                chosen = [scores[s] for s in settings]
                fused_block = chosen[0] if len(chosen) == 1 else borda_fuse(chosen, axis=axis)
                if axis == 1:
                    out[block] = fused_block
                else:
                    out[:, block] = fused_block
            fused[task] = out
        return DirectionalScores(**fused)

    def _shared_inputs(self, fx, fy) -> tuple:
        # Landmark features are centred when computed (_new_inputs).
        return fx, fy

    def _transform(self, model, shared: tuple, n_components: int) -> tuple[np.ndarray, np.ndarray]:
        return model.transform(*shared, n_components=n_components)

    def _new_inputs(self, images: ImageSource, captions: Sequence[str]):
        """Centred landmark features of new images and of single captions, computed in chunks."""
        tokens, _ = self._preprocess(captions)
        fx = self.kcca_.features(X=self._image_view(self._features(images), image=self._image_key(images)))
        fy = self.kcca_.features(Y=self._text_view([[t] for t in tokens], queries=list(captions)))
        return fx, fy
