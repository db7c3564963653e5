"""Encoders named by a hub id fail fast without a network, and missing or broken extras say the truth.

No network is reached: offline mode is set, or the hub endpoint is a closed local port.
"""

from __future__ import annotations

import ast
import configparser
import shutil
import time
from pathlib import Path

import pytest

from kcca_desc._core.errors import (MissingDependencyError, MissingModelFileError, ModelUnavailableError,
                                    ParameterError, import_optional)
from kcca_desc.adapters import hub
from kcca_desc.adapters.families import build_encoder
from kcca_desc.adapters.torchvision_compat import import_torch_library
from kcca_desc.cli.fit import main
from kcca_bench import random_models
from test_encoder_specs import N_IMAGES, PixelsAndWords, user_family  # noqa: F401 - a fixture

ROOT = Path(__file__).resolve().parents[2]


def _extras() -> set[str]:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return set(config["options.extras_require"])


def _extras_named_in_code() -> set[str]:
    """Every extra a message can name: ``import_optional``'s argument and the encoders' ``extra``."""
    named = set()
    for path in [*ROOT.glob("kcca_desc/**/*.py"), *ROOT.glob("kernels/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None))
                    in ("import_optional", "import_torch_library", "MissingDependencyError")
                    and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value):
                named.add(node.args[1].value)
            targets = [getattr(t, "id", None) for t in node.targets] if isinstance(node, ast.Assign) else []
            if targets in (["extra"], ["_EXTRA"]) and isinstance(node.value, ast.Constant):
                named.add(node.value.value)
    return named


def test_every_extra_a_message_names_is_declared_under_its_published_name():
    named = _extras_named_in_code()
    assert {"open-clip", "sentence-transformers", "timm", "transformers", "neural", "dask"} <= named
    assert named <= _extras(), f"extras named in messages but not in setup.cfg: {sorted(named - _extras())}"
    # setuptools publishes an extra lower case with '-' for '_'; pip ignores any other spelling.
    assert all(name == name.lower().replace("_", "-") for name in _extras())


@pytest.fixture
def broken_package(tmp_path, monkeypatch):
    """A package that is installed but raises on import, as a torchvision built for another torch does."""
    package = tmp_path / "broken_pkg_xyz"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('operator broken::op does not exist\\nmore detail')\n")
    (tmp_path / "needs_missing_xyz.py").write_text("import not_installed_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "broken_pkg_xyz"


def test_every_extra_has_its_row_in_the_install_page():
    page = (ROOT / "docs" / "install.md").read_text()
    table = page.split("| Extra |", 1)[1].split("\n\n", 1)[0]
    rows = {line.split("|")[1].strip().strip("`") for line in table.splitlines() if line.startswith("| `")}
    # dev (the suite's: the test stack and the extras it exercises) is told after the table.
    assert rows == _extras() - {"dev"} and "`dev` is what the full test suite needs" in page


def test_an_installed_package_that_fails_to_import_says_so_with_the_first_line(broken_package):
    with pytest.raises(MissingDependencyError) as info:
        import_optional(broken_package, "timm", "the timm family")
    message = str(info.value)
    assert "is installed but fails to import (RuntimeError: operator broken::op does not exist)" in message
    assert "not installed" not in message and "more detail" not in message
    assert 'pip install -e ".[timm]"' in message and info.value.exit_code == 69


def test_a_missing_dependency_of_an_installed_package_is_named(broken_package):
    with pytest.raises(MissingDependencyError, match=r"^the x family \(through 'needs_missing_xyz'\) needs the "
                                                     r"optional package 'not_installed_xyz', which is not installed"):
        import_optional("needs_missing_xyz", "timm", "the x family")


# ------------------------------------------------------------------ hub ids without a network
def _library_or_skip(module: str) -> None:
    """Import a family's library as the adapters do (with its torchvision), or skip."""
    try:
        import_torch_library(module, None, "this test")
    except MissingDependencyError as exc:
        pytest.skip(str(exc))


@pytest.fixture
def empty_hub_cache(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "hub"


@pytest.fixture
def closed_hub(empty_hub_cache, monkeypatch):
    """The hub endpoint is a local port nobody listens on: a connection is refused at once."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
    return empty_hub_cache


def _encoder_runs_through_the_cli(capsys, argv):
    started = time.perf_counter()
    code = main(["-q", "--n-images", N_IMAGES, "--method", "cca", "--bridge-components", "4", "--no-cache", *argv])
    return code, capsys.readouterr().err, time.perf_counter() - started


@pytest.mark.parametrize("spec", ["st:all-MiniLM-L6-v2", "hf:openai/clip-vit-base-patch32"])
def test_a_hub_id_in_offline_mode_is_one_line_naming_the_encoder_and_what_to_do(spec, empty_hub_cache, capsys,
                                                                                monkeypatch, user_family):
    _library_or_skip("transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    side = "--text-encoder" if spec.startswith("st") else "--image-encoder"
    other = "--image-encoder" if side == "--text-encoder" else "--text-encoder"
    code, err, _ = _encoder_runs_through_the_cli(capsys, [side, spec, other, user_family])
    assert code == ModelUnavailableError.exit_code == 69
    assert err.startswith(f"error: encoder {spec}: ") and err.count("\n") == 1, err
    assert "HF_HUB_OFFLINE=1 forbids downloading it" in err and "/path/to/" in err and str(empty_hub_cache) in err


def test_an_unreachable_hub_is_refused_before_any_work_without_retry_logs(closed_hub, capsys, user_family):
    _library_or_skip("sentence_transformers")
    images_before = PixelsAndWords.calls["image"]
    code, err, seconds = _encoder_runs_through_the_cli(
        capsys, ["--text-encoder", "st:all-MiniLM-L6-v2", "--image-encoder", user_family])
    assert code == 69 and err.count("\n") == 1 and "Retrying" not in err, err
    assert "the hub (http://127.0.0.1:9) cannot be reached" in err and "HF_HUB_OFFLINE=1" in err
    assert PixelsAndWords.calls["image"] == images_before, "the image side was encoded before the refusal"
    assert seconds < 20


def test_an_unavailable_hub_model_is_refused_when_the_encoder_is_built(empty_hub_cache, monkeypatch):
    _library_or_skip("transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError, match=r"^encoder hf:someone/model: 'someone/model' is not"):
        build_encoder("hf:someone/model", cache=False)


def test_a_cached_model_loads_from_the_cache_when_the_hub_is_unreachable(closed_hub, tmp_path):
    _library_or_skip("sentence_transformers")
    # The layout huggingface_hub writes: a snapshot per revision, refs/main naming it.
    repo = closed_hub / "models--someone--tiny-st"
    snapshot = repo / "snapshots" / ("0" * 40)
    shutil.copytree(random_models.sentence_transformer_dir(tmp_path / "st"), snapshot)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
    encoder = build_encoder("st:someone/tiny-st", cache=False)
    assert encoder.embed_texts(["a dog runs"]).shape == (1, encoder.dim["text"])


def test_a_hub_error_while_loading_becomes_one_line(closed_hub):
    httpx = pytest.importorskip("httpx2")  # the HTTP client of huggingface_hub 2
    from huggingface_hub.errors import RepositoryNotFoundError

    response = httpx.Response(404, request=httpx.Request("HEAD", "http://127.0.0.1:9/nobody/nothing"))

    with pytest.raises(ModelUnavailableError, match=r"^encoder st:nobody/nothing: the hub cannot provide "
                                                    r"'nobody/nothing': 404 no such repository; give a local model"):
        with hub.hub_model("st:nobody/nothing", "nobody/nothing", cached=True, local="st:/path/to/nothing"):
            try:
                raise RepositoryNotFoundError("404 no such repository\nrequest id ...", response=response)
            except RepositoryNotFoundError as exc:
                raise OSError("nobody/nothing is not a local folder and is not a valid model identifier") from exc
    # Anything else is not the hub's: it keeps its own class.
    with pytest.raises(ZeroDivisionError):
        with hub.hub_model("st:x", "x", cached=True, local="st:/path/to/x"):
            1 / 0


def test_a_path_that_does_not_exist_is_a_missing_file_not_a_hub_id(tmp_path):
    with pytest.raises(MissingModelFileError, match="no model directory or file"):
        hub.local_model_path("st:/nowhere/model", str(tmp_path / "nowhere" / "model"))
    assert hub.local_model_path("st:x", "sentence-transformers/all-MiniLM-L6-v2") is None
    assert hub.local_model_path("st:x", str(tmp_path)) == tmp_path


def test_the_probe_reports_a_refused_connection_quickly(closed_hub):
    started = time.perf_counter()
    reason = hub.hub_unreachable(timeout=2.0)
    assert reason and "127.0.0.1" in reason and time.perf_counter() - started < 2.5



@pytest.mark.parametrize("spec, library, repo", [
    ("open_clip:ViT-B-32@laion2b_s34b_b79k", "open_clip", "laion/CLIP-ViT-B-32-laion2B-s34B-b79K"),
    ("timm:resnet18@pretrained", "timm", "timm/resnet18"),
])
def test_open_clip_tags_and_timm_pretrained_weights_fail_fast_offline(spec, library, repo, empty_hub_cache,
                                                                      monkeypatch):
    _library_or_skip(library)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError, match=rf"^encoder {spec}: '{repo}.*' is not in the Hugging Face "
                                                    r"cache .* HF_HUB_OFFLINE=1 forbids downloading it"):
        build_encoder(spec, cache=False).dim


@pytest.mark.parametrize("spec, problem", [
    ("open_clip:ViT-B-32@no_such_tag",
     r"OpenCLIP has no pretrained tag 'no_such_tag' for ViT-B-32 .*laion2b_s34b_b79k"),
    ("open_clip:No-Such-Arch@random", r"OpenCLIP has no architecture 'No-Such-Arch'"),
    ("timm:no_such_model@random", r"timm has no model 'no_such_model'"),
])
def test_unknown_architectures_and_tags_are_bad_settings(spec, problem):
    _library_or_skip(spec.split(":")[0])
    with pytest.raises(ParameterError, match=problem):
        build_encoder(spec, cache=False).dim


def test_a_model_given_by_path_is_labelled_by_its_folder_name(tmp_path):
    from kcca_desc.adapters.paired import PairedEncoder
    from kcca_desc.adapters.st_models import SentenceTransformerEncoder
    from kcca_desc.adapters.timm_models import TimmImageEncoder
    from kcca_desc.methods import FeatureBridgeMethod

    folder = tmp_path / "models" / "my-minilm"
    folder.mkdir(parents=True)
    text = SentenceTransformerEncoder(str(folder))
    image = TimmImageEncoder("resnet18", weights=str(tmp_path / "resnet18_ft.safetensors"))
    assert text.label == "st:my-minilm" and text.name == f"st:{folder}"  # the cache keeps the full path
    assert SentenceTransformerEncoder("org/model").label == "st:org/model"  # a hub id stays as it is
    assert image.label == "timm:resnet18@resnet18_ft.safetensors"
    bridge = FeatureBridgeMethod(PairedEncoder(image_encoder=image, text_encoder=text))
    assert bridge.name == "cca_timm:resnet18@resnet18_ft.safetensors+st:my-minilm"
