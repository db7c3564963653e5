"""Trainable joint-embedding baselines (PyTorch, optional extra ``torch``).

* :class:`VSEEncoder` — Kiros, Salakhutdinov & Zemel (2014): an LSTM sentence
  encoder over learnt word embeddings, a linear projection of image features,
  both unit-normalised; bidirectional pairwise ranking loss with margin α,
  Σ_k max(0, α − s(v, x) + s(v, x_k)) + Σ_k max(0, α − s(x, v) + s(x, v_k)),
  over the contrastive items of the mini-batch.
* :class:`CharGRUEncoder` — Merkx & Frank (2019): character embeddings, a
  bidirectional GRU, self-attention pooling over time, a linear image
  projection; the same hinge loss over all in-batch negatives.

The image side starts from a frozen feature encoder (default: the ViT-S/14
class+mean-patch features; the papers used CNN features we do not have).
Training runs on ``n_threads`` torch threads (default 1: on a loaded 2-core
machine OpenMP spin-waiting made two threads ~40× slower than one; None keeps
torch's setting).  Training is seeded and early-stopped on the dev split's R@1+R@5+R@10 (hodosh
pools, both directions).  Both encoders are ``joint_space``: wrap them in
:class:`~kcca_desc.methods.EncoderMethod`.  Their embeddings depend on the
trained weights, so they are never cached on disk.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from numbers import Integral, Real
from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator

from ..data.dataset import Dataset
from ..data.images import ImageSource
from ..scores import cosine_scores
from ..validation import POSITIVE_INT, POSITIVE_REAL, SEED, HasMethods, Interval, ValidatedParams
from .base import Encoder, check_texts
from .onnx_models import require_package

__all__ = ["VSEEncoder", "CharGRUEncoder", "bidirectional_hinge_loss"]

_TOKEN = re.compile(r"[a-z0-9]+")


def _torch():
    return require_package("torch", "torch", "the trainable baselines (pip install torch==2.13.0)")


def bidirectional_hinge_loss(image_emb, text_emb, margin: float = 0.2):
    """Σ over in-batch negatives of both hinge terms, averaged over the batch.

    ``image_emb`` and ``text_emb`` are unit-normalised (B, d) tensors whose
    row i is a matching pair (Kiros et al. 2014, eq. 1; Merkx & Frank 2019).
    """
    torch = _torch()
    scores = image_emb @ text_emb.T
    positive = scores.diag()[:, None]
    off_diagonal = ~torch.eye(len(scores), dtype=torch.bool, device=scores.device)
    cost_text = (margin - positive + scores).clamp(min=0)[off_diagonal]      # image query, wrong texts
    cost_image = (margin - positive.T + scores).clamp(min=0)[off_diagonal]   # text query, wrong images
    return (cost_text.sum() + cost_image.sum()) / len(scores)


class _TrainableEncoder(ValidatedParams, BaseEstimator, Encoder):
    """Shared fitting loop; subclasses define the vocabulary and the text network.

    Attributes
    ----------
    image_encoder_ : Encoder
        The frozen image features used (``image_encoder``, or the default ViT-S/14).
    """

    joint_space = True
    modalities = ("image", "text")
    _parameter_constraints = {
        "image_encoder": [HasMethods(["embed_images"]), None],
        "joint_dim": [POSITIVE_INT],
        "margin": [Interval(Real, 0, None, closed="left")],
        "lr": [POSITIVE_REAL],
        # A batch needs two pairs: each pair's negatives are the other pairs of its batch.
        "batch_size": [Interval(Integral, 2, None, closed="left")],
        "max_epochs": [POSITIVE_INT],
        "patience": [POSITIVE_INT],
        "max_train_seconds": [POSITIVE_REAL],
        "n_threads": [POSITIVE_INT, None],
        "random_state": [SEED],
    }

    def __init__(self, image_encoder: Encoder | None = None, joint_dim: int = 512, margin: float = 0.2,
                 lr: float = 2e-3, batch_size: int = 128, max_epochs: int = 15, patience: int = 3,
                 max_train_seconds: float = 900.0, n_threads: int | None = 1, random_state: int = 0):
        super().__init__(batch_size=batch_size, cache=False)
        self.image_encoder = image_encoder
        self.joint_dim = joint_dim
        self.margin = margin
        self.lr = lr
        self.max_epochs = max_epochs
        self.patience = patience
        self.max_train_seconds = max_train_seconds
        self.n_threads = n_threads
        self.random_state = random_state

    # ------------------------------------------------------------- hooks
    def _build_vocabulary(self, texts: list[str]) -> None:
        raise NotImplementedError

    def _build_text_network(self):
        raise NotImplementedError

    def _token_ids(self, text: str) -> list[int]:
        """Vocabulary indices of one text (0 is padding, 1 unknown)."""
        raise NotImplementedError

    def _encode_tokens(self, texts: list[str]):
        """(B, T) zero-padded index tensor and (B,) lengths; an empty text is one unknown token."""
        torch = _torch()
        seqs = [self._token_ids(t) or [1] for t in texts]
        lengths = torch.tensor([len(s) for s in seqs])
        ids = torch.zeros((len(seqs), int(lengths.max())), dtype=torch.long)
        for i, seq in enumerate(seqs):
            ids[i, :len(seq)] = torch.tensor(seq)
        return ids, lengths

    def _text_forward(self, ids, lengths):
        raise NotImplementedError

    # ------------------------------------------------------------ helpers
    def _features(self, images: ImageSource) -> np.ndarray:
        return self.image_encoder_.embed_images(images)

    @property
    def dim(self) -> dict[str, int]:
        return {"image": self.joint_dim, "text": self.joint_dim}

    def _check_fitted(self) -> None:
        if not hasattr(self, "image_projection_"):
            raise RuntimeError(f"{type(self).__name__} is not fitted; call fit(train) first")

    def _embed_text_tensor(self, texts: list[str]):
        torch = _torch()
        ids, lengths = self._encode_tokens(texts)
        return torch.nn.functional.normalize(self._text_forward(ids, lengths), dim=1)

    def _embed_image_tensor(self, features):
        torch = _torch()
        return torch.nn.functional.normalize(self.image_projection_(features), dim=1)

    # -------------------------------------------------------------- public
    def fit(self, train: Dataset, dev: Dataset | None = None) -> "_TrainableEncoder":
        """Train on every (image, caption) pair of ``train``; early-stop on ``dev``.

        ``dev`` defaults to nothing (train ``max_epochs``).  Records
        ``history_`` (per-epoch loss and dev R-sum), ``best_epoch_`` and
        ``timings_s_``.
        """
        self._validate_params()
        torch = _torch()
        if self.n_threads is not None:
            torch.set_num_threads(self.n_threads)
        torch.manual_seed(self.random_state)
        rng = np.random.default_rng(self.random_state)
        start = time.perf_counter()
        if self.image_encoder is None:
            from .onnx_models import ViTImageEncoder

            self.image_encoder_ = ViTImageEncoder(pooling="cls+mean_patch")
        else:
            self.image_encoder_ = self.image_encoder
        image_of = np.array([i for i, caps in enumerate(train.captions) for _ in caps])
        texts = [c for caps in train.captions for c in caps]
        self._build_vocabulary(texts)
        features = torch.from_numpy(np.ascontiguousarray(self._features(train.images), dtype=np.float32))
        self.image_projection_ = torch.nn.Linear(features.shape[1], self.joint_dim)
        self.text_network_ = self._build_text_network()
        params = list(self.image_projection_.parameters()) + list(self.text_network_.parameters())
        optimiser = torch.optim.Adam(params, lr=self.lr)
        dev_data = None
        if dev is not None:
            dev_view = dev.view(next(iter(dev.splits)), "hodosh")
            dev_data = (self._features(dev_view.images), list(dev_view.captions))
        self.history_, best, best_state, waited = [], -np.inf, None, 0
        features_s = time.perf_counter() - start
        for epoch in range(self.max_epochs):
            self._train_mode(True)
            order = rng.permutation(len(texts))
            total = 0.0
            for s in range(0, len(order) - 1, self.batch_size):
                batch = order[s:s + self.batch_size]
                # One caption per image in a batch: a second caption of the same
                # image would be a false negative.
                _, first = np.unique(image_of[batch], return_index=True)
                batch = batch[np.sort(first)]
                if len(batch) < 2:
                    continue
                loss = bidirectional_hinge_loss(
                    self._embed_image_tensor(features[image_of[batch]]),
                    self._embed_text_tensor([texts[j] for j in batch]), self.margin)
                optimiser.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 2.0)
                optimiser.step()
                total += loss.item() * len(batch)
            self._train_mode(False)
            record = {"epoch": epoch + 1, "loss": total / len(texts)}
            if dev_data is not None:
                record["dev_rsum"] = self._rsum(*dev_data)
                if record["dev_rsum"] > best:
                    best, waited = record["dev_rsum"], 0
                    best_state = self._state()
                    self.best_epoch_ = epoch + 1
                else:
                    waited += 1
            self.history_.append(record)
            if waited >= self.patience or time.perf_counter() - start > self.max_train_seconds:
                break
        if best_state is not None:
            self._load_state(best_state)
        else:
            self.best_epoch_ = len(self.history_)
        self.timings_s_ = {"features": features_s, "train": time.perf_counter() - start - features_s}
        return self

    def _train_mode(self, on: bool) -> None:
        self.image_projection_.train(on)
        self.text_network_.train(on)

    def _state(self):
        return ({k: v.clone() for k, v in self.image_projection_.state_dict().items()},
                {k: v.clone() for k, v in self.text_network_.state_dict().items()})

    def _load_state(self, state) -> None:
        self.image_projection_.load_state_dict(state[0])
        self.text_network_.load_state_dict(state[1])

    def _rsum(self, image_features: np.ndarray, captions: list[str]) -> float:
        """R@1+R@5+R@10 of both directions on one-caption-per-image pools."""
        S = cosine_scores(self._project_features(image_features), self._texts_numpy(captions))
        gold = np.arange(len(S))
        total = 0.0
        for M in (S, S.T):
            ranks = 1 + np.sum(M > M[gold, gold][:, None], axis=1)
            total += sum(100 * np.mean(ranks <= k) for k in (1, 5, 10))
        return float(total)

    def _project_features(self, features: np.ndarray) -> np.ndarray:
        torch = _torch()
        with torch.no_grad():
            return self._embed_image_tensor(torch.from_numpy(np.asarray(features, np.float32))).numpy()

    def _texts_numpy(self, texts: list[str]) -> np.ndarray:
        torch = _torch()
        with torch.no_grad():
            return np.concatenate([self._embed_text_tensor(texts[s:s + 512]).numpy()
                                   for s in range(0, len(texts), 512)]) if texts else \
                np.zeros((0, self.joint_dim), np.float32)

    def embed_images(self, images: ImageSource) -> np.ndarray:
        self._check_fitted()
        return self._project_features(self._features(images))

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        self._check_fitted()
        return self._texts_numpy(check_texts(texts))


class VSEEncoder(_TrainableEncoder):
    """Kiros et al. (2014) visual-semantic embedding: LSTM sentences, linear images.

    Parameters
    ----------
    image_encoder : Encoder, optional
        Frozen image features (default ViT-S/14 class + mean patch).
    word_dim : int, default=300
    joint_dim : int, default=512
        LSTM hidden size = joint space dimension (the last hidden state is the sentence vector).
    min_count : int, default=2
        Words seen fewer times in training map to ``<unk>``.
    margin, lr, batch_size, max_epochs, patience, max_train_seconds, n_threads, random_state
        Training settings (Adam; early stopping on dev R-sum).

    References
    ----------
    Kiros, R., Salakhutdinov, R. & Zemel, R. (2014). Unifying visual-semantic
    embeddings with multimodal neural language models. arXiv:1411.2539.
    """

    name = "vse"
    _parameter_constraints = {**_TrainableEncoder._parameter_constraints,
                              "word_dim": [POSITIVE_INT], "min_count": [POSITIVE_INT]}

    def __init__(self, image_encoder: Encoder | None = None, word_dim: int = 300, joint_dim: int = 512,
                 min_count: int = 2, margin: float = 0.2, lr: float = 2e-3, batch_size: int = 128,
                 max_epochs: int = 15, patience: int = 3, max_train_seconds: float = 900.0,
                 n_threads: int | None = 1, random_state: int = 0):
        super().__init__(image_encoder, joint_dim, margin, lr, batch_size, max_epochs, patience,
                         max_train_seconds, n_threads, random_state)
        self.word_dim = word_dim
        self.min_count = min_count

    def _build_vocabulary(self, texts):
        counts = Counter(w for t in texts for w in _TOKEN.findall(t.lower()))
        words = sorted(w for w, c in counts.items() if c >= self.min_count)
        self.vocabulary_ = {w: i + 2 for i, w in enumerate(words)}  # 0 pad, 1 <unk>

    def _build_text_network(self):
        torch = _torch()
        return torch.nn.ModuleDict({
            "embed": torch.nn.Embedding(len(self.vocabulary_) + 2, self.word_dim, padding_idx=0),
            "lstm": torch.nn.LSTM(self.word_dim, self.joint_dim, batch_first=True)})

    def _token_ids(self, text):
        return [self.vocabulary_.get(w, 1) for w in _TOKEN.findall(text.lower())]

    def _text_forward(self, ids, lengths):
        torch = _torch()
        packed = torch.nn.utils.rnn.pack_padded_sequence(
            self.text_network_["embed"](ids), lengths, batch_first=True, enforce_sorted=False)
        _, (hidden, _) = self.text_network_["lstm"](packed)
        return hidden[-1]


class CharGRUEncoder(_TrainableEncoder):
    """Merkx & Frank (2019) character-level bi-GRU with self-attention pooling.

    h_t = [GRU→(c_≤t); GRU←(c_≥t)], a_t = softmax_t(w' tanh(W h_t)),
    e(s) = W_o Σ_t a_t h_t, unit-normalised.

    Parameters
    ----------
    image_encoder : Encoder, optional
    char_dim : int, default=64
    hidden_dim : int, default=256
        Per direction.
    attention_dim : int, default=128
    joint_dim : int, default=512
    max_chars : int, default=200
        Longer captions are truncated.
    margin, lr, batch_size, max_epochs, patience, max_train_seconds, n_threads, random_state
        Training settings.

    References
    ----------
    Merkx, D. & Frank, S. L. (2019). Learning semantic sentence representations
    from visually grounded language without lexical knowledge. Natural
    Language Engineering 25(4).
    """

    name = "char_gru"
    _parameter_constraints = {**_TrainableEncoder._parameter_constraints, "char_dim": [POSITIVE_INT],
                              "hidden_dim": [POSITIVE_INT], "attention_dim": [POSITIVE_INT], "max_chars": [POSITIVE_INT]}

    def __init__(self, image_encoder: Encoder | None = None, char_dim: int = 64, hidden_dim: int = 256,
                 attention_dim: int = 128, joint_dim: int = 512, max_chars: int = 200, margin: float = 0.2,
                 lr: float = 2e-3, batch_size: int = 128, max_epochs: int = 15, patience: int = 3,
                 max_train_seconds: float = 900.0, n_threads: int | None = 1, random_state: int = 0):
        super().__init__(image_encoder, joint_dim, margin, lr, batch_size, max_epochs, patience,
                         max_train_seconds, n_threads, random_state)
        self.char_dim = char_dim
        self.hidden_dim = hidden_dim
        self.attention_dim = attention_dim
        self.max_chars = max_chars

    def _build_vocabulary(self, texts):
        chars = sorted({c for t in texts for c in t.lower()})
        self.vocabulary_ = {c: i + 2 for i, c in enumerate(chars)}  # 0 pad, 1 unknown

    def _build_text_network(self):
        torch = _torch()
        return torch.nn.ModuleDict({
            "embed": torch.nn.Embedding(len(self.vocabulary_) + 2, self.char_dim, padding_idx=0),
            "gru": torch.nn.GRU(self.char_dim, self.hidden_dim, batch_first=True, bidirectional=True),
            "attention": torch.nn.Sequential(torch.nn.Linear(2 * self.hidden_dim, self.attention_dim),
                                             torch.nn.Tanh(), torch.nn.Linear(self.attention_dim, 1)),
            "out": torch.nn.Linear(2 * self.hidden_dim, self.joint_dim)})

    def _token_ids(self, text):
        return [self.vocabulary_.get(c, 1) for c in text.lower()[:self.max_chars]]

    def _text_forward(self, ids, lengths):
        torch = _torch()
        net = self.text_network_
        packed = torch.nn.utils.rnn.pack_padded_sequence(net["embed"](ids), lengths, batch_first=True,
                                                         enforce_sorted=False)
        states, _ = net["gru"](packed)
        states, _ = torch.nn.utils.rnn.pad_packed_sequence(states, batch_first=True)
        logits = net["attention"](states).squeeze(-1)
        mask = torch.arange(states.shape[1])[None, :] < lengths[:, None]
        weights = torch.softmax(logits.masked_fill(~mask, float("-inf")), dim=1)
        return net["out"]((weights[:, :, None] * states).sum(dim=1))
