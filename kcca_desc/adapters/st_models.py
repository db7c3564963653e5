"""sentence-transformers caption encoders (optional extra ``sentence-transformers``).

:class:`SentenceTransformerEncoder` embeds texts with ``SentenceTransformer(name_or_path)``:
the model's own tokenizer, transformer and pooling modules (e.g. masked mean pooling then
L2 normalisation for all-MiniLM-L6-v2; Reimers & Gurevych 2019).  Texts only: bridge it to an
image encoder with CCA or KCCA (:class:`~kcca_desc.methods.FeatureBridgeMethod`).
"""

from __future__ import annotations

import numpy as np

from .._core.errors import ParameterError
from .hub import check_named, load_named
from .torch_base import TorchEncoder
from .torchvision_compat import import_torch_library, library_installed

__all__ = ["SentenceTransformerEncoder"]


class SentenceTransformerEncoder(TorchEncoder):
    """A sentence-transformers model's sentence embeddings, texts only.

    Parameters
    ----------
    model_name : str
        A local model directory, or a hub name (``"all-MiniLM-L6-v2"``,
        ``"sentence-transformers/all-mpnet-base-v2"``) that sentence-transformers downloads.
    weights : None
        The name is the weights; kept for the common signature.
    device, dtype, batch_size, n_threads, cache
        See :class:`~kcca_desc.adapters.torch_base.TorchEncoder`.

    References
    ----------
    Reimers, N. & Gurevych, I. (2019). Sentence-BERT: sentence embeddings using Siamese
    BERT-networks. EMNLP.
    """

    extra = "sentence-transformers"
    family = "st"
    modalities = ("text",)
    libraries = {"text": ("torch", "sentence-transformers", "transformers", "tokenizers")}

    def _load(self):
        st = import_torch_library("sentence_transformers", self.extra, type(self).__name__)
        if self.weights:
            raise ParameterError(f"SentenceTransformerEncoder takes its weights from the model name or directory; "
                             f"got weights={self.weights!r} (use st:{self.weights})")
        return load_named(self.name, self.family, self.model_name,
                          lambda: st.SentenceTransformer(self.model_name, device="cpu"), repos=self._repos())

    def _repos(self) -> list[str]:
        # sentence-transformers fetches a bare name from its own organisation when the name is not a repository.
        return [self.model_name] + ([f"sentence-transformers/{self.model_name}"] if "/" not in self.model_name else [])

    def check_source(self) -> None:
        if library_installed("sentence_transformers"):
            check_named(self.name, self.family, self.model_name, repos=self._repos())

    def _output_dims(self, bundle) -> dict[str, int]:
        return {"text": bundle.get_embedding_dimension()}

    def _tokenizer(self, bundle):
        return bundle.tokenizer

    def preprocessing(self) -> dict:
        # The module list (tokenizer limit, pooling, normalisation) as sentence-transformers prints it.
        return {"modules": repr(self.loaded), "max_seq_length": self.loaded.max_seq_length}

    def _encode_text_batch(self, texts: list[str]) -> np.ndarray:
        # One call per batch of ours: the model's own encode with batch_size covering it.
        with self.running():
            out = self.loaded.encode(texts, batch_size=len(texts), convert_to_tensor=True,
                                     show_progress_bar=False)
        return self.to_numpy(out)
