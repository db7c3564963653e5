"""Merkx & Frank (2019) character-level bidirectional GRU with self-attention pooling."""

from __future__ import annotations

from numbers import Real

from .._core.validation import POSITIVE_INT, Interval
from ..adapters.base import Encoder
from .joint import JointEmbeddingModel
from ._torch import torch_module
from .schedules import cosine_cycles

__all__ = ["CharGRUEncoder"]


def _rename_bidirectional_gru(module, state_dict, prefix, *_):
    """Map a ``torch.nn.GRU(bidirectional=True)``'s weights (``gru.*_l0``, ``gru.*_l0_reverse``)
    onto the two one-way GRUs, so that checkpoints written before the split still load."""
    for key in [k for k in state_dict if k.startswith(prefix + "gru.")]:
        name = key[len(prefix + "gru."):]
        direction = "backward_gru." if name.endswith("_reverse") else "forward_gru."
        state_dict[prefix + direction + name.removesuffix("_reverse")] = state_dict.pop(key)


def _network(vocabulary_size: int, feature_dim: int, char_dim: int, hidden_dim: int, attention_dim: int,
             n_heads: int, dropout: float):
    torch = torch_module()

    class CharGRUNetwork(torch.nn.Module):
        """Characters → bi-GRU → ``n_heads`` attention poolings (concatenated); images → linear map.

        Dropout (training only) on the character embeddings and on the image features.

        The bidirectional GRU is two one-way GRUs over the zero-padded batch, the backward one
        over each caption reversed within its length: the same states at every character as
        ``torch.nn.GRU(bidirectional=True)`` over a packed sequence, without packing's cost on
        the CPU, where the backward pass of each time step's slice of the packed input zero-fills
        a gradient of the whole input (docs/design.md, "Trainable models").
        """

        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(vocabulary_size, char_dim, padding_idx=0)
            self.forward_gru = torch.nn.GRU(char_dim, hidden_dim, batch_first=True)
            self.backward_gru = torch.nn.GRU(char_dim, hidden_dim, batch_first=True)
            # a_t = softmax_t(V tanh(W h_t + b_w) + b_v): one weight per feature and time step.
            self.heads = torch.nn.ModuleList(
                torch.nn.Sequential(torch.nn.Linear(2 * hidden_dim, attention_dim), torch.nn.Tanh(),
                                    torch.nn.Linear(attention_dim, 2 * hidden_dim)) for _ in range(n_heads))
            self.image = torch.nn.Linear(feature_dim, n_heads * 2 * hidden_dim)
            self.char_dropout = torch.nn.Dropout(dropout)
            self.image_dropout = torch.nn.Dropout(dropout)
            self.register_load_state_dict_pre_hook(_rename_bidirectional_gru)

        def embed_text(self, ids, lengths):
            steps = torch.arange(ids.shape[1], device=ids.device)[None, :]
            lengths = lengths.to(ids.device)[:, None]
            inside = steps < lengths
            # Step t of a caption read backwards is its step length − 1 − t; padding stays put,
            # so the same gather turns the backward GRU's states round again.
            backwards = torch.where(inside, lengths - 1 - steps, steps)[:, :, None]
            chars = self.char_dropout(self.embed(ids))
            ahead, _ = self.forward_gru(chars)
            behind, _ = self.backward_gru(chars.gather(1, backwards.expand(-1, -1, chars.shape[2])))
            states = torch.cat([ahead, behind.gather(1, backwards.expand(-1, -1, behind.shape[2]))], dim=2)
            # Padding steps hold states of the padding: weighted 0 by every head.
            padding = ~inside[:, :, None]
            pooled = []
            for head in self.heads:
                weights = torch.softmax(head(states).masked_fill(padding, float("-inf")), dim=1)
                pooled.append((weights * states).sum(dim=1))
            return torch.cat(pooled, dim=1)

        def embed_image(self, features):
            return self.image(self.image_dropout(features))

    return CharGRUNetwork()


class CharGRUEncoder(JointEmbeddingModel):
    """Merkx & Frank (2019) character-level bi-GRU with multi-head self-attention pooling.

    h_t = [GRU→(c_≤t); GRU←(c_≥t)] over 20-d character embeddings (characters as written,
    capitals and punctuation kept); each head k pools a_t^k = softmax_t(V_k tanh(W_k h_t + b_w)
    + b_v), Att_k = Σ_t a_t^k ∘ h_t; the caption embedding is the heads' concatenation, the
    image embedding a linear map of the frozen features, both unit-normalised.  Loss: the
    hinge loss over all in-batch negatives, both directions.  Adam with a cyclic learning rate
    falling from ``lr`` to ``lr_min`` along a half cosine over each cycle of ``cycle_epochs``
    epochs (Smith 2017), lr(m) = lr_min + ½(lr − lr_min)(1 + cos(π (m mod M)/M)), M the
    batches of a cycle; a snapshot at the end of each cycle (a local minimum), and the
    ``n_ensemble`` snapshots best on dev ensembled (Huang et al. 2017).

    Parameters
    ----------
    image_encoder : Encoder, optional
    char_dim : int, default=20
    hidden_dim : int, default=1024
        Units per direction (Merkx & Frank's best Flickr8K model: 1,024).
    attention_dim : int, default=128
    n_heads : int, default=2
    max_chars : int or None, default=None
        Truncate longer captions (None: never).
    margin : float, default=0.2
    lr, lr_min : float, default=1e-3, 1e-6
        Bounds of the cyclic learning rate.
    cycle_epochs : int, default=4
    n_ensemble : int, default=2
    dropout : float, default=0.0
        Dropout rate on the character embeddings and the image features while training (0: the
        paper's model; VSE on Flickr8K's 30,000 pairs gained from it).
    batch_size : int, default=32
    length_window : int or None, default=None
        As :class:`~.vse.VSEEncoder`.
    max_epochs : int, default=32
    patience : int or None, default=None
        The paper trains all epochs.
    grad_clip : float or None, default=None
    max_train_seconds, n_threads, checkpoint, device, random_state
        As :class:`~.vse.VSEEncoder`.

    Notes
    -----
    The defaults are the paper's size; the CPU size chosen by measurement is the ``cpu``
    configuration of :data:`kcca_desc.methods.trainable_systems.TRAINABLE`.

    References
    ----------
    Merkx, D. & Frank, S. L. (2019). Learning semantic sentence representations from visually
    grounded language without lexical knowledge. Natural Language Engineering 25(4), 451–466.

    Smith, L. N. (2017). Cyclical learning rates for training neural networks. WACV.

    Huang, G. et al. (2017). Snapshot ensembles: train 1, get M for free. ICLR.
    """

    name = "char_gru"
    _parameter_constraints = {**JointEmbeddingModel._parameter_constraints,
                              "char_dim": [POSITIVE_INT], "hidden_dim": [POSITIVE_INT],
                              "attention_dim": [POSITIVE_INT], "n_heads": [POSITIVE_INT],
                              "max_chars": [POSITIVE_INT, None], "lr_min": [Interval(Real, 0, None, closed="left")],
                              "cycle_epochs": [POSITIVE_INT], "n_ensemble": [POSITIVE_INT],
                              "dropout": [Interval(Real, 0, 1, closed="left")]}

    def __init__(self, *, image_encoder: Encoder | None = None, char_dim: int = 20, hidden_dim: int = 1024,
                 attention_dim: int = 128, n_heads: int = 2, max_chars: int | None = None, margin: float = 0.2,
                 lr: float = 1e-3, lr_min: float = 1e-6, cycle_epochs: int = 4, n_ensemble: int = 2,
                 dropout: float = 0.0, batch_size: int = 32,
                 length_window: int | None = None, max_epochs: int = 32, patience: int | None = None,
                 grad_clip: float | None = None, max_train_seconds: float | None = None,
                 n_threads: int | None = 1, checkpoint: bool = True, device: str = "cpu",
                 random_state: int = 0):
        self._store_parameters(locals())

    @property
    def n_snapshots(self) -> int:
        """Snapshots kept and ensembled: ``n_ensemble``."""
        return self.n_ensemble

    @property
    def joint_dim(self) -> int:
        return self.n_heads * 2 * self.hidden_dim

    def _tokens(self, text):
        return list(text if self.max_chars is None else text[:self.max_chars])

    def _build_network(self, feature_dim):
        return _network(len(self.vocabulary_) + 2, feature_dim, self.char_dim, self.hidden_dim,
                        self.attention_dim, self.n_heads, self.dropout)

    def _lr_factor(self, step, steps_per_epoch):
        return cosine_cycles(step, steps_per_epoch, self.cycle_epochs, self.lr_min / self.lr)

    def _is_snapshot_epoch(self, epoch):
        return epoch % self.cycle_epochs == 0 or epoch == self.max_epochs
