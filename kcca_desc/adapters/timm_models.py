"""timm image backbones (optional extra ``timm``).

:class:`TimmImageEncoder` builds ``timm.create_model(name, num_classes=0)`` — the backbone
with its own global pooling and no classifier — and embeds images through the model's own
evaluation transform (``timm.data.resolve_data_config`` then ``timm.data.create_transform``).
Images only: bridge it to a text encoder with CCA or KCCA
(:class:`~kcca_desc.methods.FeatureBridgeMethod`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._core.errors import MissingModelFileError, ParameterError
from .hub import hub_model, repo_cached
from .torch_base import RANDOM_WEIGHTS, TorchEncoder, logger, to_pil
from .torchvision_compat import import_torch_library

__all__ = ["TimmImageEncoder", "HUB_WEIGHTS"]

#: The weights name that asks timm for the model's default pretrained weights from the hub.
HUB_WEIGHTS = "pretrained"


class TimmImageEncoder(TorchEncoder):
    """A timm backbone's pooled features (``num_classes=0``), images only.

    Parameters
    ----------
    model_name : str
        A timm model name (``timm.list_models()``), optionally with a pretrained tag,
        e.g. ``"vit_small_patch14_dinov2.lvd142m"``.
    weights : str
        A local weights file (``.safetensors``, ``.pth``, ``.bin``; loaded through timm's own
        pretrained-weights path, which adapts the checkpoint and drops its classifier),
        ``"pretrained"`` for timm's default weights from the hub, or ``"random"``.
    device, dtype, batch_size, n_threads, cache
        See :class:`~kcca_desc.adapters.torch_base.TorchEncoder`.

    References
    ----------
    Wightman, R. (2019). PyTorch Image Models. https://github.com/huggingface/pytorch-image-models
    """

    extra = "timm"
    family = "timm"
    modalities = ("image",)
    # timm's evaluation transform: torchvision transforms on Pillow images.
    libraries = {"image": ("torch", "timm", "torchvision", "pillow")}

    def _load(self):
        timm = import_torch_library("timm", self.extra, type(self).__name__)
        if not self.weights:
            raise ParameterError(f"TimmImageEncoder({self.model_name!r}) needs weights: a local weights file, "
                             f"{HUB_WEIGHTS!r} (timm's default weights from the hub) or {RANDOM_WEIGHTS!r}")
        if not timm.is_model(self.model_name):
            raise ParameterError(f"timm has no model {self.model_name!r}; see timm.list_models(), e.g. resnet50")
        if self.weights == RANDOM_WEIGHTS:
            logger.warning("timm model %s is randomly initialised", self.model_name)
            model = timm.create_model(self.model_name, pretrained=False, num_classes=0)
        elif self.weights == HUB_WEIGHTS:
            cfg = timm.models.get_pretrained_cfg(self.model_name)
            repo = getattr(cfg, "hf_hub_id", None) or ""
            url = getattr(cfg, "url", None) or ""
            if not (repo or url):
                raise ParameterError(f"timm has no pretrained weights for {self.model_name!r}; give a local "
                                     "weights file or 'random'")
            # Weights without a hub repository are downloaded from their URL into torch's hub cache.
            torch = self._torch()
            cached = repo_cached(repo) if repo else (
                Path(torch.hub.get_dir()) / "checkpoints" / Path(url).name).is_file()
            with hub_model(self.name, repo or url, cached=cached,
                           local=f"timm:{self.model_name}@/path/to/weights.safetensors"):
                model = timm.create_model(self.model_name, pretrained=True, num_classes=0)
        else:
            path = Path(self.weights).expanduser()
            if not path.is_file():
                raise MissingModelFileError(f"TimmImageEncoder: weights file not found: {path}")
            # custom_load off: some default tags (ViT augreg) load the original JAX .npz format
            # with the model's own loader, which refuses a .safetensors or .pth file.
            model = timm.create_model(self.model_name, pretrained=True, num_classes=0,
                                      pretrained_cfg_overlay={"file": str(path), "custom_load": False})
        config = timm.data.resolve_data_config({}, model=model)
        return model, config, timm.data.create_transform(**config, is_training=False)

    def _model_module(self, bundle):
        return bundle[0]

    def _output_dims(self, bundle) -> dict[str, int]:
        return {"image": bundle[0].num_features}

    def preprocessing(self) -> dict:
        return {"data_config": {k: list(v) if isinstance(v, tuple) else v for k, v in self.loaded[1].items()}}

    def _encode_image_batch(self, arrays: list[np.ndarray]) -> np.ndarray:
        model, _, transform = self.loaded
        torch = self._torch()
        batch = torch.stack([transform(to_pil(a)) for a in arrays])
        with self.running():
            return self.to_numpy(model(self.to_device(batch, cast=True)))
