"""The machine record every benchmark stores beside its figures."""

from __future__ import annotations

import os
import platform

import numpy as np
from threadpoolctl import threadpool_info

__all__ = ["BLAS_OVERRIDES", "blas_libraries", "machine_info"]

#: Environment variables that override OpenBLAS's own choice of compute kernel.
BLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def blas_libraries() -> list[dict]:
    """The BLAS libraries loaded in this process: library, version, kernel and threads of each."""
    return [{k: pool.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}
            for pool in threadpool_info() if pool.get("user_api") == "blas"]


def machine_info() -> dict:
    """Platform, versions, cores, load, the BLAS libraries that ran and any override of their kernel.

    The BLAS kernel is recorded because it moves dense-LAPACK timings: forcing
    ``OPENBLAS_CORETYPE=Haswell`` (AVX2) on an AVX-512 CPU made exact KCCA's stages 1.25-1.63x
    slower at n = 6,000 (``benchmarks/blas_kernels.py``). The load average is recorded because
    the benchmarks ran on a shared machine: compare ratios taken in one run, not across records.
    """
    overrides = {k: v for k, v in os.environ.items() if k in BLAS_OVERRIDES}
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "python": platform.python_version(), "numpy": np.__version__, "cpus": os.cpu_count(),
            "load_average_at_start": os.getloadavg(), "blas": blas_libraries(), "blas_env": overrides}
