"""Stage profile of a run: wall and CPU seconds per named stage.

A run (``python -m kcca_desc.fit``, the table benchmark) opens a :func:`recording`; every step of
the pipeline it goes through runs inside :func:`profiled` with a stage name, and its wall time
(``time.perf_counter``) and CPU time (``time.process_time``: the whole process, every thread, so
the BLAS and Numba worker threads count) are added to each recording open at the time.  The
profile is a table ``{stage: {"wall_s", "cpu_s", "calls"}}`` that the results file keeps under
``timings_s``; a CPU/wall ratio near the number of cores says a stage ran in parallel, one near 0
that it waited (disk, a lock, another process).

Stages nest: a stage run inside another is recorded under ``"outer/inner"`` (Borda fusion of the
dev grid is ``"selection/fusion"``, of the test scores ``"evaluation/fusion"``), so the top-level
stages (no ``/``) add up to at most the run's time and never count a second twice.  A stage is
cheap to enter: two clock reads, plus the :func:`~kcca_desc._core.progress.watched_stage` that
reports it when it runs long and :func:`~kcca_desc._core.progress.set_stage` that names it in the
message of an interrupted run.  Profile coarse steps, not items of a loop.

The standard stage names, in pipeline order, are :data:`STAGES`; tables list them first.

Examples
--------
>>> import time
>>> with recording() as run:
...     with profiled("image kernel", watch=False):
...         with profiled("codebooks", watch=False):
...             time.sleep(0.01)
>>> sorted(run.table())
['image kernel', 'image kernel/codebooks']
>>> run.table()["image kernel"]["calls"]
1
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from .progress import set_stage, watched_stage

__all__ = ["STAGES", "StageProfile", "StageTimes", "recording", "profiled", "stage_entry", "wall_seconds",
           "add_tables", "format_profile", "format_stage_columns"]

#: The stages of a run, in pipeline order (Hodosh, Young & Hockenmaier 2013's system: data,
#: caption preprocessing, image features and their codebooks, the two kernels, the KCCA
#: factorisations, the (n, κ) grid, dev selection, Borda fusion, evaluation, statistics, report).
STAGES = ("data loading", "preprocessing", "image features", "codebooks", "image kernel", "text kernels",
          "factorisations", "grid", "selection", "fusion", "evaluation", "statistics", "report")

# Separates the names of nested stages in a profile's keys.
_NESTED = "/"


@dataclass
class StageTimes:
    """Seconds one stage took: wall clock and process CPU (every thread); set when the stage ends."""

    wall_s: float = 0.0
    cpu_s: float = 0.0


class StageProfile:
    """Wall and CPU seconds and number of calls per stage, summed over calls.

    Attributes
    ----------
    stages : dict of str to list
        ``[wall_s, cpu_s, calls]`` per stage key (``"outer/inner"`` for nested stages), in the
        order the stages were first entered.
    """

    def __init__(self) -> None:
        self.stages: dict[str, list] = {}

    def add(self, key: str, wall_s: float, cpu_s: float) -> None:
        """Add one call of stage ``key`` that took ``wall_s`` and ``cpu_s`` seconds."""
        entry = self.stages.setdefault(key, [0.0, 0.0, 0])
        entry[0] += wall_s
        entry[1] += cpu_s
        entry[2] += 1

    def table(self) -> dict[str, dict]:
        """``{stage: {"wall_s", "cpu_s", "calls"}}``, the form results files keep."""
        return {key: {"wall_s": wall, "cpu_s": cpu, "calls": calls}
                for key, (wall, cpu, calls) in self.stages.items()}


# The recordings now open (any thread's stages go to all of them) and, per thread, the stages
# now running there, outermost first.
_recordings: list[StageProfile] = []
_running = threading.local()


@contextlib.contextmanager
def recording(profile: StageProfile | None = None) -> Iterator[StageProfile]:
    """Record every :func:`profiled` stage run inside, in any thread, into ``profile`` (default: a new one).

    Recordings may be open together (a table run and the system it fits): each gets every stage.
    """
    profile = StageProfile() if profile is None else profile
    if profile in _recordings:  # already recording: a second entry would count every stage twice
        yield profile
        return
    _recordings.append(profile)
    try:
        yield profile
    finally:
        _recordings.remove(profile)


@contextlib.contextmanager
def profiled(name: str, *, desc: str | None = None, watch: bool = True) -> Iterator[StageTimes]:
    """Run one stage of a run: timed into the open recordings, reported as a stage of the run.

    Parameters
    ----------
    name : str
        The stage, one of :data:`STAGES` where one fits; nested inside another stage of the same
        thread it is recorded as ``"outer/name"``.
    desc : str, optional
        What progress lines and the message of an interrupted run call the step, when it is a
        finer step than its stage ("text gram" of the stage "text kernels"); default ``name``.
    watch : bool, default=True
        Also name the stage to the command line's interrupt handler (:func:`set_stage`) and log
        it when it runs long (:func:`watched_stage`).  Off for stages run many times a second
        (a fusion per grid model), where those would cost more than the work.

    Yields
    ------
    StageTimes
        Filled with the stage's wall and CPU seconds when it ends, for a caller that keeps its own
        account (an estimator's ``timings_s_``).
    """
    stack = _running.__dict__.setdefault("stack", [])
    # A step that is its own stage, called from that stage (codebooks learnt in the stage
    # "codebooks"), is counted once, by the outer call.
    again = bool(stack) and stack[-1].rsplit(_NESTED, 1)[-1] == name
    key = _NESTED.join([*stack[-1:], name])
    times = StageTimes()
    if not again:
        stack.append(key)
    if watch:
        set_stage(desc or name)
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        if watch:
            with watched_stage(desc or name):
                yield times
        else:
            yield times
    finally:
        times.wall_s, times.cpu_s = time.perf_counter() - wall, time.process_time() - cpu
        if not again:
            stack.pop()
            for profile in list(_recordings):
                profile.add(key, times.wall_s, times.cpu_s)


def stage_entry(value) -> dict:
    """One stage of a results file as ``{"wall_s", "cpu_s"?, "calls"?}``.

    Results files before the stage profile kept plain seconds (wall time) per stage; those read
    as ``{"wall_s": seconds}``.
    """
    if isinstance(value, Mapping):
        entry = {"wall_s": float(value["wall_s"])}
        if value.get("cpu_s") is not None:
            entry["cpu_s"] = float(value["cpu_s"])
        if value.get("calls") is not None:
            entry["calls"] = int(value["calls"])
        return entry
    return {"wall_s": float(value)}


def wall_seconds(value) -> float:
    """The wall seconds of one stage of a results file, old (plain seconds) or new (a table entry)."""
    return stage_entry(value)["wall_s"]


def add_tables(tables: Iterable[Mapping]) -> dict[str, dict]:
    """The stage-by-stage sum of several profiles (several systems, folds or runs).

    ``cpu_s`` and ``calls`` are summed where every table that has the stage has them.
    """
    out: dict[str, dict] = {}
    for table in tables:
        for key, value in table.items():
            entry = stage_entry(value)
            total = out.setdefault(key, {k: 0.0 if k != "calls" else 0 for k in entry})
            for k in list(total):
                if k in entry:
                    total[k] += entry[k]
                else:
                    del total[k]
    return out


def _order(key: str) -> tuple:
    """Standard stages in pipeline order, then the others by name; nested stages under their parent."""
    return tuple((STAGES.index(part) if part in STAGES else len(STAGES), part) for part in key.split(_NESTED))


def format_profile(table: Mapping, *, total_s: float | None = None, title: str = "stage") -> str:
    """A plain-text table of a profile: wall, CPU, CPU/wall and share of the run per stage.

    Parameters
    ----------
    table : mapping
        ``{stage: {"wall_s", "cpu_s", ...}}`` (or plain seconds, from an old results file).
    total_s : float, optional
        The run's wall time; default the sum of the top-level stages.  With it, a line shows the
        time no stage accounts for.
    title : str, default="stage"
        Heading of the first column.
    """
    rows = {key: stage_entry(value) for key, value in table.items()}
    top = sum(entry["wall_s"] for key, entry in rows.items() if _NESTED not in key)
    total = top if total_s is None else total_s
    names = {key: "  " * key.count(_NESTED) + key.rsplit(_NESTED, 1)[-1] for key in rows}
    width = max([len(title), len("other"), *map(len, names.values())])
    lines = [f"{title:<{width}}  {'wall s':>9}  {'CPU s':>9}  {'CPU/wall':>8}  {'share':>6}"]

    def line(name: str, wall: float, cpu: float | None) -> str:
        ratio = f"{cpu / wall:8.2f}" if cpu is not None and wall > 0 else f"{'':8}"
        cpu_text = f"{cpu:9.1f}" if cpu is not None else f"{'':9}"
        share = f"{100 * wall / total:5.1f}%" if total > 0 else f"{'':6}"
        return f"{name:<{width}}  {wall:9.1f}  {cpu_text}  {ratio}  {share}"

    for key in sorted(rows, key=_order):
        lines.append(line(names[key], rows[key]["wall_s"], rows[key].get("cpu_s")))
    if total_s is not None:
        lines.append(line("other", max(total_s - top, 0.0), None))
    return "\n".join(lines)


def format_stage_columns(profiles: Mapping[str, Mapping], *, title: str = "run") -> str:
    """A plain-text table of several profiles: one row per run (system), wall seconds per top-level stage.

    The last column is the row's total over its top-level stages, the last row the sum over runs.
    """
    tables = {name: {key: stage_entry(value) for key, value in table.items() if _NESTED not in key}
              for name, table in profiles.items()}
    stages = sorted({key for table in tables.values() for key in table}, key=_order)
    columns = [*stages, "total"]
    rows = {name: {**table, "total": {"wall_s": sum(e["wall_s"] for e in table.values())}}
            for name, table in tables.items()}
    rows["sum"] = {key: {"wall_s": sum(row[key]["wall_s"] for row in rows.values() if key in row)}
                   for key in columns}
    width = max([len(title), *map(len, rows)])
    widths = [max(len(c), 7) for c in columns]
    lines = [f"{title:<{width}}  " + "  ".join(f"{c:>{w}}" for c, w in zip(columns, widths))]
    for name, row in rows.items():
        cells = [f"{row[c]['wall_s']:>{w}.1f}" if c in row else f"{'':>{w}}" for c, w in zip(columns, widths)]
        lines.append(f"{name:<{width}}  " + "  ".join(cells))
    return "\n".join(lines)
