"""OpenCLIP two-tower models (optional extra ``open-clip``).

:class:`OpenCLIPEncoder` loads ``open_clip.create_model_and_transforms(name, pretrained=...)``
and embeds images through the model's own evaluation transform and texts through
``open_clip.get_tokenizer(name)``; both towers' outputs are L2-normalised into one space
(``joint_space``), so :class:`~kcca_desc.methods.EncoderMethod` over it is zero-shot CLIP
retrieval, f(i, s) = cos(e(i), e(s)) (Radford et al. 2021; Cherti et al. 2023).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .._core.errors import ParameterError
from .hub import hub_model, repo_cached
from .torch_base import RANDOM_WEIGHTS, TorchEncoder, logger, to_pil
from .torchvision_compat import import_torch_library

__all__ = ["OpenCLIPEncoder"]


class OpenCLIPEncoder(TorchEncoder):
    """An OpenCLIP model (CLIP, SigLIP, EVA-CLIP, ...) as a joint image–text encoder.

    Parameters
    ----------
    model_name : str
        An OpenCLIP architecture (``open_clip.list_models()``), e.g. ``"ViT-B-32"``.
    weights : str
        A pretrained tag of that architecture (``open_clip.list_pretrained()``, downloaded by
        OpenCLIP or found in its cache: see :mod:`~kcca_desc.adapters.hub`), a local checkpoint
        file, or ``"random"`` for random initialisation.
    device, dtype, batch_size, n_threads, cache
        See :class:`~kcca_desc.adapters.torch_base.TorchEncoder`.

    References
    ----------
    Radford, A. et al. (2021). Learning transferable visual models from natural language
    supervision. ICML.

    Cherti, M. et al. (2023). Reproducible scaling laws for contrastive language-image learning.
    CVPR.
    """

    extra = "open-clip"
    family = "open_clip"
    joint_space = True
    modalities = ("image", "text")
    # Its tokenizers clean texts with ftfy; see library_names for those that wrap a transformers one.
    libraries = {"image": ("torch", "open-clip-torch", "torchvision", "pillow"),
                 "text": ("torch", "open-clip-torch", "ftfy")}

    def _library(self):
        return import_torch_library("open_clip", self.extra, type(self).__name__)

    def _load(self):
        open_clip = self._library()
        if not self.weights:
            raise ParameterError(f"OpenCLIPEncoder({self.model_name!r}) needs weights: a pretrained tag such as "
                             "'laion2b_s34b_b79k', a local checkpoint file, or 'random'")
        if self.model_name not in open_clip.list_models():
            raise ParameterError(f"OpenCLIP has no architecture {self.model_name!r}; see open_clip.list_models(), "
                                 "e.g. ViT-B-32")

        def create(pretrained):
            model, _, preprocess = open_clip.create_model_and_transforms(self.model_name, pretrained=pretrained)
            return model, preprocess, open_clip.get_tokenizer(self.model_name)

        if self.weights == RANDOM_WEIGHTS:
            logger.warning("OpenCLIP model %s is randomly initialised", self.model_name)
            return create(None)
        if Path(self.weights).expanduser().is_file():
            return create(str(Path(self.weights).expanduser()))
        cfg = open_clip.get_pretrained_cfg(self.model_name, self.weights)
        if not cfg:
            tags = open_clip.list_pretrained_tags_by_model(self.model_name)
            raise ParameterError(f"OpenCLIP has no pretrained tag {self.weights!r} for {self.model_name} and no "
                                 f"such file exists; its tags: {', '.join(tags) or 'none'}")
        # open_clip prefers the hub ("org/repo/" or "org/repo/file") and else downloads the URL to ~/.cache/clip.
        repo = os.path.dirname(cfg.get("hf_hub", "")).strip("/")
        url = cfg.get("url", "")
        cached = repo_cached(repo) if repo else (Path("~/.cache/clip").expanduser() / os.path.basename(url)).is_file()
        with hub_model(self.name, repo or url, cached=cached,
                       local=f"open_clip:{self.model_name}@/path/to/open_clip_model.safetensors"):
            return create(self.weights)

    def _model_module(self, bundle):
        return bundle[0]

    def _tokenizer(self, bundle):
        # HFTokenizer and SigLipTokenizer wrap a transformers tokenizer; SimpleTokenizer's BPE
        # vocabulary ships with open_clip (its version is keyed).
        return getattr(bundle[2], "tokenizer", None)

    def library_names(self, modality: str) -> tuple[str, ...]:
        names = super().library_names(modality)
        if modality == "text" and self._tokenizer(self.loaded) is not None:
            names += ("transformers", "tokenizers")
        return names

    def _output_dims(self, bundle) -> dict[str, int]:
        d = self._library().get_model_config(self.model_name)["embed_dim"]
        return {"image": d, "text": d}

    def preprocessing(self) -> dict:
        # The evaluation transform's repr names its resize, crop, interpolation, mean and std.
        return {"image": repr(self.loaded[1]), "tokenizer": type(self.loaded[2]).__name__,
                "context_length": getattr(self.loaded[2], "context_length", None), "normalize": True}

    def _encode_image_batch(self, arrays: list[np.ndarray]) -> np.ndarray:
        model, preprocess, _ = self.loaded
        torch = self._torch()
        batch = torch.stack([preprocess(to_pil(a)) for a in arrays])
        with self.running():
            return self.to_numpy(model.encode_image(self.to_device(batch, cast=True), normalize=True))

    def _encode_text_batch(self, texts: list[str]) -> np.ndarray:
        model, _, tokenizer = self.loaded
        with self.running():
            return self.to_numpy(model.encode_text(self.to_device(tokenizer(texts)), normalize=True))
