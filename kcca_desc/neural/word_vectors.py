"""Pre-trained word vectors for the embedding layer of a trainable model, from a sentence encoder.

Kiros et al. (2014, §2.2) initialise their word embeddings with 300-d vectors of a continuous
bag-of-words model (Mikolov et al. 2013) and keep them fixed.  No such vectors can be installed
offline, so :func:`word_vector_matrix` distils static ones from an offline sentence encoder the
way Model2Vec does (Tulkens & van Dongen 2024): each vocabulary word is embedded alone, the
vectors are reduced by PCA to the embedding's dimension, and scaled by one factor so that their
coordinates have the model's initial scale: unit mean variance, torch's default N(0, 1) embedding
initialisation, unless the model starts its weights smaller (Rei: N(0, 0.1)).
The geometry of the vectors is unchanged.

References
----------
Mikolov, T., Chen, K., Corrado, G. & Dean, J. (2013). Efficient estimation of word
representations in vector space. arXiv:1301.3781.

Tulkens, S. & van Dongen, T. (2024). Model2Vec: fast state-of-the-art static embeddings.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.decomposition import PCA

from .._core.errors import ParameterError, warn_user
from .._core.validation import ValidatedParams
from ..adapters.base import Encoder
from ..adapters.families import build_encoder
from ._torch import torch_module

__all__ = ["text_encoder", "word_vector_matrix", "PretrainedWordEmbeddings"]


def text_encoder(spec: str) -> Encoder:
    """The encoder of ``spec``, checked to embed texts (its package is imported, no model loaded)."""
    encoder = build_encoder(spec)
    if "text" not in encoder.modalities:
        raise ParameterError(f"word_vectors={spec!r} embeds no texts (modalities: {', '.join(encoder.modalities)})")
    return encoder


def word_vector_matrix(spec: str, vocabulary: dict[str, int], dim: int, *, scale: float = 1.0) -> np.ndarray:
    """Static word vectors of ``vocabulary`` from the text encoder ``spec``, one row per index.

    Parameters
    ----------
    spec : str
        Encoder spec of a text encoder (e.g. ``"onnx:minilm"``, see
        :func:`~kcca_desc.adapters.families.build_encoder`).
    vocabulary : dict of str to int
        Word -> row index; indices 0 (padding) and 1 (unknown) are reserved and stay zero.
    dim : int
        Dimension of the vectors: the leading ``dim`` principal components of the encoder's
        (all of them: a rotation of the centred vectors).  A vocabulary of fewer words spans
        fewer dimensions (a small training set): its ``len(vocabulary)`` components come first,
        and the other coordinates are zero, with a warning.
    scale : float, default=1.0
        Root mean square of the rows' coordinates (of the components, when some are zero).

    Returns
    -------
    ndarray of shape (max index + 1, dim), float32
        Row ``vocabulary[w]`` is ``s · PCA(e(w))`` with e the encoder and s the one factor that
        gives the rows' coordinates mean square ``scale ** 2``.

    Raises
    ------
    ValueError
        When ``spec`` embeds no texts, ``dim`` exceeds the encoder's dimension, ``scale`` is
        not positive, or the encoder gives every word the same vector.
    """
    encoder = text_encoder(spec)
    if not isinstance(dim, Integral) or not 1 <= dim <= encoder.dim["text"]:
        raise ParameterError(f"word_dim={dim!r}: word vectors from {spec!r} have at most "
                             f"{encoder.dim['text']} dimensions (the encoder's)")
    if not scale > 0:
        raise ParameterError(f"word vector scale must be positive, got {scale!r}")
    words = sorted(vocabulary, key=vocabulary.get)
    vectors = np.asarray(encoder.embed_texts(words), dtype=np.float64)
    if np.all(vectors == vectors[0]):
        raise ParameterError(f"word_vectors={spec!r} gives all {len(words)} words the same vector")
    components = min(dim, len(words))
    if components < dim:
        warn_user(f"word_dim={dim}: the {len(words)} words of the vocabulary span at most {len(words)} "
                  f"dimensions of the word vectors from {spec!r}; the other {dim - components} coordinates "
                  "start at zero")
    vectors = PCA(n_components=components, svd_solver="full").fit_transform(vectors)
    vectors *= scale / np.sqrt(np.mean(vectors ** 2))
    matrix = np.zeros((max(vocabulary.values(), default=1) + 1, dim), np.float32)
    matrix[[vocabulary[w] for w in words], :components] = vectors
    return matrix


class PretrainedWordEmbeddings(ValidatedParams):
    """Mixin of a trainable model whose network's ``embed`` may start from pre-trained word vectors.

    The model has the parameters ``word_vectors`` (an encoder spec, or None for random
    initialisation) and ``freeze_word_vectors``; its network must freeze ``embed`` itself when
    :attr:`_freeze_word_vectors` says so, so that a resumed or reloaded network is frozen too.
    """

    _parameter_constraints = {"word_vectors": [str, None], "freeze_word_vectors": ["boolean"]}

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.word_vectors is not None:
            text_encoder(self.word_vectors)  # a bad spec or a missing package fails before any training

    #: Root mean square of the pre-trained vectors' coordinates: torch's N(0, 1) embeddings.
    _word_vector_scale = 1.0

    @property
    def _freeze_word_vectors(self) -> bool:
        """Whether the network keeps ``embed`` fixed: pre-trained vectors asked to stay fixed."""
        return self.word_vectors is not None and self.freeze_word_vectors

    def _initialise_network(self, network) -> None:
        if self.word_vectors is None:
            return
        torch = torch_module()
        matrix = word_vector_matrix(self.word_vectors, self.vocabulary_, network.embed.embedding_dim,
                                    scale=self._word_vector_scale)
        with torch.no_grad():
            network.embed.weight.copy_(torch.from_numpy(matrix))
