"""The command line's error contract: every problem found before any work, one clear message, a
documented exit code, a traceback only with --debug, and bad items dropped with --skip-bad-items."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bad_inputs import BROKEN_IMAGES, write_tsv_dataset

import kcca_desc.cli.preflight as preflight
from kcca_desc._core.errors import (
    EXIT_CODES,
    CacheError,
    DataError,
    KccaDescError,
    MissingDataFileError,
    MissingDependencyError,
    MissingModelFileError,
    ParameterError,
    UnwritableOutputError,
)
from kcca_desc.cli.fit import main
from kcca_desc.image.features import ImageFeaturizer

SMALL = ["--colour-words", "16", "--texture-words", "16", "--sift-words", "16", "--levels", "1", "-q"]
ONE_SETTING = ["--n-components", "4", "--regs", "1"]


@pytest.fixture
def no_features(monkeypatch):
    """Fail the test if any image feature is computed: the checks must come first."""
    def refuse(self, *args, **kwargs):
        raise AssertionError("features were computed before the problem was reported")

    monkeypatch.setattr(ImageFeaturizer, "fit", refuse)


def run_cli(capsys, argv) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


def test_every_exit_code_is_distinct_documented_and_keeps_the_builtin_base():
    import kcca_desc._core.errors as errors

    assert EXIT_CODES[ParameterError] == 2 and EXIT_CODES[DataError] == 65
    for cls, code in EXIT_CODES.items():
        assert issubclass(cls, KccaDescError) and code == cls.exit_code
        assert re.search(rf"^{code} +:class:`{cls.__name__}`", errors.__doc__, re.M)
    assert issubclass(ParameterError, ValueError) and issubclass(DataError, ValueError)
    assert issubclass(MissingDataFileError, FileNotFoundError) and issubclass(MissingModelFileError, FileNotFoundError)
    assert issubclass(MissingDependencyError, ImportError) and issubclass(UnwritableOutputError, OSError)


@pytest.mark.parametrize("option, value, message", [
    ("--regs", "0", "--regs: The 'regs' parameter of ImageSentenceRanker must be"),
    ("--regs", "nan", r"Got [nan] instead"),
    ("--n-components", "0", "--n-components: The 'n_components' parameter"),
    ("--n-select", "0", "--n-select: The 'n_select' parameter"),
    ("--diag", "0.5", "--diag: The 'diag' parameter of ImageSentenceRanker must be a float in the range [1.0, inf)"),
    ("--weight-power", "nan", "--weight-power: The 'weight_power' parameter"),
    ("--levels", "-1", "--levels: The 'levels' parameter of ImageKernel"),
    ("--pixel-step", "0", "--pixel-step: The 'pixel_step' parameter of ImageFeaturizer"),
    ("--sift-step", "0", "--sift-step: The 'sift_step' parameter of ImageFeaturizer"),
    ("--colour-words", "0", "--colour-words/--texture-words/--sift-words: The 'n_words' parameter"),
    ("--power", "0", "--power: The 'power' parameter"),
    ("--seed", "-1", "--seed must be an int in the range [0, inf). Got -1 instead."),
    ("--top-k", "0", "--top-k must be an int in the range [1, inf). Got 0 instead."),
])
def test_a_bad_setting_is_one_line_naming_its_option_before_any_work(capsys, no_features, option, value, message):
    code, err = run_cli(capsys, ["--n-images", "40", option, value])
    assert code == ParameterError.exit_code == 2
    assert err.startswith("error: ") and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


ENCODERS = ["--text-encoder", "onnx:minilm", "--image-encoder", "onnx:vit"]


@pytest.mark.parametrize("argv, message", [
    # Options that set a parameter of another name; --n-components and --rank are other systems'.
    (["--method", "kcca", *ENCODERS, "--bridge-components", "0"],
     "--bridge-components: The 'n_components' parameter of FeatureBridgeMethod"),
    (["--method", "kcca", *ENCODERS, "--bridge-rank", "0"], "--bridge-rank: The 'rank' parameter of FeatureBridgeMethod"),
    (["--method", "cca", *ENCODERS, "--bridge-reg", "-1"], "--bridge-reg: The 'reg' parameter of FeatureBridgeMethod"),
    (["--method", "mkl", "--text-kernel", "bow5+tri5", "--kernel-gamma-scale", "0"],
     "--kernel-gamma-scale: The 'gamma_scale' parameter of MultipleKernelRanker"),
    # Settings of the model a method wraps: an encoder's, a trainable model's.
    (["--method", "cca", *ENCODERS, "--encoder-batch-size", "0"], "--encoder-batch-size: The 'batch_size' parameter of"),
    (["--method", "kcca", *ENCODERS, "--encoder-threads", "0"], "--encoder-threads: The 'n_threads' parameter of"),
    (["--method", "cca", "--text-encoder", "onnx:minilm", "--image-encoder", "timm:resnet18@random",
      "--encoder-device", "tpu"], "--encoder-device: The 'device' parameter of TimmImageEncoder must be a torch device"),
    (["--method", "mkl", "--text-kernel", "bow5+minilm_rbf", "--encoder-batch-size", "0"],
     "--encoder-batch-size: The 'batch_size' parameter of MultipleKernelRanker.encoder_options"),
    (["--method", "vse", "--train-epochs", "0"], "--train-epochs: The 'max_epochs' parameter of VSEEncoder"),
    (["--method", "rei", "--train-threads", "0"], "--train-threads: The 'n_threads' parameter of ReiRelevanceScorer"),
    (["--method", "char_gru", "--train-device", "tpu"], "--train-device: The 'device' parameter of CharGRUEncoder"),
    (["--method", "vse", "--image-encoder", "onnx:minilm"],
     "--image-encoder: The 'image_encoder' parameter of VSEEncoder must be an encoder of images"),
    # A text model for the images: found at the first embedding before, after the data were read.
    (["--method", "cca", "--image-encoder", "onnx:minilm"],
     "--image-encoder: The 'image_encoder' parameter of PairedEncoder must be an encoder of images. Got 'minilm'"),
    (["--method", "kcca", "--text-encoder", "onnx:vit"],
     "--text-encoder: The 'text_encoder' parameter of PairedEncoder must be an encoder of texts. Got 'vit_s14'"),
])
def test_a_setting_names_its_own_option_before_the_data_is_read(capsys, tmp_path, argv, message):
    if argv[1] in ("vse", "rei", "char_gru") or "--encoder-device" in argv:
        pytest.importorskip("torch", reason="the trainable models and the timm family need the optional torch extra")
    # A data file that is not there: reading the data first would exit 66, not 2.
    code, err = run_cli(capsys, ["--data", "tsv", "--data-root", str(tmp_path / "missing.tsv"), *argv])
    assert code == ParameterError.exit_code
    assert err.startswith("error: ") and message in err, err
    assert "--n-components" not in err and "--rank:" not in err


def test_bad_settings_are_reported_together(capsys, no_features):
    code, err = run_cli(capsys, ["--n-images", "40", "--diag", "0.5", "--levels", "-1", "--regs", "0",
                                 "--sift-step", "0"])
    assert code == 2
    assert err.startswith("error: 4 invalid settings:")
    for option in ("--diag", "--levels", "--regs", "--sift-step"):
        assert f"\n  {option}: " in err


def test_unknown_split_is_found_before_the_fit(capsys, no_features):
    code, err = run_cli(capsys, ["--n-images", "40", "--split", "nope"])
    assert code == DataError.exit_code
    assert "has no 'nope' split, but --split evaluates on it; its splits: dev, test, train" in err


def test_a_data_set_without_dev_is_an_error_for_a_grid_and_fine_for_one_setting(tmp_path, capsys, no_features):
    tsv = write_tsv_dataset(tmp_path, n_images=12, splits=(0.7, 0.0, 0.3))
    code, err = run_cli(capsys, ["--data", "tsv", "--data-root", str(tsv)] + SMALL)
    assert code == DataError.exit_code
    assert "has no 'dev' split, but --method kcca selects among its 20 (n, reg) settings on it" in err
    assert "one --n-components and one --regs" in err


def test_too_few_captions_for_hodosh_names_each_image(tmp_path, capsys, no_features):
    tsv = write_tsv_dataset(tmp_path, n_images=12, n_captions=2)
    code, err = run_cli(capsys, ["--data", "tsv", "--data-root", str(tsv)] + SMALL + ONE_SETTING)
    assert code == DataError.exit_code
    lines = err.splitlines()
    assert "problems" in lines[0]
    assert sum("has 2 captions; the hodosh protocol ('test' split) needs caption #2" in line for line in lines) >= 2


def test_two_captions_are_enough_under_karpathy(tmp_path):
    tsv = write_tsv_dataset(tmp_path, n_images=12, n_captions=2)
    assert main(["--data", "tsv", "--data-root", str(tsv), "--protocol", "karpathy"] + SMALL + ONE_SETTING) == 0


@pytest.fixture
def broken_tsv(tmp_path):
    """30 images; a zero-byte and a garbage image file, an empty caption and a one-field line."""
    tsv = write_tsv_dataset(tmp_path, n_images=30)
    (tmp_path / "images" / "0003.png").write_bytes(b"")
    (tmp_path / "images" / "0025.png").write_bytes(BROKEN_IMAGES["garbage.png"]())
    lines = tsv.read_text().splitlines()
    lines[7] = lines[7].split("\t")[0] + "\t \ttrain"       # line 8: image 0001, empty caption
    lines[12] = "only one field"                             # line 13
    tsv.write_text("\n".join(lines) + "\n")
    return tsv


def test_every_data_problem_is_reported_together_before_any_feature(broken_tsv, capsys, no_features):
    code, err = run_cli(capsys, ["--data", "tsv", "--data-root", str(broken_tsv)] + SMALL + ONE_SETTING)
    assert code == DataError.exit_code
    lines = err.splitlines()
    assert lines[0] == (f"error: {broken_tsv}: 4 problems, spoiling 3 images; fix them, or drop the bad items "
                        "with --skip-bad-items")
    assert lines[1:] == [
        f"  {broken_tsv}, line 8: empty caption for image 'images/0001.png'",
        f"  {broken_tsv}, line 13: expected 3 tab-separated fields, found 1: 'only one field'",
        f"  {broken_tsv.parent / 'images' / '0003.png'}: empty file (0 bytes)",
        f"  {broken_tsv.parent / 'images' / '0025.png'}: cannot decode image file (corrupt or unsupported format)",
    ]


def test_skip_bad_items_drops_them_with_one_warning_and_runs(broken_tsv, capsys):
    code, err = run_cli(capsys, ["--data", "tsv", "--data-root", str(broken_tsv), "--skip-bad-items"]
                        + SMALL + ONE_SETTING)
    assert code == 0, err
    warning = err.split("\nwarning: ")[0] if err.startswith("warning: ") else err
    assert warning.startswith(f"warning: {broken_tsv}: skipped the bad items: dropped 3 images and 1 line with "
                              "problems; kept 27 images")
    assert "0025.png: cannot decode" in warning and "line 8: empty caption" in warning
    assert err.count("skipped the bad items") == 1


def test_debug_shows_the_traceback(capsys, no_features):
    with pytest.raises(ParameterError, match="'diag' parameter"):
        main(["--n-images", "40", "--diag", "0.5", "--debug"])


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_unwritable_out_fails_before_any_work(tmp_path, capsys, no_features):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, err = run_cli(capsys, ["--n-images", "40", "--out", str(locked / "results.json")])
    finally:
        locked.chmod(0o700)
    assert code == UnwritableOutputError.exit_code == 73
    assert err.strip() == f"error: cannot write {locked / 'results.json'}: Permission denied"


def test_out_that_is_a_directory_or_under_a_file_fails_before_any_work(tmp_path, capsys, no_features):
    code, err = run_cli(capsys, ["--n-images", "40", "--out", str(tmp_path)])
    assert code == 73 and "it is a directory" in err
    (tmp_path / "file").write_text("x")
    code, err = run_cli(capsys, ["--n-images", "40", "--out", str(tmp_path / "file" / "results.json")])
    assert code == 73 and err.startswith(f"error: cannot write {tmp_path / 'file' / 'results.json'}: ")


def test_unwritable_cache_falls_back_to_no_cache_with_a_warning(tmp_path, capsys, monkeypatch):
    blocker = tmp_path / "not_a_directory"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("KCCA_DESC_CACHE", str(blocker / "cache"))
    code, err = run_cli(capsys, ["--n-images", "40"] + SMALL + ONE_SETTING)
    assert code == 0, err
    assert err.count(f"warning (CacheWarning): the cache {blocker / 'cache'} cannot be written") == 1
    assert "this run goes on without it" in err
    assert not (blocker.parent / "cache").exists()


@pytest.mark.parametrize("error", [
    MissingDependencyError("torch", "neural", "the CLIP encoder"),
    MissingModelFileError("model file not found: /models/clip.onnx; download it with ..."),
    UnwritableOutputError("/x/results.json", "No space left on device"),
    CacheError("/cache/kcca_desc", "Read-only file system"),
    MissingDataFileError("Flickr8K directory not found: /nowhere"),
])
def test_each_toolkit_error_exits_with_its_code_in_one_line(capsys, monkeypatch, error):
    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(preflight, "load_checked", fail)
    code, err = run_cli(capsys, ["--n-images", "40"])
    assert code == type(error).exit_code
    assert err == f"error: {error}\n"
    assert {69: 'pip install -e ".[neural]"'}.get(code, "") in err


def test_missing_data_directory_exits_66(tmp_path, capsys):
    code, err = run_cli(capsys, ["--data", "flickr8k", "--data-root", str(tmp_path / "nowhere")])
    assert code == MissingDataFileError.exit_code == 66
    assert err == f"error: Flickr8K directory not found: {tmp_path / 'nowhere'}\n"


def test_the_command_prints_no_traceback_in_a_subprocess(tmp_path):
    """As a user runs it: one line on stderr, the exit code, no traceback."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([sys.executable, "-m", "kcca_desc.fit", "--n-images", "40", "--levels", "-1"],
                          capture_output=True, text=True, env=env, cwd=Path(__file__).parents[1], timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: --levels: The 'levels' parameter of ImageKernel must be an int in the range [0, inf). "
        "Got -1 instead."]


@pytest.mark.parametrize("text_kernel", ["tri5_dext", "tri_sem"])
def test_a_missing_corpus_extra_is_named_before_any_feature(capsys, no_features, monkeypatch, text_kernel):
    from kcca_desc.kernels.text.similarity import corpus

    monkeypatch.setattr(corpus, "_WIKI_PACKAGE", "no_such_corpus_package")
    code, err = run_cli(capsys, ["--n-images", "40", "--text-kernel", text_kernel])
    assert code == MissingDependencyError.exit_code == 69
    assert err.startswith("error: ") and "extra 'corpus'" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, message", [
    (["--data", "flickr8k", "--n-images", "60"],
     "--n-images: not an option of --data flickr8k, which takes none of --n-images, --image-root: drop it"),
    (["--data", "flickr8k", "--n-images", "60", "--image-root", "images"],
     "--n-images, --image-root: not options of --data flickr8k, which takes none of --n-images, --image-root: "
     "drop them"),
    (["--image-root", "images"], "--image-root: not an option of --data synthetic, which takes --n-images: drop it"),
    # The loader's error named no option: "the synthetic data set ... takes no root (got 'roots')".
    (["--data-root", "roots"], "--data-root: not an option of --data synthetic, which takes --n-images: drop it"),
    (["--data-root", "roots", "--image-root", "images"],
     "--data-root, --image-root: not options of --data synthetic, which takes --n-images: drop them"),
])
def test_a_data_option_the_data_set_does_not_take_is_named_as_an_option(capsys, tmp_path, no_features, argv,
                                                                        message):
    # The loader's own error named the parameters (n_images, image_root) and listed 'captions'.
    code, err = run_cli(capsys, [*argv, "--data-root", str(tmp_path)] if "flickr8k" in argv else argv)
    assert code == ParameterError.exit_code
    assert err.strip() == f"error: {message}"
