"""The base kernels a multiple-kernel system sums, by name (:data:`BASE_KERNELS`).

Every base kernel lives on the training *items* of the Hodosh et al. (2013) systems: an image
with all its captions (6,000 on Flickr8K).  A text base kernel answers single-caption queries
(its rows of a caption against the training items), an image base kernel new images.  The names:

* text: every named text kernel of :data:`kcca_desc.text.named_kernels.TEXT_KERNELS`
  (``tri_sem``, ``bow5_idf``...); image: every named image kernel of
  :data:`kcca_desc.image.kernel.IMAGE_KERNELS` (``pyramid``, ``histo``...);
* ``<encoder>_rbf`` and ``<encoder>_cosine`` over the features of the offline encoders
  (``minilm_rbf``, ``efficientnet_rbf``, ``vit_cosine``...; :func:`register_feature_kernels`
  adds others), and
  ``text_encoder_rbf`` / ``image_encoder_rbf`` (and ``_cosine``) over the encoder that the
  system's ``text_encoder`` / ``image_encoder`` spec names (any ``FAMILY:MODEL[@WEIGHTS]``).

A feature kernel's item is the mean of the item's unit-length caption embeddings, scaled to
unit length (the mean map of the linear kernel on the sphere), and a query caption its own
unit-length embedding, so items and queries lie on the same sphere; the cosine kernel is then
``u'v`` and the RBF kernel ``exp(-γ‖u - v‖²) = exp(-2γ(1 - u'v))`` with γ = ``gamma_scale``
times the median heuristic on the training items (:func:`~.bridge.median_gamma`).  An image's
item is its own unit-length embedding.

A further base kernel is one registration of a :class:`BaseKernelSpec`, whose ``build(owner)``
returns an unfitted :class:`BaseKernel`; a system also takes a :class:`BaseKernel` instance, or a
callable returning one, in place of a name.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from operator import methodcaller
from typing import Any, Callable, Sequence

import numpy as np

from .._core.errors import ParameterError
from .._core.registry import Registry
from ..adapters.families import build_encoder
from ..data.dataset import Dataset
from ..data.images import ImageSource
from ..image.kernel import IMAGE_KERNELS, ImageKernel
from ..scale.views import LinearKernel, PairwiseKernel
from ..text.named_kernels import TEXT_KERNELS, TextKernel, make_text_kernel
from .bridge import median_gamma
from .ranker import cached_text_gram, text_cache_params

__all__ = ["SIDES", "BaseKernel", "BaseKernelSpec", "BASE_KERNELS", "HodoshTextKernel",
           "HodoshImageKernel", "FeatureKernel", "register_feature_kernels", "base_kernel_names"]

#: The two views of a system: each base kernel belongs to one.
SIDES = ("text", "image")
# Items whose self-similarities are computed at once (a block's own small Gram matrix).
_DIAGONAL_BLOCK = 64


class BaseKernel:
    """One base kernel of a view, fitted on the training items.

    Subclasses implement :meth:`fit`, :meth:`train_gram`, :meth:`cross` and :meth:`gram`
    (``new`` is an :class:`ImageSource` on the image side, a list of captions on the text side),
    and for the landmark solver (:class:`~kcca_desc.methods.ScalableMultipleKernelRanker`)
    :meth:`items` and :meth:`kernel_function`, which give every kernel value without n x n matrices.

    Attributes
    ----------
    side : {"text", "image"}
    name : str
        How results and messages name the kernel.
    """

    side: str = "text"
    name: str = "kernel"

    def fit(self, train: Dataset, owner: Any) -> "BaseKernel":
        """Fit on the training items; ``owner`` is the system (its settings and shared preprocessing)."""
        raise NotImplementedError

    def train_gram(self) -> np.ndarray:
        """(n_train, n_train) float64 Gram matrix of the training items."""
        raise NotImplementedError

    def cross(self, new) -> np.ndarray:
        """(len(new), n_train) rows of new images or single captions against the training items."""
        raise NotImplementedError

    def gram(self, new) -> np.ndarray:
        """(len(new), len(new)) kernel among new images or single captions."""
        raise NotImplementedError

    def items(self, new=None):
        """The training items (``new=None``) or new images' or captions', as :meth:`kernel_function` takes them."""
        raise NotImplementedError

    def kernel_function(self) -> Callable[[Any, Any], np.ndarray]:
        """``k(items_a, items_b)`` of :meth:`items`, picklable: what the landmark solver computes in chunks."""
        raise NotImplementedError

    def self_similarity(self, new) -> np.ndarray:
        """``k(x, x)`` of each new item: the diagonals of :meth:`gram` on small blocks."""
        n = len(new)
        blocks = [_subset(new, np.arange(s, min(s + _DIAGONAL_BLOCK, n))) for s in range(0, n, _DIAGONAL_BLOCK)]
        return np.concatenate([np.diagonal(self.gram(b)) for b in blocks] or [np.zeros(0)])


def _subset(new, index: np.ndarray):
    return new.subset(index) if isinstance(new, ImageSource) else [new[i] for i in index]


@dataclass(frozen=True)
class BaseKernelSpec:
    """A registered base kernel: its view and how to build it from the system's settings.

    Attributes
    ----------
    side : {"text", "image"}
    build : callable
        ``build(name, owner) -> BaseKernel``, unfitted.
    """

    side: str
    build: Callable[[str, Any], BaseKernel]


class HodoshTextKernel(BaseKernel):
    """A named text kernel (:data:`~kcca_desc.text.named_kernels.TEXT_KERNELS`) as a base kernel.

    Its Gram matrices go through the ``text_gram`` cache of
    :class:`~kcca_desc.methods.ranker.ImageSentenceRanker` under the same keys, so a system
    reuses the Grams a single-kernel run computed, and the other way round.
    """

    side = "text"

    def __init__(self, name: str):
        self.name = name

    def fit(self, train: Dataset, owner) -> "HodoshTextKernel":
        self.kernel_ = make_text_kernel(self.name, random_state=owner.random_state, cache=owner.cache)
        self.kernel_.fit(owner.train_items_, owner.train_tags_)
        self.owner_ = owner
        self.cache_params_ = text_cache_params(self.kernel_, owner.preprocessor_, train.captions)
        return self

    def _cached(self, what: str, compute, **key) -> np.ndarray:
        return cached_text_gram(compute, self.cache_params_, cache=self.owner_.cache, what=what, **key)

    def train_gram(self) -> np.ndarray:
        return self._cached("gram", self.kernel_.train_gram)

    def cross(self, captions: Sequence[str]) -> np.ndarray:
        captions = list(captions)
        return self._cached("cross", lambda: self.kernel_.cross_gram(self.owner_.query_items(captions)),
                            queries=captions)

    def gram(self, captions: Sequence[str]) -> np.ndarray:
        return self.kernel_.gram(self.owner_.query_items(list(captions)))

    def self_similarity(self, captions: Sequence[str]) -> np.ndarray:
        captions = list(captions)
        return self._cached("self", lambda: BaseKernel.self_similarity(self, captions), queries=captions)

    def items(self, captions: Sequence[str] | None = None) -> list:
        return self.kernel_.train_items_ if captions is None else self.owner_.query_items(list(captions))

    def kernel_function(self) -> Callable[[Any, Any], np.ndarray]:
        # A partial rather than the bound method: a copy of the fitted system compares equal attribute by attribute.
        return functools.partial(TextKernel.gram, self.kernel_)


class HodoshImageKernel(BaseKernel):
    """A named image kernel (:class:`~kcca_desc.image.kernel.ImageKernel`) as a base kernel.

    The system's ``power``, ``random_state``, ``cache`` and ``image_kernel_params`` apply; its
    features and Grams are cached by :class:`ImageKernel` itself.
    """

    side = "image"

    def __init__(self, name: str):
        self.name = name

    def fit(self, train: Dataset, owner) -> "HodoshImageKernel":
        self.kernel_ = ImageKernel(kind=self.name, power=owner.power, random_state=owner.random_state,
                                   cache=owner.cache, **(owner.image_kernel_params or {})).fit(train.images)
        return self

    def train_gram(self) -> np.ndarray:
        return self.kernel_.train_gram()

    def cross(self, images: ImageSource) -> np.ndarray:
        return self.kernel_.cross(images)

    def gram(self, images: ImageSource) -> np.ndarray:
        return self.kernel_.gram(images)

    def items(self, images: ImageSource | None = None) -> dict:
        return self.kernel_.train_features_ if images is None else self.kernel_.features(images)

    def kernel_function(self) -> Callable[[Any, Any], np.ndarray]:
        return self.kernel_.kernel_function()


def _unit_rows(V: np.ndarray) -> np.ndarray:
    V = np.asarray(V, dtype=np.float64)
    return V / np.maximum(np.linalg.norm(V, axis=1, keepdims=True), np.finfo(np.float64).tiny)


class FeatureKernel(BaseKernel):
    """RBF or cosine kernel over an encoder's features, on the training items (see the module docstring).

    Parameters
    ----------
    name : str
        The kernel's name in results.
    side : {"text", "image"}
    encoder : str or callable
        An encoder spec (``"onnx:minilm"``) built with the system's ``encoder_options``, or
        ``encoder(owner) -> Encoder``.
    kind : {"rbf", "cosine"}, default="rbf"
    gamma_scale : float, optional
        RBF bandwidth: this times the median heuristic (default: the system's ``gamma_scale``).
    """

    def __init__(self, name: str, side: str, encoder, kind: str = "rbf", *, gamma_scale: float | None = None):
        if side not in SIDES or kind not in ("rbf", "cosine"):
            raise ParameterError(f"FeatureKernel {name!r}: side must be one of {SIDES} and kind rbf or cosine; "
                                 f"got {side!r}, {kind!r}")
        if gamma_scale is not None and not gamma_scale > 0:
            raise ParameterError(f"FeatureKernel {name!r}: gamma_scale must be positive; got {gamma_scale!r}")
        self.name, self.side, self.encoder, self.kind, self.gamma_scale = name, side, encoder, kind, gamma_scale

    def fit(self, train: Dataset, owner) -> "FeatureKernel":
        self.encoder_ = self.encoder(owner) if callable(self.encoder) else \
            build_encoder(self.encoder, cache=owner.cache, **(owner.encoder_options or {}))
        if self.side == "image":
            self.train_ = self._embed(train.images)
        else:
            sizes = [len(c) for c in train.captions]
            E = self._embed([c for caps in train.captions for c in caps])
            items = np.add.reduceat(E, np.cumsum([0] + sizes[:-1]), axis=0)
            self.train_ = _unit_rows(items)
        scale = owner.gamma_scale if self.gamma_scale is None else self.gamma_scale
        self.gamma_ = scale * median_gamma(self.train_, random_state=owner.random_state) if self.kind == "rbf" else None
        return self

    def _embed(self, new) -> np.ndarray:
        return _unit_rows(self.encoder_.embed_images(new) if self.side == "image"
                          else self.encoder_.embed_texts(list(new)))

    def _kernel(self, A: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
        return self.kernel_function()(A, A if B is None else B)

    def items(self, new=None) -> np.ndarray:
        return self.train_ if new is None else self._embed(new)

    def kernel_function(self) -> Callable[[Any, Any], np.ndarray]:
        return PairwiseKernel("rbf", (("gamma", self.gamma_),)) if self.kind == "rbf" else LinearKernel()

    def train_gram(self) -> np.ndarray:
        return self._kernel(self.train_)

    def cross(self, new) -> np.ndarray:
        return self._kernel(self._embed(new), self.train_)

    def gram(self, new) -> np.ndarray:
        return self._kernel(self._embed(new))

    def self_similarity(self, new) -> np.ndarray:
        # Both kernels are 1 on the unit sphere.
        return np.ones(len(new))


#: Name -> :class:`BaseKernelSpec` of every base kernel a multiple-kernel system can sum.
BASE_KERNELS: Registry[BaseKernelSpec] = Registry("base kernel")


def register_feature_kernels(name: str, side: str, encoder, *, description: str | None = None,
                             replace: bool = False) -> None:
    """Register ``<name>_rbf`` and ``<name>_cosine`` over the features of ``encoder``.

    ``encoder`` is a spec (``"onnx:minilm"``) or ``encoder(owner) -> Encoder`` (a trained
    model's tower, say); ``description`` names it in the help (default: the spec); ``replace``
    registers them again under names already taken (another trained model).

    Examples
    --------
    >>> register_feature_kernels("clip_text", "text", "open_clip:ViT-B-32@laion2b_s34b_b79k")  # doctest: +SKIP
    """
    if side not in SIDES:
        raise ParameterError(f"side must be one of {', '.join(SIDES)}; got {side!r}")
    for kind in ("rbf", "cosine"):
        BASE_KERNELS.register(f"{name}_{kind}", BaseKernelSpec(
            side, lambda full, owner, encoder=encoder, kind=kind: FeatureKernel(full, side, encoder, kind)),
            help=f"{kind} kernel over {description or encoder} {side} features", replace=replace)


for _name in TEXT_KERNELS:
    BASE_KERNELS.register(_name, BaseKernelSpec("text", lambda name, owner: HodoshTextKernel(name)),
                          help=f"text kernel {_name} (Hodosh et al. 2013)")
for _name in IMAGE_KERNELS:
    BASE_KERNELS.register(_name, BaseKernelSpec("image", lambda name, owner: HodoshImageKernel(name)),
                          help=f"image kernel {_name} (Hodosh et al. 2013)")
register_feature_kernels("minilm", "text", "onnx:minilm")
register_feature_kernels("efficientnet", "image", "efficientnet:lite0")
register_feature_kernels("vit", "image", "onnx:vit")
# The encoder the system's text_encoder / image_encoder setting names.
for _side in SIDES:
    # A method caller rather than a lambda, so that a fitted system pickles.
    register_feature_kernels(f"{_side}_encoder", _side, methodcaller("side_encoder", _side),
                             description=f"the {_side}_encoder (--{_side}-encoder)")


def base_kernel_names(side: str) -> list[str]:
    """The registered base kernels of one view, in registration order."""
    return [name for name, spec in BASE_KERNELS.items() if spec.side == side]
