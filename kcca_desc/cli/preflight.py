"""What the command line checks before any work, and how it reports the toolkit's errors.

:func:`prepare_run` runs before a feature is computed and finds every problem a run would
otherwise meet half-way, or after hours:

1. the settings: every option the chosen system takes, through the estimators' own
   ``_parameter_constraints`` (so the command line and the Python API share one set of rules), and
   the command line's own options; all bad settings are reported together, each with its option;
2. the outputs: ``--out`` (and ``--report``) must be writable, checked by writing a scratch file
   (one block of data, so that a full disk is found too);
3. the cache: when it cannot be written the run goes on without it, with a warning;
4. the data: the loader reads every caption and line, then
   :func:`~kcca_desc.data.checks.check_dataset` checks the splits and protocols the run needs and
   decodes every image cheaply; every problem is reported in one error naming the file, the line
   or item and what is wrong, or, with ``--skip-bad-items``, the bad items are dropped with one
   warning listing them.

The command's ``main`` reports the toolkit's errors through :func:`kcca_desc._core.errors.exits_cleanly`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from numbers import Real
import tempfile
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._core.cache import CacheWarning, cache_root
from ..data.checks import check_dataset, settle_problems
from ..data.dataset import Dataset
from ..data.problems import ProblemLog
from ..data.registry import DATASETS, load_dataset
from .._core.errors import ParameterError, UnwritableOutputError, warn_user
from .._core.settings import Setting
from ..methods.base import RetrievalMethod
from .._core.validation import (
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    SEED,
    Interval,
    InvalidParameterError,
    ValidatedParams,
    invalid_parameter,
    parameter_errors,
    validation_errors,
)

if TYPE_CHECKING:  # the systems' registry is not imported by the commands that run no system
    from ..methods.registry import System

__all__ = ["add_options", "prepare_run", "check_settings", "settings_error", "with_option", "check_writable",
           "check_cache", "check_data_options", "load_checked", "data_seed", "CommandLine", "DATA_OPTIONS"]


def add_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--skip-bad-items`` and ``--debug`` to the command line."""
    parser.add_argument("--skip-bad-items", action="store_true",
                        help="drop images with a bad file, caption or line (listed in a warning) instead of "
                             "stopping with an error that lists them")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")


# ----------------------------------------------------------------------- settings
class CommandLine(ValidatedParams):
    """The commands' own options that no estimator checks, with their constraints.

    One class for every command (``fit``, ``compare``, ``report``): each checks the options it has.
    """

    _parameter_constraints = {"seed": [SEED], "data_seed": [SEED, None], "n_images": [POSITIVE_INT, None],
                              "top_k": [POSITIVE_INT],
                              "n_resamples": [POSITIVE_INT], "n_permutations": [POSITIVE_INT],
                              "confidence": [Interval(Real, 0, 1, closed="neither")],
                              "n_gallery": [NON_NEGATIVE_INT], "n_worst": [NON_NEGATIVE_INT]}

    def __init__(self, args: argparse.Namespace):
        self.args = args

    def get_params(self, deep: bool = False) -> dict[str, Any]:
        return {name: getattr(self.args, name) for name in self._parameter_constraints if hasattr(self.args, name)}


def _conflicts(args: argparse.Namespace) -> list:
    """Errors of options that contradict each other (each would otherwise be silently ignored)."""
    errors = []
    if getattr(args, "scheduler", None) and getattr(args, "engine", None) == "local":
        errors.append(invalid_parameter("CommandLine", "scheduler", "unset with --engine local (which runs in this "
                                        "process, on no scheduler)", args.scheduler))
    return errors


# Estimator parameters set by a command-line option of another name (a system's settings declare
# theirs: Setting.parameter).
_OPTION_OF = {"random_state": "seed"}


def _options_of(parser: argparse.ArgumentParser, parameter: str | None,
                settings: Collection[Setting] | None = None) -> str | None:
    """The command-line option(s) that set ``parameter``, e.g. ``--levels``; None when there is none.

    An option of a system's setting (:func:`~.options.add_system_options` tags it) sets the
    parameter the setting declares (:attr:`Setting.sets`), and only for the system running, whose
    ``settings`` are given: ``--n-components`` never names an error of the bridge that
    ``--bridge-components`` sets.
    """
    # n_words is one dict of the featurizer, set by one option per feature type.
    wanted = (lambda dest: dest.endswith("_words")) if parameter == "n_words" else (lambda dest: dest == parameter)

    def sets(action: argparse.Action) -> bool:
        setting = getattr(action, "setting", None)
        if setting is None:
            return wanted(action.dest)
        return setting.sets == parameter and (settings is None or setting in settings)

    options = [a.option_strings[-1] for a in parser._actions if a.option_strings and sets(a)]
    return "/".join(options) or None


def with_option(error: InvalidParameterError, parser: argparse.ArgumentParser, *,
                settings: Collection[Setting] | None = None) -> str:
    """The error's message, after the command-line option that sets its parameter (when there is one).

    ``settings`` are those of the system running (see :func:`_options_of`).  An option of the
    command itself (:class:`CommandLine`) is the subject of its message: a parameter of an
    internal class would mean nothing to the user.
    """
    option = _options_of(parser, _OPTION_OF.get(error.parameter, error.parameter), settings)
    if option and error.owner == CommandLine.__name__:
        return str(error).replace(f"The {error.parameter!r} parameter of {CommandLine.__name__}", option, 1)
    return f"{option}: {error}" if option else str(error)


def check_settings(method: RetrievalMethod | None, args: argparse.Namespace, parser: argparse.ArgumentParser, *,
                   settings: Collection[Setting] | None = None) -> None:
    """Check the system's parameters (if any) and the command line's own options, all together.

    Parameters
    ----------
    method : RetrievalMethod or None
        The system built from the options; None for a command that runs none.
    args, parser
        The parsed command line and its parser.
    settings : collection of Setting, optional
        The settings of the system of ``method``, whose options name its errors.

    Raises
    ------
    ParameterError
        One line per bad setting, each starting with the option that sets it.
    """
    errors = parameter_errors(CommandLine(args)) + _conflicts(args)
    if method is not None:
        errors += validation_errors(method)
    if errors:
        raise settings_error(errors, parser, settings=settings)


def settings_error(errors: Sequence[InvalidParameterError], parser: argparse.ArgumentParser, *,
                   settings: Collection[Setting] | None = None) -> ParameterError:
    """One error reporting ``errors``, a line each starting with the option that sets its parameter.

    ``settings`` are those of the system running (see :func:`_options_of`); of several errors of
    one option (a batch size both encoders refuse), the first is reported.
    """
    lines, options = [], set()
    for error in errors:
        option = _options_of(parser, _OPTION_OF.get(error.parameter, error.parameter), settings)
        if option not in options or option is None:
            options.add(option)
            lines.append(with_option(error, parser, settings=settings))
    return ParameterError(lines[0] if len(lines) == 1 else f"{len(lines)} invalid settings:\n  " + "\n  ".join(lines))


# ------------------------------------------------------------------ outputs, cache
def _scratch_write(directory: Path) -> None:
    """Create ``directory`` if needed and write and delete a scratch file in it (OSError if that fails).

    The file gets one block of data, synced: on a full disk creating an empty file still succeeds.
    The folders the check creates are removed again, so that a run refused later leaves none.
    """
    made = [folder for folder in (directory, *directory.parents) if not folder.exists()]  # deepest first
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, scratch = tempfile.mkstemp(dir=directory, prefix=".kcca_desc-write-check-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(bytes(4096))
                f.flush()
                os.fsync(f.fileno())
        finally:
            os.unlink(scratch)
    finally:
        for folder in made:
            with contextlib.suppress(OSError):
                folder.rmdir()


def check_writable(path: str | os.PathLike, directory: bool = False) -> None:
    """Check that the file ``path`` (or, with ``directory``, files in it) can be written, before the run.

    Raises
    ------
    UnwritableOutputError
        Naming the path and the reason.
    """
    path = Path(path)
    if not directory and path.is_dir():
        raise UnwritableOutputError(path, f"it is a directory; name a file in it (e.g. {path / 'results.json'})")
    # An existing file for a folder (a results file given to report --out): mkdir would say only "File exists".
    if directory and path.exists() and not path.is_dir():
        raise UnwritableOutputError(path, "it is a file, not a directory; name a directory for the report "
                                          f"(e.g. {path.parent / 'report'})")
    # The nearest existing folder on the way must be one: mkdir would say only "File exists".
    existing = next(p for p in [path, *path.parents] if p.exists() or p == p.parent)
    if existing != path and not existing.is_dir():
        raise UnwritableOutputError(path, f"{existing} is a file, not a directory")
    try:
        _scratch_write(path if directory else path.parent)
    except OSError as exc:
        raise UnwritableOutputError(path, exc.strerror or str(exc)) from None


def check_cache(args: argparse.Namespace) -> None:
    """Fall back to ``--no-cache``, with a warning, when the cache directory cannot be written."""
    if args.no_cache:
        return
    try:
        _scratch_write(cache_root())
    except OSError as exc:
        args.no_cache = True
        warn_user(f"the cache {cache_root()} cannot be written ({exc.strerror or exc}); this run goes on without "
                  "it: nothing is read from it or kept for the next run.  Set KCCA_DESC_CACHE to a writable "
                  "directory, or pass --no-cache to run uncached without this warning", CacheWarning)


# ------------------------------------------------------------------------- data
#: The commands' options that the data set's loader takes as options of the same name.
DATA_OPTIONS = ("n_images", "image_root")


def check_data_options(args: argparse.Namespace, parser: argparse.ArgumentParser, *, data: str | None = None) -> None:
    """Refuse the data options (``--data-root``, ``--n-images``, ``--image-root``) that ``--data`` does not take.

    Before any work: :func:`~kcca_desc.data.registry.load_dataset` refuses them too, but by their
    parameter names.  ``data`` is the data set's name when ``--data`` leaves it to a results file
    (``report``).

    Raises
    ------
    ParameterError
        One line naming the options given and those the data set takes.
    """
    data = data or args.data
    taken = DATASETS[data].options
    # The command's own data options (report has no --n-images).
    options = {name: option for name in DATA_OPTIONS if (option := _options_of(parser, name))}
    given = [option for name, option in options.items() if getattr(args, name) is not None and name not in taken]
    root = _options_of(parser, "data_root")
    if root and args.data_root is not None and not DATASETS[data].takes_root:
        given.insert(0, root)
    if given:
        own = [option for name, option in options.items() if name in taken]
        takes = f"which takes {', '.join(own)}" if own else f"which takes none of {', '.join(options.values())}"
        raise ParameterError(f"{', '.join(given)}: not {'options' if len(given) > 1 else 'an option'} of "
                             f"--data {data}, {takes}: drop {'them' if len(given) > 1 else 'it'}")


def data_seed(args: argparse.Namespace) -> int:
    """The seed of the data: ``--data-seed``, else ``--seed``, which seeds everything unless the data have their own."""
    return args.seed if args.data_seed is None else args.data_seed


def load_checked(args: argparse.Namespace, needs: dict[str, str],
                 views: Sequence[tuple[str, str]]) -> Dataset:
    """Load ``args.data`` and check it; every problem in one error, or the bad items dropped.

    Parameters
    ----------
    args : argparse.Namespace
        ``data``, ``data_root``, ``data_seed``, ``n_images``, ``image_root``, ``skip_bad_items``, ``no_cache``.
    needs : dict of str to str
        The splits the run needs, each with why.
    views : sequence of (split, protocol)
        The retrieval views the run builds.
    """
    problems = ProblemLog()
    dataset = load_dataset(args.data, root=args.data_root, seed=data_seed(args), problems=problems,
                           **{name: getattr(args, name) for name in DATA_OPTIONS})
    check_dataset(dataset, problems, splits=needs, views=views, cache=not args.no_cache)
    return settle_problems(dataset, problems, skip_bad_items=args.skip_bad_items)


def prepare_run(args: argparse.Namespace, parser: argparse.ArgumentParser,
                build: Callable[[argparse.Namespace], RetrievalMethod], system: System,
                protocols: Sequence[str]) -> tuple[RetrievalMethod, Dataset]:
    """Everything a command-line run checks before it works: settings, outputs, cache, data.

    Parameters
    ----------
    args, parser
        The parsed command line and its parser (whose options name the bad settings).
    build : callable
        ``build(args)``: the system, built after the cache check (which may turn caching off).
    system : System
        The system ``build`` builds: its settings name the options of its errors, and
        :attr:`~kcca_desc.methods.registry.System.splits` the splits its fit needs beside ``train``.
    protocols : sequence of str
        The protocols evaluated on ``args.split``; a system that selects models on dev does so
        under the first.

    Returns
    -------
    method : RetrievalMethod
        The system, unfitted.
    dataset : Dataset
        The checked data set (without the bad items under ``--skip-bad-items``).
    """
    check_cache(args)
    method = build(args)
    check_settings(method, args, parser, settings=system.settings)
    check_data_options(args, parser)
    for path, is_directory in ((args.out, False), (getattr(args, "report", None), True)):
        if path:
            check_writable(path, directory=is_directory)
    needs = {args.split: "--split evaluates on it", **system.splits(method)}
    views = [(args.split, protocol) for protocol in protocols]
    if "dev" in needs:
        views.append(("dev", protocols[0]))
    return method, load_checked(args, needs, views)
