"""Settings declared as data, so that the library never needs the command line to be told them.

A :class:`Setting` describes one setting of a system, an encoder or a trainer: its name (the
key under which it is read from a plain mapping of settings), how its text form is parsed,
its default, its help, and its allowed values.  The library reads settings from a
``Mapping[str, Any]``, with :func:`setting_defaults` filling in what a caller leaves out; the
command line (:mod:`kcca_desc.cli`) builds one option from each declaration (``--n-components``
from ``n_components``), so a new system or encoder brings its options with it.

Only the text form is checked here.  Whether a value is allowed is the estimator's business,
through its ``_parameter_constraints`` (:mod:`.validation`), which the Python API and the command
line share.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ParameterError

__all__ = ["Setting", "setting_defaults", "changed_settings", "superscript", "unlabelled", "comma_separated"]


@dataclass(frozen=True)
class Setting:
    """One setting: its key, how its text is parsed, its default and its help.

    Parameters
    ----------
    name : str
        The key of the setting in a mapping of settings; its command-line option is
        :attr:`option`.
    parse : callable, default=str
        ``parse(text) -> value``: the value of the setting given as text.  A parser of this
        toolkit raises :class:`~.errors.ParameterError` with the reason; ``int`` and ``float``
        raise their own ``ValueError``.
    default : object, default=None
        The value when the setting is not given.
    help : str or callable, default=""
        What the setting does; a callable ``help() -> str`` is called when the text is needed,
        for a help that lists a registry's entries as they are then.
    choices : sequence, optional
        The only values allowed, as :attr:`parse` returns them.
    metavar : str, optional
        The value's name in usage texts (by default derived from :attr:`name`).
    label : callable, optional
        ``label(value) -> str``: how a value other than the default shows in a run's label
        (``"ρ²"`` for ``weight_power=2``); ``""`` leaves it out (a setting the system's name
        already shows). Default ``"<name>=<value>"``.
    parameter : str, optional
        The keyword argument of the system (or of the model it builds) that the setting's value
        becomes, when it is not :attr:`name` (``bridge_components`` sets a bridge's
        ``n_components``); an error about that parameter then names this setting's option.
    """

    name: str
    parse: Callable[[str], Any] = str
    default: Any = None
    help: str | Callable[[], str] = ""
    choices: Sequence[Any] | None = None
    metavar: str | None = None
    label: Callable[[Any], str] | None = None
    parameter: str | None = None

    @property
    def option(self) -> str:
        """The command-line option: ``--`` and :attr:`name` with dashes, e.g. ``--n-components``."""
        return "--" + self.name.replace("_", "-")

    @property
    def sets(self) -> str:
        """The parameter the setting's value becomes: :attr:`parameter`, else :attr:`name`."""
        return self.parameter or self.name

    def describe(self) -> str:
        """The help text, :attr:`help` called if it is callable."""
        return self.help() if callable(self.help) else self.help


    def describe_value(self, value: Any) -> str:
        """``value`` in a run's label (see :attr:`label`)."""
        if self.label is not None:
            return self.label(value)
        shown = ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in value) if isinstance(
            value, (list, tuple)) else (f"{value:g}" if isinstance(value, float) else str(value))
        return f"{self.name}={shown}"


def changed_settings(settings: Iterable[Setting], values: Mapping[str, Any],
                     used: Mapping[str, Any] | None = None) -> str:
    """The label part of ``values`` that differ from their settings' defaults, in declaration order.

    ``used`` are the values a fit used instead of some of ``values`` (a grid cut to what the data
    support): such a setting shows both, the one asked for and, after an arrow, the one used.

    >>> changed_settings([Setting("reg", float, 1.0), Setting("k", int, 5)], {"reg": 0.5, "k": 5})
    'reg=0.5'
    >>> changed_settings([Setting("n", int, 8)], {"n": [16, 500]}, used={"n": [16]})
    'n=16,500→16'
    """
    used = used or {}
    parts = []
    for setting in settings:
        if setting.name not in values or values[setting.name] == setting.default:
            continue
        part = setting.describe_value(values[setting.name])
        if part and setting.name in used and used[setting.name] != values[setting.name]:
            # The used value without its name: "n=16,500→16", not "n=16,500→n=16".
            part += "→" + setting.describe_value(used[setting.name]).split("=", 1)[-1]
        parts.append(part)
    return " ".join(part for part in parts if part)


def unlabelled(value: Any) -> str:
    """A :attr:`Setting.label` for settings a run's label leaves out (its name shows them, or they
    do not change the figures: threads, devices, chunk sizes)."""
    return ""


_SUPERSCRIPTS = str.maketrans("0123456789-.", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻·")


def superscript(value: float) -> str:
    """``value`` as a superscript, for exponents in labels: ``superscript(2) == "²"``."""
    return f"{value:g}".translate(_SUPERSCRIPTS)


def setting_defaults(settings: Iterable[Setting]) -> dict[str, Any]:
    """Name -> default of each of ``settings``."""
    return {setting.name: setting.default for setting in settings}


def comma_separated(cast: Callable[[str], Any]) -> Callable[[str], list]:
    """A parser of a comma-separated list of numbers, each read by ``cast`` (``int``, ``float``).

    A trailing comma is allowed (``"4,8,"`` is ``[4, 8]``); an empty item between two others
(``"8,,16"``, a number left out by mistake) and a list with no item are errors.

    Examples
    --------
    >>> comma_separated(float)("0.1,1")
    [0.1, 1.0]
    """
    def parse(text: str) -> list:
        items = [item.strip() for item in text.split(",")]
        if items[-1] == "":
            items.pop()
        if not items or items == [""]:
            raise ParameterError("the list is empty")
        if "" in items:
            raise ParameterError(f"an empty item in {text!r}: separate the numbers by single commas")
        try:
            return [cast(item) for item in items]
        except ValueError:
            raise ParameterError(f"expected a comma-separated list of numbers, got {text!r}") from None
    return parse
