"""Writing a command's outputs without losing them: a write that fails keeps the results elsewhere.

The outputs are checked before the run (:func:`kcca_desc.cli.preflight.check_writable`), but a
disk can fill up or be remounted read-only while a run works.  Each file is written atomically
(:func:`kcca_desc._core.cache.atomic_write_bytes`), so a failed write leaves no partial file;
:func:`write_or_keep` then writes the same outputs into a fresh temporary folder and stops with
an :class:`~kcca_desc._core.errors.UnwritableOutputError` (exit 73) that names it, so that the
hours a run took are not lost to a full disk.

Nor does a run replace the results of another: :func:`keep_earlier_run` moves a results file of
other settings or data (and its tables) aside as a numbered version before ``fit --out`` writes
the new one.
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

__all__ = ["write_or_keep", "keep_earlier_run", "run_identity"]

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


# An object's repr in a results file (an encoder's parameters) holds its address, which differs between runs.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def run_identity(records: Sequence[Mapping]) -> list:
    """What makes two results files the same run: per result, its system, protocol, split, parameters and data.

    ``records`` are the JSON objects of a results file (:meth:`~kcca_desc.evaluate.results.Result.to_dict`);
    the data are the data set's fingerprint (``data_source.fingerprint``), and the addresses in the
    reprs of object parameters are left out.
    """
    def plain(value):
        return _ADDRESS.sub("", json.dumps(value, sort_keys=True))

    return [(record.get("system"), record.get("protocol"), record.get("split"), plain(record.get("params")),
             (record.get("data_source") or {}).get("fingerprint")) for record in records]


def _version_number(path: Path, suffixes: Sequence[str]) -> int:
    """The number after the highest of the versions of ``path`` (``NAME.<n>`` and one of ``suffixes``) beside it."""
    pattern = re.compile(re.escape(path.stem) + r"\.([0-9]+)(" + "|".join(map(re.escape, suffixes)) + r")")
    numbers = [int(match.group(1)) for entry in path.parent.iterdir() if (match := pattern.fullmatch(entry.name))]
    return max(numbers, default=0) + 1


def keep_earlier_run(path: str | os.PathLike, records: Sequence[Mapping], siblings: Sequence[str] = ()) -> Path | None:
    """Before the results ``records`` are written to ``path``: keep an earlier run there as a numbered version.

    When ``path`` holds results of another run (:func:`run_identity`: another system, protocol,
    split, parameters or data; or no readable results file), it and those of its ``siblings``
    there (the tables beside it: ``.md``, ``.csv``, ``.tex``) are moved to the next free number,
    ``x.json`` to ``x.1.json`` then ``x.2.json`` (after the highest there), each by one atomic
    rename.  A run of the same settings on the same data is left to be replaced.

    Returns
    -------
    The version the earlier run was moved to; ``path`` itself when it holds a run of the same
    settings and data, to be replaced; None when there is no file at ``path``.
    """
    path = Path(path)
    if not path.is_file():
        return None
    try:
        earlier = json.loads(path.read_text())
        if run_identity(earlier if isinstance(earlier, list) else [earlier]) == run_identity(records):
            return path
    except (OSError, ValueError, RecursionError, AttributeError):  # unreadable, not JSON, not result objects
        pass
    version = path.with_name(f"{path.stem}.{_version_number(path, (path.suffix, *siblings))}{path.suffix}")
    for suffix in (path.suffix, *siblings):
        if path.with_suffix(suffix).is_file():
            os.replace(path.with_suffix(suffix), version.with_suffix(suffix))
    return version
