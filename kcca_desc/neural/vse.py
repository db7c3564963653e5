"""Kiros, Salakhutdinov & Zemel (2014) visual-semantic embedding, with the VSE++ loss option."""

from __future__ import annotations

from numbers import Real
from typing import Literal

from .._core.validation import NON_NEGATIVE_INT, POSITIVE_INT, Interval, StrOptions
from ..adapters.base import Encoder
from .joint import JointEmbeddingModel
from ._torch import torch_module
from .schedules import step_decay
from .training import word_tokens
from .word_vectors import PretrainedWordEmbeddings

__all__ = ["VSEEncoder"]


def _network(vocabulary_size: int, feature_dim: int, word_dim: int, joint_dim: int, dropout: float,
             freeze_words: bool):
    torch = torch_module()

    class VSENetwork(torch.nn.Module):
        """Word embeddings → LSTM (last hidden state); image features → linear map.

        Dropout (training only) on the word embeddings and on the image features; the word
        embeddings are fixed when ``freeze_words`` (Kiros et al.'s pre-trained vectors).
        """

        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(vocabulary_size, word_dim, padding_idx=0)
            self.embed.weight.requires_grad_(not freeze_words)
            self.lstm = torch.nn.LSTM(word_dim, joint_dim, batch_first=True)
            self.image = torch.nn.Linear(feature_dim, joint_dim)
            self.word_dropout = torch.nn.Dropout(dropout)
            self.image_dropout = torch.nn.Dropout(dropout)

        def embed_text(self, ids, lengths):
            packed = torch.nn.utils.rnn.pack_padded_sequence(self.word_dropout(self.embed(ids)), lengths,
                                                             batch_first=True, enforce_sorted=False)
            _, (hidden, _) = self.lstm(packed)
            return hidden[-1]

        def embed_image(self, features):
            return self.image(self.image_dropout(features))

    return VSENetwork()


class VSEEncoder(PretrainedWordEmbeddings, JointEmbeddingModel):
    """Kiros et al. (2014) visual-semantic embedding: LSTM sentences, linear images.

    v = W_I x (x the frozen image features), s = h_T of an LSTM over word embeddings (from
    random weights, or from pre-trained word vectors as Kiros et al. §2.2: ``word_vectors``),
    both unit-normalised; f = v·s.  Loss: the pairwise ranking loss with margin α summed over the
    batch's contrastive items in both directions (Kiros et al. eq. 1), or
    (``negatives="hardest"``) only the hardest negative of each query (Faghri et al. 2018,
    VSE++), after ``sum_epochs`` epochs of the summed loss: from random weights the hardest
    negative alone collapses (every embedding alike), as Faghri et al. report for small
    batches and as our first probes did.  Adam with ``lr`` until ``lr_decay_epoch`` and
    ``lr × lr_decay`` after it (VSE++'s schedule), gradients clipped to norm ``grad_clip``,
    dev early stopping on R@1+R@5+R@10 of both directions after the decay.

    Parameters
    ----------
    image_encoder : Encoder, optional
        Frozen image features (default EfficientNet-Lite0, the ``efficientnet`` extra).
    word_dim : int, default=300
    word_vectors : str or None, default=None
        Encoder spec of a text encoder (e.g. ``"onnx:minilm"``) whose embedding of each
        vocabulary word alone, reduced by PCA to ``word_dim``, initialises the word embeddings
        (:func:`~.word_vectors.word_vector_matrix`: Kiros et al. start from pre-trained CBOW
        vectors, none of which can be had offline); None: random initialisation.
    freeze_word_vectors : bool, default=True
        Keep pre-trained word vectors fixed, as Kiros et al. do (ignored without ``word_vectors``).
    joint_dim : int, default=300
        LSTM units = joint space dimension (Kiros et al.: 300).
    min_count : int, default=2
        Words seen fewer times in training map to the unknown token.
    margin : float, default=0.2
    negatives : {"sum", "hardest"}, default="sum"
    sum_epochs : int, default=2
        Epochs of the summed loss before the hardest-negative loss (``negatives="hardest"``).
    lr : float, default=2e-4
    lr_decay_epoch : int or None, default=15
        Last epoch at ``lr``; None: no decay.
    lr_decay : float, default=0.1
    dropout : float, default=0.0
        Dropout rate on the word embeddings and the image features while training (0: Kiros et
        al.'s model as published; on Flickr8K's 30,000 pairs the model overfits within a few
        epochs without it).
    weight_decay : float, default=0.0
        L2 penalty of Adam.
    batch_size : int, default=128
    length_window : int or None, default=None
        Cut batches from windows of ``length_window`` × ``batch_size`` shuffled pairs sorted by
        text length, then shuffle the batches (a batch runs as many recurrent steps as its
        longest text); None: batches are consecutive slices of the shuffled pairs.
    max_epochs : int, default=30
    patience : int or None, default=5
        Epochs without a better dev R-sum that end training, counted after ``lr_decay_epoch``
        (the decayed phase lifts dev, so an earlier plateau does not end a run).
    grad_clip : float or None, default=2.0
    max_train_seconds : float or None, default=None
        Safety stop only, on the training time summed over resumes (a stopped run records
        ``stopped_by_ = "time budget"``, and trains on when fitted with a larger budget).
    n_threads : int or None, default=1
        torch threads of training and scoring, set for their duration and then restored
        (``None``: the process's).
    checkpoint : bool, default=True
        Write a checkpoint each epoch (and resume or load one) under ``cache_dir("checkpoints")``.
    device : str, default="cpu"
        Torch device of training and scoring (``"cuda"`` for the papers' sizes).
    random_state : int, default=0

    References
    ----------
    Kiros, R., Salakhutdinov, R. & Zemel, R. (2014). Unifying visual-semantic embeddings with
    multimodal neural language models. arXiv:1411.2539.

    Faghri, F., Fleet, D. J., Kiros, J. R. & Fidler, S. (2018). VSE++: Improving
    visual-semantic embeddings with hard negatives. BMVC.
    """

    @property
    def name(self) -> str:
        """``vse``, or ``vse_hardest`` with the VSE++ loss."""
        return "vse_hardest" if self.negatives == "hardest" else "vse"

    _parameter_constraints = {**JointEmbeddingModel._parameter_constraints,
                              **PretrainedWordEmbeddings._parameter_constraints,
                              "word_dim": [POSITIVE_INT], "joint_dim": [POSITIVE_INT], "min_count": [POSITIVE_INT],
                              "negatives": [StrOptions({"sum", "hardest"})], "sum_epochs": [NON_NEGATIVE_INT],
                              "lr_decay_epoch": [POSITIVE_INT, None],
                              "lr_decay": [Interval(Real, 0, 1, closed="right")],
                              "dropout": [Interval(Real, 0, 1, closed="left")],
                              "weight_decay": [Interval(Real, 0, None, closed="left")]}

    def __init__(self, *, image_encoder: Encoder | None = None, word_dim: int = 300, word_vectors: str | None = None,
                 freeze_word_vectors: bool = True, joint_dim: int = 300,
                 min_count: int = 2, margin: float = 0.2, negatives: Literal["sum", "hardest"] = "sum",
                 sum_epochs: int = 2, lr: float = 2e-4, lr_decay_epoch: int | None = 15, lr_decay: float = 0.1,
                 dropout: float = 0.0, weight_decay: float = 0.0, batch_size: int = 128,
                 length_window: int | None = None, max_epochs: int = 30,
                 patience: int | None = 5,
                 grad_clip: float | None = 2.0, max_train_seconds: float | None = None,
                 n_threads: int | None = 1, checkpoint: bool = True, device: str = "cpu",
                 random_state: int = 0):
        self._store_parameters(locals())

    def _tokens(self, text):
        return word_tokens(text)

    def _build_network(self, feature_dim):
        return _network(len(self.vocabulary_) + 2, feature_dim, self.word_dim, self.joint_dim, self.dropout,
                        freeze_words=self._freeze_word_vectors)

    def _hardest(self, epoch):
        return self.negatives == "hardest" and epoch > self.sum_epochs

    def _optimiser_options(self):
        return {"weight_decay": self.weight_decay}

    @property
    def _patience_from_epoch(self):
        # The decay lifts dev predictably (by 8-10 R-sum points in our runs): stopping on dev
        # before it ended VSE++ at epoch 12 of 24, its best yet to come.
        return self.lr_decay_epoch or 0

    def _lr_factor(self, step, steps_per_epoch):
        return step_decay(step, steps_per_epoch, self.lr_decay_epoch, self.lr_decay)
