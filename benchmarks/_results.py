"""Where every benchmark writes its figures (``benchmarks/results/<name>.json``), and how it times.

Writes are atomic (:func:`kcca_desc.cache.atomic_write_text`): a benchmark interrupted while
saving leaves the previous figures, never a truncated file.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from kcca_desc.cache import atomic_write_text

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def results_path(name: str) -> Path:
    """``benchmarks/results/<name>.json``."""
    return RESULTS_DIR / f"{name}.json"


def write_results(path: Path, figures: Any, indent: int = 2, default: Callable | None = None) -> None:
    """Save ``figures`` as JSON at ``path`` atomically and say so."""
    atomic_write_text(path, json.dumps(figures, indent=indent, default=default) + "\n")
    print(f"wrote {path}")


def median_time(function: Callable[[], Any], repeats: int) -> float:
    """Median wall time in seconds of ``repeats`` calls of ``function`` (the median resists noise)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
