"""Encoder specs, the family registry, a user's own encoder through the command line, and missing extras.

Nothing here needs PyTorch: the user encoder is NumPy only.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kcca_desc.adapters.families import (ENCODER_FAMILIES, EncoderSpec, build_encoder, parse_encoder_spec,
                                         register_encoder)
from kcca_desc.adapters.user import UserEncoder
from kcca_desc.data.registry import load_dataset
from kcca_desc._core.errors import MissingDependencyError
from kcca_desc.evaluate import evaluate_fitted, load_results
from kcca_desc.cli.fit import build_parser, main
from kcca_desc.methods import SYSTEMS, FeatureBridgeMethod, ImageSentenceRanker, NearestNeighbour
from kcca_desc.methods.encoder_systems import BRIDGE_DEFAULTS

N_IMAGES = "40"


class PixelsAndWords:
    """The user's model of docs/user_guide/neural.md: a 4x4 colour thumbnail per image, hashed word counts per caption."""

    calls = {"image": 0, "text": 0}

    def identity(self):
        return {"version": 1}

    def embed_images(self, images):
        PixelsAndWords.calls["image"] += len(images)
        out = []
        for image in images:
            a = np.asarray(image, dtype=np.float64)[..., :3]
            h, w = a.shape[0] // 4 * 4, a.shape[1] // 4 * 4
            out.append(a[:h, :w].reshape(4, h // 4, 4, w // 4, 3).mean(axis=(1, 3)).ravel() / 255.0)
        return np.array(out)

    def embed_texts(self, texts):
        PixelsAndWords.calls["text"] += len(texts)
        out = np.zeros((len(texts), 32))
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, sum(map(ord, word)) % 32] += 1.0
        return out


@pytest.fixture
def user_family():
    register_encoder("pixels_words", PixelsAndWords)
    yield "pixels_words"
    ENCODER_FAMILIES.unregister("pixels_words")


@pytest.fixture(scope="module")
def small_data():
    return load_dataset("synthetic", n_images=int(N_IMAGES), seed=0)


# ------------------------------------------------------------------ specs
@given(family=st.sampled_from(["onnx", "open_clip", "st", "hf", "timm"]),
       model=st.text(st.characters(blacklist_characters="@", blacklist_categories=("Cs",)), min_size=1),
       weights=st.none() | st.text(st.characters(blacklist_categories=("Cs",)), min_size=1))
def test_a_spec_reads_back_from_its_string(family, model, weights):
    spec = EncoderSpec(family, model.strip() or "m", weights.strip() if weights and weights.strip() else None)
    assert parse_encoder_spec(str(spec)) == spec


def test_specs_split_family_model_and_weights():
    assert parse_encoder_spec("open_clip:ViT-B-32@laion2b_s34b_b79k") == \
        EncoderSpec("open_clip", "ViT-B-32", "laion2b_s34b_b79k")
    assert parse_encoder_spec("timm:vit_small_patch14_dinov2@/w/a.safetensors").weights == "/w/a.safetensors"
    assert parse_encoder_spec("hf:openai/clip-vit-base-patch32") == EncoderSpec("hf", "openai/clip-vit-base-patch32")


@pytest.mark.parametrize("bad, problem", [("", "empty"), ("nope:x", "unknown family 'nope'"),
                                          ("st:", "no model"), ("timm:resnet18@", "no weights"),
                                          ("timm@w", "weights without a model")])
def test_a_bad_spec_says_what_a_valid_one_looks_like(bad, problem):
    with pytest.raises(ValueError, match=problem) as info:
        parse_encoder_spec(bad)
    assert "FAMILY:MODEL[@WEIGHTS]" in str(info.value) and "open_clip:ViT-B-32@laion2b_s34b_b79k" in str(info.value)


def test_the_command_line_rejects_a_bad_spec_and_lists_the_families(capsys):
    with pytest.raises(SystemExit):
        main(["--method", "cca", "--encoder", "clip-vit"])
    err = capsys.readouterr().err
    assert "bad encoder spec 'clip-vit'" in err and "e.g. open_clip:ViT-B-32@laion2b_s34b_b79k" in err
    helptext = build_parser().format_help()
    for family in ("onnx", "open_clip", "st", "hf", "timm"):
        assert f"{family}:" in helptext


def test_a_family_refuses_an_option_it_cannot_use():
    with pytest.raises(ValueError, match="takes no option device"):
        build_encoder("onnx:minilm", device="cuda")
    with pytest.raises(ValueError, match="takes its weights from the model name"):
        build_encoder("onnx:minilm@x")
    with pytest.raises(ValueError, match="onnx:minilm, onnx:vit"):
        build_encoder("onnx:bert")


def test_without_an_encoder_the_classical_systems_are_unchanged():
    settings = vars(build_parser().parse_args([]))
    assert SYSTEMS["kcca"].resolve(settings).factory is ImageSentenceRanker
    assert SYSTEMS["nn"].resolve(settings).factory is NearestNeighbour
    with_encoder = vars(build_parser().parse_args(["--text-encoder", "onnx:minilm"]))
    assert SYSTEMS["kcca"].resolve(with_encoder).factory is FeatureBridgeMethod
    # The library's own use: a plain mapping that names only what it sets.
    assert SYSTEMS["kcca"].resolve({}).factory is ImageSentenceRanker
    assert SYSTEMS["nn"].resolve({"image_encoder": "onnx:vit"}).factory is FeatureBridgeMethod


# ------------------------------------------------------------------ missing extras
@pytest.mark.parametrize("spec, module, extra", [("open_clip:ViT-B-32@random", "open_clip", "open-clip"),
                                                 ("st:all-MiniLM-L6-v2", "sentence_transformers",
                                                  "sentence-transformers"),
                                                 ("hf:bert-base-uncased", "transformers", "transformers"),
                                                 ("timm:resnet18@random", "timm", "timm")])
def test_a_missing_extra_is_named(spec, module, extra, monkeypatch):
    # None in sys.modules makes the import fail as for a package that is not installed.
    monkeypatch.setitem(sys.modules, module, None)
    encoder = build_encoder(spec, cache=False)  # nothing is imported before use
    with pytest.raises(MissingDependencyError, match=rf'`pip install "kcca_desc\[{extra}\]"` \(from a clone of '
                                                     rf'kcca_desc: `pip install -e "\.\[{extra}\]"`\)') as info:
        encoder.dim
    assert info.value.exit_code == 69


# ------------------------------------------------------------------ a user's own encoder
def test_a_user_class_is_batched_checked_and_cached(user_family):
    encoder = build_encoder(user_family, batch_size=3)
    assert isinstance(encoder, UserEncoder) and encoder.name == user_family
    assert encoder.modalities == ("image", "text") and not encoder.joint_space
    texts = ["a red dog", "two cats", "a red dog", "the ball"]
    PixelsAndWords.calls["text"] = 0
    first = encoder.embed_texts(texts)
    assert first.shape == (4, 32) and PixelsAndWords.calls["text"] == 3
    np.testing.assert_array_equal(build_encoder(user_family).embed_texts(texts), first)
    assert PixelsAndWords.calls["text"] == 3  # a fresh encoder reads the cache
    assert encoder.dim == {"image": 48, "text": 32}


def test_a_user_class_without_identity_is_not_cached():
    class NoIdentity:
        def embed_texts(self, texts):
            return np.ones((len(texts), 2))

    encoder = UserEncoder(NoIdentity())
    encoder.embed_texts(["a"])
    assert not encoder._store("text").enabled


def test_a_user_class_with_a_wrong_shape_is_named():
    class Wrong:
        def embed_texts(self, texts):
            return np.ones((len(texts) + 1, 2))

    with pytest.raises(ValueError, match=r"Wrong.embed_texts returned shape \(3, 2\) for 2 items"):
        UserEncoder(Wrong(), cache=False).embed_texts(["a", "b"])
    with pytest.raises(TypeError, match="neither embed_texts"):
        UserEncoder(object())


@pytest.mark.parametrize("method, model, kernel", [("cca", "cca", "linear"), ("kcca", "cca", "rbf"),
                                                   ("nn", "nn", "linear")])
def test_a_registered_user_encoder_runs_through_the_command_line(user_family, small_data, method, model, kernel,
                                                                 tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["--n-images", N_IMAGES, "--method", method, "--encoder", user_family, "--bridge-components", "8",
            "--bridge-rank", "60", "--out", str(out)]
    assert main(argv) == 0
    [cli] = load_results(out)
    system = {"cca": "cca", "kcca": "kcca", "nn": "nn"}[method]
    # The label adds the settings given other values than their defaults.
    assert cli.system == f"{system}_{user_family} n=8 rank 60"
    # The command line's figures are those of the same bridge fitted through the Python API.
    bridge = FeatureBridgeMethod(build_encoder(user_family), model=model, kernel=kernel, n_components=8,
                                 rank=60, **BRIDGE_DEFAULTS[kernel]).fit(small_data.subset("train"))
    api = evaluate_fitted(bridge, small_data.view("test", "hodosh"))
    for task in ("annotation", "search"):
        np.testing.assert_array_equal(cli.ranks[task], api.ranks[task])
    assert cli.annotation == api.annotation and cli.search == api.search


def test_a_joint_user_encoder_runs_as_its_own_cosine(small_data, tmp_path):
    @register_encoder("joint_pixels")
    class JointPixels(PixelsAndWords):
        """Pixels on both sides: a made-up joint space (the thumbnail of a caption's letters)."""

        joint_space = True

        def embed_texts(self, texts):
            return super().embed_texts(texts)[:, :16].repeat(3, axis=1)

    try:
        out = tmp_path / "e.json"
        assert main(["--n-images", N_IMAGES, "--method", "encoder", "--encoder", "joint_pixels", "--out", str(out)]) == 0
        assert load_results(out)[0].system == "joint_pixels"
    finally:
        ENCODER_FAMILIES.unregister("joint_pixels")


def test_method_encoder_needs_a_named_joint_encoder(capsys):
    assert main(["--n-images", N_IMAGES, "--method", "encoder"]) == 2
    assert "--method encoder scores by the cosine of a joint image-text model" in capsys.readouterr().err
