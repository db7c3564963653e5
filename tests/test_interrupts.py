"""Ctrl-C and SIGTERM stop the command within a moment, at any stage, say what was kept, and
a re-run resumes to byte-identical results."""

from __future__ import annotations

import signal
import threading

import pytest

from kcca_bench.cli import figures, interrupt_cli, run_cli
from kcca_desc.cli.interrupts import INTERRUPT_EXIT_CODES, supervised

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
