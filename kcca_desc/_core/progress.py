"""Progress of long work: tqdm bars on a terminal, one log line per stage otherwise.

Every long loop of the toolkit (image feature extraction, Gram rows, incomplete Cholesky
pivots, the KCCA grid, encoder batches, training epochs) wraps its iterable in
:func:`progress` (or advances a :func:`progress_bar` where items finish out of a loop, e.g. in
worker threads), and every long step without a loop of its own runs inside :func:`stage`.
What is shown depends on where standard error goes:

* a terminal: a ``tqdm`` bar with the count, the rate and the time left;
* anything else (a log file, a CI job, a notebook's captured stream): no bar, but one line
  when a loop or stage starts and one when it ends (with its count, time and rate), plus a
  line every ``interval`` seconds in between, through the ``kcca_desc.progress`` logger;
* quiet (:func:`set_quiet`, the command line's ``--quiet`` or ``KCCA_DESC_QUIET=1``): nothing.

Progress goes to standard error only, so results written to files or standard output never
carry bar output.

Examples
--------
>>> set_quiet(True)
>>> sum(progress(range(4), desc="squares", unit="row"))
6
>>> with stage("fit"):
...     pass
>>> set_quiet(False)
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

__all__ = ["progress", "progress_bar", "stage", "set_stage", "report_stages_to", "set_quiet", "is_quiet", "LOGGER"]

T = TypeVar("T")

LOGGER = logging.getLogger("kcca_desc.progress")

_state = {"quiet": os.environ.get("KCCA_DESC_QUIET", "") not in ("", "0")}

# Seconds between the intermediate lines of a loop when standard error is not a terminal.
_LOG_INTERVAL = 30.0


class _StderrHandler(logging.Handler):
    """Writes to the current ``sys.stderr`` (looked up at each record, so captured streams work)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # logging must never break the computation it reports on
            self.handleError(record)


if not LOGGER.handlers:
    _handler = _StderrHandler()
    _handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    LOGGER.addHandler(_handler)
    LOGGER.setLevel(logging.INFO)
    # Own handler: a caller's logging configuration (level WARNING by default) must not hide
    # progress, and progress lines must not be printed twice by the root handler.
    LOGGER.propagate = False


def set_quiet(quiet: bool = True) -> None:
    """Silence (``True``) or restore (``False``) every bar and progress line of the toolkit."""
    _state["quiet"] = bool(quiet)


def is_quiet() -> bool:
    """Whether progress is silenced."""
    return _state["quiet"]


def _on_terminal() -> bool:
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


# The units whose plural is not the unit + "s" ("epoch" ends in "ch" but takes "s").
_PLURALS = {"batch": "batches", "pass": "passes"}


def _counted(count: int, unit: str, of: int | None = None) -> str:
    """``"1 epoch"``, ``"3 batches"``, ``"3/5 epochs"``: a count and its unit, in English."""
    plural = _PLURALS.get(unit, unit + "s")
    return f"{count}{'' if of is None else f'/{of}'} {unit if (of or count) == 1 else plural}"


def _format_rate(count: int, seconds: float, unit: str) -> str:
    rate = count / seconds if seconds > 0 else float("inf")
    return f"{_counted(count, unit)} in {seconds:.1f} s ({rate:.3g} {unit}/s)"


class _LoggedBar:
    """The bar of a log: a line at the start, every ``_LOG_INTERVAL`` seconds and at the end."""

    def __init__(self, total: int | None, desc: str, unit: str):
        self.total, self.desc, self.unit = total, desc, unit
        self.count, self.closed = 0, False
        self.start = self.last = time.perf_counter()
        LOGGER.info("%s: started%s", desc, f" ({_counted(total, unit)})" if total is not None else "")

    def update(self, n: int = 1) -> None:
        self.count += n
        now = time.perf_counter()
        if now - self.last >= _LOG_INTERVAL:
            self.last = now
            eta = ""
            if self.total:
                eta = f", about {(now - self.start) / self.count * (self.total - self.count):.0f} s left"
            LOGGER.info("%s: %s%s", self.desc, _counted(self.count, self.unit, self.total), eta)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            LOGGER.info("%s: done, %s", self.desc, _format_rate(self.count, time.perf_counter() - self.start,
                                                                  self.unit))


class _NullBar:
    """The bar of quiet progress: counts nothing, shows nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int | None = None, desc: str = "", unit: str = "it", leave: bool = False,
                 enabled: bool = True):
    """A bar to advance by hand: ``bar.update(n)`` as items finish, ``bar.close()`` at the end.

    For work whose items finish outside one loop (worker threads, chunks of several items).
    Shown as :func:`progress` shows a loop; nothing when ``enabled`` is false or progress is
    quiet.

    Returns
    -------
    object with ``update(n=1)`` and ``close()``
    """
    if not enabled or is_quiet():
        return _NullBar()
    if _on_terminal():
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=desc, unit=unit, leave=leave, dynamic_ncols=True)
    return _LoggedBar(total, desc, unit)


def _logged(iterable: Iterable[T], bar: _LoggedBar) -> Iterator[T]:
    try:
        for item in iterable:
            yield item
            bar.update()
    finally:
        bar.close()


def progress(iterable: Iterable[T], total: int | None = None, desc: str = "",
             unit: str = "it", leave: bool = False) -> Iterable[T]:
    """Iterate over ``iterable`` while showing its progress.

    Parameters
    ----------
    iterable : iterable
        The work items; returned untouched when progress is quiet.
    total : int, optional
        The number of items, when ``len(iterable)`` does not give it (a generator).
    desc : str
        What the loop does ("Gram rows", "KCCA grid"), the prefix of the bar or lines.
    unit : str
        The name of one item ("row", "image", "batch").
    leave : bool
        Keep the finished bar on the terminal (outer loops); inner loops clear theirs.

    Returns
    -------
    iterable
        Yields the items of ``iterable`` in order.
    """
    if is_quiet():
        return iterable
    if total is None:
        try:
            total = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            total = None
    if _on_terminal():
        from tqdm.auto import tqdm

        return tqdm(iterable, total=total, desc=desc, unit=unit, leave=leave, dynamic_ncols=True)
    return _logged(iterable, _LoggedBar(total, desc, unit))


@contextlib.contextmanager
def stage(desc: str) -> Iterator[None]:
    """Report one long step that has no loop of its own (a factorisation, a solve).

    Logs a line when the step starts and one with its duration when it ends (on a terminal
    too: a step has no count for a bar to show).
    """
    if is_quiet():
        yield
        return
    start = time.perf_counter()
    LOGGER.info("%s ...", desc)
    yield
    LOGGER.info("%s: done in %.1f s", desc, time.perf_counter() - start)


# Write end of the pipe on which a supervised child reports its current stage (None elsewhere).
_stage_fd: list[int | None] = [None]
# Stages go to the logging tree (shown by the command line's --verbose), not to the progress lines.
_STAGE_LOGGER = logging.getLogger("kcca_desc.stages")


def set_stage(name: str) -> None:
    """Report the stage now running: logged, and named by the message of an interrupted run."""
    _STAGE_LOGGER.info("stage: %s", name)
    fd = _stage_fd[0]
    if fd is not None:
        try:
            os.write(fd, name.replace("\n", " ").encode("utf-8", "replace")[:200] + b"\n")
        except OSError:
            # A full pipe or a gone parent must never stop the computation it only describes.
            pass


def report_stages_to(fd: int | None) -> None:
    """Also write each stage :func:`set_stage` reports, one line each, to the pipe ``fd`` (None: stop).

    The command line's supervisor (:mod:`kcca_desc.cli.interrupts`) reads them to name the stage
    an interrupted run was in.
    """
    _stage_fd[0] = fd
