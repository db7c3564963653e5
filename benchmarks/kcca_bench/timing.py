"""Wall-clock timing of benchmarked calls."""

from __future__ import annotations

import statistics
import time
import tracemalloc
from typing import Any, Callable

__all__ = ["median_time", "timed_with_peak_memory"]


def median_time(function: Callable[[], Any], repeats: int) -> float:
    """Median wall time in seconds of ``repeats`` calls of ``function`` (the median resists noise)."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def timed_with_peak_memory(function: Callable[[], Any]) -> tuple[Any, float, float]:
    """Result, wall seconds and peak GiB of Python-allocated memory (NumPy arrays included) of ``function()``.

    The peak comes from :mod:`tracemalloc`, which slows allocation-heavy code a little; compare
    times measured the same way.
    """
    tracemalloc.start()
    try:
        start = time.perf_counter()
        result = function()
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] / 2**30
    finally:
        tracemalloc.stop()
    return result, seconds, peak
