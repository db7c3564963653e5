"""Settings declared in the library, and the command-line options made from them.

* :mod:`kcca_desc._core.settings`: a setting's option name, defaults, the list parser;
* :class:`kcca_desc.methods.System`: built from a plain mapping, a setting left out takes its
  default, and the result is what the command line builds from the same values;
* :mod:`kcca_desc.cli.options`: a library parser's :class:`ParameterError` is a usage error with
  its message, a setting declared by several systems is one option.
"""

from __future__ import annotations

import argparse

import pytest

from kcca_desc._core.errors import ParameterError
from kcca_desc._core.settings import Setting, comma_separated, setting_defaults
from kcca_desc.cli.fit import _make_method, build_parser
from kcca_desc.cli.options import add_system_options, command_parser
from kcca_desc.methods import SYSTEMS, FeatureBridgeMethod, NearestNeighbour, System
from kcca_desc.methods.encoder_systems import encoder_spec

# What the command line shares between its systems, at its defaults.
SHARED = {"image_kernel": "pyramid", "text_kernel": "tri_sem", "random_state": 0, "cache": True,
          "image_kernel_params": {"levels": 2, "n_words": {"colour": 128, "texture": 256, "sift": 256}}}


# ----------------------------------------------------------------------- declarations
def test_a_setting_names_its_option_and_describes_itself_when_asked():
    calls = []
    setting = Setting("n_select", int, 5, help=lambda: calls.append(1) or "models kept")
    assert setting.option == "--n-select"
    assert calls == []                      # a callable help is not called until the text is needed
    assert setting.describe() == "models kept" and calls == [1]
    assert Setting("power", float, 1.0, help="p").describe() == "p"
    assert setting_defaults([setting, Setting("regs", default=[1.0])]) == {"n_select": 5, "regs": [1.0]}


def test_comma_separated_numbers():
    assert comma_separated(int)("4,8,") == [4, 8]
    assert comma_separated(float)(" 0.1, 1") == [0.1, 1.0]
    with pytest.raises(ParameterError, match=r"expected a comma-separated list of numbers, got '1,a'"):
        comma_separated(float)("1,a")
    with pytest.raises(ParameterError, match="the list is empty"):
        comma_separated(int)(" , ")
    with pytest.raises(ParameterError, match=r"an empty item in '8,,16'"):
        comma_separated(int)("8,,16")


def test_an_encoder_spec_is_checked_and_kept_as_text():
    assert encoder_spec("onnx:minilm") == "onnx:minilm"
    with pytest.raises(ParameterError, match="bad encoder spec 'clip-vit'"):
        encoder_spec("clip-vit")


# ------------------------------------------------------------ systems from a mapping
def _params(estimator) -> dict:
    """Every parameter, nested ones included, less the nested estimators (equal only to themselves)."""
    return {k: v for k, v in estimator.get_params(deep=True).items() if not hasattr(v, "get_params")}


@pytest.mark.parametrize("method, settings, argv", [
    ("kcca", {}, []),
    ("kcca", {"n_components": [4], "regs": [0.1], "power": 2.0}, ["--n-components", "4", "--regs", "0.1",
                                                                  "--power", "2"]),
    ("nn", {"nn_text": "kernel"}, ["--method", "nn", "--nn-text", "kernel"]),
    ("kcca_scalable", {"engine": "local", "rank": 50}, ["--method", "kcca_scalable", "--engine", "local",
                                                        "--rank", "50"]),
    ("rei", {"train_config": "paper", "train_epochs": 3}, ["--method", "rei", "--train-config", "paper",
                                                           "--train-epochs", "3"]),
])
def test_a_system_built_from_a_plain_mapping_is_the_command_lines(method, settings, argv):
    ours = SYSTEMS[method].resolve(settings).build(settings, SHARED)
    assert _params(ours) == _params(_make_method(build_parser().parse_args(argv)))


def test_with_an_encoder_named_a_mapping_builds_the_system_over_its_features():
    settings = {"text_encoder": "onnx:minilm", "image_encoder": "onnx:vit", "bridge_components": 7}
    system = SYSTEMS["nn"].resolve(settings)
    method = system.build(settings, SHARED)
    assert isinstance(method, FeatureBridgeMethod) and not isinstance(method, NearestNeighbour)
    assert (method.model, method.kernel, method.n_components, method.reg) == ("nn", "linear", 7, 1.0)
    assert (method.encoder.text_encoder.name, method.encoder.image_encoder.name) == ("minilm", "vit_s14")


def test_a_system_sees_the_shared_settings_but_its_factory_only_those_it_takes():
    seen = {}

    def params(settings):
        seen.update(settings)
        return {"alpha": settings["alpha"]}

    def factory(alpha, random_state=0):
        return ("built", alpha, random_state)

    system = System(factory, (Setting("alpha", float, 1.0),), params)
    assert system.build({"unrelated": 1}, {"random_state": 3, "cache": False}) == ("built", 1.0, 3)
    assert seen == {"alpha": 1.0, "random_state": 3, "cache": False, "unrelated": 1}


# ---------------------------------------------------------------- command-line options
def _parser(*systems: tuple[str, System]) -> argparse.ArgumentParser:
    parser = command_parser("prog", "a test command")
    add_system_options(parser, systems)
    return parser


def test_a_library_parser_error_is_a_usage_error_with_its_message(capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["--n-components", "4,x"])
    assert exc.value.code == 2
    assert "argument --n-components: expected a comma-separated list of numbers, got '4,x'" in capsys.readouterr().err
    # int's own error keeps argparse's wording, after the parser's name.
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--n-select", "x"])
    assert "argument --n-select: invalid int value: 'x'" in capsys.readouterr().err


def test_a_setting_several_systems_declare_is_one_option_in_a_group_named_after_all_of_them():
    shared = Setting("alpha", float, 1.0, help="shared alpha")
    own = Setting("beta", int, 2, help="own beta", choices=(2, 3), metavar="B")
    parser = _parser(("one", System(dict, (shared,))), ("two", System(dict, (shared, own))))
    groups = {group.title: [action.dest for action in group._group_actions] for group in parser._action_groups}
    assert groups["one, two systems"] == ["alpha"] and groups["two system"] == ["beta"]
    args = parser.parse_args(["--alpha", "0.5"])
    assert (args.alpha, args.beta) == (0.5, 2)
    assert "--beta B" in parser.format_help() and "own beta (default: 2)" in parser.format_help()


def test_two_different_settings_of_one_name_clash():
    with pytest.raises(ParameterError, match="systems one and two declare different settings named 'alpha'"):
        _parser(("one", System(dict, (Setting("alpha", float, 1.0),))),
                ("two", System(dict, (Setting("alpha", int, 1),))))
