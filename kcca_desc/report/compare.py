"""Compare retrieval runs query by query: figures, bootstrap intervals and paired tests.

Runs written on different days by different commands (``python -m kcca_desc.fit --out``, a
benchmark's records) are comparable when they ranked the same queries: same data set (and data-set
fingerprint, where both record one), split and protocol, the same query ids in the same order.
Each results file keeps the per-query ranks of both tasks
(:class:`~kcca_desc.evaluate.results.Result`), so every figure, interval and test is recomputed
here from them, with no re-run:

- R@1, R@5, R@10, median and mean rank of each run and task, and R@K of any further cut-off K a
  run was evaluated with (``ks=(1, 5, 10, 20)``), after R@10 as in the results tables;
- their percentile bootstrap intervals (:func:`~kcca_desc.evaluate.statistics.metric_cis`); under
  the karpathy protocol the five search queries of an image are resampled together (cluster
  bootstrap, Davison & Hinkley 1997, §3.8), since they are five captions of one image;
- paired tests against the reference run, as Hodosh, Young & Hockenmaier (2013, Section 4.2.1)
  test their systems: McNemar's test of the per-query hits for R@K, Fisher's paired
  randomisation test of the median and of the mean rank. p-values are per comparison, not
  corrected for the number of comparisons;
- the other tasks' figures that the runs record (forced choice, off-topic detection:
  ``extras["tasks"]``), with the bootstrap intervals stored beside them when they were
  measured (their per-item scores are not kept, so they are listed, not recomputed or tested).

Markers: ``*`` p < 0.05, ``**`` p < 0.01, ``***`` p < 0.001.

Usage::

    python -m kcca_desc.compare base.json ours.json --reference base.json --out cmp/table
    python -m kcca_desc.compare benchmarks/results/hodosh_table.json --systems Tri5Sem,BoW5 \\
        --reference Tri5Sem

The second form picks runs out of a benchmark's results file: any JSON file whose nested values
hold result records is read.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._core.cache import atomic_write_text
from .._core.errors import DataError, KccaDescError, warn_user
from ..evaluate.latex import LATEX_HEADER, latex_escape
from ..evaluate.metrics import METRICS, format_bound, metric_entry
from ..evaluate.ranks import TASKS, recall_ks, retrieval_metrics
from ..evaluate.results import (TABLE_METRICS, Result, format_task_figure, latex_task_tabular, markdown_table,
                                result_identity, task_figures)
from ..evaluate.statistics import (CONFIDENCE, N_PERMUTATIONS, N_RESAMPLES, bootstrap_groups, caption_images, metric_cis,
                                   paired_tests)

__all__ = [
    "ComparisonError", "Run", "Comparison", "load_runs", "system_names", "check_comparable", "data_fingerprint",
    "cluster_groups", "pool_sizes", "gold_captions",
    "caption_image", "compare_runs", "comparison_inputs", "significance_marker", "format_p",
]

#: (threshold, marker), tightest first: a p-value below the threshold gets the marker.
MARKERS = ((0.001, "***"), (0.01, "**"), (0.05, "*"))
#: System labels longer than this wrap in the comparison's LaTeX tables.
_LATEX_LABEL_CHARS = 20
_COLUMNS = ("protocol", "task", "metric", "system", "value", "ci_low", "ci_high", "difference", "p_value",
            "test", "marker")


class ComparisonError(KccaDescError, ValueError):
    """Runs that cannot be compared query by query (other data, split, protocol or queries).

    The command exits with status 2, as for any other bad argument (:mod:`kcca_desc._core.errors`).
    """

    exit_code = 2


def significance_marker(p: float | None) -> str:
    """``***``, ``**``, ``*`` or ``""`` for a p-value (see :data:`MARKERS`)."""
    if p is None:
        return ""
    return next((marker for threshold, marker in MARKERS if p < threshold), "")


@dataclass
class Run:
    """One result and where it came from (the label names it in tables and errors)."""

    result: Result
    source: str
    label: str = ""

    def __post_init__(self):
        self.label = self.label or self.result.system

    def matches(self, name: str) -> bool:
        """Whether ``name`` names this run: its label, its system, or the file it came from (path or name)."""
        return (name in (self.label, self.result.system) or Path(self.source) == Path(name)
                or Path(self.source).name == name)


def _result_dicts(data: Any) -> list[Mapping]:
    """Every result record nested in a JSON value (a results file, a benchmark's table)."""
    if isinstance(data, Mapping):
        if all(key in data for key in ("system", "dataset", "protocol", "split", "annotation", "search")):
            return [data]
        return [found for value in data.values() for found in _result_dicts(value)]
    if isinstance(data, list):
        return [found for value in data for found in _result_dicts(value)]
    return []


def _read_results(path: Path) -> list[Result]:
    """The results in the file ``path`` (raises :class:`ComparisonError` naming it)."""
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise ComparisonError(f"{path}: cannot read ({exc.strerror})") from None
    except (ValueError, RecursionError) as exc:  # malformed JSON, bytes that are not UTF-8, nesting too deep
        raise ComparisonError(f"{path}: not a JSON results file ({exc})") from None
    found = _result_dicts(data)
    if not found:
        raise ComparisonError(f"{path}: holds no result record{_not_results_hint(data)}; give the results files "
                              "of python -m kcca_desc.fit --out (or benchmark tables)")
    return [_parsed_result(path, i, item) for i, item in enumerate(found)]


def _not_results_hint(data: Any) -> str:
    """What the JSON value ``data`` is instead of results, where it is an output of these commands."""
    # A comparison (compare --out, a report's comparison.json) is the likeliest wrong file: it
    # sits beside the runs and is named like one.
    if isinstance(data, Mapping) and {"rows", "inputs"} <= data.keys():
        runs = data["inputs"].get("runs") if isinstance(data["inputs"], Mapping) else None
        labels = sorted({run[0] for run in runs if isinstance(run, list) and run and isinstance(run[0], str)}
                        if isinstance(runs, list) else ())
        return (": it is a comparison (written by python -m kcca_desc.compare --out, or a report's comparison.json)"
                + (f" of {', '.join(map(repr, labels))}" if labels else ""))
    return ""


def _parsed_result(path: Path, i: int, item: Mapping) -> Result:
    """Result ``i`` of the file ``path`` from its record ``item`` (raises :class:`ComparisonError` naming both)."""
    try:
        return Result.from_dict(item)
    except (TypeError, ValueError) as exc:
        raise ComparisonError(f"{path}: result {i}: {exc}") from None


def system_names(paths: Sequence[str | os.PathLike]) -> set[str]:
    """The system names of the results in ``paths`` (raises :class:`ComparisonError` for a bad file)."""
    return {result.system for path in map(Path, paths) for result in _read_results(path)}


def load_runs(paths: Sequence[str | os.PathLike], *, systems: Sequence[str] | None = None,
              protocol: str | None = None) -> list[Run]:
    """The results in ``paths`` (results files or benchmark tables), optionally filtered.

    Runs of one system name found in several files are labelled ``"system [file name]"``.

    Raises
    ------
    ComparisonError
        If a file is given twice, holds no result, a result lacks per-query ranks, or a name of
        ``systems`` matches none.

    Warns
    -----
    UserWarning
        Naming a file that holds no result under ``protocol``, left out.
    """
    seen = set()
    for path in map(Path, paths):
        # Each of its runs would clash with itself as "two runs of one system in one file".
        if path.resolve() in seen:
            raise ComparisonError(f"{path} is given twice: name each results file once")
        seen.add(path.resolve())
    runs = []
    for path in map(Path, paths):
        results = [result for result in _read_results(path) if systems is None or result.system in systems]
        held = sorted({result.protocol for result in results})
        if protocol is not None and held and protocol not in held:
            # Left out silently, the file's runs vanished from a comparison asked of them; not an error,
            # since one command over runs of several protocols is how each protocol is compared in turn.
            warn_user(f"{path} holds no {protocol} result (only {', '.join(held)}): left out of the comparison")
        for result in results:
            if protocol is not None and result.protocol != protocol:
                continue
            missing = [task for task in TASKS if task not in result.ranks]
            if missing:
                raise ComparisonError(f"{path}: result {result.system!r} ({result.protocol}) has no per-query "
                                      f"{' or '.join(missing)} ranks; re-run it with this version to compare it")
            runs.append(Run(result, str(path)))
    if systems is not None:
        absent = sorted(set(systems) - {run.result.system for run in runs})
        if absent:
            raise ComparisonError(f"no result of system(s) {', '.join(absent)} in {', '.join(map(str, paths))}")
    if not runs:
        raise ComparisonError(f"no result to compare in {', '.join(map(str, paths))}")
    names = [(run.result.system, run.result.protocol) for run in runs]
    for run in runs:
        if names.count((run.result.system, run.result.protocol)) > 1:
            run.label = f"{run.result.system} [{Path(run.source).name}]"
    if len({(run.label, run.result.protocol) for run in runs}) < len(runs):
        raise ComparisonError("two runs of one system under one protocol in one file; select them with --systems")
    return runs


def _query_ids(result: Result) -> dict[str, Any]:
    """What identifies the queries of a result: ids where it has them, sizes and image links."""
    ids = {f"{task} queries": len(result.ranks[task]) for task in TASKS}
    for key in ("images", "captions"):
        if key in result.queries:
            # As strings: files written before whole-number ids (COCO's) were kept as numbers hold them
            # as strings, and their runs ranked the same queries as a new run's.
            ids[f"{key[:-1]} ids"] = [str(i) for i in result.queries[key]]
    image_of = caption_image(result)
    if image_of is not None:
        ids["caption images"] = image_of.tolist()
    return ids


def data_fingerprint(result: Result) -> str | None:
    """The fingerprint of the data set a result was measured on, where it records one.

    ``python -m kcca_desc.fit`` records it under ``data_source.fingerprint``
    (:meth:`~kcca_desc.data.dataset.Dataset.fingerprint`): the image ids, captions and splits,
    so that synthetic data drawn with another seed, or an edited caption file, tells apart.
    """
    source = result.extras.get("data_source")
    fingerprint = source.get("fingerprint") if isinstance(source, Mapping) else None
    return fingerprint if isinstance(fingerprint, str) and fingerprint else None


def check_comparable(runs: Sequence[Run]) -> None:
    """Raise :class:`ComparisonError` unless all ``runs`` ranked the same queries.

    Same data set, split and protocol; where both runs record it, the same data-set fingerprint
    (:func:`data_fingerprint`: the same ids may name other images and captions, as in synthetic
    data drawn with another seed); same number of queries per task; and, where both runs record
    them, the same query ids and the same image of each caption, in the same order.
    """
    if not runs:
        raise ComparisonError("no run to compare")
    first = runs[0]
    for run in runs[1:]:
        for key in ("dataset", "split", "protocol"):
            a, b = getattr(first.result, key), getattr(run.result, key)
            if a != b:
                raise ComparisonError(f"cannot compare {first.label} ({first.source}) with {run.label} "
                                      f"({run.source}): {key} {a!r} vs {b!r}")
        ours, theirs = data_fingerprint(first.result), data_fingerprint(run.result)
        if ours is not None and theirs is not None and ours != theirs:
            raise ComparisonError(f"cannot compare {first.label} ({first.source}) with {run.label} "
                                  f"({run.source}): another data set under the same name and query ids "
                                  f"(data_source.fingerprint {ours[:12]}… vs {theirs[:12]}…)")
        ours, theirs = _query_ids(first.result), _query_ids(run.result)
        for key in [key for key in ours if key in theirs]:
            if ours[key] != theirs[key]:
                what = (f"{ours[key]} vs {theirs[key]}" if isinstance(ours[key], int)
                        else f"they differ first at position {_first_difference(ours[key], theirs[key])}")
                raise ComparisonError(f"cannot compare {first.label} ({first.source}) with {run.label} "
                                      f"({run.source}): not the same queries ({key}: {what})")


def _first_difference(a: list, b: list) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def caption_image(result: Result) -> np.ndarray | None:
    """The pool image of each search query (caption), where the result records it."""
    return caption_images(result)


def pool_sizes(result: Result) -> dict[str, int]:
    """The candidates each query of a task is ranked among: captions for annotation, images for search.

    From the pool a fold-averaged result records (``extras["pool"]``: images per fold and
    captions per image), else from the queries: every image of the pool is an annotation query
    and every caption a search query.
    """
    pool = result.extras.get("pool")
    if isinstance(pool, Mapping) and isinstance(pool.get("pool_images"), int):
        images = pool["pool_images"]
        return {"annotation": images * int(pool.get("captions_per_image") or 1), "search": images}
    return {"annotation": len(result.ranks["search"]), "search": len(result.ranks["annotation"])}


def gold_captions(result: Result) -> np.ndarray:
    """The number of gold captions of each annotation query (image) of a result.

    Counted from the image of each caption where the result records it, else the captions per
    image of its pool (one under the hodosh protocol).
    """
    n_images = len(result.ranks["annotation"])
    pool = result.extras.get("pool")
    image_of = caption_image(result)
    if not isinstance(pool, Mapping) and image_of is not None and image_of.size == len(result.ranks["search"]):
        return np.bincount(image_of, minlength=n_images)[:n_images]
    sizes = pool_sizes(result)
    return np.full(n_images, max(1, sizes["annotation"] // max(1, sizes["search"])))


def cluster_groups(result: Result) -> dict[str, np.ndarray]:
    """The bootstrap clusters of each task: the karpathy captions of one image are one cluster.

    Under the hodosh protocol every query is its own cluster (the ordinary bootstrap); under
    the karpathy protocol the search queries are grouped by their image
    (:func:`~kcca_desc.evaluate.statistics.bootstrap_groups`, the default of
    :func:`~kcca_desc.evaluate.statistics.add_confidence_intervals`).

    Raises
    ------
    ComparisonError
        If a karpathy result does not record the image of each caption.
    """
    try:
        return bootstrap_groups(result)
    except DataError as exc:
        raise ComparisonError(str(exc)) from None


@dataclass
class Comparison:
    """The table of a comparison: one row per protocol, task, metric and run.

    Rows are dictionaries with the keys of :data:`_COLUMNS`; the reference's own rows have no
    difference, p-value or test.  :attr:`task_rows` list the other tasks' figures the runs
    record, with the same keys (``metric`` naming the figure; no test, and no interval where
    none was stored); every format shows them after the retrieval rows.
    """

    rows: list[dict]
    reference: dict[str, str]
    settings: dict = field(default_factory=dict)
    task_rows: list[dict] = field(default_factory=list)
    #: What it was made of (:func:`comparison_inputs`): a later comparison of the same replaces it.
    inputs: dict = field(default_factory=dict)

    @property
    def metrics(self) -> list[str]:
        """The metrics of :attr:`rows` in the order of the results tables: R@K by K, then the ranks."""
        recalls = recall_ks({row["metric"]: None for row in self.rows})
        return [*(f"R@{k}" for k in recalls), *(m for m in METRICS if not m.startswith("R@"))]

    def to_json(self) -> str:
        return json.dumps({"reference": self.reference, "settings": self.settings, "markers": dict(
            (marker, f"p < {threshold}") for threshold, marker in MARKERS), "rows": self.rows,
            "task_rows": self.task_rows, "inputs": self.inputs}, indent=1, allow_nan=False) + "\n"

    def to_csv(self) -> str:
        """CSV of :attr:`rows`, figures rounded as :meth:`to_markdown` prints them.

        The full precision stays in :meth:`to_json`.
        """
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in self.rows:
            writer.writerow({k: _shown(row, k) for k in _COLUMNS})
        for row in self.task_rows:
            writer.writerow({k: _shown_task(row, k) for k in _COLUMNS})
        return buffer.getvalue()

    def _cells(self) -> tuple[list[str], list[list[str]]]:
        confidence = self.settings.get("confidence", CONFIDENCE)
        header = ["Protocol", "Task", "Metric", "System", "Value", f"{confidence:.0%} CI", "Δ vs ref.", "p", "Test"]
        body = []
        for row in self.rows:
            metric = metric_entry(row["metric"])
            is_ref = row["p_value"] is None
            body.append([row["protocol"], row["task"], metric.label, row["system"] + (" (ref.)" if is_ref
                                                                                                 else ""),
                         _shown(row, "value") + row["marker"],
                         f"[{_shown(row, 'ci_low')}, {_shown(row, 'ci_high')}]",
                         _shown(row, "difference"), _shown(row, "p_value"), row["test"] or ""])
        return header, body

    def _task_cells(self) -> tuple[list[str], list[list[str]]]:
        confidence = self.settings.get("confidence", CONFIDENCE)
        header = ["Protocol", "Task", "Figure", "System", "Value", f"{confidence:.0%} CI"]
        body = [[row["protocol"], row["task"], row["metric"], row["system"], _shown_task(row, "value"),
                 "" if row["ci_low"] is None else f"[{_shown_task(row, 'ci_low')}, {_shown_task(row, 'ci_high')}]"]
                for row in self.task_rows]
        return header, body

    def to_markdown(self) -> str:
        legend = ", ".join(f"{marker} p < {threshold}" for threshold, marker in MARKERS)
        text = markdown_table(*self._cells()) + f"\nReference: {_reference_text(self.reference)}; {legend}.\n"
        if self.task_rows:
            text += ("\nOther tasks (figures and intervals as the runs stored them):\n\n"
                     + markdown_table(*self._task_cells()))
        return text

    def to_latex(self) -> str:
        """LaTeX that compiles with pdflatex: one ``tabular`` per protocol in the paper's layout, each with a note.

        Systems are rows, each task's R@K and median rank columns (:data:`~kcca_desc.evaluate.results.TABLE_METRICS`
        and any further cut-off), as the results tables lay them out
        (:func:`~kcca_desc.evaluate.results.latex_task_tabular`); a figure carries the marker of
        its paired test against the reference. The note under each table names the reference,
        the markers and tests, and where the differences, intervals and p-values are (the
        other formats). The other tasks' figures of a protocol follow in a table of their own (a
        run's label and a task shown once). The first line names the package it needs (booktabs).
        """
        metrics = [m for m in self.metrics if m.startswith("R@") or m in TABLE_METRICS]
        confidence = self.settings.get("confidence", CONFIDENCE)
        legend = ", ".join(f"$^{{{marker}}}$ p {latex_escape('<')} {threshold}" for threshold, marker in MARKERS)
        lines = [LATEX_HEADER]
        for protocol, reference in self.reference.items():
            cells: dict[str, dict[tuple[str, str], str]] = {}
            for row in self.rows:
                if row["protocol"] != protocol or row["metric"] not in metrics:
                    continue
                marker = f"$^{{{row['marker']}}}$" if row["marker"] else ""
                cells.setdefault(row["system"], {})[(row["task"], row["metric"])] = (
                    latex_escape(metric_entry(row["metric"]).format(row["value"])) + marker)
            labels = _latex_labels([system + (" (ref.)" if system == reference else "") for system in cells])
            body = [[label, *[figures.get((task, metric), "") for task in TASKS for metric in metrics]]
                    for label, figures in zip(labels, cells.values())]
            if len(lines) > 1:
                lines += ["", r"\bigskip", ""]
            if len(self.reference) > 1:
                lines += [rf"\noindent\textbf{{{latex_escape(protocol.capitalize())} protocol}}\par\smallskip", ""]
            lines += [_LATEX_SMALL, *latex_task_tabular(["System"], metrics, body), r"\par}", "",
                      r"\smallskip{\footnotesize\noindent "
                      + latex_escape(f"Reference: {reference}. Against it, on the same queries: ") + legend
                      + latex_escape(" (McNemar's test for R@K, Fisher's randomisation test for the median rank; "
                                     "not corrected for multiple comparisons). Differences to the reference (Δ), "
                                     f"{confidence:.0%} bootstrap intervals and p-values: the comparison's .md, "
                                     ".csv and .json.") + r"\par}"]
            lines += self._latex_task_table(protocol)
        return "\n".join(lines) + "\n"

    def _latex_task_table(self, protocol: str) -> list[str]:
        """The other tasks' figures of ``protocol`` as LaTeX lines: a run's label and a task shown once each."""
        header, body = self._task_cells()
        body = [cells for cells in body if cells[0] == protocol]
        if not body:
            return []
        labels = _latex_labels([cells[3] for cells in body])
        rows, previous = [], (None, None)
        for (_, task, figure, system, value, interval), label in zip(body, labels):
            rows.append(" & ".join([label if system != previous[0] else "",
                                    latex_escape(task) if (system, task) != previous else "",
                                    *map(latex_escape, (figure, value, interval))]) + r" \\")
            previous = (system, task)
        title = latex_escape("Other tasks (figures and intervals as the runs stored them)")
        return ["", r"\medskip", "", rf"\noindent{{\footnotesize {title}}}\par\smallskip", _LATEX_SMALL,
                r"\begin{tabular}{lllrr}", r"\toprule",
                " & ".join(map(latex_escape, [header[3], header[1], *header[2:3], *header[4:]])) + r" \\",
                r"\midrule", *rows, r"\bottomrule", r"\end{tabular}", r"\par}"]

    def write(self, path: str | os.PathLike) -> list[Path]:
        """Write ``path`` with the suffixes .json, .md, .csv and .tex (atomically); return the paths."""
        path = Path(path)
        written = []
        for suffix, text in ((".json", self.to_json()), (".md", self.to_markdown()), (".csv", self.to_csv()),
                             (".tex", self.to_latex())):
            target = path.with_suffix(suffix)
            atomic_write_text(target, text)
            written.append(target)
        return written


#: What opens each LaTeX table of a comparison (closed by ``\par}``): small type, narrow gaps.
_LATEX_SMALL = r"\noindent{\footnotesize\setlength{\tabcolsep}{3pt}%"


def _latex_labels(labels: Sequence[str]) -> list[str]:
    """System labels as LaTeX cells; when one is long, all wrap in a column of a fifth of the line.

    So that the figures fit beside them: ``fit`` names a run by its settings
    (``KCCA bow5 (pyramid) n=8,16 κ=0.1,1 [bow5_seed1.json]``).
    """
    if max(map(len, labels), default=0) <= _LATEX_LABEL_CHARS:
        return [latex_escape(label) for label in labels]
    return [rf"\parbox[t]{{0.2\linewidth}}{{\raggedright {latex_escape(label)}}}" for label in labels]


def _shown(row: Mapping, column: str) -> str:
    """``row[column]`` as every table of a :class:`Comparison` shows it (figures rounded, p-values short)."""
    value = row[column]
    if value is None:
        return ""
    if column == "value":
        return metric_entry(row["metric"]).format(value)
    if column in ("ci_low", "ci_high"):
        return format_bound(value)
    if column == "difference":
        return f"{value:+.1f}"
    if column == "p_value":
        return format_p(value)
    return str(value)


def _shown_task(row: Mapping, column: str) -> str:
    """A cell of a task row: figures as the results tables print them (:func:`format_task_figure`)."""
    value = row[column]
    if value is None:
        return ""
    return format_task_figure(value) if column in ("value", "ci_low", "ci_high") else str(value)


def _task_rows(runs: Sequence[Run], protocol: str) -> list[dict]:
    """The other tasks' figures of ``runs`` (one protocol), in the columns of the comparison's rows."""
    rows = []
    for run in runs:
        for task, metrics in run.result.extras.get("tasks", {}).items():
            for name, (value, interval) in task_figures(metrics).items():
                low, high = interval if interval is not None else (None, None)
                rows.append({"protocol": protocol, "task": task, "metric": name, "system": run.label,
                             "value": value, "ci_low": low, "ci_high": high, "difference": None,
                             "p_value": None, "test": None, "marker": ""})
    return rows


def format_p(p: float) -> str:
    """A p-value as every table and the report print it: three decimals, ``<0.001`` below 0.001.

    One format for every p-value, so a column of them lines up (``1`` beside ``0.00391`` did not).

    >>> [format_p(p) for p in (1.0, 0.25, 0.0390625, 0.00390625, 0.0004)]
    ['1.000', '0.250', '0.039', '0.004', '<0.001']
    """
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _reference_text(reference: Mapping[str, str]) -> str:
    return "; ".join(f"{label} ({protocol})" for protocol, label in reference.items())


def _pick_reference(runs: Sequence[Run], reference: str | None, all_runs: Sequence[Run] = ()) -> Run:
    """The reference among ``runs`` (one protocol's runs); ``all_runs`` only improves the error."""
    if reference is None:
        return runs[0]
    matches = [run for run in runs if run.matches(reference)]
    if not matches:
        protocol = runs[0].result.protocol
        elsewhere = sorted({run.result.protocol for run in all_runs if run.matches(reference)})
        hint = (f"; it is a run of protocol {', '.join(elsewhere)} and each protocol's runs are compared with a "
                f"reference of their own: compare one protocol at a time (--protocol {elsewhere[0]} on the "
                f"command line, load_runs(..., protocol={elsewhere[0]!r}) in Python)" if elsewhere else "")
        raise ComparisonError(f"reference {reference!r} is none of the runs under protocol {protocol}: "
                              f"{', '.join(run.label for run in runs)}{hint}")
    if len(matches) > 1:
        raise ComparisonError(f"reference {reference!r} names several runs ({', '.join(r.label for r in matches)}); "
                              "name one system")
    return matches[0]


def compare_runs(runs: Sequence[Run], *, reference: str | None = None, n_resamples: int = N_RESAMPLES,
                 n_permutations: int = N_PERMUTATIONS, confidence: float = CONFIDENCE, seed: int = 0) -> Comparison:
    """Figures, bootstrap intervals and paired tests of ``runs`` against a reference.

    Parameters
    ----------
    runs : sequence of Run
        From :func:`load_runs`; grouped by protocol, each group checked by
        :func:`check_comparable`.
    reference : str, optional
        A run's label or system name, or the file it came from; default the first run.
    n_resamples, confidence : bootstrap settings of :func:`~kcca_desc.evaluate.statistics.metric_cis`.
    n_permutations : int
        Random assignments of the randomisation tests (exact enumeration when few queries differ).
    seed : int
        Seed of the bootstrap and the randomisation tests (with the defaults, the intervals and
        p-values are those of :func:`~kcca_desc.evaluate.statistics.add_confidence_intervals`
        and :func:`~kcca_desc.evaluate.statistics.add_significance`).

    Returns
    -------
    Comparison
    """
    by_protocol: dict[str, list[Run]] = {}
    for run in runs:
        by_protocol.setdefault(run.result.protocol, []).append(run)
    rows, references, task_rows = [], {}, []
    for protocol, group in by_protocol.items():
        check_comparable(group)
        ref = _pick_reference(group, reference, runs)
        references[protocol] = ref.label
        ordered = [ref, *[run for run in group if run is not ref]]
        task_rows += _task_rows(ordered, protocol)
        stats = {}
        for run in ordered:
            groups = cluster_groups(run.result)
            # The cut-offs each run was evaluated with: a further one (R@20) only has rows of the
            # runs that carry it, as the results tables leave it blank for the others.
            ks = {task: recall_ks(getattr(run.result, task)) for task in TASKS}
            cis = {task: metric_cis(run.result.ranks[task], ks=ks[task], n_resamples=n_resamples,
                                    confidence=confidence, seed=seed, groups=groups.get(task)) for task in TASKS}
            try:
                tests = None if run is ref else paired_tests(run.result, ref.result, n_permutations=n_permutations,
                                                             seed=seed)
            except ValueError as exc:
                raise ComparisonError(str(exc)) from None
            stats[run.label] = (retrieval_metrics(run.result.ranks["annotation"], ks["annotation"]),
                                retrieval_metrics(run.result.ranks["search"], ks["search"]), cis, tests)
        for task_i, task in enumerate(TASKS):
            recalls = sorted({k for run in ordered for k in recall_ks(getattr(run.result, task))})
            for metric in [*(f"R@{k}" for k in recalls), *(m for m in METRICS if not m.startswith("R@"))]:
                for run in ordered:
                    figures, cis, tests = stats[run.label][task_i], stats[run.label][2], stats[run.label][3]
                    if metric not in figures:
                        continue
                    test = tests[task][metric] if tests else {"p_value": None, "test": None, "difference": None}
                    rows.append({"protocol": protocol, "task": task, "metric": metric, "system": run.label,
                                 "value": figures[metric], "ci_low": cis[task][metric][0],
                                 "ci_high": cis[task][metric][1], **test,
                                 "marker": significance_marker(test["p_value"])})
    settings = {"n_resamples": int(n_resamples), "n_permutations": int(n_permutations),
                "confidence": float(confidence), "seed": int(seed), "bootstrap": "percentile",
                "clusters": {p: "caption groups of an image (search)" if p == "karpathy" else "none"
                             for p in by_protocol}}
    inputs = comparison_inputs(runs, reference=reference, n_resamples=n_resamples, n_permutations=n_permutations,
                               confidence=confidence, seed=seed)
    return Comparison(rows, references, settings, task_rows, inputs)


def comparison_inputs(runs: Sequence[Run], *, reference: str | None = None, n_resamples: int = N_RESAMPLES,
                      n_permutations: int = N_PERMUTATIONS, confidence: float = CONFIDENCE, seed: int = 0) -> dict:
    """What the comparison of :func:`compare_runs` is made of, known before any figure is computed.

    The runs, as a set: each its label and its result's identity
    (:func:`~kcca_desc.evaluate.results.result_identity`: system, protocol, split, parameters and
    data fingerprint; not the file it was read from, nor timings), the reference of each protocol
    and the statistics' settings.  JSON values, so that those read back from a comparison's file
    compare equal: ``compare --out`` and the reports replace an earlier output of equal inputs
    and keep one of others.
    """
    identities = sorted(([run.label, *result_identity(run.result.to_dict())] for run in runs), key=json.dumps)
    protocols = dict.fromkeys(run.result.protocol for run in runs)
    references = {protocol: _pick_reference([run for run in runs if run.result.protocol == protocol], reference,
                                            runs).label for protocol in protocols}
    return json.loads(json.dumps({"runs": identities, "reference": references, "n_resamples": int(n_resamples),
                                  "n_permutations": int(n_permutations), "confidence": float(confidence),
                                  "seed": int(seed)}))
