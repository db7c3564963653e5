"""The commands' parsers, and options made from the settings the library declares.

Every command (``fit``, ``compare``, ``report``) and every benchmark's main builds its parser
with :func:`command_parser`, whose usage errors are one line, ``error: <what is wrong> (see
<command> --help)``, with the exit status of a bad setting (2), rather than argparse's whole
usage before the line that matters.

The library declares settings as :class:`~kcca_desc._core.settings.Setting` objects and never
imports argparse; this module makes one option of each (``--n-components`` from
``n_components``), so a registered system brings its options with it.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn

from .. import __version__
from .._core.errors import ParameterError
from .._core.settings import Setting
from ..methods.registry import System

__all__ = ["CommandParser", "command_parser", "add_system_options", "check_applicable", "method_form", "HelpFormatter",
           "cli_value", "positive_int", "non_negative_int", "output_path"]


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose usage error is one line naming the problem, and a pointer to ``--help``."""

    def error(self, message: str) -> NoReturn:
        # argparse's message already names the option ("argument --levels: invalid int value: 'x'").
        self.exit(ParameterError.exit_code, f"error: {message} (see {self.prog} --help)\n")


def cli_value(value: Any) -> str:
    """``value`` as one types it on the command line: lists comma-separated, floats short."""
    if isinstance(value, (list, tuple)):
        return ",".join(map(cli_value, value))
    return f"{value:g}" if isinstance(value, float) else str(value)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """``--help`` that shows a default once, in command-line syntax, and only when there is one.

    argparse's :class:`~argparse.ArgumentDefaultsHelpFormatter` appends ``(default: None)`` to
    options without a default, prints lists as Python lists and repeats a default the help text
    already states; the description and the examples of the epilog keep their line breaks.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        help_text = action.help or ""
        default = action.default
        # By identity: 0 and 0.0 equal False, and a default of zero (--seed, --weight-power) is shown.
        if (any(default is none for none in (None, False, argparse.SUPPRESS)) or "default" in help_text
                or action.option_strings == [] or isinstance(action, argparse._VersionAction)):
            return help_text
        return f"{help_text} (default: {cli_value(default).replace('%', '%%')})"


def command_parser(prog: str, description: str, *, examples: Iterable[str] = (),
                   usage: str = "%(prog)s [options]") -> CommandParser:
    """The parser of a command: defaults shown once (:class:`HelpFormatter`), examples, ``--version``.

    Parameters
    ----------
    prog, description : str
        The command and what it does.
    examples : iterable of str
        Command lines shown after the options, each with a ``# comment`` line before it.
    usage : str, default="%(prog)s [options]"
        The usage line (argparse would list every option: dozens of lines before the first help).
    """
    examples = list(examples)
    epilog = ("examples:\n" + "\n".join(f"  {line}" for line in examples)) if examples else None
    # Filled here: the formatter keeps the text's line breaks, for the examples' sake.
    parser = CommandParser(prog=prog, description=textwrap.fill(description, 80), epilog=epilog,
                           usage=usage, formatter_class=HelpFormatter)
    parser.add_argument("--version", action="version", version=f"kcca_desc {__version__}")
    return parser


def _int_at_least(minimum: int, name: str) -> Callable[[str], int]:
    """argparse type of an integer ``>= minimum``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {value}")
        return value
    parse.__name__ = name
    return parse


#: argparse types of a count (``--repeats``) and of a seed or an optional count.
positive_int = _int_at_least(1, "positive_int")
non_negative_int = _int_at_least(0, "non_negative_int")


def output_path(text: str) -> str:
    """argparse type of an output (``--out``, ``--report``): a path, not the empty string.

    An empty value (an unset shell variable, ``--out ""``) would otherwise write nothing, or into
    the working directory, without a word.
    """
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must name a file or folder, got {text!r}")
    return text


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
        action = groups[key].add_argument(setting.option, type=_argparse_type(setting.parse),
                                          default=setting.default, choices=setting.choices,
                                          metavar=setting.metavar, help=setting.describe())
        # Which parameter the option sets, and for which systems (kcca_desc.cli.preflight.with_option).
        action.setting = setting


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
        raise ParameterError(f"{'; '.join(ignored)}, not of {method_form(values, method, systems)}: drop it, "
                             "or choose a --method it is for")


def method_form(values: Mapping[str, Any], method: str, systems: Mapping[str, System]) -> str:
    """``--method NAME``, and ``with an encoder`` when ``values`` run its form over an encoder's features."""
    return f"--method {method}" + (" with an encoder" if systems[method].resolve(values) is not systems[method] else "")
