"""The commands' parsers, and options made from the settings the library declares.

The library declares settings as :class:`~kcca_desc._core.settings.Setting` objects and never
imports argparse; this module makes one option of each (``--n-components`` from
``n_components``), so a registered system brings its options with it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import Any

from .._core.errors import ParameterError
from .._core.settings import Setting
from ..methods.registry import System

__all__ = ["command_parser", "add_system_options"]


def command_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The parser of a command, whose ``--help`` shows each option's default."""
    return argparse.ArgumentParser(prog=prog, description=description,
                                   formatter_class=argparse.ArgumentDefaultsHelpFormatter)


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
    """One group ``"<name> system"`` per system, with the options of the settings it declares.

    A setting that several systems declare (the same :class:`Setting`) is listed once, in the
    group of the first; two different settings of one name make argparse refuse the clash.
    """
    added: dict[str, Setting] = {}
    for name, system in systems:
        group = parser.add_argument_group(f"{name} system")
        for setting in system.settings:
            if added.get(setting.name) != setting:
                group.add_argument(setting.option, type=_argparse_type(setting.parse), default=setting.default,
                                   choices=setting.choices, metavar=setting.metavar, help=setting.describe())
                added[setting.name] = setting
