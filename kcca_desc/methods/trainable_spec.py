"""What a trainable system is: its model class, the settings that define it, its configurations.

A :class:`TrainableSpec` is the whole description of one of the seed papers' trainable systems
(:mod:`.trainable_systems` registers them): the model class of :mod:`kcca_desc.neural`, the
settings that make the system what it is (``fixed``), its named configurations (a size and
schedule each, :data:`CONFIGURATIONS`) and the retrieval-system wrapper of the model.  Its
settings are read-only mappings checked against the model's parameters when the spec is made,
that is when it is registered at import: a misspelt parameter name or a value the model's
``_parameter_constraints`` refuse is a :class:`~kcca_desc._core.errors.ParameterError` then,
not hours later in ``fit``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .._core.errors import ParameterError
from .._core.validation import validate_params
from ..neural import TrainableModel
from .base import RetrievalMethod

__all__ = ["TrainableSpec", "CONFIGURATIONS", "frozen_settings"]

#: The configurations every trainable system has, the command line's ``--train-config``: ``cpu``
#: (sized by measurement for a CPU) and ``paper`` (the paper's size, for a GPU).
CONFIGURATIONS = ("cpu", "paper")


def frozen_settings(settings: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only copy of ``settings`` (parameter name -> value)."""
    return MappingProxyType(dict(settings))


@dataclass(frozen=True)
class TrainableSpec:
    """One trainable system: the model it builds, in which settings, and how it retrieves.

    The model of configuration ``c`` is ``model(**configs[c], **fixed)``.

    Parameters
    ----------
    model : type
        The model class (a :class:`~kcca_desc.neural.TrainableModel`).
    wrapper : callable
        ``wrapper(model) -> RetrievalMethod``: :class:`~.encoders.EncoderMethod` for an encoder
        (cosine in the joint space), :class:`~.encoders.PairScorerMethod` for a pair scorer.
    configs : mapping of str to mapping
        The settings of each configuration by name; :data:`CONFIGURATIONS` must be among them.
    fixed : mapping, default={}
        The settings that make the system what it is (a loss, an ablation step), the same in
        every configuration; a configuration may not set them too.

    Raises
    ------
    ParameterError
        When a setting names no parameter of ``model``, a value breaks the model's parameter
        constraints, a configuration of :data:`CONFIGURATIONS` is missing or a configuration sets
        a fixed setting.
    """

    model: type[TrainableModel]
    wrapper: Callable[[TrainableModel], RetrievalMethod]
    configs: Mapping[str, Mapping[str, Any]]
    fixed: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        # Read-only copies: a registered system cannot change under the checkpoints it keyed.
        object.__setattr__(self, "fixed", frozen_settings(self.fixed))
        object.__setattr__(self, "configs", MappingProxyType(
            {name: frozen_settings(settings) for name, settings in self.configs.items()}))
        missing = [name for name in CONFIGURATIONS if name not in self.configs]
        if missing:
            raise ParameterError(f"{self.model.__name__}: a trainable system needs the configurations "
                                 f"{', '.join(CONFIGURATIONS)}; missing {', '.join(missing)}")
        for name, settings in self.configs.items():
            clash = sorted(set(settings) & set(self.fixed))
            if clash:
                raise ParameterError(f"{self.model.__name__}: configuration {name!r} sets the fixed "
                                     f"setting(s) {', '.join(clash)}")
            self._check_names(settings, f"configuration {name!r}")
        self.check(self.fixed, "fixed settings")

    def check(self, settings: Mapping[str, Any], where: str) -> None:
        """Raise a :class:`ParameterError` unless ``settings`` suit every configuration.

        Every key must be a parameter of :attr:`model`, and the model of every configuration with
        ``settings`` over it must meet the model's ``_parameter_constraints`` (only those: the
        checks of ``fit`` that load word vectors wait for ``fit``).  ``where`` names the settings
        in the message.
        """
        self._check_names(settings, where)
        for config in self.configs:
            validate_params(self.build(config, **settings))

    def _check_names(self, settings: Mapping[str, Any], where: str) -> None:
        accepted = inspect.signature(self.model).parameters
        unknown = [name for name in settings if name not in accepted]
        if unknown:
            raise ParameterError(f"{self.model.__name__} has no parameter {', '.join(map(repr, unknown))} "
                                 f"({where}); its parameters: {', '.join(accepted)}")

    def params(self, config: str = "cpu", **overrides: Any) -> dict[str, Any]:
        """The model's parameters in configuration ``config``, with ``overrides`` over the fixed settings.

        Raises
        ------
        ParameterError
            For a configuration the system does not have.
        """
        if config not in self.configs:
            raise ParameterError(f"{self.model.__name__}: unknown configuration {config!r}; "
                                 f"known: {', '.join(self.configs)}")
        return {**self.configs[config], **self.fixed, **overrides}

    def build(self, config: str = "cpu", **overrides: Any) -> TrainableModel:
        """The unfitted model of configuration ``config``, with ``overrides`` applied (:meth:`params`)."""
        return self.model(**self.params(config, **overrides))
