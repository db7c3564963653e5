"""Memory guards: refuse work that cannot fit in memory before starting it.

An exact KCCA on n training items holds several n x n float64 matrices (two Grams, their
centred copies, the eigendecompositions' vectors and workspace), so memory grows with n^2:
about 1.7 GB at n = 6,000 but 46 GB at n = 30,000.  Past what the machine has, the operating
system kills the process (SIGKILL, no message) minutes into the run, or swaps for hours.
:func:`require_memory` compares an estimate with the memory available now — the smaller of the
system's ``MemAvailable`` (``/proc/meminfo``, else ``sysconf``) and the room left under a
cgroup (container) limit — and raises :class:`InsufficientMemoryError`, saying what needs how
much and what to do instead, before any of that work is done.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import InsufficientMemoryError

__all__ = ["available_memory", "require_memory", "format_bytes", "InsufficientMemoryError"]

# Share of the available memory a single step may plan to use: the rest is headroom for the
# arrays the estimate leaves out and for other processes.
_USABLE = 0.9


def _meminfo_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _cgroup_room() -> int | None:
    """Bytes left under the cgroup v2 (or v1) memory limit, None when unlimited or unknown."""
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            limit = Path(limit_file).read_text().strip()
            usage = int(Path(usage_file).read_text().strip())
        except (OSError, ValueError):
            continue
        # cgroup v1 writes a huge number for "no limit".
        if limit != "max" and int(limit) < 1 << 60:
            return max(int(limit) - usage, 0)
    return None


def available_memory() -> int | None:
    """Bytes of memory available to this process now, or None where it cannot be read."""
    known = [b for b in (_meminfo_available(), _cgroup_room()) if b is not None]
    return min(known) if known else None


def format_bytes(n: float) -> str:
    """``n`` bytes in words, e.g. ``'1.7 GB'``."""
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


def require_memory(n_bytes: float, what: str, advice: str) -> None:
    """Raise :class:`InsufficientMemoryError` when ``n_bytes`` exceed the memory available.

    Parameters
    ----------
    n_bytes : float
        Estimated peak memory of the step.
    what : str
        The step, e.g. ``"the exact KCCA on 30,000 training items"``.
    advice : str
        What to do instead, e.g. ``"use the low-rank solver (--kcca-rank 2000)"``.
    """
    available = available_memory()
    if available is not None and n_bytes > _USABLE * available:
        raise InsufficientMemoryError(
            f"{what} needs about {format_bytes(n_bytes)} of memory, but this machine has "
            f"{format_bytes(available)} available: {advice}")
