"""Hugging Face ``transformers`` models (optional extra ``transformers``).

:class:`HFEncoder` loads ``AutoModel.from_pretrained(name_or_dir)`` and decides from the
model's configuration what it embeds:

* a dual encoder (a configuration with ``text_config`` and ``vision_config``: CLIP, SigLIP,
  ALIGN-style) embeds both, through ``get_text_features`` and ``get_image_features`` with the
  model's ``AutoTokenizer`` and ``AutoImageProcessor``; outputs are L2-normalised into one
  space (``joint_space``);
* a vision model (one with an image processor) embeds images: the class token (``"cls"``), the
  mean of the last hidden states (``"mean"``) or the model's ``pooler_output`` (``"pooler"``);
* any other model embeds texts with its tokenizer: masked mean pooling of the last hidden state,
  e(s) = Σ_t m_t h_t / Σ_t m_t (``"mean"``, Reimers & Gurevych 2019), or the first token
  (``"cls"``, Devlin et al. 2019).
"""

from __future__ import annotations

import numpy as np

from .._core.errors import ParameterError
from .hub import check_named, load_named
from .onnx_models import l2_normalize
from .torch_base import TorchEncoder, pooled_features, to_pil
from .torchvision_compat import import_torch_library, library_installed

__all__ = ["HFEncoder", "HF_POOLINGS"]


# Poolings of a single-modality model's output: (output, the tokenizer's inputs of a text batch or
# None for images, model name) -> (batch, width) tensor.
def _mean_pooling(out, inputs: dict | None, model_name: str):
    """The mean of the last hidden states: over a text's unmasked tokens, an image's tokens or map."""
    hidden = out.last_hidden_state
    if hidden.dim() == 4:  # a convolutional map (B, C, H, W): its spatial mean
        return hidden.flatten(2).mean(dim=2)
    if inputs is None:
        return hidden.mean(dim=1)
    mask = inputs["attention_mask"][:, :, None].to(hidden.dtype)
    return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)


def _cls_pooling(out, inputs: dict | None, model_name: str):
    """The first token's last hidden state (the class token)."""
    hidden = out.last_hidden_state
    if hidden.dim() == 4:
        raise ParameterError(f"HFEncoder: {model_name!r} is convolutional; it has no class token "
                             "(use pooling='mean' or 'pooler')")
    return hidden[:, 0]


def _pooler_pooling(out, inputs: dict | None, model_name: str):
    """The model's own ``pooler_output``, flattened (a convolutional model's is (B, C, 1, 1))."""
    return out.pooler_output.flatten(1)


_POOLINGS = {"mean": _mean_pooling, "cls": _cls_pooling, "pooler": _pooler_pooling}
#: Poolings of a single-modality model's last hidden states.
HF_POOLINGS = tuple(_POOLINGS)


class HFEncoder(TorchEncoder):
    """A ``transformers`` model: a dual image–text encoder, a vision model or a text model.

    Parameters
    ----------
    model_name : str
        A local model directory or a hub name (downloaded by ``transformers``).
    weights : None
        The name is the weights; kept for the common signature.
    pooling : {"mean", "cls", "pooler"} or None, default=None
        Pooling of a single-modality model's last hidden states; None: ``"mean"`` for a text
        model, ``"cls"`` for a vision model.  Dual encoders use their own projection heads.
    max_length : int or None, default=None
        Token limit (None: the tokenizer's, capped at the model's position embeddings).
    device, dtype, batch_size, n_threads, cache
        See :class:`~kcca_desc.adapters.torch_base.TorchEncoder`.

    References
    ----------
    Wolf, T. et al. (2020). Transformers: state-of-the-art natural language processing. EMNLP.

    Radford, A. et al. (2021). Learning transferable visual models from natural language
    supervision. ICML.

    Zhai, X. et al. (2023). Sigmoid loss for language image pre-training. ICCV.
    """

    extra = "transformers"
    family = "hf"
    # The image processors resize with Pillow, or with torchvision where it is installed (the fast ones).
    libraries = {"image": ("torch", "transformers", "torchvision", "pillow"),
                 "text": ("torch", "transformers", "tokenizers")}

    def __init__(self, model_name: str, weights: str | None = None, pooling: str | None = None,
                 max_length: int | None = None, device: str = "cpu", dtype: str = "float32",
                 batch_size: int = 32, n_threads: int | None = None, cache: bool = True):
        super().__init__(model_name, weights=weights, device=device, dtype=dtype, batch_size=batch_size,
                         n_threads=n_threads, cache=cache)
        self.pooling = pooling
        self.max_length = max_length

    # The kind of model is known once its configuration is read; until then both are possible.
    @property
    def kind(self) -> str:
        """``"dual"``, ``"vision"`` or ``"text"``."""
        return self.loaded["kind"]

    @property
    def joint_space(self) -> bool:
        return self.kind == "dual"

    @property
    def modalities(self) -> tuple[str, ...]:
        return {"dual": ("image", "text"), "vision": ("image",), "text": ("text",)}[self.kind]

    def _load(self):
        transformers = import_torch_library("transformers", self.extra, type(self).__name__)
        if self.weights:
            raise ParameterError(f"HFEncoder takes its weights from the model name or directory; "
                             f"got weights={self.weights!r} (use hf:{self.weights})")
        if self.pooling is not None and self.pooling not in HF_POOLINGS:
            raise ParameterError(f"HFEncoder: pooling must be one of {HF_POOLINGS} or None, got {self.pooling!r}")
        return load_named(self.name, self.family, self.model_name, lambda: self._bundle(transformers))

    def check_source(self) -> None:
        if library_installed("transformers"):
            check_named(self.name, self.family, self.model_name)

    def _bundle(self, transformers) -> dict:
        """The model, its configuration and its tokenizer and/or image processor, by kind."""
        config = transformers.AutoConfig.from_pretrained(self.model_name)
        model = transformers.AutoModel.from_pretrained(self.model_name)
        bundle = {"model": model, "config": config}
        if hasattr(config, "text_config") and hasattr(config, "vision_config"):
            if self.pooling is not None:
                raise ParameterError(f"HFEncoder: {self.model_name!r} is a dual encoder whose projection heads pool; "
                                 f"drop pooling={self.pooling!r}")
            bundle.update(kind="dual", tokenizer=transformers.AutoTokenizer.from_pretrained(self.model_name),
                          image_processor=transformers.AutoImageProcessor.from_pretrained(self.model_name))
        else:
            try:
                processor = transformers.AutoImageProcessor.from_pretrained(self.model_name)
            except (OSError, ValueError):
                processor = None
            if processor is not None:
                bundle.update(kind="vision", image_processor=processor)
            else:
                bundle.update(kind="text", tokenizer=transformers.AutoTokenizer.from_pretrained(self.model_name))
        return bundle

    def _model_module(self, bundle):
        return bundle["model"]

    def _tokenizer(self, bundle):
        return bundle.get("tokenizer")

    def _output_dims(self, bundle) -> dict[str, int]:
        config = bundle["config"]
        if bundle["kind"] == "dual":
            d = getattr(config, "projection_dim", None) or config.text_config.hidden_size
            return {"image": d, "text": d}
        # Convolutional models list one width per stage: the last is the output's.
        width = getattr(config, "hidden_size", None) or config.hidden_sizes[-1]
        return {"image" if bundle["kind"] == "vision" else "text": width}

    @property
    def _pooling(self) -> str:
        return self.pooling or ("cls" if self.kind == "vision" else "mean")

    def text_preprocessing(self) -> dict:
        """The token limit applied and the padding (the limit None sets is the tokenizer's and model's)."""
        tokenizer, config = self.loaded["tokenizer"], self.loaded["config"]
        text_config = getattr(config, "text_config", config)
        limit = self.max_length or min(tokenizer.model_max_length,
                                       getattr(text_config, "max_position_embeddings", tokenizer.model_max_length))
        # SigLIP was trained on texts padded to its full length; CLIP and BERT-style models pad to the batch.
        padding = "max_length" if config.model_type.startswith("siglip") else True
        return {"max_length": limit, "padding": padding}

    def _text_inputs(self, texts: list[str]) -> dict:
        encoded = self.loaded["tokenizer"](texts, truncation=True, return_tensors="pt", **self.text_preprocessing())
        return {k: self.to_device(v) for k, v in encoded.items()}

    def preprocessing(self) -> dict:
        bundle = self.loaded
        out = {"kind": bundle["kind"], "max_length": self.max_length}
        if bundle["kind"] != "dual":
            out["pooling"] = self._pooling
        if "image_processor" in bundle:
            out["image_processor"] = bundle["image_processor"].to_dict()
        if "tokenizer" in bundle:
            out["tokenizer"] = type(bundle["tokenizer"]).__name__
        return out

    def _encode_image_batch(self, arrays: list[np.ndarray]) -> np.ndarray:
        bundle = self.loaded
        pixels = bundle["image_processor"]([to_pil(a) for a in arrays], return_tensors="pt")["pixel_values"]
        pixels = self.to_device(pixels, cast=True)
        with self.running():
            if bundle["kind"] == "dual":
                return l2_normalize(self.to_numpy(pooled_features(
                    bundle["model"].get_image_features(pixel_values=pixels))))
            out = bundle["model"](pixel_values=pixels)
            return self.to_numpy(_POOLINGS[self._pooling](out, None, self.model_name))

    def _encode_text_batch(self, texts: list[str]) -> np.ndarray:
        bundle = self.loaded
        inputs = self._text_inputs(texts)
        with self.running():
            if bundle["kind"] == "dual":
                return l2_normalize(self.to_numpy(pooled_features(bundle["model"].get_text_features(**inputs))))
            out = bundle["model"](**inputs)
            return self.to_numpy(_POOLINGS[self._pooling](out, inputs, self.model_name))
