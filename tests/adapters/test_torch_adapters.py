"""The PyTorch adapter families on small random models built offline, each through the command line.

Every family's test skips, with the reason, when its extra is absent (``pip install -e
".[open-clip]"`` and so on).  The models are built in a temporary directory
(:mod:`kcca_bench.random_models`, ``size="tiny"``) and the hubs are switched off, so nothing is downloaded.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import numpy as np
import pytest

from kcca_desc.adapters.families import build_encoder
from kcca_bench import random_models
from kcca_desc.data.images import ArrayImages
from kcca_desc._core.errors import MissingDependencyError, ParameterError
from kcca_desc.adapters.torchvision_compat import import_torch_library
from kcca_desc.evaluate import load_results
from kcca_desc.cli.fit import main
from test_encoder_specs import N_IMAGES, user_family  # noqa: F401 - a fixture

EXTRAS = {"open_clip": ("open_clip", "open-clip"), "st": ("sentence_transformers", "sentence-transformers"),
          "hf": ("transformers", "transformers"), "timm": ("timm", "timm")}


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(name, "1")


def need(family: str):
    """Import the family's library as the adapters do, or skip with the reason (a broken install too)."""
    module, extra = EXTRAS[family]
    try:
        return import_torch_library(module, extra, f"the {family} family")
    except MissingDependencyError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Spec per model, built once per module and only for the families installed."""
    root = tmp_path_factory.mktemp("models")
    builders = {"open_clip": lambda: random_models.open_clip_spec(root),
                "st": lambda: "st:" + str(random_models.sentence_transformer_dir(root / "st")),
                "hf_clip": lambda: "hf:" + str(random_models.clip_dir(root / "clip")),
                "hf_bert": lambda: "hf:" + str(random_models.bert_dir(root / "bert")),
                "hf_vit": lambda: "hf:" + str(random_models.vit_dir(root / "vit")),
                "hf_siglip": lambda: "hf:" + str(random_models.siglip_dir(root / "siglip")),
                "timm": lambda: random_models.timm_weights(root)}
    built = {}

    def get(name):
        need(name.split("_")[0] if name.startswith("hf") else name)
        if name not in built:
            built[name] = builders[name]()
        return built[name]
    return get


def images(n=6, seed=0):
    rng = np.random.default_rng(seed)
    return ArrayImages([rng.integers(0, 256, (40 + i, 50, 3), dtype=np.uint8) for i in range(n)],
                       [str(i) for i in range(n)])


TEXTS = ["a dog runs on the grass", "two cats", "a man in red", "", "the child jumps over the ball"]


class Forward:
    """Counts the batch hooks of an encoder class (the forward passes)."""

    def __init__(self, monkeypatch, cls):
        self.n = 0
        for hook in ("_encode_image_batch", "_encode_text_batch"):
            if hasattr(cls, hook):
                original = getattr(cls, hook)

                def counted(encoder, batch, original=original):
                    self.n += 1
                    return original(encoder, batch)
                monkeypatch.setattr(cls, hook, counted)


# (model, command-line sides, methods run, adapter class path)
CASES = {
    "open_clip": (["--encoder", "{spec}"], ["encoder", "cca"], "open_clip_models.OpenCLIPEncoder"),
    "hf_clip": (["--encoder", "{spec}"], ["encoder", "kcca"], "hf_models.HFEncoder"),
    "hf_siglip": (["--encoder", "{spec}"], ["encoder"], "hf_models.HFEncoder"),
    "st": (["--text-encoder", "{spec}", "--image-encoder", "pixels_words"], ["cca", "kcca"],
           "st_models.SentenceTransformerEncoder"),
    "hf_bert": (["--text-encoder", "{spec}", "--image-encoder", "pixels_words"], ["cca"], "hf_models.HFEncoder"),
    "hf_vit": (["--image-encoder", "{spec}", "--text-encoder", "pixels_words"], ["nn"], "hf_models.HFEncoder"),
    "timm": (["--image-encoder", "{spec}", "--text-encoder", "pixels_words"], ["kcca", "nn"],
             "timm_models.TimmImageEncoder"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_family_end_to_end_through_the_command_line_and_cached(name, models, user_family, tmp_path,
                                                               monkeypatch):
    spec = models(name)
    sides, methods, cls_path = CASES[name]
    module, _, cls_name = cls_path.rpartition(".")
    cls = getattr(importlib.import_module(f"kcca_desc.adapters.{module}"), cls_name)
    for method in methods:
        # The encoder's own cosine has no bridge, and the command line refuses options it would ignore.
        bridge = [] if method == "encoder" else ["--bridge-components", "4", "--bridge-rank", "40"]
        argv = ["--n-images", N_IMAGES, *bridge, "--encoder-threads", "1", *[a.format(spec=spec) for a in sides]]
        forward = Forward(monkeypatch, cls)
        first = tmp_path / f"{method}1.json"
        assert main(argv + ["--method", method, "--out", str(first)]) == 0
        if method == methods[0]:
            assert forward.n > 0
        second = tmp_path / f"{method}2.json"
        forward.n = 0
        assert main(argv + ["--method", method, "--out", str(second)]) == 0
        assert forward.n == 0, "the second run did a forward pass"
        [a], [b] = load_results(first), load_results(second)
        # A model given by path is labelled by its folder name (the cache keeps the full path).
        family, _, model = spec.split("@")[0].partition(":")
        assert a.system.startswith(method if method != "encoder" else f"{family}:{Path(model).name}")
        for task in ("annotation", "search"):
            np.testing.assert_array_equal(a.ranks[task], b.ranks[task])
            assert len(a.ranks[task]) > 0


def _l2(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_open_clip_matches_the_library_called_directly(models):
    spec = models("open_clip")
    encoder = build_encoder(spec, cache=False, batch_size=4)
    torch = need("open_clip") and importlib.import_module("torch")
    model, preprocess, tokenizer = encoder.loaded
    from kcca_desc.adapters.torch_base import to_pil

    src = images()
    with torch.inference_mode():
        X = model.encode_image(torch.stack([preprocess(to_pil(src.load(i))) for i in range(len(src))]),
                               normalize=True).numpy()
        Y = model.encode_text(tokenizer(TEXTS), normalize=True).numpy()
    np.testing.assert_allclose(encoder.embed_images(src), X, atol=1e-5)
    np.testing.assert_allclose(encoder.embed_texts(TEXTS), Y, atol=1e-5)
    assert encoder.joint_space and encoder.embed_texts([]).shape == (0, 16)


def test_hf_text_mean_pooling_matches_sentence_transformers(models):
    """The same BERT, pooled by our HFEncoder and by sentence-transformers' Pooling + Normalize."""
    st_spec, bert_spec = models("st"), models("hf_bert")
    ours = build_encoder(bert_spec, cache=False, batch_size=2).embed_texts(TEXTS)
    theirs = build_encoder(st_spec, cache=False, batch_size=2).embed_texts(TEXTS)
    assert ours.shape == theirs.shape == (len(TEXTS), 32)
    np.testing.assert_allclose(_l2(ours), theirs, atol=1e-5)
    library = importlib.import_module("sentence_transformers").SentenceTransformer(st_spec[3:], device="cpu")
    np.testing.assert_allclose(theirs, library.encode(TEXTS), atol=1e-5)


def test_hf_clip_matches_get_features(models):
    spec = models("hf_clip")
    encoder = build_encoder(spec, cache=False)
    torch = importlib.import_module("torch")
    bundle = encoder.loaded
    from kcca_desc.adapters.torch_base import pooled_features, to_pil

    src = images()
    pixels = bundle["image_processor"]([to_pil(src.load(i)) for i in range(len(src))], return_tensors="pt")
    with torch.inference_mode():
        X = pooled_features(bundle["model"].get_image_features(pixel_values=pixels["pixel_values"])).numpy()
    np.testing.assert_allclose(encoder.embed_images(src), _l2(X), atol=1e-5)
    assert encoder.joint_space and encoder.modalities == ("image", "text")
    assert build_encoder(models("hf_vit"), cache=False).modalities == ("image",)
    with pytest.raises(ParameterError, match="dual encoder"):
        build_encoder(spec, pooling="cls", cache=False).embed_texts(["a"])


def test_hf_siglip_pads_texts_to_its_full_length(models):
    encoder = build_encoder(models("hf_siglip"), cache=False)
    assert encoder.joint_space and encoder.dim == {"image": 32, "text": 32}
    inputs = encoder._text_inputs(["a dog", "a red dog runs on the grass"])
    assert inputs["input_ids"].shape == (2, 16)  # SigLIP's max_position_embeddings, not the batch's longest
    Y = encoder.embed_texts(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(Y, axis=1), 1.0, rtol=1e-5)


def test_timm_loads_the_weights_file_and_keys_the_cache_by_them(models, tmp_path):
    spec = models("timm")
    timm = need("timm")
    torch = importlib.import_module("torch")
    from safetensors.torch import load_file

    from kcca_desc.adapters.torch_base import to_pil

    encoder = build_encoder(spec, cache=False)
    direct = timm.create_model("test_vit", pretrained=False, num_classes=0)
    state = {k: v for k, v in load_file(spec.split("@", 1)[1]).items() if not k.startswith("head.")}
    direct.load_state_dict(state)
    direct.eval()
    config = timm.data.resolve_data_config({}, model=direct)
    transform = timm.data.create_transform(**config)
    src = images()
    with torch.inference_mode():
        X = direct(torch.stack([transform(to_pil(src.load(i))) for i in range(len(src))])).numpy()
    np.testing.assert_allclose(encoder.embed_images(src), X, atol=1e-5)
    other = build_encoder(random_models.timm_weights(tmp_path, seed=1), cache=False)
    assert other.identity("image")["weights_sha256"] != encoder.identity("image")["weights_sha256"]
    assert not np.allclose(other.embed_images(src), X, atol=1e-3)
    with pytest.raises(FileNotFoundError, match="weights file not found"):
        build_encoder("timm:test_vit@" + str(tmp_path / "missing.safetensors")).dim
    with pytest.raises(ValueError, match="needs weights"):
        build_encoder("timm:test_vit").dim


@pytest.mark.parametrize("name", ["open_clip", "timm", "st"])
def test_dtype_and_device_and_threads(name, models):
    spec = models(name)
    torch = importlib.import_module("torch")
    embed = (lambda e: e.embed_texts(TEXTS)) if name == "st" else (lambda e: e.embed_images(images()))
    full = build_encoder(spec, cache=False, n_threads=1)
    before = torch.get_num_threads()
    reference = embed(full)
    assert torch.get_num_threads() == before  # n_threads is restored after each call
    half = build_encoder(spec, cache=False, dtype="bfloat16")
    low = embed(half)
    assert low.dtype == np.float32 and low.shape == reference.shape
    cos = np.sum(_l2(low) * _l2(reference), axis=1)
    assert cos.min() > 0.98, cos
    assert half.identity("image" if name != "st" else "text")["dtype"] == "bfloat16"
    assert half.weights_digest == full.weights_digest  # the weights as loaded, before the cast
    with pytest.raises(ParameterError, match="'dtype' parameter of .* must be a str among"):
        build_encoder(spec, dtype="float8").dim
    if torch.cuda.is_available():
        np.testing.assert_allclose(embed(build_encoder(spec, cache=False, device="cuda")), reference, atol=1e-3)
    else:
        with pytest.raises(ParameterError, match="torch sees no CUDA device"):
            build_encoder(spec, device="cuda").dim
    for device, problem in [("tpu", "not a torch device"), ("meta", "a 'meta' device")]:
        with pytest.raises(ParameterError, match=f"'device' parameter of .*{problem}; the models run on 'cpu'"):
            build_encoder(spec, device=device).dim


def test_hf_text_vectors_are_keyed_by_the_tokenizer_and_the_library_versions(tmp_path, monkeypatch):
    # A model repository can change its tokenizer without its weights, and an upgrade of
    # transformers or tokenizers can tokenize otherwise: neither may be served the old vectors.
    from kcca_desc._core import provenance
    from kcca_desc.adapters.hf_models import HFEncoder

    need("hf")
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "cache"))
    directory = random_models.bert_dir(tmp_path / "bert")
    spec = "hf:" + str(directory)
    before = build_encoder(spec).embed_texts(TEXTS)
    config = directory / "tokenizer_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "model_max_length": 4}))
    served, fresh = build_encoder(spec).embed_texts(TEXTS), build_encoder(spec, cache=False).embed_texts(TEXTS)
    assert not np.allclose(before, fresh)
    np.testing.assert_array_equal(served, fresh)
    for distribution in ("transformers", "tokenizers", "torch"):
        monkeypatch.setattr(provenance, "library_version", lambda name, d=distribution, real=provenance.library_version:
                            "99.0" if name == d else real(name))
        forward = Forward(monkeypatch, HFEncoder)
        build_encoder(spec).embed_texts(TEXTS)
        assert forward.n > 0, distribution
