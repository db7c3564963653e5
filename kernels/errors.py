"""The root of the toolkit's exceptions, and its one helper for optional imports.

``kernels/`` imports nothing else of the toolkit, so the classes its functions raise are defined
here and :mod:`kcca_desc._core.errors` builds the rest of the tree on them (and re-exports them):
``except KccaDescError`` catches a kernel's error as it catches any other.

Each class also derives from the built-in exception a caller expects for that kind of problem
(``ValueError`` for a bad setting or bad data, ``TypeError`` too for a setting of the wrong type,
``FileNotFoundError`` for a missing data file, ``ImportError`` for a missing package), so
``except ValueError`` and the like keep working.  :attr:`KccaDescError.exit_code` is the
command line's exit status for the class (the table is in :mod:`kcca_desc._core.errors`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from types import ModuleType

from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

__all__ = ["KccaDescError", "ParameterError", "DataError", "MissingDataFileError", "MissingDependencyError",
           "NotFittedError", "install_hint", "first_line", "import_optional"]


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
    message : str, optional
        The whole message, for a package whose installation needs more words than
        ``pip install`` (a data package with a clashing name); by default it is built from
        ``package``, ``extra`` and ``purpose``.
    """

    exit_code = 69

    def __init__(self, package: str, extra: str | None = None, purpose: str | None = None, *,
                 message: str | None = None):
        if message is None:
            needs = f"{purpose} needs" if purpose else "this needs"
            message = (f"{needs} the optional package {package!r}, which is not installed; "
                       f"install it with {install_hint(extra, package)}")
        super().__init__(message, name=package)
        self.extra = extra


class NotFittedError(KccaDescError, _SklearnNotFittedError):
    """A fitted model's method was called before :meth:`fit`.

    Also scikit-learn's ``NotFittedError`` (itself a ``ValueError`` and an ``AttributeError``), so
    code written for scikit-learn's estimators, ``except sklearn.exceptions.NotFittedError`` and
    scikit-learn's own estimator checks among it, treats the toolkit's estimators alike.
    """


def install_hint(extra: str | None, package: str) -> str:
    """The commands that install the ``setup.cfg`` extra ``extra`` (from an index and from a clone), or ``package``.

    The name is written as the package metadata holds it: setuptools normalises an extra's name
    (runs of ``_``, ``-`` and ``.`` become ``-``, PEP 685), and pip before 23.3 does not normalise
    the name it is asked for, so ``kcca_desc[open_clip]`` would install nothing there.
    """
    if extra is None:
        return f"`pip install {package}`"
    name = re.sub(r"[-_.]+", "-", extra).lower()
    return f"`pip install \"kcca_desc[{name}]\"` (from a clone of kcca_desc: `pip install -e \".[{name}]\"`)"


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its class name when it has none), for a one-line error."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def import_optional(module: str, extra: str | None, purpose: str) -> ModuleType:
    """Import the optional package ``module``, or raise :class:`MissingDependencyError` naming the extra.

    Parameters
    ----------
    module : str
        The import name (``"onnxruntime"``, ``"distributed"``).
    extra : str or None
        The ``setup.cfg`` extra that installs it; None for a package of the base installation,
        which the message then names for ``pip install``.
    purpose : str
        What needs it (``"the Dask engine"``), for the message.

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    MissingDependencyError
        The import failed.  The message names the import that failed (``torchvision`` when
        ``timm`` cannot find it), and the original error is chained.

    Notes
    -----
    A package that is installed but fails to import (a torchvision built for another torch
    raises ``RuntimeError``, a compiled module an ``ImportError`` naming an undefined symbol)
    makes the feature as unusable as a missing one, so it raises the same class, but the message
    says that the package is installed and quotes the first line of the import's error.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        # exc.name is the import that is missing: the package itself, or one it needs (torchvision
        # for timm); a module of the package itself missing is a broken installation.
        missing, top = exc.name or module, module.split(".")[0]
        if missing == module or missing.split(".")[0] != top:
            through = f" (through {module!r})" if missing.split(".")[0] != top else ""
            raise MissingDependencyError(missing, extra, purpose=purpose + through) from exc
        failure: Exception = exc
    except Exception as exc:  # noqa: BLE001 - see Notes
        failure = exc
    raise MissingDependencyError(module, extra, message=(
        f"{purpose} needs the optional package {module!r}, which is installed but fails to import "
        f"({type(failure).__name__}: {first_line(failure)}); "
        f"reinstall matching versions with {install_hint(extra, module)}")
    ) from failure
