"""Ctrl-C and SIGTERM stop the command within a moment, at any stage, say what was kept, and
a re-run resumes to byte-identical results."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

from kcca_bench.cli import figures, interrupt_cli, run_cli
from kcca_desc.cli.interrupts import INTERRUPT_EXIT_CODES, supervised
from kcca_desc.evaluate import Result, retrieval_metrics

# A small synthetic run (every stage of the KCCA system, a few seconds on two cores, most of
# them featurising) and a larger one whose later stages (Grams, eigendecompositions, selection)
# last long enough to be interrupted inside.
SMALL_RUN = ["--n-images", "90", "--n-components", "4,8", "--regs", "0.1,1", "--n-select", "2",
             "--text-kernel", "bow5", "--levels", "1", "--pixel-step", "4",
             *[f"--{name}-words=16" for name in ("colour", "texture", "sift")]]
LARGE_RUN = ["--n-images", "800", "--text-kernel", "tri5", "--levels", "1", "--pixel-step", "4"]

STAGES = [("image features", signal.SIGINT, SMALL_RUN), ("image features", signal.SIGTERM, SMALL_RUN)] + [
    pytest.param(stage, signum, LARGE_RUN, marks=pytest.mark.heavy)
    for stage, signum in (("text gram", signal.SIGINT), ("kcca fit", signal.SIGTERM),
                          ("model selection", signal.SIGINT), ("evaluation", signal.SIGTERM))]


@pytest.mark.parametrize("stage, signum, size", STAGES)
def test_signal_stops_the_run_at_once_with_a_message(tmp_path, stage, signum, size):
    got = interrupt_cli(size, tmp_path / "cache", stage, signum)
    assert got["reached"]
    assert got["exit_code"] == INTERRUPT_EXIT_CODES[signum] == 128 + signum
    assert got["latency_s"] < 2.0
    assert got["interrupted_during"] is not None
    assert f"interrupted by {signal.Signals(signum).name}" in got["stderr"]
    assert "to resume, run the same command again" in got["stderr"] or "nothing new was written" in got["stderr"]
    assert "Traceback" not in got["stderr"]
    # No half-written file anywhere in the cache.
    assert not list((tmp_path / "cache").rglob("*.tmp"))


@pytest.mark.heavy
def test_rerun_after_interrupt_resumes_to_identical_results(tmp_path):
    # The chunk-level resume of feature extraction is tested on the featuriser itself
    # (tests/test_cache_safety.py); here the finished stages are kept and read back.
    got = interrupt_cli(LARGE_RUN, tmp_path / "cache", "kcca fit", signal.SIGINT)
    assert got["exit_code"] == 130
    assert sorted((tmp_path / "cache").rglob("*.npz")), "the interrupted run kept nothing"
    outcomes = {}

    def finish(name):
        outcomes[name] = run_cli(LARGE_RUN + ["--out", str(tmp_path / f"{name}.json")], tmp_path / name,
                                 timeout=900)

    (tmp_path / "resumed").symlink_to(tmp_path / "cache")
    runs = [threading.Thread(target=finish, args=(name,)) for name in ("resumed", "fresh")]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    assert outcomes["resumed"]["rc"] == outcomes["fresh"]["rc"] == 0
    assert figures(tmp_path / "resumed.json") == figures(tmp_path / "fresh.json")
    assert (tmp_path / "resumed.md").read_bytes() == (tmp_path / "fresh.md").read_bytes()


def _child_main(argv):
    print("child ran", argv)
    return 3


def test_supervised_passes_the_exit_status_through(capfd):
    assert supervised(_child_main, ["a"]) == 3
    assert "child ran ['a']" in capfd.readouterr().out


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the forked child through /proc")
@pytest.mark.parametrize("command", ["compare", "report"])
def test_ctrl_c_stops_compare_and_report_with_a_message_not_a_traceback(tmp_path, command):
    # They ended in a KeyboardInterrupt traceback from inside the bootstrap or a figure.
    rng = np.random.default_rng(0)
    files = []
    for name in ("A", "B"):
        ranks = rng.integers(1, 200, 200)
        result = Result(system=name, dataset="toy", protocol="hodosh", split="test", ranks={"annotation": ranks,
                        "search": ranks}, annotation=retrieval_metrics(ranks), search=retrieval_metrics(ranks))
        result.save(tmp_path / f"{name}.json", include_ranks=True)
        files.append(str(tmp_path / f"{name}.json"))
    # Enough resamples to last minutes, so that the signal finds the command at work.
    run = subprocess.Popen([sys.executable, "-m", f"kcca_desc.{command}", *files, "--n-resamples", "100000000",
                            "--out", str(tmp_path / "out")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env={**os.environ, "KCCA_DESC_CACHE": str(tmp_path / "cache")})
    try:
        # The child is forked once the command is set up: signalled before that, Python's own handling runs.
        for _ in range(600):
            if [pid for pid in os.listdir("/proc") if pid.isdigit() and _parent(pid) == run.pid]:
                break
            threading.Event().wait(0.05)
        threading.Event().wait(0.5)
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=60)
    finally:
        run.kill()
    assert run.returncode == INTERRUPT_EXIT_CODES[signal.SIGINT] == 130, err
    assert "interrupted by SIGINT" in err and "run the same command again" in err and "Traceback" not in err


def _parent(pid: str) -> int | None:
    """The parent process id of ``pid`` (from ``/proc``), None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None

