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
``FileNotFoundError`` for a missing model file, ``OSError`` for an unwritable path, scikit-learn's
``NotFittedError`` for a model used before ``fit``), so ``except ValueError`` and the like keep
working.  The root class and the classes ``kernels/`` raises are defined in
:mod:`kcca_desc.kernels.errors` (``kernels/`` imports nothing else of the toolkit) and re-exported
here, as is :func:`import_optional`, the one way to import an optional package.

Which class to raise
--------------------
* A setting (keyword parameter, option, a name to look up) is invalid or of the wrong type:
  :class:`ParameterError` (an argument of the wrong type is a setting of the wrong type, so
  every ``TypeError`` of the toolkit is a :class:`ParameterError`); an unknown name is
  :class:`~kcca_desc._core.registry.UnknownNameError`, also a ``KeyError``.
* The data (arrays, items, files, results) are malformed: :class:`DataError` or a subclass.
* A method that needs a fitted model is called before ``fit``: :class:`NotFittedError`, through
  :func:`kcca_desc._core.validation.check_is_fitted` (scikit-learn's test, the toolkit's class);
  bad input arrays are a :class:`DataError`, through that module's ``check_array`` and
  ``validate_data``.
* Python's own protocols are not user errors and keep their built-in class: ``NotImplementedError``
  as the whole body of a hook that subclasses override, ``AttributeError`` from a module's
  ``__getattr__``, ``IndexError`` / ``KeyError`` from ``__getitem__``, and, in the command line only, the
  option parser's own error from an option's type function (the parser turns it into a usage
  error).
* A broken invariant (a library returning what its contract excludes) is a bug, not a user error:
  it raises ``RuntimeError`` and keeps its traceback.

``tests/test_error_contract.py`` walks the source and holds every ``raise`` to these rules.

The whole tree, generated from the code, is listed in ``docs/architecture.md`` (Errors).

Exit codes
----------
The codes follow BSD ``sysexits.h`` where it has one for the kind of problem, and ``2`` for a
bad setting (the status a malformed command line already exits with, a usage error):

====  ================================  ===============================================================
code  exception                         meaning
====  ================================  ===============================================================
0                                       success
1                                       an unexpected error (a bug): the traceback is printed
1     :class:`NotFittedError`           a model was used before ``fit`` (library use; the message is printed)
2     :class:`ParameterError`           a command-line option or estimator parameter is invalid
65    :class:`DataError`                the data set is malformed (files, lines, items named)
66    :class:`MissingDataFileError`     a data file or directory is missing
66    :class:`MissingModelFileError`    a model or weights file is missing
69    :class:`MissingDependencyError`   an optional package is not installed, or is installed but fails to import
69    :class:`ModelUnavailableError`    a model named by a hub id is not cached and cannot be downloaded now
69    :class:`UnreachableServiceError`  a service the run needs (a Dask scheduler) does not answer
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
from pathlib import Path

# The root of the tree and the classes kernels/ raises live in kernels/, which imports nothing of
# the rest of the toolkit; they are re-exported here, so that this is the one place to import from.
from ..kernels.errors import (DataError, KccaDescError, MissingDataFileError, MissingDependencyError, NotFittedError,
                              ParameterError, first_line, import_optional)

__all__ = [
    "KccaDescError", "ParameterError", "DataError", "MissingDataFileError", "MissingModelFileError",
    "ModelUnavailableError", "MissingDependencyError", "UnwritableOutputError", "CacheError",
    "InsufficientMemoryError", "NotFittedError", "UnreachableServiceError",
    "EXIT_CODES", "warn_user", "import_optional", "first_line",
]


class MissingModelFileError(KccaDescError, FileNotFoundError):
    """A model or weights file the run needs does not exist; the message says how to get it."""

    exit_code = 66


class ModelUnavailableError(MissingModelFileError):
    """A model named by a hub id is neither a local directory nor cached, and cannot be downloaded now.

    The hub is unreachable, offline mode (``HF_HUB_OFFLINE``) forbids it, or the hub has no such
    model; the message names the encoder and what to do (a local path, the offline variable).  Its
    exit status is ``sysexits``' ``EX_UNAVAILABLE`` (69), a service (the hub) that cannot serve the
    request, rather than the 66 of a missing local file.
    """

    exit_code = 69


class InsufficientMemoryError(KccaDescError, MemoryError):
    """A step would need more memory than is available; the message says how much and what to do
    instead (checked before the step, :func:`kcca_desc._core.resources.require_memory`)."""

    exit_code = 71


class UnreachableServiceError(KccaDescError, ConnectionError):
    """A service the run needs (a Dask scheduler) does not answer within a few seconds (``EX_UNAVAILABLE``)."""

    exit_code = 69


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
                                   ModelUnavailableError, MissingDependencyError, UnreachableServiceError,
                                   UnwritableOutputError, CacheError,
                                   InsufficientMemoryError)
}


# The toolkit's source folders: kcca_desc/ and the kernels/ folder installed as kcca_desc.kernels.
_PACKAGE = Path(__file__).resolve().parents[1]
_TOOLKIT_DIRS = (str(_PACKAGE) + os.sep, str(_PACKAGE.parent / "kernels") + os.sep)


def _outside_toolkit_level() -> int:
    """``stacklevel`` of :func:`warnings.warn`, called from :func:`warn_user`, that names the user's call.

    That is the caller of the outermost toolkit frame, so a warning raised inside a library the
    toolkit called back through (a thread pool, Dask) still points at the user.
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
