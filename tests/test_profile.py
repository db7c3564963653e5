"""The stage profile: wall and CPU seconds per stage, nesting, and its round trip through results files."""

from __future__ import annotations

import json
import threading
import time

import pytest

from kcca_desc._core.errors import DataError
from kcca_desc._core.profile import (STAGES, add_tables, format_profile, format_stage_columns, profiled, recording,
                                     stage_entry, wall_seconds)
from kcca_desc.evaluate import Result


def _busy(cpu_seconds: float) -> None:
    """Spin until this thread has used ``cpu_seconds`` of CPU (however long a shared machine makes that)."""
    end = time.thread_time() + cpu_seconds
    while time.thread_time() < end:
        pass


def _metrics() -> dict:
    return {"R@1": 10.0, "R@5": 50.0, "R@10": 70.0, "median_rank": 5.0, "mean_rank": 8.0, "n_queries": 10}


def test_cpu_time_counts_work_not_waiting():
    with recording() as run:
        with profiled("image kernel", watch=False):
            _busy(0.3)
        with profiled("data loading", watch=False):
            time.sleep(0.3)
    table = run.table()
    busy, idle = table["image kernel"], table["data loading"]
    # The stage reads its two clocks one after the other, so a stage that used one core the whole time
    # can show microseconds more CPU than wall time.
    assert busy["wall_s"] + 1e-3 >= busy["cpu_s"] >= 0.3
    assert idle["wall_s"] >= 0.3 and idle["cpu_s"] < 0.05


def test_cpu_time_counts_every_thread():
    def work():
        _busy(0.3)

    with recording() as run, profiled("text kernels", watch=False):
        workers = [threading.Thread(target=work) for _ in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    entry = run.table()["text kernels"]
    # Two threads' 0.3 s of CPU each, whether they ran side by side (wall ~0.3 s) or not.
    assert entry["cpu_s"] >= 0.6


def test_nested_stages_are_recorded_under_their_parent_and_calls_add_up():
    with recording() as run:
        for _ in range(3):
            with profiled("evaluation", watch=False):
                with profiled("fusion", watch=False):
                    time.sleep(0.01)
        with profiled("fusion", watch=False):
            pass
    table = run.table()
    assert list(table) == ["evaluation/fusion", "evaluation", "fusion"]
    assert table["evaluation"]["calls"] == table["evaluation/fusion"]["calls"] == 3
    assert table["fusion"]["calls"] == 1
    assert table["evaluation"]["wall_s"] >= table["evaluation/fusion"]["wall_s"] >= 0.03


def test_a_stage_called_from_itself_counts_once():
    with recording() as run, profiled("codebooks", watch=False) as outer:
        with profiled("codebooks", watch=False) as inner:
            time.sleep(0.02)
    assert list(run.table()) == ["codebooks"] and run.table()["codebooks"]["calls"] == 1
    assert outer.wall_s >= inner.wall_s >= 0.02


def test_every_open_recording_gets_each_stage_once():
    with recording() as run:
        with recording() as system, recording(run):
            with profiled("selection", watch=False):
                pass
        with profiled("report", watch=False):
            pass
    assert run.table()["selection"]["calls"] == 1
    assert set(run.table()) == {"selection", "report"} and set(system.table()) == {"selection"}
    with profiled("grid", watch=False):  # no recording open: nothing kept, nothing fails
        pass
    assert "grid" not in run.table()


def test_a_stage_interrupted_by_an_error_is_still_recorded():
    with recording() as run:
        with pytest.raises(KeyError), profiled("factorisations", watch=False):
            raise KeyError("x")
        with profiled("grid", watch=False):
            pass
    assert set(run.table()) == {"factorisations", "grid"}  # not "factorisations/grid"


def test_a_watched_stage_names_itself_by_its_description(caplog):
    with caplog.at_level("INFO", logger="kcca_desc.stages"), recording() as run:
        with profiled("text kernels", desc="text gram"):
            pass
    assert "stage: text gram" in caplog.text and list(run.table()) == ["text kernels"]


def test_results_keep_the_profile_and_read_old_plain_seconds(tmp_path):
    with recording() as run, profiled("image kernel", watch=False):
        _busy(0.01)
    result = Result(system="s", dataset="d", protocol="hodosh", split="test", annotation=_metrics(),
                    search=_metrics(), timings_s={"fit": 2.5, **run.table()})
    back = Result.from_json(result.to_json())
    assert back.timings_s == result.timings_s
    assert back.timings_s["fit"] == {"wall_s": 2.5}
    assert back.timings_s["image kernel"] == {k: pytest.approx(v) for k, v in run.table()["image kernel"].items()}
    old = json.loads(result.to_json())
    old["timings_s"] = {"fit": 2.5, "score": 0.5}  # a file written before the profile
    assert Result.from_dict(old).timings_s == {"fit": {"wall_s": 2.5}, "score": {"wall_s": 0.5}}
    with pytest.raises(DataError, match="timings_s\\['fit'\\]"):
        Result.from_dict({**old, "timings_s": {"fit": {"cpu_s": 1.0}}})


def test_tables_add_up_stage_by_stage():
    a = {"selection": {"wall_s": 1.0, "cpu_s": 2.0, "calls": 1}, "fit": 3.0}
    b = {"selection": {"wall_s": 0.5, "cpu_s": 0.25, "calls": 2}, "fit": {"wall_s": 1.0, "cpu_s": 1.0}}
    total = add_tables([a, b])
    assert total == {"selection": {"wall_s": 1.5, "cpu_s": 2.25, "calls": 3}, "fit": {"wall_s": 4.0}}
    assert wall_seconds(3.0) == 3.0 == wall_seconds({"wall_s": 3.0, "cpu_s": 9.0})
    assert stage_entry({"wall_s": 1, "cpu_s": None}) == {"wall_s": 1.0}


def test_formatted_tables_list_stages_in_pipeline_order_with_the_unaccounted_rest():
    table = {"report": {"wall_s": 1.0, "cpu_s": 0.5}, "evaluation/fusion": {"wall_s": 1.0, "cpu_s": 1.0},
             "data loading": {"wall_s": 2.0, "cpu_s": 4.0}, "evaluation": {"wall_s": 3.0, "cpu_s": 3.0}}
    lines = format_profile(table, total_s=10.0).splitlines()
    assert [line.split()[0] for line in lines[1:]] == ["data", "evaluation", "fusion", "report", "other"]
    assert lines[1].split()[2:] == ["2.0", "4.0", "2.00", "20.0%"]
    assert lines[-1].split() == ["other", "4.0", "40.0%"]  # 10 s less the 6 s of the top-level stages
    columns = format_stage_columns({"a": table, "b": {"report": 2.0}}).splitlines()
    assert columns[0].split()[1:] == ["data", "loading", "evaluation", "report", "total"]
    assert columns[-1].split() == ["sum", "2.0", "3.0", "3.0", "8.0"]
    assert STAGES.index("data loading") < STAGES.index("evaluation") < STAGES.index("report")
