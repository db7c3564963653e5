"""Reading the line-oriented text files of the data sets, with located errors.

Every loader reports bad input as ``"<file>, line <n>: <what is wrong>"`` so a
user can open the file at the offending line; the helpers here report it through
:class:`~kcca_desc.data.problems.DataFormatError`, which keeps that format in one place.
"""

from __future__ import annotations

import os
from pathlib import Path
from collections.abc import Iterator

from .._core.errors import MissingDataFileError
from .problems import DataFormatError, ProblemLog

__all__ = ["require_file", "read_lines", "iter_fields", "shorten"]


def require_file(path: Path, what: str) -> None:
    """Raise :class:`MissingDataFileError` naming ``what`` unless ``path`` is a file.

    A directory is named as such, with the files it holds (a
    user who points at the folder of a data set usually means a file in it).
    """
    if path.is_file():
        return
    if path.is_dir():
        inside = sorted(p.name for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        hint = f" (it holds {', '.join(inside[:5])}{', ...' if len(inside) > 5 else ''})" if inside else ""
        raise MissingDataFileError(f"{what} {path} is a directory, not a file: name the file itself{hint}")
    raise MissingDataFileError(f"{what} not found: {path}")


def read_lines(path: str | os.PathLike, what: str, problems: ProblemLog | None = None) -> list[str]:
    """The lines of a UTF-8 text file, without line terminators.

    Parameters
    ----------
    path : path-like
        The file.
    what : str
        What the file is (e.g. ``"Flickr8K caption file"``), for the error message.
    problems : ProblemLog, optional
        Where to record each line that is not valid UTF-8 (it is then returned empty); without
        it the first such line raises.

    Raises
    ------
    MissingDataFileError
        Naming ``what`` and ``path`` when the file does not exist or is a directory (a ``FileNotFoundError``).
    DataFormatError
        When the file is UTF-16, or not valid UTF-8 (naming the line) and no ``problems`` log is given.
    """
    path = Path(path)
    require_file(path, what)
    # Split the bytes, not the decoded text: str.splitlines would also break a caption at the
    # Unicode line separators (U+2028, U+0085...) that may appear inside it; every editor counts
    # lines at \n, \r\n and \r only.  A BOM is dropped.
    data = path.read_bytes()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataFormatError(path, None, "is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8")
    lines = []
    for number, raw in enumerate(data.removeprefix(b"\xef\xbb\xbf").splitlines(), start=1):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            message = f"not valid UTF-8 ({exc.reason}); save the file as UTF-8"
            if problems is None:
                raise DataFormatError(path, number, message) from None
            # The line is returned empty, so it is skipped and the others keep their numbers.
            problems.add(path, number, message)
            lines.append("")
    return lines


def iter_fields(
    path: str | os.PathLike, lines: list[str], n_fields: int, sep: str | None = "\t",
    problems: ProblemLog | None = None,
) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)`` for each non-blank line.

    Lines are split on ``sep`` (any whitespace when ``None``) into exactly
    ``n_fields`` fields, each stripped of surrounding white space; 1-based line
    numbers count blank lines too, so they match what an editor shows.

    Parameters
    ----------
    problems : ProblemLog, optional
        Where to record a line with the wrong number of fields (it is then skipped); without it
        such a line raises.

    Raises
    ------
    DataFormatError
        When a line does not have ``n_fields`` fields and no ``problems`` log is given.
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        fields = line.split(sep) if sep is not None else line.split()
        if len(fields) != n_fields:
            separator = "tab" if sep == "\t" else "white-space"
            message = f"expected {n_fields} {separator}-separated fields, found {len(fields)}: {shorten(line)!r}"
            if problems is None:
                raise DataFormatError(path, number, message)
            problems.add(path, number, message)
            continue
        yield number, [f.strip() for f in fields]


def shorten(text: str, limit: int = 120) -> str:
    """``text`` cut to ``limit`` characters, so that a huge line does not flood the error."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"
