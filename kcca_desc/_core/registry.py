"""Named extension points: a registry of callables (or objects) looked up by name.

Every choice the toolkit offers by name (data sets, feature types, image and text kernels,
systems, evaluation tasks) is an entry of a :class:`Registry`, as scikit-learn keeps its
kernels in ``sklearn.metrics.pairwise.PAIRWISE_KERNEL_FUNCTIONS``: adding a choice is one
registration, and the command line and the error messages list whatever is registered.

Examples
--------
>>> SHAPES = Registry("shape")
>>> @SHAPES.register("square", help="four equal sides")
... def square(side):
...     return side * side
>>> SHAPES["square"](3)
9
>>> SHAPES["circle"]
Traceback (most recent call last):
...
kcca_desc._core.registry.UnknownNameError: unknown shape 'circle'; available: square
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping
from typing import Generic, TypeVar

from .errors import ParameterError

__all__ = ["Registry", "UnknownNameError", "did_you_mean"]

T = TypeVar("T")


def did_you_mean(name: object, names: Iterable[str]) -> str:
    """``"; did you mean 'NAME'?"`` naming the one of ``names`` closest to a misspelt ``name``, else ``""``.

    Appended to an unknown-name error after the list of the names there are, which for the
    text kernels runs to dozens.

    Examples
    --------
    >>> did_you_mean("tri5sem", ["bow5", "tri5", "tri_sem"])
    "; did you mean 'tri_sem'?"
    >>> did_you_mean("circle", ["square"])
    ''
    """
    close = difflib.get_close_matches(name, list(names), n=1) if isinstance(name, str) else []
    return f"; did you mean {close[0]!r}?" if close else ""


class UnknownNameError(ParameterError, KeyError):
    """A name that is not registered.

    A :class:`KeyError`, so that a registry behaves as a mapping (``in``, ``get``), and a
    :class:`~kcca_desc._core.errors.ParameterError` (so a ``ValueError``), the error of a bad
    parameter value.
    """

    def __str__(self) -> str:
        # KeyError would print the repr of its argument, quotes included.
        return str(self.args[0])


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0].strip() if lines else ""


class Registry(Mapping[str, T], Generic[T]):
    """Entries by name, in registration order, each with a one-line help.

    Parameters
    ----------
    kind : str
        What an entry is (``"text kernel"``), for error messages.

    Notes
    -----
    A read-only :class:`~collections.abc.Mapping`: entries change only through
    :meth:`register` and :meth:`unregister`, so a name can never be replaced by accident.
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, T] = {}
        self._help: dict[str, str] = {}

    def register(self, name: str, obj: T | None = None, *, help: str | None = None,
                 replace: bool = False):
        """Register ``obj`` under ``name``; without ``obj``, a decorator that registers its argument.

        Parameters
        ----------
        name : str
            A non-empty name.  The same object may be registered under several names (aliases).
        obj : object, optional
            The entry.
        help : str, optional
            One line shown by the command line; default: the first line of ``obj``'s docstring.
        replace : bool, default=False
            Allow replacing an existing entry.

        Returns
        -------
        obj, or a decorator returning its argument unchanged.

        Raises
        ------
        ValueError
            For an empty or non-string name, or a name already registered without ``replace``.
        """
        if not isinstance(name, str) or not name:
            raise ParameterError(f"a {self.kind} name must be a non-empty string; got {name!r}")
        if name in self._entries and not replace:
            raise ParameterError(f"{self.kind} {name!r} is already registered; pass replace=True to replace it")

        def add(entry: T) -> T:
            self._entries[name] = entry
            self._help[name] = _first_line(help if help is not None else getattr(entry, "__doc__", None))
            return entry

        return add if obj is None else add(obj)

    def unregister(self, name: str) -> T:
        """Remove and return the entry ``name`` (for tests and plug-ins that clean up)."""
        entry = self[name]
        del self._entries[name], self._help[name]
        return entry

    def help(self, name: str) -> str:
        """The one-line help of ``name``."""
        self[name]  # an unknown name raises, listing the known ones
        return self._help[name]

    def describe(self, separator: str = "; ") -> str:
        """``"name: help"`` of every entry, joined by ``separator`` (for ``--help`` texts)."""
        return separator.join(f"{name}: {text}" if text else name for name, text in self._help.items())

    def __getitem__(self, name: str) -> T:
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise UnknownNameError(f"unknown {self.kind} {name!r}; available: {', '.join(self._entries)}"
                                   f"{did_you_mean(name, self._entries)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._entries)})"

