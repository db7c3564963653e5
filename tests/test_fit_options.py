"""The fit command's options that conflict or that the run cannot honour: each refused before any
work, in one line naming the option, with the documented exit code."""

from __future__ import annotations

import pytest
from bad_inputs import write_tsv_dataset

from kcca_desc._core.errors import MissingDataFileError, ParameterError, UnwritableOutputError
from kcca_desc.cli.fit import main
from kcca_desc.image.features import ImageFeaturizer

SMALL = ["--colour-words", "16", "--texture-words", "16", "--sift-words", "16", "--levels", "1", "-q"]


@pytest.fixture(autouse=True)
def no_features(monkeypatch):
    """Fail the test if any image feature is computed: the checks must come first."""
    def refuse(self, *args, **kwargs):
        raise AssertionError("features were computed before the problem was reported")

    monkeypatch.setattr(ImageFeaturizer, "fit", refuse)


def _refused(capsys, argv, code: int) -> str:
    assert main(argv) == code
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    return err.strip().removeprefix("error: ")


def test_quiet_and_verbose_together_are_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["-q", "-v"])
    assert exit_.value.code == 2
    assert "-v/--verbose: not allowed with argument -q/--quiet" in capsys.readouterr().err


@pytest.mark.parametrize("started_as, prog", [("/venv/bin/kcca-desc", "kcca-desc"),
                                               ("/src/kcca_desc/fit.py", "python -m kcca_desc.fit")])
def test_usage_and_errors_name_the_command_as_it_was_started(capsys, monkeypatch, started_as, prog):
    # The installed script's --help read "usage: python -m kcca_desc.fit".
    monkeypatch.setattr("sys.argv", [started_as])
    with pytest.raises(SystemExit):
        main(["--help"])
    assert capsys.readouterr().out.startswith(f"usage: {prog} [options]")
    with pytest.raises(SystemExit):
        main(["--n-images", "x"])
    assert f"(see {prog} --help)" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--rank", "0"], "--rank is an option of kcca_scalable, mkl_scalable, not of --method kcca"),
    (["--rank", "50", "--chunk-size", "10"],
     "--rank is an option of kcca_scalable, mkl_scalable; --chunk-size is an option of kcca_scalable, mkl_scalable, "
     "not of --method kcca"),
    (["--method", "nn", "--n-components", "4"], "--n-components is an option of kcca, kcca_scalable, mkl, "
                                                 "mkl_scalable, not of --method nn"),
    (["--method", "encoder", "--bridge-components", "4"], "--bridge-components is an option of kcca with an "
                                                          "encoder, nn with an encoder, cca, not of --method encoder"),
])
def test_an_option_of_another_method_is_refused(capsys, argv, message):
    assert _refused(capsys, ["--n-images", "40", *argv], ParameterError.exit_code).startswith(message)


KERNEL_SYSTEMS = "systems over the paper's kernels (kcca, nn, kcca_scalable, mkl, mkl_scalable, without an encoder)"


@pytest.mark.parametrize("argv, message", [
    # Silently ignored before: the figures and the label were those of the run without the option.
    (["--method", "kcca", "--text-encoder", "onnx:minilm", "--text-kernel", "bow5"],
     f"--text-kernel: an option of the {KERNEL_SYSTEMS}, not of --method kcca with an encoder: drop it"),
    (["--method", "nn", "--image-encoder", "onnx:vit", "--image-kernel", "histo", "--levels", "1"],
     f"--image-kernel, --levels: options of the {KERNEL_SYSTEMS}, not of --method nn with an encoder: drop them"),
    (["--method", "cca", "--sift-words", "8", "--pixel-step", "1"],
     f"--sift-words, --pixel-step: options of the {KERNEL_SYSTEMS}, not of --method cca: drop them"),
])
def test_a_kernel_option_of_a_system_over_an_encoder_is_refused(capsys, argv, message):
    assert _refused(capsys, ["--n-images", "40", *argv], ParameterError.exit_code) == message


def test_a_text_kernel_for_nn_without_nn_text_kernel_is_refused(capsys):
    # Silently ignored before: the run was NN5 idf F1, labelled so, whatever --text-kernel named.
    message = _refused(capsys, ["--n-images", "40", "--method", "nn", "--text-kernel", "bow5"],
                       ParameterError.exit_code)
    assert message == ("--text-kernel bow5: --method nn reads it only with --nn-text kernel (its text similarity "
                       "is --nn-text, here idf_f1): add --nn-text kernel, or drop --text-kernel")


@pytest.mark.parametrize("argv, suggested", [
    (["--text-kernel", "tri5sem"], "tri_sem"),
    (["--method", "kcc"], "kcca"),
    (["--data", "flicker8k"], "flickr8k"),
    (["--method", "mkl", "--text-kernel", "bow5+minlm_rbf"], "minilm_rbf"),
])
def test_a_misspelt_name_is_answered_with_the_closest_one(capsys, argv, suggested):
    # The list of the names there are ran to dozens (the text kernels) with nothing pointing in it.
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == ParameterError.exit_code
    err = capsys.readouterr().err.strip()
    assert "; available: " in err and err.endswith(f"; did you mean {suggested!r}? (see python -m kcca_desc.fit --help)")


def test_the_options_of_the_method_and_its_defaults_are_accepted():
    from kcca_desc.cli.options import check_applicable
    from kcca_desc.methods.registry import SYSTEMS

    # Every system's own options given, the others at their defaults: nothing to refuse.
    for name, system in SYSTEMS.items():
        check_applicable({setting.name: setting.default for setting in system.settings}, name, SYSTEMS)
    check_applicable({"rank": 50}, "kcca_scalable", SYSTEMS)


def test_more_models_to_select_than_the_grid_has_is_refused(capsys):
    message = _refused(capsys, ["--n-images", "40", "--n-components", "4,8", "--regs", "0.1,1", "--n-select", "100"],
                       ParameterError.exit_code)
    assert message == ("--n-select 100 is more than the 4 (n, reg) settings of --n-components and --regs, each "
                       "of which every selection metric keeps already; give at most 4")


def test_a_grid_the_training_images_cannot_support_names_the_option(tmp_path, capsys):
    tsv = write_tsv_dataset(tmp_path, n_images=12)
    message = _refused(capsys, ["--data", "tsv", "--data-root", str(tsv), "--n-components", "50,60", *SMALL],
                       ParameterError.exit_code)
    assert message.startswith("--n-components: The 'n_components' parameter of ImageSentenceRanker must be below "
                              "the number of training images (7)")


def test_an_out_under_a_file_names_the_file(tmp_path, capsys):
    blocker = tmp_path / "results"
    blocker.write_text("not a folder")
    message = _refused(capsys, ["--n-images", "40", "--out", str(blocker / "run" / "r.json")],
                       UnwritableOutputError.exit_code)
    assert message == f"cannot write {blocker / 'run' / 'r.json'}: {blocker} is a file, not a directory"


def test_a_tsv_data_root_that_is_a_directory_says_so(tmp_path, capsys):
    tsv = write_tsv_dataset(tmp_path, n_images=12)
    message = _refused(capsys, ["--data", "tsv", "--data-root", str(tmp_path)], MissingDataFileError.exit_code)
    assert message == (f"TSV data file {tmp_path} is a directory, not a file: name the file itself "
                       f"(it holds {tsv.name})")


@pytest.mark.parametrize("out", ["y.md", "y.csv", "y.tex", "results", ""])
def test_an_out_that_is_not_a_json_file_is_refused_before_any_work(tmp_path, capsys, out):
    # A .md name was overwritten by its own Markdown table, and the JSON results were lost.
    message = _refused(capsys, ["--n-images", "40", "--method", "nn", "--out", str(tmp_path / out) if out else ""],
                       ParameterError.exit_code)
    assert message.startswith("--out ") and "ending in .json" in message
    assert not list(tmp_path.iterdir())


def test_an_empty_item_of_a_grid_is_refused(capsys):
    # "8,,16" is a number left out by mistake, not the grid 8,16.
    with pytest.raises(SystemExit) as exit_:
        main(["--n-images", "40", "--n-components", "8,,16"])
    assert exit_.value.code == ParameterError.exit_code
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: argument --n-components: an empty item in '8,,16'") and "\n" not in err
