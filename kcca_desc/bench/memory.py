"""Peak memory of a benchmarked call across this process and every process it started."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

__all__ = ["PeakMemory", "timed_with_peak_rss"]


class PeakMemory:
    """Samples the resident memory of this process and all its descendants (e.g. Dask workers).

    :mod:`tracemalloc` sees only this process's Python allocations; a Dask run spends its memory
    in worker processes, so the peak here is the largest sum of resident set sizes seen by a
    sampling thread (every ``interval`` seconds).  Pages shared between processes are counted
    once per process, so the figure is an upper bound; a peak shorter than ``interval`` can be
    missed.

    Examples
    --------
    >>> with PeakMemory() as memory:
    ...     block = bytearray(50 * 2**20)
    >>> memory.peak_gib > 0
    True
    """

    def __init__(self, interval: float = 0.05):
        self.interval = interval
        self.peak_bytes = 0

    def _sample(self) -> int:
        import psutil

        total = 0
        me = psutil.Process()
        for process in [me, *me.children(recursive=True)]:
            try:
                total += process.memory_info().rss
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue  # a worker that ended between listing and reading
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_bytes = max(self.peak_bytes, self._sample())
            self._stop.wait(self.interval)

    def __enter__(self) -> "PeakMemory":
        self._stop = threading.Event()
        self.peak_bytes = self._sample()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_bytes = max(self.peak_bytes, self._sample())

    @property
    def peak_gib(self) -> float:
        return self.peak_bytes / 2**30


def timed_with_peak_rss(function: Callable[[], Any]) -> tuple[Any, float, float]:
    """Result, wall seconds and peak GiB resident in this process and its children of ``function()``."""
    with PeakMemory() as memory:
        start = time.perf_counter()
        result = function()
        seconds = time.perf_counter() - start
    return result, seconds, memory.peak_gib
