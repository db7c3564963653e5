"""Rei (2017) gated relevance scorer: a cross-conditioned image–text model."""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Real
from types import MappingProxyType
from typing import Any, Literal, Sequence

import numpy as np

from ..data.images import ImageSource, require_image_source
from .._core.validation import POSITIVE_INT, POSITIVE_REAL, Interval, StrOptions
from ..adapters.base import Encoder, PairScorer, check_texts
from .losses import hinge_loss, softmax_cross_entropy_loss
from ._torch import torch_module
from .training import TrainableModel, word_tokens
from .word_vectors import PretrainedWordEmbeddings

__all__ = ["ReiRelevanceScorer", "REI_ABLATION"]

#: The paper's ablation (Rei 2017, Table 3), each step adding to the one before;
#: read-only, as the trainable systems' settings built from it.
REI_ABLATION: Mapping[str, Mapping[str, Any]] = MappingProxyType({name: MappingProxyType(step) for name, step in {
    "baseline": {"dropout": 0.0, "gating": False, "loss": "hinge"},   # LSTM-COS (Kiros et al. 2014)
    "+dropout": {"dropout": 0.5, "gating": False, "loss": "hinge"},
    "+gating": {"dropout": 0.5, "gating": True, "loss": "hinge"},
    "+softmax": {"dropout": 0.5, "gating": True, "loss": "softmax"},  # the full model
}.items()})

#: Texts encoded per forward pass when scoring.
_TEXT_CHUNK = 512


def _network(vocabulary_size: int, feature_dim: int, word_dim: int, hidden_dim: int, dropout: float,
             gating: bool, cosine: bool, init_std: float, freeze_words: bool):
    torch = torch_module()

    class ReiNetwork(torch.nn.Module):
        """u = LSTM(dropout(w_1..N)); z = σ(u W_z + b_z); v = tanh((z ∗ dropout(x)) W_x); s = u·v."""

        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(vocabulary_size, word_dim, padding_idx=0)
            self.word_dropout = torch.nn.Dropout(dropout)
            self.lstm = torch.nn.LSTM(word_dim, hidden_dim, batch_first=True)
            self.image_dropout = torch.nn.Dropout(dropout)
            self.gate_layer = torch.nn.Linear(hidden_dim, feature_dim) if gating else None
            self.image = torch.nn.Linear(feature_dim, hidden_dim, bias=False)  # W_x
            # "All other parameters were initialised with random values from a normal
            # distribution with mean 0 and standard deviation 0.1" (§3).
            for p in self.parameters():
                torch.nn.init.normal_(p, 0.0, init_std)
            with torch.no_grad():
                self.embed.weight[0].zero_()
            self.embed.weight.requires_grad_(not freeze_words)

        def encode_text(self, ids, lengths):
            packed = torch.nn.utils.rnn.pack_padded_sequence(self.word_dropout(self.embed(ids)), lengths,
                                                             batch_first=True, enforce_sorted=False)
            _, (hidden, _) = self.lstm(packed)
            return hidden[-1]

        def gate(self, u):
            """z = σ(u W_z + b_z), with no gradient back into u (§2.2: W_z, b_z learn the gating)."""
            return torch.sigmoid(self.gate_layer(u.detach()))

        def scores(self, x, u):
            """(n_images, n_texts) scores of dropped-out features ``x`` against sentence vectors ``u``."""
            x = self.image_dropout(x)
            if self.gate_layer is None:
                v = torch.tanh(self.image(x))                                   # (I, h)
                if cosine:
                    return torch.nn.functional.normalize(v, dim=1) @ torch.nn.functional.normalize(u, dim=1).T
                return v @ u.T
            gated = x[:, None, :] * self.gate(u)[None, :, :]                     # (I, T, d): x' = z ∗ x
            v = torch.tanh(self.image(gated))                                   # (I, T, h)
            if cosine:
                v = torch.nn.functional.normalize(v, dim=2)
                u = torch.nn.functional.normalize(u, dim=1)
            return (v * u[None, :, :]).sum(dim=2)

    return ReiNetwork()


class ReiRelevanceScorer(PretrainedWordEmbeddings, TrainableModel, PairScorer):
    """Rei (2017) relevance scorer of (image, text) pairs.

    u = h_N of an LSTM over word embeddings with dropout p (the sentence, with start and end
    markers; the embeddings may start from pre-trained word vectors, ``word_vectors``, as the
    paper's start from CBOW vectors, §3); x = the frozen image features with dropout p;
    z = σ(u W_z + b_z), the gradient from z to u stopped; x′ = z ∗ x; v = tanh(x′ W_x).  The
    full model scores s(u, v) = u·v and minimises the softmax cross-entropy of each image's
    caption among the batch's captions (§2.3, eqs. 8–11); the baseline (LSTM-COS, after Kiros
    et al. 2014) scores cos(u, v) with the hinge loss of eq. 7 (each image against the batch's
    wrong captions).  Because v depends on the text, scoring is cross-conditioned: :meth:`score`
    computes it in blocks of at most ``max_block_elements`` numbers, so a 1,000 × 5,000 pool fits
    in bounded memory.

    Parameters
    ----------
    image_encoder : Encoder, optional
        Frozen image features (default EfficientNet-Lite0's 1,280-d; the paper: GoogLeNet's
        1,024-d penultimate layer).
    word_dim : int, default=300
    word_vectors : str or None, default=None
        Encoder spec of a text encoder (e.g. ``"onnx:minilm"``) whose embedding of each
        vocabulary word alone, reduced by PCA to ``word_dim`` and scaled to coordinates of root
        mean square ``word_vector_scale``, initialises the word embeddings
        (:func:`~.word_vectors.word_vector_matrix`; the paper starts from 300-d CBOW vectors of
        Mikolov et al. 2013, which cannot be had offline); None: N(0, ``init_std``).
    freeze_word_vectors : bool, default=False
        Keep pre-trained word vectors fixed (the paper initialises with them and trains on).
    word_vector_scale : float or None, default=None
        Root mean square of the pre-trained vectors' coordinates; None: ``init_std``, the scale
        of every other initial weight (on Flickr8K dev well ahead of unit scale, at which the
        inputs saturate the LSTM's N(0, ``init_std``) weights, and of fixed vectors).
    hidden_dim : int, default=300
        LSTM units = dimension of u and v.
    min_count : int, default=2
        Words seen fewer times in training map to the unknown token (the paper's vocabulary).
    dropout : float, default=0.5
        p of the dropout on word embeddings and image vectors (0: none).
    gating : bool, default=True
    loss : {"softmax", "hinge"}, default="softmax"
        "softmax": dot-product scores, softmax cross-entropy; "hinge": cosine scores, hinge
        loss with ``margin`` (the paper ties each loss to its score, §2.3).
    margin : float, default=0.2
    init_std : float, default=0.1
    lr : float, default=1e-3
    batch_size : int, default=32
    length_window : int or None, default=None
        As :class:`~.vse.VSEEncoder`.
    max_epochs : int, default=30
        The paper trains 300 epochs and keeps the dev-best; we stop on dev ``patience``.
    patience : int or None, default=5
    grad_clip : float or None, default=None
    max_block_elements : int, default=2**23
        Largest (images × texts × dimension) block held while scoring.
    max_train_seconds, n_threads, checkpoint, device, random_state
        As :class:`~.vse.VSEEncoder`.

    Notes
    -----
    :data:`REI_ABLATION` lists the paper's ablation steps as parameter settings.

    References
    ----------
    Rei, M. (2017). Detecting off-topic responses to visual prompts.
    Proceedings of the 12th Workshop on Innovative Use of NLP for Building Educational
    Applications (BEA), 188–197.
    """

    name = "rei"
    _parameter_constraints = {**TrainableModel._parameter_constraints,
                              **PretrainedWordEmbeddings._parameter_constraints,
                              "word_dim": [POSITIVE_INT], "hidden_dim": [POSITIVE_INT], "min_count": [POSITIVE_INT],
                              "dropout": [Interval(Real, 0, 1, closed="left")], "gating": ["boolean"],
                              "loss": [StrOptions({"softmax", "hinge"})],
                              "margin": [Interval(Real, 0, None, closed="left")], "init_std": [POSITIVE_REAL],
                              "max_block_elements": [POSITIVE_INT], "word_vector_scale": [POSITIVE_REAL, None]}

    def __init__(self, *, image_encoder: Encoder | None = None, word_dim: int = 300, word_vectors: str | None = None,
                 freeze_word_vectors: bool = False, word_vector_scale: float | None = None, hidden_dim: int = 300,
                 min_count: int = 2, dropout: float = 0.5, gating: bool = True,
                 loss: Literal["softmax", "hinge"] = "softmax", margin: float = 0.2, init_std: float = 0.1,
                 lr: float = 1e-3, batch_size: int = 32,
                 length_window: int | None = None, max_epochs: int = 30, patience: int | None = 5,
                 grad_clip: float | None = None, max_block_elements: int = 2 ** 23,
                 max_train_seconds: float | None = None, n_threads: int | None = 1, checkpoint: bool = True,
                 device: str = "cpu", random_state: int = 0):
        self._store_parameters(locals())

    def _tokens(self, text):
        return ["<s>", *word_tokens(text), "</s>"]

    @property
    def _word_vector_scale(self):
        return self.init_std if self.word_vector_scale is None else self.word_vector_scale

    def _build_network(self, feature_dim):
        return _network(len(self.vocabulary_) + 2, feature_dim, self.word_dim, self.hidden_dim, self.dropout,
                        self.gating, self.loss == "hinge", self.init_std, freeze_words=self._freeze_word_vectors)

    def _batch_loss(self, network, features, ids, lengths, epoch):
        scores = network.scores(features, network.encode_text(ids, lengths))
        if self.loss == "softmax":
            return softmax_cross_entropy_loss(scores)
        return hinge_loss(scores, margin=self.margin, directions=("annotation",))

    def _sentence_tensor(self, network, texts: list[str]):
        torch = torch_module()
        if not texts:
            return torch.zeros(0, self.hidden_dim, device=self._device)
        return torch.cat([network.encode_text(*self._encode_texts(texts[s:s + _TEXT_CHUNK]))
                          for s in range(0, len(texts), _TEXT_CHUNK)])

    def _pair_scores(self, networks, features, texts):
        """Scores of every image with every text, in blocks of bounded size."""
        (network,) = networks
        x = self._tensor(features)
        with self._inference():
            u = self._sentence_tensor(network, texts)
            width = max(x.shape[1], self.hidden_dim) if self.gating else 1
            text_block = max(1, min(len(texts), self.max_block_elements // width))
            image_block = max(1, self.max_block_elements // (text_block * width))
            out = np.empty((len(x), len(texts)), dtype=np.float64)
            for i in range(0, len(x), image_block):
                for j in range(0, len(texts), text_block):
                    out[i:i + image_block, j:j + text_block] = \
                        network.scores(x[i:i + image_block], u[j:j + text_block]).cpu().numpy()
        return out

    def sentence_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """The sentence vectors u of ``texts``, ``(len(texts), hidden_dim)`` (evaluation mode)."""
        self._check_fitted()
        with self._inference():
            return self._sentence_tensor(self.networks_[0], check_texts(texts)).cpu().numpy()

    def score(self, images: ImageSource, texts: Sequence[str]) -> np.ndarray:
        """Relevance of every image of ``images`` to every text, ``(len(images), len(texts))``."""
        self._check_fitted()
        require_image_source(images)
        return self._pair_scores(self.networks_, self._features(images), check_texts(texts))
