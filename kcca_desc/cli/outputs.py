"""Writing a command's outputs without losing them: a write that fails keeps the results elsewhere.

The outputs are checked before the run (:func:`kcca_desc.cli.preflight.check_writable`), but a
disk can fill up or be remounted read-only while a run works.  Each file is written atomically
(:func:`kcca_desc._core.cache.atomic_write_bytes`), so a failed write leaves no partial file;
:func:`write_or_keep` then writes the same outputs into a fresh temporary folder and stops with
an :class:`~kcca_desc._core.errors.UnwritableOutputError` (exit 73) that names it, so that the
hours a run took are not lost to a full disk.

Nor does a run replace the outputs of another: :func:`keep_earlier` moves an output of other
inputs aside as a numbered version before the new one is written, a results file of other
settings or data (``fit --out``, :func:`keep_earlier_run`), a comparison of other runs or
statistics (``compare --out``, :func:`keep_earlier_comparison`) or a report of either
(``fit --report``, ``report --out``, :func:`keep_earlier_report`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from .._core.errors import UnwritableOutputError
from ..evaluate.results import result_identity

__all__ = ["write_or_keep", "keep_earlier", "keep_earlier_run", "keep_earlier_comparison", "keep_earlier_report",
           "version_note", "run_identity"]

T = TypeVar("T")


def write_or_keep(target: str | os.PathLike, write: Callable[[Path], T]) -> T:
    """``write(target)``; when it fails with an ``OSError``, ``write`` into a fallback folder and raise.

    Parameters
    ----------
    target : path-like
        The output the user named (a file, or a folder for a report).
    write : callable
        ``write(path)`` writes every output of the run at ``path`` (a file's siblings beside it,
        a report inside it) and returns what the command prints.

    Returns
    -------
    The value of ``write(target)``.

    Raises
    ------
    UnwritableOutputError
        When ``target`` cannot be written, naming it, the reason (``No space left on device``,
        ``Read-only file system``) and the folder that holds the outputs instead, if any could be
        written there.
    """
    target = Path(target)
    try:
        return write(target)
    except OSError as exc:
        reason = exc.strerror or str(exc)
    fallback = Path(tempfile.mkdtemp(prefix="kcca_desc-unsaved-"))
    try:
        write(fallback / target.name)
    except OSError as exc:
        shutil.rmtree(fallback, ignore_errors=True)
        raise UnwritableOutputError(target, f"{reason}; nor could the outputs be kept in a temporary folder "
                                            f"({exc.strerror or exc})") from None
    raise UnwritableOutputError(target, f"{reason}; the outputs were written to {fallback / target.name} "
                                        "instead") from None


def run_identity(records: Sequence[Mapping]) -> list:
    """What makes two results files the same run: per result, :func:`~kcca_desc.evaluate.results.result_identity`.

    ``records`` are the JSON objects of a results file (:meth:`~kcca_desc.evaluate.results.Result.to_dict`).
    """
    return [result_identity(record) for record in records]


def _version(path: Path, suffixes: Sequence[str]) -> Path:
    """The next version of ``path``: ``NAME.<n>`` and its suffix, ``n`` after the highest beside it of ``suffixes``.

    A folder's version is its whole name and the number (``report.1``); a file's keeps its suffix
    last (``x.1.json``).
    """
    stem, suffix = (path.name, "") if path.is_dir() else (path.stem, path.suffix)
    pattern = re.compile(re.escape(stem) + r"\.([0-9]+)(" + "|".join(map(re.escape, suffixes)) + r")")
    numbers = [int(match.group(1)) for entry in path.parent.iterdir() if (match := pattern.fullmatch(entry.name))]
    return path.with_name(f"{stem}.{max(numbers, default=0) + 1}{suffix}")


def keep_earlier(path: str | os.PathLike, same: Callable[[Path], bool], *, siblings: Sequence[str] = ()) -> Path | None:
    """Before an output is written to ``path`` (a file or a folder): keep an earlier one there as a numbered version.

    When ``same(path)`` is false (or fails: unreadable, not JSON, not what it should be), the
    output at ``path`` and those of its ``siblings`` there (the suffixes of the tables beside a
    file: ``.md``, ``.csv``, ``.tex``) are moved to the next free number, ``x.json`` to ``x.1.json``
    then ``x.2.json`` (after the highest there), a folder ``report`` to ``report.1``, each by one
    atomic rename.  An output of the same inputs is left to be replaced.

    Returns
    -------
    The version the earlier output was moved to; ``path`` itself when it holds an output of the
    same inputs, to be replaced; None when there is nothing at ``path``.
    """
    path = Path(path)
    if not path.exists():
        return None
    try:
        if same(path):
            return path
    except (OSError, ValueError, RecursionError, AttributeError, KeyError, TypeError):
        pass  # unreadable, not JSON, not what this output holds: kept as one of other inputs
    if path.is_dir():
        version = _version(path, ("",))
        os.replace(path, version)
        return version
    version = _version(path, (path.suffix, *siblings))
    for suffix in (path.suffix, *siblings):
        if path.with_suffix(suffix).is_file():
            os.replace(path.with_suffix(suffix), version.with_suffix(suffix))
    return version


def keep_earlier_run(path: str | os.PathLike, records: Sequence[Mapping], *, siblings: Sequence[str] = ()) -> Path | None:
    """:func:`keep_earlier` for ``fit --out``: the same run is one of the same :func:`run_identity`.

    Another system, protocol, split, parameters or data, or no readable results file, is another run.
    """
    def same(earlier: Path) -> bool:
        found = json.loads(earlier.read_text())
        return run_identity(found if isinstance(found, list) else [found]) == run_identity(records)

    return keep_earlier(path, same, siblings=siblings)


def keep_earlier_comparison(path: str | os.PathLike, inputs: Mapping, *, siblings: Sequence[str] = ()) -> Path | None:
    """:func:`keep_earlier` for ``compare --out``: the same comparison is one of the same inputs.

    ``inputs`` are :func:`~kcca_desc.report.compare.comparison_inputs` (the runs, references and
    statistics' settings), which the comparison's JSON file records under ``"inputs"``.
    """
    return keep_earlier(path, lambda earlier: _recorded_inputs(earlier) == inputs, siblings=siblings)


def _recorded_inputs(path: Path):
    """The inputs a comparison's JSON file records (raises when it records none: an older or other file)."""
    return json.loads(path.read_text())["inputs"]


def keep_earlier_report(folder: str | os.PathLike, inputs: Mapping) -> Path | None:
    """:func:`keep_earlier` for a report's folder: the same report is one of a comparison of the same ``inputs``.

    A report records them in the ``comparison.json`` beside its ``report.html``.  A folder without
    a report page is not a report: the report is written into it, as before, and nothing is moved.
    """
    folder = Path(folder)
    if not (folder / "report.html").is_file():
        return None
    return keep_earlier(folder, lambda earlier: _recorded_inputs(earlier / "comparison.json") == inputs)


def version_note(out: Path, earlier: Path | None, what: str, same: str, other: str, *, tables: str = "") -> str | None:
    """The line that says what became of the earlier output at ``out`` (:func:`keep_earlier`); None when none was there.

    ``what`` names the output (``run``), ``same`` and ``other`` its inputs (``settings and data``,
    ``settings or data``), ``tables`` the files beside it (`` (+ .md, .csv, .tex)``).
    """
    if earlier is None:
        return None
    if earlier == out:
        return f"replaced {out}{tables}: the earlier {what} there had the same {same}"
    return f"kept the earlier {what} of {out}, of other {other}, as {earlier}" + (" (+ its tables)" if tables else "")
