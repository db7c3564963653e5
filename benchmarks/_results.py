"""Where every benchmark writes its figures (``benchmarks/results/<name>.json``), and how it times.

Writes are atomic (:func:`kcca_desc.cache.atomic_write_text`): a benchmark interrupted while
saving leaves the previous figures, never a truncated file.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from threadpoolctl import threadpool_info

from kcca_desc.cache import atomic_write_text

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def results_path(name: str) -> Path:
    """``benchmarks/results/<name>.json``."""
    return RESULTS_DIR / f"{name}.json"


def write_results(path: Path, figures: Any, indent: int = 2, default: Callable | None = None) -> None:
    """Save ``figures`` as JSON at ``path`` atomically and say so."""
    atomic_write_text(path, json.dumps(figures, indent=indent, default=default) + "\n")
    print(f"wrote {path}")


#: Environment variables that override OpenBLAS's own choice of compute kernel.
BLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def blas_libraries() -> list[dict]:
    """The BLAS libraries loaded in this process: library, version, kernel and threads of each."""
    return [{k: pool.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}
            for pool in threadpool_info() if pool.get("user_api") == "blas"]


def machine_info() -> dict:
    """Platform, cores, load, the BLAS libraries that ran and any override of their kernel.

    The BLAS kernel is recorded because it moves dense-LAPACK timings: forcing
    ``OPENBLAS_CORETYPE=Haswell`` (AVX2) on an AVX-512 CPU made exact KCCA's stages 1.25-1.63x
    slower at n = 6,000 (``benchmarks/blas_kernels.py``).
    """
    overrides = {k: v for k, v in os.environ.items() if k in BLAS_OVERRIDES}
    return {"platform": platform.platform(), "cpus": os.cpu_count(),
            "load_average_at_start": os.getloadavg(), "blas": blas_libraries(), "blas_env": overrides}


def median_time(function: Callable[[], Any], repeats: int) -> float:
    """Median wall time in seconds of ``repeats`` calls of ``function`` (the median resists noise)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
