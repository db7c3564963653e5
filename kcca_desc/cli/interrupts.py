"""Stopping a command-line run at once on Ctrl-C (SIGINT) or SIGTERM, keeping what it finished.

A Python signal handler runs only in the main thread, between bytecodes, and only once that
thread holds the GIL.  A long call into compiled code that keeps the GIL — SciPy's LAPACK
wrappers (``eigh``, ``svd``) do, for the minute an exact KCCA eigendecomposition takes on
Flickr8K — delays Ctrl-C until it returns, and the run then ends in a ``KeyboardInterrupt``
traceback.  No choice of threads inside one process avoids that, so :func:`supervised` runs
the command in a forked child process and keeps the parent idle in ``waitpid``:

* the parent handles SIGINT and SIGTERM itself: it kills the child's whole process group
  (the child and any workers it started) with SIGKILL, which no compiled loop can delay,
  removes the temporary files the child was writing, prints the stage that was running, what
  the run kept in the cache and how to resume, and exits with ``128 + signal`` (130 for
  SIGINT, 143 for SIGTERM);
* the child runs in its own process group, so a Ctrl-C typed at the terminal reaches only the
  parent, and it asks the kernel to kill it should the parent die first (Linux
  ``PR_SET_PDEATHSIG``), so it never outlives the command; Ctrl-Z (SIGTSTP) stops the child
  with the parent, and ``fg`` / ``bg`` continue both;
* everything the child writes is written atomically (:mod:`kcca_desc._core.cache`), so a kill at any
  instant leaves every entry complete or absent; feature stores are written in chunks, so a
  re-run resumes from the last completed chunk and, the work being deterministic, gives
  byte-identical results.

Where ``os.fork`` is missing (Windows) the command runs in-process, with Python's default
handling.  Library callers of the command's ``main`` are not affected: only the command-line
entry point is supervised.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
import time
import traceback
from typing import Callable, Sequence

from .._core.cache import cache_root, remove_temporaries, written_since
from .._core.progress import report_stages_to

__all__ = ["supervised", "run_command", "run_results_command", "describe_kept", "INTERRUPT_EXIT_CODES"]

#: Exit status after each signal, the shells' convention ``128 + signal number``.
INTERRUPT_EXIT_CODES = {signal.SIGINT: 128 + signal.SIGINT, signal.SIGTERM: 128 + signal.SIGTERM}

_LOGGER = logging.getLogger(__name__)
_PR_SET_PDEATHSIG = 1
def _read_stage(fd: int) -> str | None:
    """The last stage reported on the (non-blocking) read end ``fd``."""
    data = b""
    try:
        while chunk := os.read(fd, 65536):
            data += chunk
    except (BlockingIOError, OSError):
        pass
    lines = [line for line in data.decode("utf-8", "replace").splitlines() if line]
    return lines[-1] if lines else None


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the child may outlive a SIGKILLed parent
        pass


def _run_child(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None, stage_fd: int) -> None:
    """Body of the forked child: run ``main`` and leave with its status, never returning."""
    os.setpgid(0, 0)
    _die_with_parent()
    # The parent handles these (it stops the child with SIGKILL, SIGSTOP and SIGCONT).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for signum in (signal.SIGTERM, signal.SIGTSTP):
        signal.signal(signum, signal.SIG_DFL)
    report_stages_to(stage_fd)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's --help and usage errors
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    # os._exit: the parent's atexit handlers and buffered files belong to the parent.
    os._exit(code if code is not None else 0)


def supervised(
    main: Callable[[Sequence[str] | None], int],
    argv: Sequence[str] | None = None,
    *,
    describe_kept: Callable[[float], str] | None = None,
    cleanup: Callable[[int], None] | None = None,
) -> int:
    """Run ``main(argv)`` in a child process that SIGINT and SIGTERM stop at once.

    Parameters
    ----------
    main : callable
        The command, ``main(argv) -> exit status``.
    argv : sequence of str, optional
        Its arguments (default ``sys.argv[1:]``, as ``main`` reads them).
    describe_kept : callable, optional
        ``describe_kept(start_time) -> str``: what the run kept (e.g. cache entries written
        since ``start_time``, a ``time.time()``) and how to resume, printed on interruption.
    cleanup : callable, optional
        ``cleanup(pid)``: remove what the killed child ``pid`` was half-way through writing.

    Returns
    -------
    int
        The child's exit status, or 130 (SIGINT) / 143 (SIGTERM) when interrupted — by then
        the process has already left through ``os._exit``, so this value is seen only when
        the run was not interrupted.
    """
    if not hasattr(os, "fork"):
        return main(argv)
    start = time.time()
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    os.set_blocking(write_fd, False)
    child: list[int] = []

    def interrupted(signum, frame) -> None:
        if child:
            # The child's whole group (its workers too); the child alone if its group is not made yet.
            for kill in (os.killpg, os.kill):
                try:
                    kill(child[0], signal.SIGKILL)
                    break
                except ProcessLookupError:
                    continue
            try:
                os.waitpid(child[0], 0)
            except ChildProcessError:
                pass
            if cleanup is not None:
                try:
                    cleanup(child[0])
                except OSError:
                    pass
        stage = _read_stage(read_fd)
        lines = [f"\ninterrupted by {signal.Signals(signum).name}" + (f" during {stage}" if stage else "")
                 + f" after {time.time() - start:.1f} s; stopped at once."]
        if describe_kept is not None:
            lines.append(describe_kept(start))
        sys.stderr.write("\n".join(lines) + "\n")
        sys.stderr.flush()
        os._exit(INTERRUPT_EXIT_CODES[signum])

    def suspended(signum, frame) -> None:
        # Ctrl-Z: the child, in a process group of its own, would not stop with the parent.
        if child:
            os.killpg(child[0], signal.SIGSTOP)
        os.kill(os.getpid(), signal.SIGSTOP)
        if child:  # continued (fg, bg)
            os.killpg(child[0], signal.SIGCONT)

    # Installed before the fork, so that no signal finds the parent without its handler; the
    # child replaces them first thing.
    previous = {signum: signal.signal(signum, interrupted) for signum in INTERRUPT_EXIT_CODES}
    previous[signal.SIGTSTP] = signal.signal(signal.SIGTSTP, suspended)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _run_child(main, argv, write_fd)
    child.append(pid)
    os.close(write_fd)
    try:
        # Also from here, so that the group exists whichever process runs first.
        os.setpgid(pid, pid)
    except OSError:
        pass
    _, status = os.waitpid(pid, 0)
    for signum, handler in previous.items():
        signal.signal(signum, handler)
    os.close(read_fd)
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        hint = " (out of memory?)" if signum == signal.SIGKILL else ""
        sys.stderr.write(f"error: the run was killed by {signal.Signals(signum).name}{hint}\n")
        return 128 + signum
    return os.WEXITSTATUS(status)


def describe_kept(start: float) -> str:
    """What a run started at ``start`` (a ``time.time()``) kept in the cache, and how to resume."""
    kept = written_since(start)
    if not kept:
        return (f"nothing new was written to the cache {cache_root()} (what earlier runs cached is kept); "
                "running the same command again starts this stage over.")
    counts = ", ".join(f"{where} ({n} {'file' if n == 1 else 'files'})" for where, n in sorted(kept.items()))
    return (f"kept in the cache {cache_root()} (written since this run started): {counts}.\n"
            "to resume, run the same command again: it reads what was kept, finished stages and "
            "feature chunks alike, and gives the same results as an uninterrupted run.")


def run_command(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None) -> int:
    """:func:`supervised` with the toolkit's cache: report what was kept, remove half-written files."""
    return supervised(main, argv, describe_kept=describe_kept, cleanup=remove_temporaries)


def _outputs_to_rewrite(start: float) -> str:
    # Nothing to resume from: the command reads results files and writes its outputs at the end.
    return ("nothing is kept to resume from, and an output it was writing may be incomplete: run the same "
            "command again.")


def run_results_command(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None) -> int:
    """:func:`supervised` for a command over results files (``compare``, ``report``).

    Ctrl-C and SIGTERM stop it as they stop ``fit`` (a one-line message, not a ``KeyboardInterrupt``
    traceback from inside the bootstrap or a figure), saying to run it again.
    """
    return supervised(main, argv, describe_kept=_outputs_to_rewrite, cleanup=remove_temporaries)
