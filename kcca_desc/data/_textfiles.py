"""Reading the line-oriented text files of the data sets, with located errors.

Every loader reports bad input as ``"<file>, line <n>: <what is wrong>"`` so a
user can open the file at the offending line; the helpers here keep that
format in one place.
"""

from __future__ import annotations

import os
from pathlib import Path
from collections.abc import Iterator

__all__ = ["DataFormatError", "read_lines", "iter_fields"]


class DataFormatError(ValueError):
    """A data file is malformed; the message names the file and the line."""

    def __init__(self, path: str | os.PathLike, line: int | None, message: str):
        where = f"{path}, line {line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {message}")
        self.path = Path(path)
        self.line = line


def read_lines(path: str | os.PathLike, what: str) -> list[str]:
    """The lines of a UTF-8 text file, without line terminators.

    Parameters
    ----------
    path : path-like
        The file.
    what : str
        What the file is (e.g. ``"Flickr8K caption file"``), for the error message.

    Raises
    ------
    FileNotFoundError
        Naming ``what`` and ``path`` when the file does not exist.
    DataFormatError
        When the file is not valid UTF-8 (naming the line).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path}")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DataFormatError(path, line, f"not valid UTF-8 ({exc.reason})") from None
    return text.splitlines()


def iter_fields(
    path: str | os.PathLike, lines: list[str], n_fields: int, sep: str | None = "\t"
) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)`` for each non-blank line.

    Lines are split on ``sep`` (any whitespace when ``None``) into exactly
    ``n_fields`` fields, each stripped of surrounding white space; 1-based line
    numbers count blank lines too, so they match what an editor shows.

    Raises
    ------
    DataFormatError
        When a line does not have ``n_fields`` fields.
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        fields = line.split(sep) if sep is not None else line.split()
        if len(fields) != n_fields:
            separator = "tab" if sep == "\t" else "white-space"
            raise DataFormatError(
                path, number,
                f"expected {n_fields} {separator}-separated fields, found {len(fields)}: {line!r}",
            )
        yield number, [f.strip() for f in fields]
