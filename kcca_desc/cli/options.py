"""The commands' parsers, and options made from the settings the library declares.

The library declares settings as :class:`~kcca_desc._core.settings.Setting` objects and never
imports argparse; this module makes one option of each (``--n-components`` from
``n_components``), so a registered system brings its options with it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .. import __version__
from .._core.errors import ParameterError
from .._core.settings import Setting
from ..methods.registry import System

__all__ = ["command_parser", "add_system_options", "check_applicable"]


def command_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The parser of a command, whose ``--help`` shows each option's default, with ``--version``."""
    parser = argparse.ArgumentParser(prog=prog, description=description,
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--version", action="version", version=f"kcca_desc {__version__}")
    return parser


def _argparse_type(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse`` as an argparse type: its :class:`ParameterError` becomes a usage error with its message.

    Any other ``ValueError`` (of ``int``, ``float``) is left to argparse, which words it
    ``invalid int value: 'x'`` after the parser's name, kept here.
    """
    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ParameterError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = getattr(parse, "__name__", repr(parse))
    return convert


def add_system_options(parser: argparse.ArgumentParser, systems: Iterable[tuple[str, System]]) -> None:
    """The options of the settings the systems declare, one group per set of systems sharing them.

    A setting that several systems declare (the same :class:`Setting`) is listed once, in a group
    named after all of them (``"vse, vse_hardest, ... systems"``, not the first one's).

    Raises
    ------
    ParameterError
        If two systems declare different settings of one name.
    """
    declared_by: dict[str, list[str]] = {}
    settings: dict[str, Setting] = {}
    for name, system in systems:
        for setting in system.settings:
            if settings.setdefault(setting.name, setting) != setting:
                raise ParameterError(f"systems {', '.join(declared_by[setting.name])} and {name} declare "
                                     f"different settings named {setting.name!r} ({setting.option})")
            declared_by.setdefault(setting.name, []).append(name)
    groups: dict[tuple[str, ...], argparse._ArgumentGroup] = {}
    for setting_name, names in declared_by.items():
        key = tuple(names)
        if key not in groups:
            groups[key] = parser.add_argument_group(f"{', '.join(names)} system{'s' if len(names) > 1 else ''}")
        setting = settings[setting_name]
        groups[key].add_argument(setting.option, type=_argparse_type(setting.parse), default=setting.default,
                                 choices=setting.choices, metavar=setting.metavar, help=setting.describe())


def check_applicable(values: Mapping[str, Any], method: str, systems: Mapping[str, System]) -> None:
    """Refuse the options of other systems than ``method``'s that were given a value: it would be ignored.

    An option counts as given when its value differs from its default.

    Parameters
    ----------
    values : mapping
        The parsed options by setting name.
    method : str
        The ``--method`` chosen, run in the form ``values`` ask for (:meth:`System.resolve`).
    systems : mapping of str to System
        Every system whose options the command line offers.

    Raises
    ------
    ParameterError
        One line naming each option and the systems it is for.
    """
    owners: dict[str, tuple[Setting, list[str]]] = {}
    for name, system in systems.items():
        for form, label in ((system, name), (system.over_features, f"{name} with an encoder")):
            for setting in form.settings if form is not None else ():
                owners.setdefault(setting.name, (setting, []))[1].append(label)
    chosen = systems[method].resolve(values)
    own = {setting.name for setting in chosen.settings}
    ignored = [f"{setting.option} is an option of {', '.join(labels)}" for name, (setting, labels) in owners.items()
               if name not in own and values.get(name, setting.default) != setting.default]
    if ignored:
        form = f"--method {method}" + (" with an encoder" if chosen is not systems[method] else "")
        raise ParameterError(f"{'; '.join(ignored)}, not of {form}: drop it, or choose a --method it is for")
