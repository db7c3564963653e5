"""``--help`` people can read: defaults once and in command-line syntax, examples, current defaults."""

import re

import pytest

import kcca_desc
from kcca_desc.cli.compare import build_parser as compare_parser
from kcca_desc.cli.fit import build_parser as fit_parser
from kcca_desc.cli.report import build_parser as report_parser
from kcca_desc.methods.encoder_systems import DEFAULT_IMAGE_ENCODER, DEFAULT_TEXT_ENCODER
from kcca_desc.methods.ranker import DEFAULT_REGS

PARSERS = {"fit": fit_parser, "compare": compare_parser, "report": report_parser}


@pytest.mark.parametrize("command", PARSERS)
def test_defaults_appear_once_and_as_typed(command):
    text = PARSERS[command]().format_help()
    assert "(default: None)" not in text and "(default: False)" not in text
    assert not re.search(r"default: \[", text)  # no Python lists
    flat = " ".join(text.split())
    for help_line in re.split(r"\n  -", text):
        assert " ".join(help_line.split()).count("(default") <= 1, help_line
    assert "examples:" in text and f"python -m kcca_desc.{command}" in text.split("examples:")[1]
    assert flat.startswith(f"usage: python -m kcca_desc.{command}")
    assert len(text.split("\n\n")[0].splitlines()) == 1  # a one-line usage, not every option


def test_grid_defaults_are_in_command_line_syntax():
    text = " ".join(fit_parser().format_help().split())
    assert "(default: " + ",".join(f"{r:g}" for r in DEFAULT_REGS) + ")" in text


@pytest.mark.parametrize("command", PARSERS)
def test_a_default_of_zero_is_shown(command):
    # 0 == False, so a membership test hid the defaults of --seed and --weight-power.
    text = " ".join(PARSERS[command]().format_help().split())
    assert "seed of the bootstrap and the randomisation tests (default: 0)" in text or "data's (default: 0)" in text
    if command == "fit":
        assert "correlation ** q before the cosine (default: 0)" in text


def test_help_names_the_current_default_encoders():
    text = " ".join(fit_parser().format_help().split())
    assert f"{DEFAULT_TEXT_ENCODER} captions and {DEFAULT_IMAGE_ENCODER} images" in text
    assert "ONNX MiniLM and ViT" not in text


@pytest.mark.parametrize("command", PARSERS)
def test_every_command_has_version(command, capsys):
    with pytest.raises(SystemExit) as exc:
        PARSERS[command]().parse_args(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"kcca_desc {kcca_desc.__version__}"


def test_the_tsv_example_states_the_format_the_loader_reads():
    # The loader wants a split on every line: "image<TAB>caption" lines are refused.
    text = " ".join(fit_parser().format_help().split())
    assert "a TSV of image<TAB>caption<TAB>split" in text
