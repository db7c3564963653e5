"""PyTorch, imported on first use: the neural models are an optional extra."""

from __future__ import annotations

from ..adapters.onnx_models import require_package

__all__ = ["torch_module"]


def torch_module():
    """``torch``, or an ImportError naming the ``torch`` extra."""
    return require_package("torch", "torch", "the trainable models (pip install torch==2.13.0)")
