"""Choice of the array backend that computes a kernel matrix.

Every kernel function of this package takes ``backend="auto" | "numba" | "cupy" | "numpy"``:

- ``"numba"``: compiled, multi-threaded CPU loops (the default without a GPU);
- ``"cupy"``: CUDA kernels through CuPy (an optional dependency, ``pip install cupy-cuda12x``);
- ``"numpy"``: plain NumPy broadcasting, the slow, obviously-correct reference;
- ``"auto"``: ``"cupy"`` when CuPy imports *and* a CUDA device answers, else ``"numba"``.

CuPy imports without a GPU and only fails at the first array operation, so availability is
decided by running one tiny operation, once per process.
"""

from __future__ import annotations

import functools
import logging

from .errors import ParameterError

__all__ = ["BACKENDS", "cupy_available", "resolve_backend"]

logger = logging.getLogger(__name__)

#: Accepted values of every ``backend`` parameter.
BACKENDS = ("auto", "numba", "cupy", "numpy")


@functools.lru_cache(maxsize=None)
def _probe_cupy() -> str | None:
    """None when CuPy computes on a device, else the reason it cannot (probed once)."""
    try:
        import cupy
        cupy.asnumpy(cupy.arange(2, dtype=cupy.float32).sum())
    except Exception as exc:  # ImportError, CUDARuntimeError, CompileException...
        return f"{type(exc).__name__}: {exc}"
    return None


def cupy_available() -> bool:
    """Whether CuPy imports and a CUDA device runs a first array operation."""
    return _probe_cupy() is None


@functools.lru_cache(maxsize=None)
def _log_cupy_fallback(reason: str) -> None:
    # Cached so that the fallback is reported once per process, not once per kernel call.
    logger.info("CuPy unavailable (%s): using Numba", reason)


def resolve_backend(backend: str) -> str:
    """Concrete backend for a ``backend`` parameter.

    Parameters
    ----------
    backend : {"auto", "numba", "cupy", "numpy"}
        Requested backend.

    Returns
    -------
    backend : {"numba", "cupy", "numpy"}
        ``"auto"`` becomes ``"cupy"`` when :func:`cupy_available`, else ``"numba"`` (logging
        the reason once at INFO level).

    Raises
    ------
    ValueError
        If ``backend`` is not one of :data:`BACKENDS`, or is ``"cupy"`` while CuPy cannot run.
    """
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ParameterError(f"backend must be one of {BACKENDS}; got {backend!r}")
    if backend == "auto":
        reason = _probe_cupy()
        if reason is None:
            return "cupy"
        _log_cupy_fallback(reason)
        return "numba"
    if backend == "cupy" and not cupy_available():
        raise ParameterError(f"backend='cupy' requested but CuPy cannot run here ({_probe_cupy()})")
    return backend
