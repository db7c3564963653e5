"""Peak memory of a benchmarked call across this process and every process it started."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

__all__ = ["PeakMemory", "timed_with_memory", "timed_with_peak_rss"]


class PeakMemory:
    """Samples the resident memory of this process and all its descendants (e.g. Dask workers).

    :mod:`tracemalloc` sees only this process's Python allocations; a Dask run spends its memory
    in worker processes, so the peak here is the largest sum of resident set sizes seen by a
    sampling thread (every ``interval`` seconds).  Pages shared between processes are counted
    once per process, so the figure is an upper bound; a peak shorter than ``interval`` can be
    missed.

    Parameters
    ----------
    interval : float, default=0.05
        Seconds between samples.
    window : float, optional
        Also keep, for each ``window`` seconds, the sample with the largest total in
        :attr:`timeline` (to tell which stage of a long run holds the memory).

    Examples
    --------
    >>> with PeakMemory() as memory:
    ...     block = bytearray(50 * 2**20)
    >>> memory.peak_gib > 0
    True
    """

    def __init__(self, interval: float = 0.05, window: float | None = None):
        self.interval = interval
        self.window = window
        self.peak_bytes = 0
        self.peak_split = (0, [])
        self.timeline: list[dict] = []

    def _sample(self) -> tuple[int, list[int]]:
        """Resident bytes of this process and of each descendant."""
        import psutil

        me = psutil.Process()
        sizes = []
        for process in [me, *me.children(recursive=True)]:
            try:
                sizes.append(process.memory_info().rss)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                sizes.append(0)  # a worker that ended between listing and reading
        return sizes[0], sizes[1:]

    def _record(self) -> None:
        mine, others = self._sample()
        total = mine + sum(others)
        if total > self.peak_bytes:
            self.peak_bytes, self.peak_split = total, (mine, others)
        if self.window:
            start = round(self.window * int((time.perf_counter() - self._start) // self.window), 6)
            if not self.timeline or self.timeline[-1]["t_s"] != start:
                self.timeline.append({"t_s": start, "gib": 0.0})
            if total / 2**30 > self.timeline[-1]["gib"]:
                self.timeline[-1].update(gib=total / 2**30, this_process_gib=mine / 2**30)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._record()
            self._stop.wait(self.interval)

    def __enter__(self) -> "PeakMemory":
        self._stop = threading.Event()
        self._start = time.perf_counter()
        self._record()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._record()

    @property
    def peak_gib(self) -> float:
        return self.peak_bytes / 2**30

    @property
    def peak_split_gib(self) -> dict:
        """At the peak: GiB resident in this process, and in each descendant (largest first)."""
        mine, others = self.peak_split
        return {"this_process": mine / 2**30, "descendants": sorted((b / 2**30 for b in others), reverse=True)}


def timed_with_memory(function: Callable[[], Any], window: float | None = None) -> tuple[Any, float, PeakMemory]:
    """Result, wall seconds and the :class:`PeakMemory` (peak, split at the peak, timeline) of ``function()``."""
    with PeakMemory(window=window) as memory:
        start = time.perf_counter()
        result = function()
        seconds = time.perf_counter() - start
    return result, seconds, memory


def timed_with_peak_rss(function: Callable[[], Any]) -> tuple[Any, float, float]:
    """Result, wall seconds and peak GiB resident in this process and its children of ``function()``."""
    result, seconds, memory = timed_with_memory(function)
    return result, seconds, memory.peak_gib
