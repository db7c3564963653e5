"""The parts of the trainer, each alone: dev patience, snapshot selection, learning-rate
schedules, the dev R-sum, checkpoint files and the lineage of runs."""

import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcca_desc._core.cache import CacheWarning, read_json_entry
from kcca_desc.neural.dev import recall_sum
from kcca_desc.neural.early_stopping import EarlyStopping
from kcca_desc.neural.lineage import Lineage
from kcca_desc.neural.schedules import cosine_cycles, step_decay
from kcca_desc.neural.snapshots import SnapshotSelection


# ------------------------------------------------------------------ early stopping
def test_early_stopping_counts_epochs_without_a_better_dev_figure():
    stopping = EarlyStopping(patience=2)
    for epoch, rsum in enumerate([5.0, 6.0, 6.0], start=1):
        stopping.update(epoch, rsum)
    assert (stopping.best, stopping.waited, stopping.stop) == (6.0, 1, False)
    stopping.update(4, 7.0)  # a better figure starts the count again
    assert (stopping.best, stopping.waited, stopping.stop) == (7.0, 0, False)
    stopping.update(5, 7.0)  # an equal one is no improvement
    stopping.update(6, 1.0)
    assert stopping.waited == 2 and stopping.stop


def test_early_stopping_waits_only_after_its_first_counted_epoch():
    stopping = EarlyStopping(patience=1, from_epoch=3)
    for epoch, rsum in enumerate([5.0, 4.0, 4.0], start=1):
        stopping.update(epoch, rsum)
    assert stopping.waited == 0 and not stopping.stop
    stopping.update(4, 4.0)
    assert stopping.stop


def test_early_stopping_without_patience_never_stops():
    stopping = EarlyStopping(patience=None)
    for epoch in range(1, 20):
        stopping.update(epoch, 0.0)
    assert stopping.waited == 18 and not stopping.stop


# --------------------------------------------------------------- snapshot selection
def _kept(selection, scores):
    kept = []
    for epoch, rsum in enumerate(scores, start=1):
        kept = selection.keep(kept, epoch, rsum, weights={"w": epoch})
    return kept


def test_snapshots_on_dev_keep_the_best_the_earlier_of_equals_first():
    kept = _kept(SnapshotSelection(n_snapshots=2, by_dev=True), [3.0, 9.0, 5.0, 9.0, 1.0])
    assert [(s["epoch"], s["rsum"]) for s in kept] == [(2, 9.0), (4, 9.0)]
    assert kept[0]["state"] == {"w": 2}
    assert [s["epoch"] for s in _kept(SnapshotSelection(n_snapshots=1, by_dev=True), [3.0, 9.0, 9.0])] == [2]


def test_snapshots_without_dev_keep_the_latest_first():
    kept = _kept(SnapshotSelection(n_snapshots=2, by_dev=False), [0.0] * 5)
    assert [s["epoch"] for s in kept] == [5, 4]


def test_keeping_a_snapshot_leaves_the_kept_list_as_it_was():
    selection = SnapshotSelection(n_snapshots=1, by_dev=True)
    kept = selection.keep([], 1, 1.0, weights={})
    selection.keep(kept, 2, 2.0, weights={})
    assert [s["epoch"] for s in kept] == [1]


@pytest.mark.parametrize("is_snapshot_epoch, finished, kept, takes", [
    (True, False, [], True), (True, True, [{}], True),
    (False, False, [], False), (False, True, [{}], False),
    (False, True, [], True),  # a run stopped before its first snapshot epoch keeps its last weights
])
def test_which_epochs_become_snapshots(is_snapshot_epoch, finished, kept, takes):
    assert SnapshotSelection.takes(is_snapshot_epoch, finished, kept) is takes


# ------------------------------------------------------------------------ schedules
def test_step_decay_starts_after_its_last_full_epoch():
    assert [step_decay(s, 10, 2, 0.1) for s in (0, 19, 20, 500)] == [1.0, 1.0, 0.1, 0.1]
    assert step_decay(10**6, 10, None, 0.1) == 1.0


@given(step=st.integers(0, 10**5), steps_per_epoch=st.integers(1, 50), cycle_epochs=st.integers(1, 8),
       low=st.floats(0, 1))
def test_cosine_cycles_restart_every_cycle_and_stay_between_low_and_one(step, steps_per_epoch, cycle_epochs, low):
    cycle = cycle_epochs * steps_per_epoch
    factor = cosine_cycles(step, steps_per_epoch, cycle_epochs, low)
    assert low - 1e-12 <= factor <= 1 + 1e-12
    assert factor == cosine_cycles(step % cycle, steps_per_epoch, cycle_epochs, low)
    assert cosine_cycles(step - step % cycle, steps_per_epoch, cycle_epochs, low) == 1.0


def test_cosine_cycles_halfway_is_the_mean_of_the_bounds():
    assert math.isclose(cosine_cycles(5, 5, 2, 0.2), 0.6)


# --------------------------------------------------------------------- dev R-sum
def _recalls_by_comparison(scores):
    """R@k of the diagonal: rank = the number of items scoring at least as high as the gold one."""
    out = {}
    for task, matrix in (("annotation", scores), ("search", scores.T)):
        ranks = np.sum(matrix >= np.diag(matrix)[:, None], axis=1)
        for k in (1, 5, 10):
            out[f"{task}_R@{k}"] = float(100 * np.mean(ranks <= k))
    out["rsum"] = float(sum(out.values()))
    return out


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 30), levels=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_dev_recalls_count_ties_against_the_gold_item(n, levels, seed):
    # Few score levels: ties everywhere, the diagonal's too.
    scores = np.random.default_rng(seed).integers(0, levels, size=(n, n)).astype(np.float32)
    assert recall_sum(scores) == _recalls_by_comparison(scores)


def test_dev_recalls_of_a_diverged_network_are_an_error():
    scores = np.eye(4)
    scores[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        recall_sum(scores)


# ------------------------------------------------------------------------ lineage
def _lineage(**changes):
    settings_ = {"name": "L", "max_epochs": 6, "patience": 2, "max_train_seconds": None,
                 "runtime": {"n_threads": 1, "device": "cpu"}, "is_snapshot_epoch": lambda epoch: epoch % 2 == 0}
    return Lineage(**{**settings_, **changes})


@pytest.mark.parametrize("other, beginning", [
    ({"max_epochs": 4, "patience": 2}, True),
    ({"max_epochs": 6, "patience": 1}, True),
    ({"max_epochs": 7, "patience": 2}, False),   # goes further
    ({"max_epochs": 4, "patience": 3}, False),   # more patient
    ({"max_epochs": 4, "patience": None}, False),  # never stops on dev
    ({"patience": 2}, False),                    # a damaged record
])
def test_a_beginning_stops_no_later_than_this_run(other, beginning):
    assert _lineage().is_beginning(other) is beginning
    # Without patience, any run of fewer epochs is a beginning.
    assert _lineage(patience=None).is_beginning(other) is ("max_epochs" in other and other["max_epochs"] <= 6)


def _run(snapshot_epochs, epochs, stopped_by="max_epochs", seconds=1.0):
    return {"history": [{"epoch": e, **({"snapshot": True} if e in snapshot_epochs else {})}
                        for e in range(1, epochs + 1)],
            "snapshots": [{"epoch": e, "rsum": 0.0, "state": {}} for e in snapshot_epochs],
            "best_rsum": 0.0, "waited": 0, "seconds": seconds, "stopped_by": stopped_by}


def test_a_run_repeats_this_one_where_it_kept_the_same_snapshot_epochs():
    lineage = _lineage()
    assert lineage.repeats(_run([2, 4], 5))
    assert not lineage.repeats(_run([2, 3], 4))
    # Stopped before its first snapshot epoch, a run kept its last epoch: that one does not count.
    assert lineage.repeats(_run([1], 1, stopped_by="time budget"))
    assert not lineage.repeats(_run([1], 1))


def test_a_reopened_run_drops_the_snapshot_its_stop_forced():
    state = {"finished": True, "run": _run([3], 3, stopped_by="patience")}
    reopened = _lineage().reopened(state)
    assert not reopened["finished"] and reopened["run"]["stopped_by"] == "max_epochs"
    assert reopened["run"]["snapshots"] == [] and not any("snapshot" in r for r in reopened["run"]["history"])
    assert state["run"]["stopped_by"] == "patience"  # the state read is left as it was


def test_a_run_the_clock_stopped_is_reopened_only_under_a_larger_budget():
    state = {"finished": True, "run": _run([2], 3, stopped_by="time budget", seconds=10.0)}
    assert _lineage(max_train_seconds=5.0).reopened_under_budget(state) is state
    assert not _lineage(max_train_seconds=20.0).reopened_under_budget(state)["finished"]
    assert not _lineage().reopened_under_budget(state)["finished"]
    finished = {"finished": True, "run": _run([2], 3)}
    assert _lineage().reopened_under_budget(finished) is finished
    assert _lineage().reopened_under_budget(None) is None


def test_the_lineage_record_is_written_once(tmp_path):
    path = tmp_path / "run" / "state.pt"
    lineage = _lineage()
    lineage.write(path)
    sidecar = path.parent / "lineage.json"
    assert read_json_entry(sidecar) == {"lineage": "L", "max_epochs": 6, "patience": 2, "n_threads": 1,
                                        "device": "cpu"}
    written = sidecar.stat().st_ino  # an atomic write replaces the file
    lineage.write(path)
    assert sidecar.stat().st_ino == written


def test_a_lineage_record_of_before_checksums_is_still_read(tmp_path):
    path = tmp_path / "run" / "state.pt"
    path.parent.mkdir()
    record = {"lineage": "L", "max_epochs": 6, "patience": 2, "n_threads": 1, "device": "cpu"}
    (path.parent / "lineage.json").write_text(json.dumps(record))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_json_entry(path.parent / "lineage.json", legacy=True) == record
        _lineage().write(path)


_DAMAGES = {"truncated": lambda data: data[: len(data) // 2],
            "random bytes": lambda data: np.random.default_rng(0).bytes(len(data)),
            # Inside the JSON document: still a valid record, of other values.
            "flipped bytes": lambda data: data.replace(b'"patience": 2', b'"patience": 1')}


@pytest.mark.parametrize("damage", _DAMAGES)
def test_a_damaged_lineage_record_is_reported_once_and_rewritten(tmp_path, damage):
    path = tmp_path / "run" / "state.pt"
    lineage = _lineage()
    lineage.write(path)
    sidecar = path.parent / "lineage.json"
    sidecar.write_bytes(_DAMAGES[damage](sidecar.read_bytes()))
    with pytest.warns(CacheWarning) as record:
        lineage.write(path)
    warned = [str(w.message) for w in record if issubclass(w.category, CacheWarning)]
    assert len(warned) == 1 and f"cache entry {sidecar} is damaged" in warned[0]
    assert read_json_entry(sidecar)["patience"] == 2


@pytest.mark.parametrize("damage", _DAMAGES)
def test_a_damaged_lineage_record_of_an_earlier_run_is_reported_once_and_not_built_on(tmp_path, damage):
    pytest.importorskip("torch", reason="checkpoints are torch files")
    earlier = _checkpointed(tmp_path, "two", _lineage(max_epochs=2), {"finished": True, "run": _run([2], 2)})
    sidecar = earlier.parent / "lineage.json"
    sidecar.write_bytes(_DAMAGES[damage](sidecar.read_bytes()))
    with pytest.warns(CacheWarning) as record:
        # Trained afresh, to the weights the earlier run's start would have given (bit for bit:
        # tests/neural/test_trainable_checkpoint.py).
        assert _lineage().starting_state(tmp_path / "this" / "state.pt") is None
    warned = [str(w.message) for w in record if issubclass(w.category, CacheWarning)]
    assert len(warned) == 1 and f"cache entry {sidecar} is damaged" in warned[0]
    assert not sidecar.exists()  # its own run writes it again


# ---------------------------------------------------------- checkpoints and earlier runs
def _checkpointed(root, name, lineage, state):
    from kcca_desc.neural.checkpoints import CHECKPOINT_FORMAT, write_checkpoint

    path = root / name / "state.pt"
    lineage.write(path)
    write_checkpoint(path, {"format": CHECKPOINT_FORMAT, **state})
    return path


def test_a_checkpoint_reads_back_and_other_files_read_as_none(tmp_path):
    pytest.importorskip("torch", reason="checkpoints are torch files")
    from kcca_desc.neural.checkpoints import read_checkpoint

    path = _checkpointed(tmp_path, "a", _lineage(), {"finished": True, "run": _run([2], 2)})
    assert read_checkpoint(path)["run"] == _run([2], 2)
    assert sorted(p.name for p in path.parent.iterdir()) == ["lineage.json", "state.pt"]
    assert read_checkpoint(None) is None and read_checkpoint(tmp_path / "none.pt") is None
    import torch

    from kcca_desc.neural.checkpoints import write_checkpoint

    write_checkpoint(tmp_path / "old.pt", {"format": 1})
    assert read_checkpoint(tmp_path / "old.pt") is None
    # Unverified, never unpickled: a file without the checksum is damaged, and deleted.
    for name, write in (("damaged.pt", lambda p: p.write_bytes(b"not a checkpoint")),
                        ("unchecked.pt", lambda p: torch.save({"format": 1}, p))):
        write(tmp_path / name)
        with pytest.warns(CacheWarning, match=f"cache entry .*{name} is damaged.*checksum header"):
            assert read_checkpoint(tmp_path / name) is None
        assert not (tmp_path / name).exists()


def test_the_earlier_run_that_went_furthest_is_the_start(tmp_path):
    pytest.importorskip("torch", reason="checkpoints are torch files")
    this = _lineage()
    path = tmp_path / "this" / "state.pt"
    _checkpointed(tmp_path, "two", _lineage(max_epochs=2), {"finished": True, "run": _run([2], 2)})
    _checkpointed(tmp_path, "four", _lineage(max_epochs=4), {"finished": True, "run": _run([2, 4], 4)})
    _checkpointed(tmp_path, "other_lineage", _lineage(name="M", max_epochs=5), {"finished": False,
                                                                               "run": _run([2, 4], 5)})
    _checkpointed(tmp_path, "other_snapshots", _lineage(max_epochs=5), {"finished": False, "run": _run([1, 3], 5)})
    _checkpointed(tmp_path, "other_threads", _lineage(max_epochs=5, runtime={"n_threads": 2, "device": "cpu"}),
                  {"finished": False, "run": _run([2, 4], 5)})
    start = this.starting_state(path)
    assert not start["finished"] and len(start["run"]["history"]) == 4
    assert not path.exists()  # only a whole run is copied to this run's place

    # A finished run of this run's epochs is this whole run, under other threads too.
    _checkpointed(tmp_path, "whole", _lineage(runtime={"n_threads": 2, "device": "cpu"}),
                  {"finished": True, "run": _run([2, 4, 6], 6)})
    start = this.starting_state(path)
    assert start["finished"] and len(start["run"]["history"]) == 6 and path.is_file()
