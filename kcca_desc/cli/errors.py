"""The commands' error contract: a problem the user can fix is one ``error:`` line and an exit code.

The exception classes and their exit codes are those of :mod:`kcca_desc._core.errors`.
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable, Sequence

from .._core.errors import KccaDescError

__all__ = ["exits_cleanly"]


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    kind = "" if category in (UserWarning, RuntimeWarning) else f" ({category.__name__})"
    print(f"warning{kind}: {message}", file=sys.stderr if file is None else file)


def exits_cleanly(main: Callable[[Sequence[str] | None], int]) -> Callable[[Sequence[str] | None], int]:
    """Wrap a command's ``main(argv) -> int`` in the toolkit's error contract.

    A :class:`KccaDescError` prints one ``error:`` line (a data error lists its problems beneath
    it) and returns its :attr:`~KccaDescError.exit_code`; with ``--debug`` in ``argv`` it
    propagates with its traceback.  Warnings print as ``warning: <message>``, without the source
    line that Python shows by default.
    """
    @functools.wraps(main)
    def run(argv: Sequence[str] | None = None) -> int:
        debug = "--debug" in (sys.argv[1:] if argv is None else argv)
        with warnings.catch_warnings():
            if not debug:
                warnings.showwarning = _show_warning
            try:
                return main(argv)
            except KccaDescError as exc:
                if debug:
                    raise
                print(f"error: {exc}", file=sys.stderr)
                return exc.exit_code

    return run
