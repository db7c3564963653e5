"""The commands' options survive the package's reorganisation (issue "One house").

Each command's ``--help`` is compared with the text stored before the command line moved into
:mod:`kcca_desc.cli` (``tests/fixtures/cli_help_before``); the copy goes once the move is done.
"""

from pathlib import Path

import pytest

from kcca_desc.cli import compare, fit, report

BEFORE = Path(__file__).parent / "fixtures" / "cli_help_before"


@pytest.mark.parametrize("name, command", [("fit", fit), ("compare", compare), ("report", report)])
def test_help_lists_the_same_options_as_before_the_move(monkeypatch, name, command):
    monkeypatch.setenv("COLUMNS", "100")
    assert command.build_parser().format_help() == (BEFORE / f"{name}.txt").read_text(encoding="utf-8")
