"""Running commands under other checkouts of the toolkit, for side-by-side timings."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["add_checkout_arguments", "parse_checkout_arguments", "checkouts_of", "checkout_python", "checkout_commit",
           "run_in_checkout", "rank_agreement"]


#: The checkout these scripts belong to: the default of both sides.
HERE = Path(__file__).resolve().parents[2]


def add_checkout_arguments(parser: argparse.ArgumentParser) -> None:
    """``--before`` and ``--after`` (checkout folders, default this one) and ``--data-root``."""
    parser.add_argument("--before", type=Path, help="checkout timed first (default: this one)")
    parser.add_argument("--after", type=Path, default=HERE, help="checkout timed second (default: this one)")
    parser.add_argument("--data-root", default=os.environ.get("KCCA_DESC_FLICKR8K"))


def parse_checkout_arguments(parser: argparse.ArgumentParser, argv, defaults: dict, script: str, quick: str,
                             work: str) -> tuple[argparse.Namespace, dict[str, Path]]:
    """Add ``--work`` and the output options to ``parser``, parse ``argv`` and fill ``defaults``.

    The common end of the command lines of the scripts that time two checkouts; ``quick`` says what
    ``--quick`` runs, ``work`` what the work folder holds.  Returns the arguments (``out`` set) and
    :func:`checkouts_of` them.
    """
    from . import add_output_arguments, fill_defaults, output_path

    parser.add_argument("--work", type=Path, help=f"folder of {work} (default: a temporary one)")
    add_output_arguments(parser, quick)
    args = parser.parse_args(argv)
    fill_defaults(args, defaults)
    args.out = output_path(args, script)
    return args, checkouts_of(args)


def checkouts_of(args: argparse.Namespace) -> dict[str, Path]:
    """``{"before": folder, "after": folder}`` of the parsed :func:`add_checkout_arguments`."""
    return {"before": (args.before or HERE).resolve(), "after": args.after.resolve()}


def checkout_python(checkout: Path) -> str:
    """The checkout's ``.venv/bin/python`` (the checkout installed there in editable mode), else this one."""
    venv = checkout / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def checkout_commit(checkout: Path) -> str | None:
    """The checkout's abbreviated commit (None outside git)."""
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True, text=True)
    return rev.stdout.strip() or None


def run_in_checkout(checkout: Path, args: list[str], cache: Path, log: Path) -> float:
    """Run ``python <args>`` in ``checkout`` with the cache ``cache``; seconds taken.

    Quietly (``KCCA_DESC_QUIET``), its output to ``log``; a failure raises, naming the log.
    """
    env = {**os.environ, "KCCA_DESC_CACHE": str(cache), "KCCA_DESC_QUIET": "1"}
    start = time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run([checkout_python(checkout), *args], cwd=checkout, env=env, stdout=out,
                              stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:2])} failed in {checkout} (exit {done.returncode}); see {log}")
    return seconds


def rank_agreement(before: dict, after: dict) -> dict:
    """Per system (``{name: {"ranks": {task: ranks}}}``): queries whose rank differs, and the largest difference."""
    out = {}
    for name in sorted(set(before) & set(after)):
        moved, largest, total = 0, 0, 0
        for task, ranks in before[name]["ranks"].items():
            a, b = np.asarray(ranks, float), np.asarray(after[name]["ranks"].get(task, []), float)
            if a.shape != b.shape:
                raise RuntimeError(f"{name} {task}: {a.shape} ranks before, {b.shape} after")
            moved += int(np.count_nonzero(a != b))
            largest = max(largest, int(np.abs(a - b).max(initial=0)))
            total += a.size
        out[name] = {"queries": total, "moved": moved, "largest_move": largest}
    return out
