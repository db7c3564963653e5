"""Shared machinery of the PyTorch adapters (open_clip, sentence-transformers, transformers, timm).

:class:`TorchEncoder` is the :class:`~kcca_desc.adapters.Encoder` of a model loaded by a
library: it loads the model once on first use, on ``device`` and in ``dtype``, runs each batch
under :func:`torch.inference_mode` on ``n_threads`` threads, and keys the embedding cache by the
library, the model name, the weights named (a tag, a local file or a hub name) *and* a SHA-256
of the loaded state dict, so that replaced weights under the same name can never return stale
vectors.  Subclasses implement :meth:`TorchEncoder._load` and the batch hooks, and hand images to
the model's own preprocessing as RGB :class:`PIL.Image.Image` objects (:func:`to_pil`).

Each library is an optional extra; a missing one raises an :class:`ImportError` naming the extra
(:func:`~kcca_desc._core.errors.import_optional`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .._core.errors import DataError, ParameterError, import_optional
from .._core.validation import StrOptions, invalid_parameter, raise_together
from .base import Encoder
from .hub import is_hub_id

__all__ = ["TorchEncoder", "to_pil", "state_dict_digest", "tokenizer_digest", "pooled_features", "torch_threads",
           "torch_device_errors", "TORCH_DTYPES", "RANDOM_WEIGHTS"]

logger = logging.getLogger(__name__)

#: The weights name that asks for a randomly initialised model (tests, smoke runs).
RANDOM_WEIGHTS = "random"

#: The ``dtype`` names the adapters accept.
TORCH_DTYPES = ("float32", "float16", "bfloat16")


def to_pil(image: np.ndarray):
    """An ``(H, W)``, ``(H, W, 3)`` or ``(H, W, 4)`` array as an 8-bit RGB :class:`PIL.Image.Image`.

    ``uint16`` is scaled by 255/65535, floats are taken in [0, 1]; an alpha channel is dropped.
    """
    from PIL import Image

    a = np.asarray(image)
    if a.ndim == 2:
        a = np.repeat(a[:, :, None], 3, axis=2)
    if a.ndim != 3 or a.shape[2] not in (3, 4) or min(a.shape[:2]) < 1:
        raise DataError(f"expected an (H, W), (H, W, 3) or (H, W, 4) image, got shape {a.shape}")
    a = a[:, :, :3]
    if a.dtype == np.uint16:
        a = (a.astype(np.float32) * (255.0 / 65535.0)).round()
    elif np.issubdtype(a.dtype, np.floating):
        a = np.clip(a, 0.0, 1.0) * 255.0
    elif a.dtype != np.uint8:
        raise DataError(f"unsupported image dtype {a.dtype}")
    return Image.fromarray(np.ascontiguousarray(a.astype(np.uint8, copy=False)))


def state_dict_digest(module) -> str:
    """SHA-256 of a torch module's state dict: every tensor's name, dtype, shape and bytes."""
    import torch

    h = hashlib.sha256()
    for name, tensor in sorted(module.state_dict().items()):
        t = tensor.detach().to("cpu").contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        # A uint8 view hashes every dtype (bfloat16 has no NumPy counterpart).
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def tokenizer_digest(tokenizer) -> str | None:
    """SHA-256 of what a Hugging Face tokenizer makes of a text; None for no tokenizer.

    A fast tokenizer by its whole definition (vocabulary, merges, normaliser, pre-tokeniser,
    post-processor) as ``tokenizers`` writes it, another by its vocabulary; both with their class,
    special tokens and ``model_max_length``.  The weights digest does not cover these files, which
    a model repository can change alone.  The backend's truncation and padding are left out: each
    call sets them from its arguments, which the encoders key apart.
    """
    if tokenizer is None:
        return None
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        spec = json.loads(backend.to_str())
        spec.pop("truncation", None)
        spec.pop("padding", None)
    else:
        spec = {"vocab": sorted(tokenizer.get_vocab().items())}
    spec.update(type=type(tokenizer).__name__, special_tokens=getattr(tokenizer, "special_tokens_map", None),
                model_max_length=getattr(tokenizer, "model_max_length", None))
    return hashlib.sha256(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()


def _torch_device_problem(torch, device: str) -> str | None:
    """Why the toolkit cannot run torch on ``device`` on this machine; None if it can."""
    # torch's own message lists every device kind it knows, most of which the models cannot use.
    try:
        kind = torch.device(device).type
    except (RuntimeError, TypeError):
        return "not a torch device; the models run on 'cpu' or 'cuda[:N]'"
    if kind not in ("cpu", "cuda"):
        return f"a {kind!r} device; the models run on 'cpu' or 'cuda[:N]'"
    return "torch sees no CUDA device" if kind == "cuda" and not torch.cuda.is_available() else None


def torch_device_errors(owner: Any, torch, device: str) -> list:
    """The error of ``owner``'s ``device`` parameter when torch cannot run there; none if it can.

    The models run on ``"cpu"``, ``"cuda"`` or ``"cuda:N"``: another name, another kind of
    device (``"mps"``, ``"meta"``) or CUDA without a GPU is an error.
    """
    problem = _torch_device_problem(torch, device)
    if problem is None:
        return []
    return [invalid_parameter(owner, "device", f"a torch device of this machine ({problem})", device)]


@contextlib.contextmanager
def torch_threads(torch, n_threads: int | None) -> Iterator[None]:
    """torch's intra-op thread count set to ``n_threads`` for the duration, then restored.

    torch's thread count is global to the process: a model that set it and left it would slow
    (or oversubscribe) every later torch call of its caller.  ``None`` leaves it as it is.
    """
    if n_threads is None:
        yield
        return
    if n_threads < 1:
        raise ParameterError(f"n_threads must be >= 1 or None, got {n_threads}")
    before = torch.get_num_threads()
    torch.set_num_threads(n_threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class TorchEncoder(Encoder):
    """An encoder whose model a PyTorch library loads.

    Parameters
    ----------
    model_name : str
        The library's model name, hub name or local directory.
    weights : str or None
        What the library loads into the model (a tag, a local file, ``"random"``), where the
        family takes it separately from the name.
    device : str, default="cpu"
        ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.
    dtype : {"float32", "float16", "bfloat16"}, default="float32"
        Weights and image inputs are cast to it; embeddings come back as float32.
    batch_size : int, default=32
    n_threads : int or None, default=None
        torch intra-op threads while this encoder runs (None: torch's setting).
    cache : bool, default=True

    Notes
    -----
    The cache identity holds ``dtype`` but not ``device``: the two devices differ in the last
    bits of a float32 result, far below what any retrieval figure can see, and the cache is
    meant to be shared between them.  It holds the versions of torch and of the family's
    libraries (:attr:`~kcca_desc.adapters.Encoder.libraries`), and the text vectors' holds the
    tokenizer's digest (:func:`tokenizer_digest`), not the thread count or batch size.
    """

    _parameter_constraints: ClassVar[dict] = {**Encoder._parameter_constraints,
                                              "dtype": [StrOptions(set(TORCH_DTYPES))]}
    #: The optional extra (setup.cfg) that provides the library.
    extra: str = "torch"
    #: The family name of encoder specs (``family:model@weights``).
    family: str = "torch"
    libraries: ClassVar[dict[str, tuple[str, ...]]] = {"image": ("torch",), "text": ("torch",)}

    def __init__(self, model_name: str, weights: str | None = None, device: str = "cpu",
                 dtype: str = "float32", batch_size: int = 32, n_threads: int | None = None,
                 cache: bool = True):
        super().__init__(batch_size=batch_size, cache=cache)
        self.model_name = model_name
        self.weights = weights
        self.device = device
        self.dtype = dtype
        self.n_threads = n_threads

    @property
    def name(self) -> str:
        return f"{self.family}:{self.model_name}" + (f"@{self.weights}" if self.weights else "")

    @property
    def label(self) -> str:
        """:attr:`name` with a model or weights given by path shortened to its file or folder name."""
        def short(spec: str) -> str:
            # A local folder or file (even one spelt like a hub id, "models/x") by its own name.
            return spec if is_hub_id(spec) and not Path(spec).exists() else Path(spec).name
        return f"{self.family}:{short(self.model_name)}" + (f"@{short(self.weights)}" if self.weights else "")

    def _validate_params(self) -> None:
        """Check batch size, threads and dtype, and that torch has ``device`` here, all together.

        Imports torch (a missing extra is an :class:`ImportError` naming it), so that a device
        this machine lacks is found with the other settings before any data is read, not when
        the model first loads.
        """
        raise_together(self._constraint_errors() + torch_device_errors(self, self._torch(), self.device))

    # ------------------------------------------------------------ loading
    def _torch(self):
        return import_optional("torch", self.extra, type(self).__name__)

    def _load(self) -> Any:
        """Load the model (float32, CPU) and whatever preprocessing it needs; return a bundle."""
        raise NotImplementedError

    def check_source(self) -> None:
        """Raise before any work when the model cannot be had (a hub id offline); by default no check.

        Called when the encoder is built from a spec (:func:`~kcca_desc.adapters.families.build_encoder`),
        so a command stops before it encodes anything; it must not import the library.
        """

    def _model_module(self, bundle) -> Any:
        """The ``torch.nn.Module`` of ``bundle`` whose state dict identifies the weights."""
        return bundle

    def _tokenizer(self, bundle) -> Any:
        """The Hugging Face tokenizer of ``bundle`` (:func:`tokenizer_digest`), or None."""
        return None

    @property
    def loaded(self):
        """The bundle of :meth:`_load`, moved to ``device`` and ``dtype`` (loaded once per setting)."""
        key = (self.model_name, self.weights, self.device, self.dtype)
        if self.__dict__.get("_loaded_key") != key:
            self._validate_params()
            torch = self._torch()
            device = torch.device(self.device)
            # Random weights are drawn from a fixed seed, so that a random model is the same model
            # (and hits the same cache entries) in every run; torch's global generator is left as it was.
            with torch_threads(torch, self.n_threads), torch.random.fork_rng(devices=[]), third_party_bars_off():
                torch.manual_seed(0)
                bundle = self._load()
            module = self._model_module(bundle)
            digest = state_dict_digest(module)
            module.to(device=device, dtype=getattr(torch, self.dtype)).eval()
            self.__dict__.update(_bundle=bundle, _weights_digest=digest, _dims=self._output_dims(bundle),
                                 _tokenizer_digest=tokenizer_digest(self._tokenizer(bundle)), _loaded_key=key)
        return self.__dict__["_bundle"]

    @property
    def weights_digest(self) -> str:
        """SHA-256 of the model's float32 state dict as loaded (before the cast to ``dtype``)."""
        self.loaded
        return self.__dict__["_weights_digest"]

    def preprocessing(self) -> dict:
        """The preprocessing settings that determine the vectors (part of the cache identity)."""
        return {}

    def text_preprocessing(self) -> dict:
        """The tokenizer settings that determine the text vectors, beyond :meth:`preprocessing`."""
        return {}

    def identity(self, modality: str) -> dict:
        identity = {**super().identity(modality), "family": self.family, "model": self.model_name,
                    "weights": self.weights, "weights_sha256": self.weights_digest, "dtype": self.dtype,
                    "preprocessing": self.preprocessing()}
        if modality == "text":
            # The text vectors only: a tokenizer changed alone keeps the image vectors.
            digest = self.__dict__["_tokenizer_digest"]
            tokenizer = {**self.text_preprocessing(), **({} if digest is None else {"sha256": digest})}
            if tokenizer:
                identity["tokenizer"] = tokenizer
        return identity

    # ------------------------------------------------------------ running
    @contextlib.contextmanager
    def running(self):
        """Inference mode on ``n_threads`` threads: the context of every forward pass."""
        torch = self._torch()
        with torch_threads(torch, self.n_threads), torch.inference_mode(), third_party_bars_off():
            yield

    def to_device(self, tensor, cast: bool = False):
        """``tensor`` on the model's device; floating inputs cast to ``dtype`` when ``cast``."""
        torch = self._torch()
        return tensor.to(self.device, dtype=getattr(torch, self.dtype)) if cast else tensor.to(self.device)

    @staticmethod
    def to_numpy(tensor) -> np.ndarray:
        return tensor.detach().float().cpu().numpy()

    def _output_dims(self, bundle) -> dict[str, int]:
        """Output dimension per modality of the loaded model."""
        raise NotImplementedError

    @property
    def dim(self) -> dict[str, int]:
        self.loaded
        return self.__dict__["_dims"]


@contextlib.contextmanager
def third_party_bars_off() -> Iterator[None]:
    """Switch off the encoder libraries' own progress bars for the duration, then restore them.

    The Hugging Face Hub's download bars and transformers' weight-loading bars (which
    sentence-transformers, open_clip and timm go through) would draw under the toolkit's own
    progress (:mod:`kcca_desc._core.progress`), which reports the step already.  A library that
    is not installed has no bar to switch off.
    """
    restore = []
    with contextlib.suppress(ImportError):
        from huggingface_hub import utils as hub

        if not hub.are_progress_bars_disabled():
            hub.disable_progress_bars()
            restore.append(hub.enable_progress_bars)
    # transformers is slow to import: switched off here only when loaded already; a first import
    # inside (a model being loaded) takes its setting from the Hub's, switched off above.
    transformers_loaded = "transformers" in sys.modules
    hf_logging = sys.modules.get("transformers.utils.logging")
    if hf_logging is not None and hf_logging.is_progress_bar_enabled():
        hf_logging.disable_progress_bar()
        restore.append(hf_logging.enable_progress_bar)
    try:
        yield
    finally:
        hf_logging = sys.modules.get("transformers.utils.logging")
        if restore and not transformers_loaded and hf_logging is not None:
            restore.append(hf_logging.enable_progress_bar)
        for enable in restore:
            enable()


def pooled_features(output) -> Any:
    """The feature tensor of a ``get_*_features`` call: a tensor, or an output's ``pooler_output``.

    transformers 5 returns a model output whose ``pooler_output`` is the projected feature where
    version 4 returned the tensor itself.
    """
    return output if hasattr(output, "shape") else output.pooler_output
