"""Problems found in a data set, collected so that every one is reported at once.

A loader that meets a bad line or item records a :class:`Problem` in a :class:`ProblemLog` and
reads on, instead of stopping at the first: the user then sees every bad caption, image and line
in one error (:meth:`ProblemLog.raise_if_any`) and fixes them in one go, or drops the bad items
(:meth:`ProblemLog.warn_dropped`, the command line's ``--skip-bad-items``).  That error, a
:class:`DataFormatError`, is also what a reader raises at once for a bad line when it is given
no log.

A problem names the file, the line (for text files) or the item, and what is wrong.  It is
attributed to the image whose data it spoils (``item``), which is dropped whole when bad items are
skipped; a problem with no item spoils only its own line (a malformed line, a split file naming an
unknown image), and a ``fatal`` one (a missing split, no images at all) cannot be skipped.

Warnings about a data set (its skipped items, a known quirk of its release) go through
:func:`warn_data_once`: each is shown once per data set and process, however many times the
data set is loaded, and not at all under :func:`data_warnings_to_debug`, which a step that only
re-reads a data set another command has checked (the report's gallery) wraps its load in: they
are then logged on the ``kcca_desc.data`` logger at ``DEBUG`` level.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._core.errors import DataError, warn_user
from .._core.progress import counted

__all__ = ["DataFormatError", "Problem", "ProblemLog", "file_fingerprint", "warn_data_once",
           "forget_data_warnings", "data_warnings_to_debug"]

_LOGGER = logging.getLogger("kcca_desc.data")
# (data set fingerprint, message) of every data warning shown in this process.
_shown: set[tuple[Hashable, str]] = set()
_to_debug: contextvars.ContextVar[bool] = contextvars.ContextVar("data_warnings_to_debug", default=False)


def file_fingerprint(path: str | os.PathLike) -> tuple[str, int, int]:
    """Identity of a data file's content for :func:`warn_data_once`: its resolved path, mtime and size.

    An edited file is a new data set (its problems may have changed); a missing one is
    fingerprinted by its path alone.
    """
    path = Path(path).resolve()
    try:
        stat = path.stat()
    except OSError:
        return str(path), 0, 0
    return str(path), stat.st_mtime_ns, stat.st_size


def warn_data_once(dataset: Hashable, message: str) -> None:
    """Warn (:func:`~kcca_desc._core.errors.warn_user`) about a data set, once per data set and process.

    Parameters
    ----------
    dataset : hashable
        What identifies the data set, e.g. :func:`file_fingerprint` of its file.
    message : str
        The warning; the same message about the same data set is shown once, later loads log it
        at ``DEBUG`` level on the ``kcca_desc.data`` logger (as every load does under
        :func:`data_warnings_to_debug`).
    """
    key = (dataset, message)
    if _to_debug.get() or key in _shown:
        _LOGGER.debug("%s", message)
        return
    _shown.add(key)
    warn_user(message)


def forget_data_warnings() -> None:
    """Forget which data warnings were shown: each data set's warnings are shown again, as in a
    new process (a long-lived session that reloads edited data, or a test suite)."""
    _shown.clear()


@contextlib.contextmanager
def data_warnings_to_debug() -> Iterator[None]:
    """Log the data warnings raised inside at ``DEBUG`` level instead of warning.

    For steps that re-read a data set only to show its items (the report's gallery): the
    command that measured the run has warned about the data set's problems already.
    """
    token = _to_debug.set(True)
    try:
        yield
    finally:
        _to_debug.reset(token)


class DataFormatError(DataError):
    """A data file is malformed; the message names the file and the line.

    With ``problems`` it stands for several problems, listed beneath the message (``line`` is
    then None): see :class:`ProblemLog`.
    """

    def __init__(self, path: str | os.PathLike, line: int | None, message: str, problems: Sequence[str] = ()):
        where = f"{path}, line {line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {message}", problems)
        self.path = Path(path)
        self.line = line


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a data set.

    Attributes
    ----------
    path : str
        The file (caption file, JSON, image) the problem is in.
    line : int or None
        1-based line of a text file; None for JSON items and images.
    message : str
        What is wrong (a JSON problem starts with the item, ``images[3] (a.jpg): ...``).
    item : str or None
        Image id whose data the problem spoils (the whole image is dropped when skipping).
    fatal : bool
        True when skipping items cannot fix it.
    """

    path: str
    line: int | None
    message: str
    item: str | None = None
    fatal: bool = False

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}, line {self.line}"
        return f"{where}: {self.message}"


class ProblemLog:
    """The problems found so far in one data set, in the order they were found."""

    def __init__(self) -> None:
        self._problems: list[Problem] = []

    def add(self, path: str | os.PathLike, line: int | None, message: str, item: str | None = None,
            fatal: bool = False) -> None:
        """Record a problem (see :class:`Problem` for the fields)."""
        self._problems.append(Problem(os.fspath(path), line, message, item, fatal))

    def extend(self, problems) -> None:
        self._problems.extend(problems)

    def __len__(self) -> int:
        return len(self._problems)

    def __iter__(self) -> Iterator[Problem]:
        return iter(self._problems)

    @property
    def bad_items(self) -> set[str]:
        """Image ids some problem spoils."""
        return {p.item for p in self._problems if p.item is not None}

    @property
    def fatal(self) -> list[Problem]:
        return [p for p in self._problems if p.fatal]

    def error(self, source: str | os.PathLike) -> DataFormatError:
        """One error holding every problem: the problem itself when there is one, else a list.

        Parameters
        ----------
        source : path-like
            The data set's file or directory, named in the summary of several problems.
        """
        if len(self._problems) == 1:
            p = self._problems[0]
            return DataFormatError(p.path, p.line, p.message)
        items = len(self.bad_items)
        summary = f"{len(self._problems)} problems" + (f", spoiling {counted(items, 'image')}" if items else "")
        hint = "" if self.fatal else "; fix them, or drop the bad items with --skip-bad-items"
        return DataFormatError(source, None, summary + hint, problems=[str(p) for p in self._problems])

    def raise_if_any(self, source: str | os.PathLike) -> None:
        """Raise :meth:`error` when any problem was recorded."""
        if self._problems:
            raise self.error(source)

    def warn_dropped(self, source: str | os.PathLike, n_kept: int) -> None:
        """Warn once that the bad items and lines were dropped, listing each problem and the count kept."""
        if not self._problems:
            return
        lines = sum(p.item is None for p in self._problems)
        listed = DataFormatError(source, None, f"skipped the bad items: dropped {_count(len(self.bad_items), 'image')} "
                                               f"and {_count(lines, 'line')} with problems; kept "
                                               f"{_count(n_kept, 'image')}",
                                 problems=[str(p) for p in self._problems])
        warn_data_once(file_fingerprint(source), str(listed))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
