"""Importing the PyTorch families' libraries beside a torchvision whose C++ operators do not load.

open_clip and timm use torchvision's image transforms (resize, crop, normalise on PIL images),
which are pure Python, and transformers (so sentence-transformers) imports torchvision whenever
it is installed.  torchvision itself is written to run without its compiled operators:
when its ``_C`` extension does not load it sets ``extension._has_ops()`` to False, skips their
registrations, and its ``torchvision.ops`` functions raise a clear error of their own.  Two
registrations of torchvision 0.28 and 0.29 lack that guard: ``_meta_registrations`` registers
fake kernels for ``torchvision::nms`` and ``torchvision::qnms``, which raises
``RuntimeError: operator torchvision::nms does not exist``, so ``import torchvision`` fails as a
whole.  That is the case of PyPI's torchvision 0.28.0 (a CUDA build, its ``_C`` linked to
``libtorch_cuda``) beside the CPU build of torch 2.13.0 that this project installs: the only
torchvision PyPI serves for that torch, and the pair that keeps the test environment at about
0.8 GB instead of the 5.5 GB of a CUDA torch with its NVIDIA libraries.

:func:`import_torch_library` imports the library and, on exactly that failure, defines the two
operators' schemas (no kernel), which lets the import finish; nothing else changes, and calling
``torchvision.ops.nms`` still raises torchvision's own "Couldn't load custom C++ ops".
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from types import ModuleType

from .._core.errors import import_optional

__all__ = ["import_torch_library", "library_installed"]

logger = logging.getLogger(__name__)

# The schemas of the operators torchvision registers without checking that its _C loaded
# (torchvision/csrc/ops/nms.cpp and quantized/cpu/qnms_kernel.cpp).
_UNGUARDED_SCHEMAS = ("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
                      "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
_SYMPTOM = "operator torchvision::nms does not exist"

# Kept alive for the process: the schemas live as long as their Library object.
_schemas: list = []


def _define_missing_schemas(torch) -> None:
    library = torch.library.Library("torchvision", "FRAGMENT")
    for schema in _UNGUARDED_SCHEMAS:
        library.define(schema)
    _schemas.append(library)


def _prepare_torchvision(torch) -> None:
    """Import torchvision; on the unguarded-registration failure, define the schemas for the next import.

    Any other failure is left to the caller's import, which reports it.
    """
    try:
        import torchvision  # noqa: F401
        return
    except Exception as exc:  # noqa: BLE001 - reported by the caller's import
        if _SYMPTOM not in str(exc) or _schemas:
            return
    # The failed import left half-initialised torchvision modules behind.
    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        del sys.modules[name]
    _define_missing_schemas(torch)
    logger.info("torchvision's C++ operators do not load beside torch %s; its transforms are used without them",
                torch.__version__)


def import_torch_library(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module`` (``"open_clip"``, ``"timm"``, ``"transformers"``), tolerating a torchvision without
    its operators.

    Raises
    ------
    MissingDependencyError
        As :func:`~kcca_desc._core.errors.import_optional`: torch, torchvision or ``module``
        missing, or failing to import for another reason (the message quotes it).
    """
    torch = import_optional("torch", extra, purpose)
    if "torchvision" not in sys.modules:
        _prepare_torchvision(torch)
    return import_optional(module, extra, purpose)


def library_installed(module: str) -> bool:
    """Whether ``module`` can be found, without importing it (a module set to None counts as absent)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
