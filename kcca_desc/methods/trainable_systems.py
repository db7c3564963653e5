"""The seed papers' trainable models as systems: ``--method vse|vse_hardest|char_gru|rei``.

Each is a :class:`~.trainable_spec.TrainableSpec` of :data:`TRAINABLE` (adding a system is one
registration there), built in one of its configurations (``--train-config``: ``cpu``, sized by
measurement for a CPU, or ``paper``, the paper's size for a GPU), over the image features of
``--image-encoder`` (default the offline EfficientNet-Lite0), and fitted on the training split
with the dev split selecting snapshots and stopping early.  Training is checkpointed under the
cache, so a second run with the same settings loads the trained model.  :data:`TRAINABLE_VARIANTS`
are the benchmark's systems: these with some settings changed (the Rei ablation).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._core.progress import counted
from .._core.registry import Registry
from .._core.settings import Setting, unlabelled
from ..neural import REI_ABLATION, CharGRUEncoder, ReiRelevanceScorer, TrainableModel, VSEEncoder
from ..data.dataset import Dataset
from .base import RetrievalMethod
from .encoder_systems import ENCODER_SETTINGS
from .encoders import EncoderMethod, PairScorerMethod
from .trainable_spec import CONFIGURATIONS, TrainableSpec, frozen_settings

__all__ = ["TRAINABLE", "TRAINABLE_VARIANTS", "TrainableVariant", "TrainableSystem", "TRAINING_SETTINGS",
           "training_params", "fit_with_dev"]

#: Name -> :class:`~.trainable_spec.TrainableSpec` of every trainable system; the command line
#: offers each as ``--method NAME``.  "paper": the paper's size (Merkx & Frank: 1,024 GRU units per
#: direction, batch 32, 32 epochs; VSE at VSE++'s 1,024-d and schedule) for a GPU; Rei's
#: (batch 32, dev patience 10, up to 300 epochs) is the cpu size, more patient,
#: and trains on a CPU.  "cpu": sized by measuring seconds per batch and early dev figures on one
#: thread so that each model trains in about two hours at most on two cores (docs/design.md,
#: "Trainable models").
TRAINABLE: Registry[TrainableSpec] = Registry("trainable system")

# The two VSE systems differ in their loss only.  Both configurations start the word embeddings from
# static word vectors of the offline MiniLM (Kiros et al. start from CBOW vectors and keep them
# fixed, as "paper" does).  Chosen on dev (docs/design.md): the cpu configuration's batch of 32
# (R-sum 247.3 against 242.0 at batch 128) and its word vectors, fine-tuned (280.2; fixed 277.6;
# learnt from random 247.3).
_VSE_CONFIGS = {
    "paper": {"word_dim": 300, "word_vectors": "onnx:minilm", "joint_dim": 1024, "batch_size": 128, "lr": 2e-4,
              "lr_decay_epoch": 15, "max_epochs": 30, "patience": 5},
    "cpu": {"word_dim": 300, "word_vectors": "onnx:minilm", "freeze_word_vectors": False, "joint_dim": 512,
            "batch_size": 32, "lr": 1e-3, "lr_decay_epoch": 12, "max_epochs": 24, "patience": 4, "dropout": 0.2}}
TRAINABLE.register("vse", TrainableSpec(VSEEncoder, EncoderMethod, _VSE_CONFIGS, {"negatives": "sum"}),
                   help="Kiros et al. (2014): visual-semantic embedding, hinge loss summed over negatives")
TRAINABLE.register("vse_hardest", TrainableSpec(VSEEncoder, EncoderMethod, _VSE_CONFIGS,
                                                {"negatives": "hardest", "sum_epochs": 2}),
                   help="VSE++ (Faghri et al. 2018): the hardest negative's hinge loss")
TRAINABLE.register("char_gru", TrainableSpec(CharGRUEncoder, EncoderMethod, {
    # The paper's size, with dropout 0.2 as at the CPU size (docs/design.md): on a GPU, best dev
    # R-sum in 20 epochs 247.7 without dropout and 267.0 with it.
    "paper": {"char_dim": 20, "hidden_dim": 1024, "attention_dim": 128, "n_heads": 2, "batch_size": 32,
              "dropout": 0.2, "max_epochs": 32, "cycle_epochs": 4, "lr": 1e-3, "lr_min": 1e-6, "n_ensemble": 2},
    # Dropout, batches of similar caption length and the size chosen on dev (docs/design.md):
    # best dev R-sum 223.8 without dropout and 237.6 with it after 16 epochs at 256 units; with
    # it, 253.8 after 32 epochs of random batches, 257.7 after 44 of length-sorted ones, and at
    # 512 units 258.9 after 24, each in under two hours.
    "cpu": {"char_dim": 20, "hidden_dim": 512, "attention_dim": 128, "n_heads": 2, "batch_size": 32,
            "length_window": 50, "dropout": 0.2, "max_epochs": 24, "cycle_epochs": 4, "lr": 1e-3,
            "lr_min": 1e-6, "n_ensemble": 2}}),
                   help="Merkx & Frank (2019): character-level bi-GRU with attention pooling, snapshot ensemble")
# Rei starts from CBOW vectors and trains them; here the MiniLM word vectors at
# the scale of the other initial weights, fine-tuned (chosen on dev, docs/design.md).
TRAINABLE.register("rei", TrainableSpec(ReiRelevanceScorer, PairScorerMethod, {
    "paper": {"word_dim": 300, "word_vectors": "onnx:minilm", "hidden_dim": 300, "batch_size": 32, "lr": 1e-3,
              "max_epochs": 300, "patience": 10},
    "cpu": {"word_dim": 300, "word_vectors": "onnx:minilm", "hidden_dim": 300, "batch_size": 32, "lr": 1e-3,
            "max_epochs": 30, "patience": 3}}, REI_ABLATION["+softmax"]),
                   help="Rei (2017): gated, cross-conditioned relevance scorer")


@dataclass(frozen=True)
class TrainableVariant:
    """A system of :data:`TRAINABLE` with some of its settings changed: a system of the benchmark.

    Parameters
    ----------
    system : str
        The name of the system in :data:`TRAINABLE` (looked up when building, so that a
        replaced registration is the one built).
    settings : mapping, default={}
        Settings over the system's configuration and fixed settings, read-only; checked against
        the model's parameters when the variant is made (:meth:`TrainableSpec.check`: a
        :class:`~kcca_desc._core.errors.ParameterError`).
    """

    system: str
    settings: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "settings", frozen_settings(self.settings))
        TRAINABLE[self.system].check(self.settings, f"settings of a variant of {self.system!r}")

    def build(self, config: str = "cpu", **overrides: Any) -> TrainableModel:
        """The unfitted model: :meth:`TrainableSpec.build` with :attr:`settings`, then ``overrides``."""
        return TRAINABLE[self.system].build(config, **{**self.settings, **overrides})


#: The systems of the benchmark (``benchmarks/neural.py --systems``) by name.  The four Rei
#: systems are the paper's ablation (Rei 2017, Table 3), one step each.
TRAINABLE_VARIANTS: Registry[TrainableVariant] = Registry("trainable variant")
for _name in ("vse", "vse_hardest", "char_gru"):
    TRAINABLE_VARIANTS.register(_name, TrainableVariant(_name), help=TRAINABLE.help(_name))
for _name, _step in (("rei_baseline", "baseline"), ("rei_dropout", "+dropout"), ("rei_gating", "+gating"),
                     ("rei", "+softmax")):
    TRAINABLE_VARIANTS.register(_name, TrainableVariant("rei", REI_ABLATION[_step]),
                                help=f"Rei's ablation step {_step}")


@dataclass(frozen=True)
class TrainableSystem:
    """Factory of one trainable system for :class:`~.registry.System`: the model of ``spec`` in its wrapper."""

    spec: TrainableSpec

    def __call__(self, random_state: int = 0, train_config: str = "cpu", max_epochs: int | None = None,
                 n_threads: int | None = 1, checkpoint: bool = True, image_encoder=None,
                 device: str = "cpu") -> RetrievalMethod:
        # Explicit keywords: System.build passes a factory only the shared settings it names.
        overrides = {} if max_epochs is None else {"max_epochs": max_epochs}
        model = self.spec.build(train_config, random_state=random_state, n_threads=n_threads, checkpoint=checkpoint,
                                image_encoder=image_encoder, device=device, **overrides)
        return self.spec.wrapper(model)


#: Settings shared by the trainable systems; they read ``image_encoder`` and ``image_pooling`` of
#: :data:`~.encoder_systems.ENCODER_SETTINGS` too.
TRAINING_SETTINGS = (
    Setting("train_config", choices=CONFIGURATIONS, default="cpu",
            help="size and schedule of a trainable system: cpu (chosen by measurement on one "
                 "thread) or paper (the paper's size, for a GPU)", label=lambda config: f"{config} config"),
    Setting("train_epochs", int, help="override the configuration's max epochs", label=lambda n: counted(n, "epoch"),
            parameter="max_epochs"),
    Setting("train_threads", int, 1, help="torch threads while training", label=unlabelled, parameter="n_threads"),
    Setting("train_device", default="cpu", help="torch device of a trainable system (cpu, cuda, cuda:N)",
            label=unlabelled, parameter="device"),
    *(setting for setting in ENCODER_SETTINGS if setting.name in ("image_encoder", "image_pooling")),
)


def training_params(settings: Mapping[str, Any]) -> dict:
    """Keyword arguments of :class:`TrainableSystem` from the values of :data:`TRAINING_SETTINGS`.

    ``cache`` (default True) turns checkpointing and the image encoder's cache on or off.
    """
    cache = settings.get("cache", True)
    params = {"train_config": settings["train_config"], "n_threads": settings["train_threads"],
              "checkpoint": cache, "device": settings["train_device"]}
    if settings["train_epochs"] is not None:
        params["max_epochs"] = settings["train_epochs"]
    if settings["image_encoder"]:
        from ..adapters.families import build_encoder

        params["image_encoder"] = build_encoder(settings["image_encoder"], pooling=settings["image_pooling"],
                                                cache=cache)
    return params


def fit_with_dev(method: RetrievalMethod, dataset: Dataset, protocol: str) -> RetrievalMethod:
    """Train the wrapped model on train, selecting snapshots and stopping early on dev (when there is one)."""
    model = method.encoder if isinstance(method, EncoderMethod) else method.scorer
    dev = dataset.subset("dev") if "dev" in dataset.splits else None
    model.fit(dataset.subset("train"), dev=dev)
    return method

