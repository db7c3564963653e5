"""Running the command line (``python -m kcca_desc.fit``) as a user would, from benchmarks and tests:
to completion, or interrupted by a signal a moment into a named stage."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

__all__ = ["FIT", "run_cli", "interrupt_cli", "figures"]


def _environment(cache: Path) -> dict[str, str]:
    return {**os.environ, "KCCA_DESC_CACHE": str(cache), "KCCA_DESC_QUIET": "1"}


#: How the main command is run: ``python -m kcca_desc.fit``.
FIT = ["-m", "kcca_desc.fit"]


def run_cli(args: list[str], cache: Path, timeout: float = 300, env: dict[str, str] | None = None,
            command: list[str] = FIT, disk: tuple[str, Path] | None = None) -> dict:
    """The command with the cache ``cache`` (and ``env`` added): exit status (None on time-out),
    standard output and error, seconds taken.

    ``command`` is what follows ``python`` (a module with ``-m``, or a script); with ``disk``,
    ``(failure, folder)``, the folder fails as a full (``"ENOSPC"``) or read-only (``"EROFS"``)
    disk does (:mod:`kcca_bench.faults`).
    """
    if disk is not None:
        module = command[1] if command[0] == "-m" else None
        if module is None:
            raise ValueError(f"run_cli: a faulty disk needs a module run with -m, not {command}")
        command = ["-m", "kcca_bench.faults", disk[0], str(disk[1]), module]
        # The fault layer lives beside this package, which the command line does not install.
        here = str(Path(__file__).resolve().parents[1])
        env = {"PYTHONPATH": os.pathsep.join(filter(None, (here, os.environ.get("PYTHONPATH"))))} | (env or {})
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, *command, *args], capture_output=True, text=True,
                              env=_environment(cache) | (env or {}), timeout=timeout)
        return {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr,
                "s": time.perf_counter() - start}
    except subprocess.TimeoutExpired as exc:
        return {"rc": None, "stdout": exc.stdout or "", "stderr": f"timed out after {timeout} s",
                "s": time.perf_counter() - start}


def interrupt_cli(args: list[str], cache: Path, stage: str, signum: int, after: float = 0.3,
                  timeout: float = 600) -> dict:
    """Run the command with ``-v`` and send ``signum`` ``after`` seconds into ``stage``.

    The stage is read from the command's log (``stage: <name>`` lines of
    :func:`kcca_desc.cli.interrupts.set_stage`). Returns whether the stage was reached, the exit
    status, the latency from the signal to the exit, the stage the command says it was
    interrupted in, and its standard error.
    """
    run = subprocess.Popen([sys.executable, "-m", "kcca_desc.fit", *args, "-v"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=_environment(cache))
    lines: list[str] = []
    seen = threading.Event()

    def read() -> None:
        for line in run.stderr:
            lines.append(line)
            if f"stage: {stage}" in line:
                seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reached = seen.wait(timeout)
    time.sleep(after)
    sent = time.perf_counter()
    if run.poll() is None:
        run.send_signal(signum)
    run.wait(60)
    latency = time.perf_counter() - sent
    reader.join(5)
    run.stdout.close()
    stderr = "".join(lines)
    named = re.search(r"interrupted by \w+ during (.+?) after", stderr)
    return {"reached": reached, "exit_code": run.returncode, "latency_s": latency,
            "interrupted_during": named.group(1) if named else None, "stderr": stderr}


def figures(results_file: Path) -> list[dict]:
    """A ``--out`` results file less what differs between identical runs: timings, and the command
    line and software that made it (the argv names the output path)."""
    results = json.loads(Path(results_file).read_text())
    for result in results:
        for key in ("timings_s", "command", "environment"):
            result.pop(key, None)
    return results
