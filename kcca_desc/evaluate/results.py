"""The results format of the toolkit and its tables.

One evaluation of one system on one split under one protocol is a
:class:`Result`.  Its JSON form has exactly these keys (further keys such as
``"judgments"``, ``"ci"`` or ``"significance"`` are kept in
:attr:`Result.extras` and written beside them)::

    {"system": str, "dataset": str, "protocol": "hodosh" | "karpathy", "split": str,
     "annotation": {"R@1", "R@5", "R@10", "median_rank", "mean_rank", "n_queries"},
     "search": {same keys}, "params": {...},
     "timings_s": {stage: {"wall_s": float, "cpu_s": float, "calls": int}}}

An evaluation with further recall cut-offs (``ks=(1, 5, 10, 20)``) adds their ``"R@K"`` keys to
``"annotation"`` and ``"search"``, in order of K; every table then has their columns too (empty for
a result without them), and :func:`~kcca_desc.evaluate.statistics.add_confidence_intervals`
gives them intervals.

``timings_s`` is the run's stage profile (:mod:`kcca_desc._core.profile`): wall and CPU seconds
per stage, ``cpu_s`` and ``calls`` where they were measured.  Files written before it kept plain
seconds of wall time per stage; they read as ``{"wall_s": seconds}``.

Recalls are percentages (0-100).  The per-query ranks stay on the object
(:attr:`Result.ranks`) and go into JSON only on request, with the per-query
record of :attr:`Result.queries` (the query ids and the top-K retrieved ids)::

    "ranks": {"annotation": [rank per pool image], "search": [rank per pool caption]},
    "queries": {"images": [pool image ids], "captions": [pool caption ids],
                "caption_image": [pool image index of each caption],
                "top": {"annotation": [[K caption indices] per image],
                        "search": [[K image indices] per caption]}}

Annotation queries are the pool images and search queries the pool captions, in
pool order, so ``"images"`` and ``"captions"`` are both the query ids of one task
and the candidate ids of the other (strings or whole numbers, kept as given); ``"top"``
holds pool indices into them (best first), which keeps the file small.

Tables (:func:`to_markdown`, :func:`to_csv`, :func:`to_latex`,
:func:`format_table`) have one row per result, in the layout of the paper's
tables: annotation R@1, R@5, R@10, median rank, then the same for search.
Confidence intervals come from ``extras["ci"][task][metric] = [low, high]``
and significance markers from ``extras["significance"][task][metric] = p``
(a marker when ``p < alpha``), as written by
:func:`kcca_desc.evaluate.statistics.add_confidence_intervals` and
:func:`kcca_desc.evaluate.statistics.add_significance`.

The other tasks' figures (forced choice, off-topic detection...; :mod:`kcca_desc.tasks`) are
recorded under ``extras["tasks"][task]``, their intervals beside them in the same layout,
``extras["tasks"][task]["ci"][figure] = [low, high]`` with ``"ci_settings"``.  Every table
adds them: a second table of one row per result (Markdown, LaTeX, terminal), or further
``task_figure`` columns (CSV); :func:`task_figures` reads them.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from dataclasses import dataclass, field
from numbers import Integral
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .._core.cache import atomic_write_text
from .._core.errors import DataError, MissingDataFileError, ParameterError, warn_user
from .._core.profile import stage_entry
from .._core.registry import UnknownNameError
from .._core.validation import listed_items, one_item
from ..data.dataset import PROTOCOLS
from .latex import LATEX_HEADER, latex_escape
from .metrics import METRICS, format_bound, metric_entry
from .ranks import METRIC_KEYS, TASKS, recall_ks

__all__ = [
    "Result", "TABLE_METRICS", "to_markdown", "to_csv", "to_latex", "format_table",
    "save_results", "load_results", "dumps_json", "task_figures", "format_task_figure", "task_cell",
    "markdown_table", "latex_task_tabular", "table_results", "result_identity", "checked_result",
]

# The columns of every table, per task.
TABLE_METRICS = ("R@1", "R@5", "R@10", "median_rank")
_FIXED_KEYS = ("system", "dataset", "protocol", "split", "annotation", "search", "params", "timings_s")


def _jsonable(value: Any, where: str) -> Any:
    """``value`` as plain JSON types; objects without a JSON form become their repr."""
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist(), where)
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        value = value.item()
    if isinstance(value, float):
        if not math.isfinite(value):
            raise DataError(f"{where}: {value} has no JSON form")
        return value
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [_jsonable(v, f"{where}[{i}]") for i, v in enumerate(items)]
    # Estimator parameters may be objects (a kernel, a tokenizer): their repr
    # records them well enough for a results file.
    return repr(value)


def _check_metrics(metrics: Mapping, task: str, system: str) -> dict:
    missing = [k for k in METRIC_KEYS if k not in metrics]
    if missing:
        raise DataError(f"result of {system!r}: {task} metrics lack {', '.join(missing)}")
    # Further cut-offs asked of the evaluation (R@20...) are kept, in order, with R@1, R@5, R@10.
    recalls = [f"R@{k}" for k in recall_ks(metrics)]
    keys = [*recalls, *(k for k in METRIC_KEYS if k not in recalls)]
    out = {k: metrics[k] for k in keys}
    for k in keys:
        value = out[k]
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ParameterError(f"result of {system!r}: {task} {k} must be a number, got {value!r}")
        if not math.isfinite(value):
            raise DataError(f"result of {system!r}: {task} {k} is {value}")
    for k in recalls:
        if not 0.0 <= out[k] <= 100.0:
            raise DataError(f"result of {system!r}: {task} {k} = {out[k]} is not a percentage in [0, 100]")
    out = {k: float(v) for k, v in out.items()}
    out["n_queries"] = int(out["n_queries"])
    return out


def _check_tasks(record: object, key: str, layout: str, system: str) -> None:
    """``record``, the entry ``key`` of a result (``ranks``, ``queries['top']``, ``ci``, ``significance``), is an
    object ``layout`` keyed by task.

    A misspelt task (``"annotaton"``) was kept beside the real one, its ranks, intervals or
    p-values read by no table (which printed the figures bare) and the real task's ranks reported
    missing, or a ``KeyError``, where they were needed.
    """
    if not isinstance(record, Mapping):
        raise DataError(f"result of {system!r}: {key} must be an object {layout}, got {type(record).__name__}")
    for task in record:
        if task not in TASKS:
            raise DataError(f"result of {system!r}: {key} has an unknown task {task!r}; "
                            f"available: {', '.join(TASKS)}")


def _check_metric_names(record: Mapping, key: str, system: str) -> None:
    """The metrics of ``record``, the entry ``key`` of a result by task (``ci``, ``significance``), are metrics.

    A misspelt one (``"R@1O"``) was kept and read by no table, which printed the figure bare.
    """
    for task, metrics in record.items():
        for name in metrics:
            try:
                metric_entry(name)
            except UnknownNameError:
                raise DataError(f"result of {system!r}: {key}[{task!r}] has an unknown metric {name!r}; available: "
                                f"{', '.join(METRICS)}, or R@K of a further cut-off K") from None


def _check_queries(queries: dict, ranks: Mapping[str, np.ndarray], system: str, recorded_images: object = None) -> dict:
    """The per-query record as arrays, its lengths checked against the ranks.

    ``recorded_images``, a benchmark record's top-level ``caption_image`` (kept in the extras), is
    checked as ``queries['caption_image']`` is: the bootstrap clusters its captions by it.
    """
    if not queries and recorded_images is None:
        return {}
    unknown = set(queries) - {"images", "captions", "caption_image", "top"}
    if unknown:
        raise DataError(f"result of {system!r}: unknown per-query keys {sorted(unknown)}")
    # Ids are strings or whole numbers (COCO's), kept as given, so that they are the data set's ids and
    # read back equal; numbers were written as strings, True as "True", and None was Python's TypeError.
    out = {key: [str(v) if isinstance(v, str) else int(v)
                 for v in listed_items(queries[key], (str, Integral), owner=f"result of {system!r}",
                                       name=f"queries[{key!r}]", expected=f"a list of ids, one per pool {key[:-1]}",
                                       item="an id (a string or a whole number)", single=False, refused=bool)]
           for key in ("images", "captions") if key in queries}
    # The pools of the indices (a caption's image, a top-K candidate), sized by the query ids, or by the ranks of a
    # result without them: an index past its pool was read as another item, or an IndexError in the gallery.
    pools = {task: (f"queries[{key!r}]", "query ids", len(out[key])) if out.get(key)
             else (f"ranks[{task!r}]", "ranks", len(ranks.get(task, ())))
             for task, key in (("annotation", "images"), ("search", "captions"))}

    def indices(given: object, field: str, layout: str, what: str, task: str, **dims) -> np.ndarray:
        """``given``, the entry ``field`` of the result, as indices into the pool of ``task``'s queries."""
        n, noun = pools[task][2], "images" if task == "annotation" else "captions"
        holds = f"{what}, whole numbers from 0 to {n - 1} ({n} pool {noun})" if n else f"{what}, non-negative integers"
        return _whole_numbers(given, f"result of {system!r}: {field}", layout, holds, minimum=0,
                              maximum=n - 1 if n else None, **dims)

    def check_length(name: str, task: str, rows: int) -> None:
        source, kind, size = pools[task]
        if size and rows != size and name != source:
            raise DataError(f"result of {system!r}: {name} has {rows} per-query {task} entries but "
                            f"{size} {kind} in {source}")

    def caption_images(given: object, field: str) -> np.ndarray:
        """``given``, the entry ``field`` of the result, as the pool image of each search query."""
        images = indices(given, field, "a list of pool image indices, one per caption", "pool image indices",
                         "annotation")
        check_length(field, "search", len(images))
        return images

    for task, r in ranks.items():
        check_length(f"ranks[{task!r}]", task, len(r))
    if "caption_image" in queries:
        out["caption_image"] = caption_images(queries["caption_image"], "queries['caption_image']")
    if recorded_images is not None:
        caption_images(recorded_images, "caption_image")
    _check_tasks(queries.get("top", {}), "queries['top']", "{task: [[K candidate indices] per query]}", system)
    out["top"] = {}
    for task, top in queries.get("top", {}).items():
        top = indices(top, f"queries['top'][{task!r}]", "a list of [K candidate indices] per query",
                      "candidate indices", "search" if task == "annotation" else "annotation", ndims=(1, 2))
        out["top"][task] = top.reshape(len(top), -1 if top.size else 0)  # one index per query: K = 1
        check_length(f"queries['top'][{task!r}]", task, len(top))
    return out if queries else {}  # a record with only recorded_images has no per-query record


def _check_ranks(ranks: object, system: str) -> dict[str, np.ndarray]:
    """The per-query ranks as int64 arrays: an object of task to a list of positive integers."""
    _check_tasks(ranks, "ranks", "{task: [rank of each query]}", system)
    return {task: _whole_numbers(given, f"result of {system!r}: ranks[{task!r}]", "a list of ranks, one per query",
                                 "ranks, positive integers (1 is the best)", minimum=1)
            for task, given in ranks.items()}


def _whole_numbers(given: object, where: str, layout: str, holds: str, *, minimum: int,
                   maximum: int | None = None, ndims: tuple[int, ...] = (1,)) -> np.ndarray:
    """``given``, a per-query entry of a result (ranks, indices), as an int64 array of whole numbers >= ``minimum``
    (and <= ``maximum``, where given: an index into a pool).

    ``layout`` says what the entry must be (``"a list of ranks, one per query"``), ``holds`` what
    its numbers must be, for the :class:`~kcca_desc._core.errors.DataError` naming ``where`` of
    an entry of another shape (a number, ragged lists, ``ndims`` the dimensions it may have) or
    a number that is not such a whole number (0 and 1.5 were accepted as ranks).
    """
    try:
        r = None if isinstance(given, (str, bytes, Mapping)) else np.asarray(given)
    except (ValueError, TypeError):  # ragged nested lists
        r = None
    if r is None or r.ndim not in ndims:
        raise DataError(f"{where} must be {layout}, got {given!r:.60}")
    if r.size and (r.dtype.kind not in "iuf" or not np.all(np.isfinite(r)) or np.any(r != np.round(r))
                   or r.min() < minimum or (maximum is not None and r.max() > maximum)):
        bad = next(v for v in r.ravel().tolist() if isinstance(v, bool) or not isinstance(v, (int, float))
                   or not math.isfinite(v) or v != round(v) or v < minimum or (maximum is not None and v > maximum))
        raise DataError(f"{where} must hold {holds}, got {bad!r}")
    return r.astype(np.int64)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_interval(value: object) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(map(_is_number, value))


def _check_nested(value: object, key: str, layouts: tuple[str, ...], leaf_ok, leaf: str, system: str) -> None:
    """``value``, the entry ``key`` of a result, is objects nested ``len(layouts)`` deep with leaves that pass ``leaf_ok``.

    ``layouts`` shows each level's layout in the message; ``leaf`` says what a leaf must be.
    """
    if not layouts:
        if not leaf_ok(value):
            raise DataError(f"result of {system!r}: {key} must be {leaf}, got {value!r:.60}")
        return
    if not isinstance(value, Mapping):
        raise DataError(f"result of {system!r}: {key} must be an object {layouts[0]}, got {type(value).__name__}")
    for name, item in value.items():
        _check_nested(item, f"{key}[{name!r}]", layouts[1:], leaf_ok, leaf, system)


def _check_known_extras(extras: Mapping, system: str) -> None:
    """The extras the tables read (``ci``, ``significance``, ``tasks``) are of their documented layout.

    Checked when the result is made or loaded rather than where a table reads them, which
    failed with an ``AttributeError`` naming neither the result nor the key.
    """
    interval = "an interval [low, high]"
    if "ci" in extras:
        _check_tasks(extras["ci"], "ci", "{task: {metric: [low, high]}}", system)
        _check_nested(extras["ci"], "ci", ("{task: {metric: [low, high]}}", "{metric: [low, high]}"),
                      _is_interval, interval, system)
        _check_metric_names(extras["ci"], "ci", system)
    if "significance" in extras:
        _check_tasks(extras["significance"], "significance", "{task: {metric: p}}", system)
        _check_nested(extras["significance"], "significance", ("{task: {metric: p}}", "{metric: p}"),
                      lambda p: p is None or _is_number(p), "a p-value", system)
        _check_metric_names(extras["significance"], "significance", system)
    if "tasks" in extras:
        _check_nested(extras["tasks"], "tasks", ("{task: {figure: value}}",), lambda v: isinstance(v, Mapping),
                      "an object {figure: value}", system)
        for task, figures in extras["tasks"].items():
            if "ci" in figures:
                _check_nested(figures["ci"], f"tasks[{task!r}]['ci']", ("{figure: [low, high]}",), _is_interval,
                              interval, system)


@dataclass
class Result:
    """Metrics of one system on one split under one protocol.

    Attributes
    ----------
    system, dataset, protocol, split : str
        What was evaluated; ``protocol`` is ``"hodosh"`` or ``"karpathy"``.
    annotation, search : dict
        ``R@1``, ``R@5``, ``R@10`` (percent), ``median_rank``,
        ``mean_rank``, ``n_queries`` of each task, and ``R@K`` of any further cut-off K the
        evaluation was asked for (other keys are dropped).
    params : dict
        Hyperparameters of the system (JSON-serialisable form).
    timings_s : dict
        ``{"wall_s", "cpu_s", "calls"}`` per stage (``fit``, ``score``, ``evaluate``, the stages of
        the run's profile); given as plain seconds, a stage's entry is ``{"wall_s": seconds}``.
    extras : dict
        Further top-level JSON keys (``judgments``, ``ci``, ``significance``).
    ranks : dict of str to ndarray
        Per-query ranks of each task; in JSON only with ``include_ranks``.
    queries : dict
        Query ids and top-K retrieved candidates (see the module docstring);
        in JSON with the ranks.
    per_query : dict
        Other per-query values by task (e.g. the judgment metrics'
        ``success_ranks``, ``r_precision``, ``expert_scores``); never in JSON.
    """

    system: str
    dataset: str
    protocol: str
    split: str
    annotation: dict
    search: dict
    params: dict = field(default_factory=dict)
    timings_s: dict = field(default_factory=dict)
    extras: dict = field(default_factory=dict)
    ranks: dict = field(default_factory=dict, repr=False)
    queries: dict = field(default_factory=dict, repr=False)
    per_query: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if self.protocol not in PROTOCOLS:
            raise DataError(f"result of {self.system!r}: unknown protocol {self.protocol!r}; "
                             f"available: {', '.join(PROTOCOLS)}")
        for name in ("system", "dataset", "split"):
            if not isinstance(getattr(self, name), str):
                raise ParameterError(f"result: {name} must be a string, got {getattr(self, name)!r}")
        self.annotation = _check_metrics(self.annotation, "annotation", self.system)
        self.search = _check_metrics(self.search, "search", self.system)
        clash = set(self.extras) & set(_FIXED_KEYS)
        if clash:
            raise DataError(f"result of {self.system!r}: extras may not redefine {sorted(clash)}")
        for name in ("params", "timings_s", "queries"):
            if not isinstance(getattr(self, name), Mapping):
                raise DataError(f"result of {self.system!r}: {name} must be an object {{name: value}}, got "
                                f"{type(getattr(self, name)).__name__}")
        self.params = _jsonable(dict(self.params), "params")
        given, self.timings_s = self.timings_s, {}
        self.add_timings(given)
        self.extras = _jsonable(dict(self.extras), "extras")
        _check_known_extras(self.extras, self.system)
        self.ranks = _check_ranks(self.ranks, self.system)
        self.queries = _check_queries(dict(self.queries), self.ranks, self.system, self.extras.get("caption_image"))

    def __eq__(self, other: object) -> bool:
        """Results are equal when their JSON forms with the ranks and queries are.

        ``per_query``, never written, is not compared.  The dataclass's comparison compared the
        rank arrays with ``==``: numpy's "truth value of an array is ambiguous".
        """
        if not isinstance(other, Result):
            return NotImplemented
        return self.to_dict(include_ranks=True) == other.to_dict(include_ranks=True)

    __hash__ = None  # mutable, as the dataclass's own comparison makes it

    def metric(self, task: str, name: str) -> float:
        """One figure, e.g. ``result.metric("search", "R@5")``.

        Raises
        ------
        UnknownNameError
            If ``task`` is not a task or ``name`` not one of its metrics (the message lists them);
            a ``KeyError``.
        """
        if task not in TASKS:
            raise UnknownNameError(f"unknown task {task!r}; available: {', '.join(TASKS)}")
        metrics = getattr(self, task)
        if name not in metrics:
            raise UnknownNameError(f"result of {self.system!r}: unknown {task} metric {name!r}; "
                                   f"available: {', '.join(metrics)}")
        return metrics[name]

    def add_timings(self, timings: Mapping) -> None:
        """Record stage timings (plain wall seconds or ``{"wall_s", "cpu_s"}`` entries), replacing same-named ones."""
        for stage, value in timings.items():
            try:
                self.timings_s[str(stage)] = stage_entry(value)
            except (KeyError, TypeError, ValueError):
                raise DataError(f"result of {self.system!r}: timings_s[{stage!r}] = {value!r} is neither seconds "
                                "nor a {'wall_s': ..., 'cpu_s': ...} entry") from None

    # ------------------------------------------------------------- JSON form
    def to_dict(self, include_ranks: bool = False) -> dict:
        out = {
            "system": self.system, "dataset": self.dataset, "protocol": self.protocol, "split": self.split,
            "annotation": dict(self.annotation), "search": dict(self.search),
            "params": self.params, "timings_s": {k: dict(v) for k, v in self.timings_s.items()}, **self.extras,
        }
        if include_ranks:
            out["ranks"] = {task: r.tolist() for task, r in self.ranks.items()}
            if self.queries:
                out["queries"] = _jsonable(self.queries, "queries")
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> "Result":
        if not isinstance(data, Mapping):  # a results file's list may hold anything JSON can
            raise DataError(f"a result must be a JSON object, got {type(data).__name__}")
        missing = [k for k in _FIXED_KEYS if k not in data]
        if missing:
            raise DataError(f"result {data.get('system', '?')!r} lacks {', '.join(missing)}")
        extras = {k: v for k, v in data.items() if k not in _FIXED_KEYS and k not in ("ranks", "queries")}
        return cls(**{k: data[k] for k in _FIXED_KEYS}, extras=extras, ranks=data.get("ranks", {}),
                   queries=data.get("queries", {}))

    def to_json(self, include_ranks: bool = False, indent: int | None = 2) -> str:
        """The JSON text of the result (ranks only with ``include_ranks``)."""
        return dumps_json(self.to_dict(include_ranks), indent=indent)

    @classmethod
    def from_json(cls, text: str) -> "Result":
        return cls.from_dict(json.loads(text))

    def save(self, path: str | os.PathLike, include_ranks: bool = False) -> None:
        """Write the JSON form to ``path`` atomically."""
        atomic_write_text(path, self.to_json(include_ranks) + "\n")


# A list of numbers (per-query ranks, a top-K row) indented over several lines. Line breaks
# never occur inside a JSON string, so the pattern cannot match text within one.
_NUMBER_LIST = re.compile(r"\[\n\s*(-?[\d.eE+-]+(?:,\n\s*-?[\d.eE+-]+)*)\n\s*\]")


def dumps_json(data: Any, *, indent: int | None = 2, default: Any = None, allow_nan: bool = False) -> str:
    """Indented JSON with every list of numbers on one line (``default``, ``allow_nan`` as in json.dumps).

    Per-query ranks and top-K lists are thousands of numbers: one per line, they made a results
    file three times as large and no easier to read.
    """
    text = json.dumps(data, indent=indent, allow_nan=allow_nan, default=default)
    if indent is None:
        return text
    return _NUMBER_LIST.sub(lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",")) + "]", text)


def save_results(results: Sequence[Result], path: str | os.PathLike, *, include_ranks: bool = False) -> None:
    """Write a JSON list of results to ``path`` atomically."""
    atomic_write_text(path, dumps_json([r.to_dict(include_ranks) for r in results]) + "\n")


def load_results(path: str | os.PathLike) -> list[Result]:
    """Read a file written by :func:`save_results` or :meth:`Result.save`.

    Raises
    ------
    MissingDataFileError
        If there is no file at ``path``.
    DataError
        If ``path`` is a directory or cannot be read, is not JSON, or a result in it is malformed
        (the message names the file, the result's index and the key).
    """
    path = Path(path)
    if not path.exists():
        raise MissingDataFileError(f"{path}: no such results file")
    if path.is_dir():
        raise DataError(f"{path}: is a directory, not a JSON results file")
    try:
        data = json.loads(path.read_text())
    except (ValueError, RecursionError) as exc:  # malformed JSON, bytes that are not UTF-8, nesting too deep
        raise DataError(f"{path}: not a JSON results file ({exc})") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read the results file ({exc.strerror or exc})") from None
    items = data if isinstance(data, list) else [data]
    results = []
    for i, item in enumerate(items):
        try:
            results.append(Result.from_dict(item))
        except (ValueError, TypeError) as exc:
            raise DataError(f"{path}: result {i}: {exc}") from None
    return results


# How to get a Result from what is mistaken for one (a result's dict, a path).
_RESULT_HINT = ("make one from a result's dict with kcca_desc.evaluate.Result.from_dict, or read a results file "
                "with kcca_desc.evaluate.load_results")


def checked_result(result: object, owner: str, *, name: str = "result") -> Result:
    """``result``, the argument ``name`` of ``owner``, checked to be one :class:`Result` before any work.

    Anything else (``None``, a result's dict, a list of results) is a
    :class:`~kcca_desc._core.errors.ParameterError` naming ``owner`` and ``name`` and how to make a
    Result, as the tables' (:func:`table_results`), not an ``AttributeError`` from inside ``owner``.
    """
    return one_item(result, Result, owner=owner, name=name, expected="a Result", hint=_RESULT_HINT)


# ----------------------------------------------------------------- tables
def table_results(results: Result | Iterable[Result], owner: str, *, ci: bool = False) -> list[Result]:
    """The results of a table as a list (one :class:`Result` is a table of one row), each checked a Result.

    ``owner`` is the table's function, named by the :class:`~kcca_desc._core.errors.ParameterError`
    for anything else (``None``, a result's dict, a path). With ``ci``, warns about the results
    that have no intervals at all: their rows would print the plain figures, which is easily
    mistaken for a table with intervals.
    """
    results = listed_items(results, Result, owner=owner, name="results", expected="a Result or a list of Results",
                           item="a Result", hint=_RESULT_HINT)
    if ci:
        bare = [r.system for r in results
                if "ci" not in r.extras and not any("ci" in m for m in r.extras.get("tasks", {}).values())]
        if bare:
            warn_user(f"ci=True, but {len(bare)} result(s) have no confidence intervals "
                      f"({', '.join(map(repr, bare))}): their rows show the figures alone; add intervals "
                      "with kcca_desc.evaluate.add_confidence_intervals(result) (needs the per-query ranks)")
    return results


def _varying(results: Sequence[Result]) -> list[str]:
    """Identity columns beside the system name: those that differ between rows."""
    return [key for key in ("dataset", "protocol", "split") if len({getattr(r, key) for r in results}) > 1]


def _recall_columns(results: Sequence[Result]) -> list[str]:
    """``R@K`` of every cut-off of ``results`` (1, 5, 10 and any further one), in increasing order."""
    ks = {k for r in results for task in TASKS for k in recall_ks(getattr(r, task))}
    return [f"R@{k}" for k in sorted(ks)]


def _table_metrics(results: Sequence[Result]) -> list[str]:
    """The columns of each task: :data:`TABLE_METRICS`, with the further cut-offs of any result after R@10."""
    return [*_recall_columns(results), *(m for m in TABLE_METRICS if not m.startswith("R@"))]


def _cell(result: Result, task: str, metric: str, ci: bool, alpha: float, marker: str,
          ci_format: str) -> str:
    if metric not in getattr(result, task):  # a further cut-off that another result of the table has
        return ""
    value = result.metric(task, metric)
    text = metric_entry(metric).format(value)
    p = result.extras.get("significance", {}).get(task, {}).get(metric)
    if p is not None and p < alpha:
        text += marker
    interval = result.extras.get("ci", {}).get(task, {}).get(metric)
    if ci and interval is not None:
        text += ci_format.format(*interval)
    return text


def _rows(results: Sequence[Result], ci: bool, alpha: float, marker: str,
          ci_format: str = " [{:.1f}, {:.1f}]") -> tuple[list[str], list[list[str]]]:
    if not results:
        raise DataError("a results table needs at least one result")
    ident = _varying(results)
    metrics = _table_metrics(results)
    header = ["System", *[k.capitalize() for k in ident]]
    header += [f"{task[:3].capitalize()}. {metric_entry(m).label}" for task in TASKS for m in metrics]
    rows = [
        [r.system, *[getattr(r, k) for k in ident],
         *[_cell(r, task, m, ci, alpha, marker, ci_format) for task in TASKS for m in metrics]]
        for r in results
    ]
    return header, rows


def task_figures(metrics: Mapping) -> dict[str, tuple[float, list[float] | None]]:
    """The figures of one task's metrics (its float entries) with their intervals, where recorded.

    Counts (``n_pairs``, ``n_queries``), settings and nested records are not figures.

    >>> task_figures({"accuracy": 50.0, "n_queries": 8, "ci": {"accuracy": [25.0, 75.0]}})
    {'accuracy': (50.0, [25.0, 75.0])}
    """
    intervals = metrics.get("ci", {})
    return {name: (value, intervals.get(name)) for name, value in metrics.items()
            if isinstance(value, float)}


def format_task_figure(value: float) -> str:
    """A task figure or bound as the tables print it: three significant digits, whole from 100 on.

    Task figures are percentages (accuracy, AP) or scores and correlations near zero, so a
    fixed number of decimals would hide the second kind.

    >>> format_task_figure(45.2611), format_task_figure(0.72049), format_task_figure(2371.4)
    ('45.3', '0.72', '2371')
    """
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _task_columns(results: Sequence[Result]) -> list[tuple[str, str]]:
    """(task, figure) of every task figure of ``results``, in the order first met."""
    columns: dict[tuple[str, str], None] = {}
    for r in results:
        for task, metrics in r.extras.get("tasks", {}).items():
            columns.update(dict.fromkeys((task, name) for name in task_figures(metrics)))
    return list(columns)


def task_cell(metrics: Mapping, name: str, *, ci: bool = True, ci_format: str = " [{}, {}]") -> str:
    """One task figure of ``metrics`` as the tables print it, with its interval (if ``ci`` and recorded).

    An empty string where ``metrics`` has no such figure.

    >>> task_cell({"AP": 71.25, "ci": {"AP": [64.0, 78.5]}}, "AP")
    '71.2 [64, 78.5]'
    """
    value, interval = task_figures(metrics).get(name, (None, None))
    if value is None:
        return ""
    text = format_task_figure(value)
    if ci and interval is not None:
        text += ci_format.format(*map(format_task_figure, interval))
    return text


def _task_cell(result: Result, task: str, name: str, ci: bool) -> str:
    return task_cell(result.extras.get("tasks", {}).get(task, {}), name, ci=ci)


def _task_rows(results: Sequence[Result], ci: bool) -> tuple[list[str], list[list[str]]] | None:
    """Header and rows of the other tasks' table, or None when no result has task figures."""
    columns = _task_columns(results)
    if not columns:
        return None
    ident = _varying(results)
    header = ["System", *[k.capitalize() for k in ident],
              *[f"{task.replace('_', ' ').capitalize()} {name.replace('_', ' ')}" for task, name in columns]]
    rows = [[r.system, *[getattr(r, k) for k in ident], *[_task_cell(r, t, n, ci) for t, n in columns]]
            for r in results]
    return header, rows


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown (GitHub) table of ``header`` and ``rows``, ending with a newline.

    A ``|`` in a cell (a system label such as ``KCCA a|b``) would end the cell: it is escaped
    as ``\\|``, which Markdown shows as ``|``.

    >>> print(markdown_table(["System", "R@1"], [["KCCA a|b", "8.3"]]), end="")
    | System | R@1 |
    |---|---|
    | KCCA a\\|b | 8.3 |
    """
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(cell).replace("|", r"\|") for cell in cells) + " |"

    return "\n".join([line(header), "|" + "|".join("---" for _ in header) + "|", *map(line, rows)]) + "\n"


def to_markdown(results: Result | Sequence[Result], *, ci: bool = False, alpha: float = 0.05, marker: str = "*") -> str:
    """A Markdown table, one row per result.

    Parameters
    ----------
    results : Result or sequence of Result
        One result is a table of one row.
    ci : bool, default=False
        Append ``[low, high]`` where ``extras["ci"]`` has an interval; warns about results with
        none (:func:`~kcca_desc.evaluate.statistics.add_confidence_intervals` adds them).
    alpha : float, default=0.05
        Significance level of the markers.
    marker : str, default="*"
        Appended to a figure whose ``extras["significance"]`` p-value is below
        ``alpha``.

    Returns
    -------
    str
        The table, ending with a newline.

    Raises
    ------
    ParameterError
        If ``results`` is neither a Result nor an iterable of Results (the message names the
        function and the item, ``results[i]``).
    DataError
        If ``results`` is empty.

    Notes
    -----
    Results with other tasks' figures (``extras["tasks"]``) get a second table below, one
    row per result, with their intervals under ``ci``.
    """
    results = table_results(results, "to_markdown", ci=ci)
    text = markdown_table(*_rows(results, ci, alpha, marker))
    tasks = _task_rows(results, ci)
    if tasks is not None:
        text += "\n" + markdown_table(*tasks)
    return text


def to_csv(results: Result | Sequence[Result], *, ci: bool = False) -> str:
    """CSV, one row per result, ``task_metric`` columns, figures rounded as the tables print them.

    Each figure has the precision of :meth:`Metric.format <kcca_desc.evaluate.metrics.Metric.format>`
    (one decimal; a whole median rank without one), so a spreadsheet shows what the paper's table
    shows; the full precision stays in the results JSON (:func:`save_results`). The other tasks'
    figures (``extras["tasks"]``) follow as ``task_figure`` columns (three significant digits,
    :func:`format_task_figure`).

    Parameters
    ----------
    results : Result or sequence of Result
        One result is a table of one row.
    ci : bool, default=False
        Add ``task_metric_ci_low`` / ``_ci_high`` columns after each metric and each other task's
        figure (empty where no interval was computed); warns about results with no intervals at all.

    Returns
    -------
    str
        The CSV text, a header row first, lines ending with a newline.

    Raises
    ------
    ParameterError
        If ``results`` is neither a Result nor an iterable of Results (the message names the
        function and the item, ``results[i]``).
    DataError
        If ``results`` is empty.
    """
    results = table_results(results, "to_csv", ci=ci)
    if not results:
        raise DataError("a results table needs at least one result")
    columns = ["system", "dataset", "protocol", "split"]
    recalls = _recall_columns(results)
    metric_keys = [*recalls, *(m for m in METRIC_KEYS if m not in recalls)]
    for task in TASKS:
        for m in metric_keys:
            columns.append(f"{task}_{m}")
            if ci and m != "n_queries":
                columns += [f"{task}_{m}_ci_low", f"{task}_{m}_ci_high"]
    task_columns = _task_columns(results)
    for task, name in task_columns:
        columns.append(f"{task}_{name}")
        if ci:
            columns += [f"{task}_{name}_ci_low", f"{task}_{name}_ci_high"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for r in results:
        row = [r.system, r.dataset, r.protocol, r.split]
        for task in TASKS:
            for m in metric_keys:
                if m == "n_queries":
                    row.append(str(r.metric(task, m)))
                    continue
                if m not in getattr(r, task):  # a further cut-off that another result has
                    row += ["", "", ""] if ci else [""]
                    continue
                row.append(metric_entry(m).format(r.metric(task, m)))
                if ci:
                    interval = r.extras.get("ci", {}).get(task, {}).get(m)
                    row += [format_bound(v) for v in interval] if interval is not None else ["", ""]
        for task, name in task_columns:
            row.append(_task_cell(r, task, name, False))
            if ci:
                interval = task_figures(r.extras.get("tasks", {}).get(task, {})).get(name, (None, None))[1]
                row += [format_task_figure(v) for v in interval] if interval is not None else ["", ""]
        writer.writerow(row)
    return buffer.getvalue()


def latex_task_tabular(ident: Sequence[str], metrics: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """The lines of a ``tabular`` in the paper's layout: identity columns, then Annotation and Search groups.

    ``ident`` heads the identity columns (escaped here), ``metrics`` are the metrics of each
    task group (headed by their labels), and ``rows`` hold the LaTeX source of every cell
    (already escaped: a cell may carry a marker such as ``$^{*}$``). :func:`to_latex` and the
    comparison's LaTeX (:meth:`kcca_desc.report.compare.Comparison.to_latex`) share it.
    """
    n_ident, n_metric = len(ident), len(metrics)
    return [
        rf"\begin{{tabular}}{{{'l' * n_ident + 'r' * (2 * n_metric)}}}",
        r"\toprule",
        " & " * (n_ident - 1)
        + rf" & \multicolumn{{{n_metric}}}{{c}}{{Annotation}} & \multicolumn{{{n_metric}}}{{c}}{{Search}} \\",
        rf"\cmidrule(lr){{{n_ident + 1}-{n_ident + n_metric}}}"
        rf"\cmidrule(lr){{{n_ident + n_metric + 1}-{n_ident + 2 * n_metric}}}",
        " & ".join(map(latex_escape, [*ident, *[metric_entry(m).label for m in metrics] * 2])) + r" \\",
        r"\midrule",
        *[" & ".join(row) + r" \\" for row in rows],
        r"\bottomrule",
        r"\end{tabular}",
    ]


def to_latex(results: Result | Sequence[Result], *, ci: bool = False, alpha: float = 0.05,
             marker: str = r"$^{*}$") -> str:
    """A LaTeX ``tabular`` (booktabs rules) with the paper's column groups.

    The source compiles with pdflatex as written: its first line (:data:`~kcca_desc.evaluate.latex.LATEX_HEADER`)
    names the ``booktabs`` package it needs, and labels are escaped by
    :func:`~kcca_desc.evaluate.latex.latex_escape` (symbols such as ``ρ`` or ``<`` in math mode).
    ``results``, ``ci``, ``alpha`` and ``marker`` are as for :func:`to_markdown`.
    """
    results = table_results(results, "to_latex", ci=ci)
    header, rows = _rows(results, ci, alpha, "\0", ci_format=" [{:.1f}, {:.1f}]")
    metrics = _table_metrics(results)
    n_ident = len(header) - 2 * len(metrics)
    lines = [LATEX_HEADER, *latex_task_tabular(header[:n_ident], metrics,
                                               [[latex_escape(c).replace("\0", marker) for c in row] for row in rows])]
    tasks = _task_rows(results, ci)
    if tasks is not None:
        header, rows = tasks
        n_ident = len(header) - len(_task_columns(results))
        lines += ["", r"\bigskip", "", rf"\begin{{tabular}}{{{'l' * n_ident + 'r' * (len(header) - n_ident)}}}",
                  r"\toprule", " & ".join(map(latex_escape, header)) + r" \\", r"\midrule",
                  *[" & ".join(map(latex_escape, row)) + r" \\" for row in rows], r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def format_table(results: Result | Iterable[Result], *, ci: bool = False, alpha: float = 0.05) -> str:
    """A plain-text table for the terminal (aligned columns), as the CLI prints it.

    Parameters
    ----------
    results : Result or iterable of Result
        One result is a table of one row.
    ci : bool, default=False
        Append ``[low, high]`` where ``extras["ci"]`` has an interval; warns about results with
        none (:func:`~kcca_desc.evaluate.statistics.add_confidence_intervals` adds them).
    alpha : float, default=0.05
        Significance level of the ``*`` marking a figure whose ``extras["significance"]``
        p-value is below it.

    Returns
    -------
    str
        The table: a header, a rule and one line per result, identity columns left-aligned and
        figures right-aligned; results with other tasks' figures (``extras["tasks"]``) add a
        second table below.

    Raises
    ------
    ParameterError
        If ``results`` is neither a Result nor an iterable of Results (the message names the
        function and the item, ``results[i]``).
    DataError
        If ``results`` is empty.
    """
    results = table_results(results, "format_table", ci=ci)
    text = _aligned(*_rows(results, ci, alpha, "*"), n_ident=1 + len(_varying(results)))
    tasks = _task_rows(results, ci)
    return text if tasks is None else text + "\n" + _aligned(*tasks, n_ident=1 + len(_varying(results)))


def _aligned(header: list[str], rows: list[list[str]], n_ident: int) -> str:
    """Columns padded to one width: identity columns left-aligned, figures right-aligned."""
    widths = [max(len(x) for x in column) for column in zip(header, *rows)]

    def line(cells):
        return "  ".join(c.ljust(w) if i < n_ident else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    rule = "-" * len(line(header))
    return "\n".join([line(header), rule, *map(line, rows)]) + "\n"


# An object's repr in a results file (an encoder's parameters) holds its address, which differs between runs.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def result_identity(record: Mapping) -> list:
    """What makes two results the same run: its system, protocol, split, parameters and data.

    ``record`` is a result's JSON object (:meth:`Result.to_dict`); the data are the data set's
    fingerprint (``data_source.fingerprint``), and the addresses in the reprs of object
    parameters are left out.  A list of JSON values, so that one read back from a file compares
    equal.

    >>> result_identity({"system": "NN", "protocol": "hodosh", "split": "test", "params": {"k": 5}})
    ['NN', 'hodosh', 'test', '{"k": 5}', None]
    """
    return [record.get("system"), record.get("protocol"), record.get("split"),
            _ADDRESS.sub("", json.dumps(record.get("params"), sort_keys=True)),
            (record.get("data_source") or {}).get("fingerprint")]
