"""PyTorch, imported on first use: the neural models are an optional extra."""

from __future__ import annotations

from .._core.errors import import_optional

__all__ = ["torch_module"]


def torch_module():
    """``torch``, or a :class:`~kcca_desc._core.errors.MissingDependencyError` naming the ``torch`` extra."""
    return import_optional("torch", "torch", "the trainable models")
