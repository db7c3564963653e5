"""Writing a command's outputs without losing them: a write that fails keeps the results elsewhere.

The outputs are checked before the run (:func:`kcca_desc.cli.preflight.check_writable`), but a
disk can fill up or be remounted read-only while a run works.  Each file is written atomically
(:func:`kcca_desc._core.cache.atomic_write_bytes`), so a failed write leaves no partial file;
:func:`write_or_keep` then writes the same outputs into a fresh temporary folder and stops with
an :class:`~kcca_desc._core.errors.UnwritableOutputError` (exit 73) that names it, so that the
hours a run took are not lost to a full disk.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .._core.errors import UnwritableOutputError

__all__ = ["write_or_keep"]

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
