"""The toolkit's exceptions and the command line's exit codes.

Every problem the user can fix (bad data, a bad setting, a missing optional package or model
file, an output or cache that cannot be written) is raised as a subclass of
:class:`KccaDescError`.  The command line (:mod:`kcca_desc.cli`) prints such an error as one line,
``error: <message>`` (a data error lists each bad item beneath it), and exits with the class's
:attr:`~KccaDescError.exit_code`; ``--debug`` shows the traceback instead.  Any other exception is
a bug of the toolkit and keeps its traceback.

Warnings about the user's data or settings go through :func:`warn_user`, which attributes them
to the user's own call (the first frame outside the toolkit) rather than to a line of the toolkit
or of a library it called.

Each class also derives from the built-in exception a caller would expect for that kind of
problem (``ValueError`` for data and settings, ``ImportError`` for a missing package,
``FileNotFoundError`` for a missing model file, ``OSError`` for an unwritable path), so
``except ValueError`` and the like keep working.

Exit codes
----------
The codes follow BSD ``sysexits.h`` where it has one for the kind of problem, and ``2`` for a
bad setting (the status a malformed command line already exits with, a usage error):

====  ================================  ===============================================================
code  exception                         meaning
====  ================================  ===============================================================
0                                       success
1                                       an unexpected error (a bug): the traceback is printed
2     :class:`ParameterError`           a command-line option or estimator parameter is invalid
65    :class:`DataError`                the data set is malformed (files, lines, items named)
66    :class:`MissingDataFileError`     a data file or directory is missing
66    :class:`MissingModelFileError`    a model or weights file is missing
69    :class:`MissingDependencyError`   an optional package is not installed (the extra named)
71    :class:`InsufficientMemoryError`  a step would need more memory than the machine has
73    :class:`UnwritableOutputError`    the ``--out`` file (or ``--report`` folder) cannot be written
74    :class:`CacheError`               the feature cache cannot be used
130                                     interrupted by Ctrl-C (SIGINT), see :mod:`kcca_desc.cli.interrupts`
143                                     stopped by SIGTERM, see :mod:`kcca_desc.cli.interrupts`
====  ================================  ===============================================================
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "KccaDescError", "ParameterError", "DataError", "MissingDataFileError", "MissingModelFileError",
    "MissingDependencyError", "UnwritableOutputError", "CacheError", "InsufficientMemoryError", "EXIT_CODES",
    "warn_user",
]


class KccaDescError(Exception):
    """Base of the problems a user can fix; :attr:`exit_code` is the command line's exit status."""

    exit_code: int = 1


class ParameterError(KccaDescError, ValueError, TypeError):
    """A setting (command-line option or estimator parameter) is invalid.

    Also a ``TypeError``, as scikit-learn's ``InvalidParameterError`` is, since a parameter can
    be of the wrong type as well as out of range.
    """

    exit_code = 2


class DataError(KccaDescError, ValueError):
    """The data set has problems; :attr:`problems` lists every one found, each naming its item.

    Parameters
    ----------
    message : str
        What is wrong overall (``"3 problems in data set flickr8k"``).
    problems : sequence of str, optional
        One line per problem, each naming the file and line, JSON item or image.

    Notes
    -----
    The message shows the first :attr:`shown` problems and counts the rest, so a data set with
    thousands of bad files still gives a readable error; :attr:`problems` keeps them all.
    """

    exit_code = 65
    shown = 50

    def __init__(self, message: str, problems: Sequence[str] = ()):
        self.problems = list(problems)
        self.summary = message
        lines = [message] + [f"  {p}" for p in self.problems[: self.shown]]
        if len(self.problems) > self.shown:
            lines.append(f"  ... and {len(self.problems) - self.shown} more")
        super().__init__("\n".join(lines))


class MissingDataFileError(DataError, FileNotFoundError):
    """A data set's file or directory does not exist; the message says where the toolkit looked."""

    exit_code = 66


class MissingModelFileError(KccaDescError, FileNotFoundError):
    """A model or weights file the run needs does not exist; the message says how to get it."""

    exit_code = 66


class MissingDependencyError(KccaDescError, ImportError):
    """An optional package is not installed; the message names the package and the extra to install.

    Parameters
    ----------
    package : str
        The missing import (``"torch"``).
    extra : str, optional
        The ``setup.cfg`` extra that installs it (``"neural"``).
    purpose : str, optional
        What needs it (``"the CLIP encoder"``).
    """

    exit_code = 69

    def __init__(self, package: str, extra: str | None = None, purpose: str | None = None):
        needs = f"{purpose} needs" if purpose else "this needs"
        how = f"pip install 'kcca_desc[{extra}]'" if extra else f"pip install {package}"
        super().__init__(f"{needs} the optional package {package!r}, which is not installed; install it with `{how}`",
                         name=package)
        self.extra = extra


class InsufficientMemoryError(KccaDescError, MemoryError):
    """A step would need more memory than is available; the message says how much and what to do
    instead (checked before the step, :func:`kcca_desc._core.resources.require_memory`)."""

    exit_code = 71


class UnwritableOutputError(KccaDescError, OSError):
    """A file the run must write (``--out`` and its tables) cannot be written."""

    exit_code = 73

    def __init__(self, path: str | os.PathLike, reason: str):
        super().__init__(f"cannot write {os.fspath(path)}: {reason}")
        self.path = os.fspath(path)


class CacheError(UnwritableOutputError):
    """The feature cache cannot be used (and running without it was not possible or not wanted)."""

    exit_code = 74


#: Exit status of each exception class, for documentation and tests.
EXIT_CODES: dict[type[KccaDescError], int] = {
    cls: cls.exit_code for cls in (ParameterError, DataError, MissingDataFileError, MissingModelFileError,
                                   MissingDependencyError, UnwritableOutputError, CacheError,
                                   InsufficientMemoryError)
}


# The toolkit's source folders: kcca_desc/ and the kernels/ folder installed as kcca_desc.kernels.
_PACKAGE = Path(__file__).resolve().parents[1]
_TOOLKIT_DIRS = (str(_PACKAGE) + os.sep, str(_PACKAGE.parent / "kernels") + os.sep)


def _outside_toolkit_level() -> int:
    """``stacklevel`` of :func:`warnings.warn`, called from :func:`warn_user`, that names the user's call.

    That is the caller of the outermost toolkit frame, so a warning raised inside a library the
    toolkit called back through (joblib's ``Memory``, a thread pool) still points at the user.
    """
    frame, level, outermost = sys._getframe(2), 2, 2
    while frame is not None:
        if frame.f_code.co_filename.startswith(_TOOLKIT_DIRS):
            outermost = level
        frame, level = frame.f_back, level + 1
    return outermost + 1


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """Warn about the user's data or settings, attributed to the user's call into the toolkit.

    Python shows a warning once per location by default, so a warning from a loop over the
    user's data is shown once per call of theirs, not once per item.
    """
    warnings.warn(message, category, stacklevel=_outside_toolkit_level())
