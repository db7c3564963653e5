"""Progress of long work: tqdm bars on a terminal, one log line per stage otherwise.

Every long loop of the toolkit (image feature extraction, Gram rows, incomplete Cholesky
pivots, the KCCA grid, encoder batches, training epochs) wraps its iterable in
:func:`progress` (or advances a :func:`progress_bar` where items finish out of a loop, e.g. in
worker threads), and every long step without a loop of its own runs inside :func:`stage`.  The stages of a
pipeline, long on some data and instant on others, run inside :func:`watched_stage`, which
speaks only when a stage runs past a few seconds: no step of a run is a silent minute.
What is shown depends on where standard error goes:

* a terminal: a ``tqdm`` bar with the count, the rate and the time left;
* anything else (a log file, a CI job, a notebook's captured stream): no bar, but one line
  when a loop or stage starts and one when it ends (with its count, time and rate), plus a
  line every ``interval`` seconds in between, through the ``kcca_desc.progress`` logger;
* quiet (:func:`set_quiet`, the command line's ``--quiet`` or ``KCCA_DESC_QUIET=1``): nothing.

Progress goes to standard error only, so results written to files or standard output never
carry bar output.

Logging and warnings in library use
-----------------------------------
The toolkit prints nothing: it reports through the ``logging`` loggers under ``kcca_desc`` and
through :mod:`warnings`.

* ``kcca_desc.progress``: the progress lines above, at ``INFO`` level, on a handler of its own
  (so they show without any logging configuration, and once).  Silence them with
  ``logging.getLogger("kcca_desc").setLevel(logging.WARNING)`` (or the same on
  ``"kcca_desc.progress"``), or with :func:`set_quiet`; ``set_quiet`` also stops the bars.
* ``kcca_desc.stages``, ``kcca_desc.data``, ``kcca_desc.kcca`` and the other loggers of the
  hierarchy: details at ``INFO`` and ``DEBUG`` level (the stage now running, a data warning
  already shown, a kernel's negligible negative eigenvalues), shown as the application's
  logging configuration says, e.g. ``logging.basicConfig(level=logging.DEBUG)``.
* Problems of the user's data or settings are :mod:`warnings` (``UserWarning``,
  ``RuntimeWarning``) attributed to the user's call, each shown once per run and data set or
  kernel; route them to logging with ``logging.captureWarnings(True)`` or filter them with
  :func:`warnings.filterwarnings`.
* The encoder libraries' own bars (Hugging Face Hub downloads, transformers' weight loading)
  are switched off while the toolkit loads and runs an encoder, under its own progress.

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
import threading
import time
import weakref
from collections.abc import Iterable, Iterator
from typing import TypeVar

__all__ = ["progress", "progress_bar", "stage", "watched_stage", "set_stage", "report_stages_to", "set_quiet",
           "is_quiet", "counted", "LOGGER", "LINE_FORMAT", "TIME_FORMAT"]

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


# When the last progress line was logged (time.perf_counter()), for watched_stage.
_last_line = [0.0]


def _shown(record: logging.LogRecord) -> bool:
    """Whether a progress line is shown: not below the level a user set on ``kcca_desc``; noted if so.

    The progress logger has a level and a handler of its own (shown without configuration), so
    the level of its parent is honoured here.
    """
    parent = logging.getLogger("kcca_desc").level
    if parent and record.levelno < parent:
        return False
    _last_line[0] = time.perf_counter()
    return True


LOGGER.addFilter(_shown)

#: The format of a progress line (``20:06:59 KCCA solves (one per κ): started (2 κs)``), and of
#: every log line of the command line's ``-v``, so that the two read as one log.
LINE_FORMAT, TIME_FORMAT = "%(asctime)s %(message)s", "%H:%M:%S"

if not LOGGER.handlers:
    _handler = _StderrHandler()
    _handler.setFormatter(logging.Formatter(LINE_FORMAT, TIME_FORMAT))
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


def counted(count: int, unit: str, of: int | None = None) -> str:
    """``"1 epoch"``, ``"3 batches"``, ``"3/5 epochs"``: a count and its unit, in English.

    For every message that counts something (progress lines, warnings, errors), so that none
    reads "1 images".
    """
    plural = _PLURALS.get(unit, unit + "s")
    return f"{count}{'' if of is None else f'/{of}'} {unit if (of or count) == 1 else plural}"


def _format_rate(count: int, seconds: float, unit: str) -> str:
    rate = count / seconds if seconds > 0 else float("inf")
    return f"{counted(count, unit)} in {seconds:.1f} s ({rate:.3g} {unit}/s)"


# Our bars while they exist: a bar speaks for its stage (a line at most every _LOG_INTERVAL
# seconds). Weak references, and only ours: a bar dropped unclosed (a loop left early), or one
# another library left open, would otherwise keep every watched stage silent.
_logged_bars: weakref.WeakSet = weakref.WeakSet()
_terminal_bars: weakref.WeakSet = weakref.WeakSet()


def _bars_open() -> bool:
    """Whether one of our bars is showing: open, and advanced within the last ``_LOG_INTERVAL`` seconds.

    A bar idle longer than that is stuck on one long item (or was left unclosed): the watched
    stage around it speaks then.
    """
    now, wall = time.perf_counter(), time.time()
    return (any(not bar.closed and now - bar.touched < _LOG_INTERVAL for bar in list(_logged_bars))
            or any(bar in type(bar)._instances and wall - getattr(bar, "last_print_t", 0.0) < _LOG_INTERVAL
                   for bar in list(_terminal_bars)))


def _terminal_bar(iterable=None, **settings):
    """A tqdm bar on the terminal, remembered by :func:`_bars_open`."""
    from tqdm.auto import tqdm

    bar = tqdm(iterable, dynamic_ncols=True, **settings)
    _terminal_bars.add(bar)
    return bar


class _LoggedBar:
    """The bar of a log: a line at the start, every ``_LOG_INTERVAL`` seconds and at the end."""

    def __init__(self, total: int | None, desc: str, unit: str):
        self.total, self.desc, self.unit = total, desc, unit
        self.count, self.closed = 0, False
        self.start = self.last = self.touched = time.perf_counter()
        _logged_bars.add(self)
        LOGGER.info("%s: started%s", desc, f" ({counted(total, unit)})" if total is not None else "")

    def update(self, n: int = 1) -> None:
        self.count += n
        now = self.touched = time.perf_counter()
        if now - self.last >= _LOG_INTERVAL:
            self.last = now
            eta = ""
            if self.total:
                eta = f", about {(now - self.start) / self.count * (self.total - self.count):.0f} s left"
            LOGGER.info("%s: %s%s", self.desc, counted(self.count, self.unit, self.total), eta)

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
        return _terminal_bar(total=total, desc=desc, unit=unit, leave=leave)
    return _LoggedBar(total, desc, unit)


def _logged(iterable: Iterable[T], bar: _LoggedBar) -> Iterator[T]:
    try:
        for item in iterable:
            yield item
            bar.update()
    finally:
        bar.close()


def progress(iterable: Iterable[T], total: int | None = None, desc: str = "",
             unit: str = "it", leave: bool = False, enabled: bool = True) -> Iterable[T]:
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
    enabled : bool, default=True
        Show nothing when false (an estimator's ``progress=False``), as when progress is quiet.

    Returns
    -------
    iterable
        Yields the items of ``iterable`` in order.
    """
    if not enabled or is_quiet():
        return iterable
    if total is None:
        try:
            total = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            total = None
    if _on_terminal():
        return _terminal_bar(iterable, total=total, desc=desc, unit=unit, leave=leave)
    return _logged(iterable, _LoggedBar(total, desc, unit))


@contextlib.contextmanager
def stage(desc: str) -> Iterator[None]:
    """Report one long step that has no loop of its own (a factorisation, a solve).

    Logs a line when the step starts, one with its duration when it ends (on a terminal too: a
    step has no count for a bar to show), and one with the time so far after each 30 seconds
    without a progress line in between.
    """
    if is_quiet():
        yield
        return
    start = time.perf_counter()
    LOGGER.info("%s ...", desc)
    announced = threading.Event()
    announced.set()
    with _heartbeat(desc, start, announced, _LOG_INTERVAL):
        yield
    LOGGER.info("%s: done in %.1f s", desc, time.perf_counter() - start)


# Seconds a watched stage may run without a line: short enough that no step looks hung, long
# enough that the many instant stages of a small run print nothing.
_WATCH_AFTER = 5.0
# Seconds between two looks of a watched stage at the progress lines.
_WATCH_POLL = 0.25


@contextlib.contextmanager
def watched_stage(desc: str, *, after: float = _WATCH_AFTER) -> Iterator[None]:
    """Run a step that may be long or instant, and report it only if it is long.

    Nothing is logged for a step shorter than ``after`` seconds.  When the progress lines have
    been silent for ``after`` seconds inside a longer one, a line says it is running (with its
    time so far), and again after each further 30 seconds of silence; a step so announced gets
    a line with its duration when it ends.  Loops inside the step show their own progress as
    usual; while one shows a bar, the step speaks only after 30 + ``after`` seconds of silence
    (a bar stuck on one long item).

    Parameters
    ----------
    desc : str
        What the step does ("image gram", "KCCA fit").
    after : float, default=5.0
        Seconds of silence before the first line.
    """
    if is_quiet():
        yield
        return
    start = time.perf_counter()
    announced = threading.Event()
    try:
        with _heartbeat(desc, start, announced, after):
            yield
    finally:
        if announced.is_set():
            LOGGER.info("%s: done in %.1f s", desc, time.perf_counter() - start)


# The steps now watched, outermost first.
_watching: list[object] = []


@contextlib.contextmanager
def _heartbeat(desc: str, start: float, announced: threading.Event, after: float) -> Iterator[None]:
    """While inside, log "running" whenever the progress lines have been silent long enough.

    Long enough: ``after`` seconds before the first such line (``announced`` is then set),
    ``_LOG_INTERVAL`` seconds once the step has been announced, ``_LOG_INTERVAL + after`` while
    a bar is showing (a bar whose items finish logs first).
    """
    finished = threading.Event()
    token = object()
    _watching.append(token)

    def watch() -> None:
        while not finished.wait(_WATCH_POLL):
            if _watching[-1] is not token:  # the innermost step speaks for the steps around it
                continue
            now = time.perf_counter()
            # A showing bar speaks for the step, a line every _LOG_INTERVAL seconds as its items
            # finish: only a bar stuck on one long item (k-means) leaves a longer silence.
            if _bars_open():
                wait = _LOG_INTERVAL + after
            else:
                wait = _LOG_INTERVAL if announced.is_set() else after
            if now - max(start, _last_line[0]) >= wait:
                LOGGER.info("%s: running, %.0f s so far ...", desc, now - start)
                announced.set()

    watcher = threading.Thread(target=watch, name=f"kcca_desc progress: {desc}", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        finished.set()
        watcher.join()
        _watching.remove(token)


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
