"""The estimator base of the trainable models: parameters, tokens, checkpoint keys and ``fit``.

A model (:class:`TrainableModel`) trains on every (image, caption) pair of a training
:class:`~kcca_desc.data.Dataset` over frozen image features, in mini-batches holding one
caption per image (a second caption of a batch's image would be a false negative).  ``fit``
finds the state a run starts from (:class:`~.lineage.Lineage`, :mod:`.checkpoints`), builds the
network, its Adam optimiser and learning-rate schedule (:mod:`.schedules`), and hands them to
the epoch loop (:class:`~.trainer.Trainer`), whose dev patience
(:class:`~.early_stopping.EarlyStopping`) and kept weights
(:class:`~.snapshots.SnapshotSelection`) are objects of their own.  What training guarantees:

* **Seeded.**  ``random_state`` seeds the weights, every dropout mask and every epoch's
  shuffle; training stops on epochs (``max_epochs``, dev ``patience``), never on the clock.
  ``max_train_seconds`` is only a safety stop on the run's training time (summed over resumes),
  off by default; a run it stops says so (``stopped_by_ == "time budget"``) and trains on when
  fitted again with a larger budget or none.
* **Checkpointed.**  After every epoch the weights, the optimiser and learning-rate schedule
  state, both random generators, the history and the kept snapshots are written atomically
  (:func:`kcca_desc._core.cache.atomic_write_bytes`) to ``cache_dir("checkpoints")/<key>/state.pt``,
  the key a :func:`~kcca_desc._core.cache.cache_key` of every parameter but the time budget, the
  image features' identity and the training and dev data.  ``fit`` with the same key resumes an interrupted
  run from its last epoch (the resumed run's weights equal an uninterrupted run's) and loads a
  finished one without training.
* **Extended, not repeated.**  Nothing a run does before it stops depends on ``max_epochs`` or
  ``patience`` (the schedule, the shuffles and the snapshot epochs are functions of the epoch),
  so a run of more epochs or more patience starts where an earlier run of otherwise equal
  parameters left off: beside each checkpoint ``lineage.json`` names its lineage (the key
  without those two) and both values, and ``fit`` trains on from the run of its lineage that
  went furthest and stops no later than it would (finished, interrupted, stopped on less
  patience or by the clock; checked on the snapshot epochs).  An earlier run stopped on the
  same patience is this run already, and is loaded, as is a finished run of other threads or
  on another device (scoring needs no retraining; resuming one is left to its own runtime,
  where it is bitwise the uninterrupted run).
* **Recorded.**  ``history_`` holds per epoch the mean training loss, the learning rate, the
  dev R@1/5/10 of both directions and their sum, and the seconds taken (for plots).
* **Selected on dev.**  The ``n_snapshots`` snapshot epochs with the highest dev
  R@1+R@5+R@10 (both directions, one caption per image) are kept; a model of one snapshot is
  the dev-best epoch, a model of several ensembles them (snapshot ensembling, Huang et al. 2017).

Training runs on ``device`` (default ``"cpu"``; ``"cuda"`` for the papers' sizes) with
``n_threads`` torch threads (default 1: on a loaded 2-core machine OpenMP spin-waiting made two
threads about 40× slower than one); training and scoring set them for their duration only, so a
fitted model leaves its caller's torch as it found it.  On a GPU, resumption restores the CUDA
generators too, but cuDNN's kernels are not bitwise deterministic.
"""

from __future__ import annotations

import contextlib
import inspect
import re
from collections import Counter
from collections.abc import Iterator
from numbers import Integral
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator

from .._core.cache import cache_dir, cache_keys
from .._core.errors import DataError, NotFittedError
from ..adapters.torch_base import torch_device_errors, torch_threads
from ..data.dataset import Dataset, require_dataset
from .._core.progress import LOGGER
from .._core.validation import (POSITIVE_INT, POSITIVE_REAL, SEED, HasMethods, Interval, ValidatedParams,
                                invalid_parameter, parameter_errors, raise_together, validation_errors)
from ._torch import torch_module
from .checkpoints import CHECKPOINT_FORMAT
from .early_stopping import EarlyStopping
from .lineage import Lineage
from .snapshots import SnapshotSelection
from .trainer import Trainer

__all__ = ["TrainableModel", "word_tokens"]

_WORD = re.compile(r"[a-z0-9]+")

#: Attributes of an image encoder that do not change its features (kept out of the key).
_NOT_FEATURES = ("batch_size", "n_threads", "cache")

#: Parameters that change where and how fast a run goes, not what it learns (up to the order of
#: floating-point sums): in the key, so that a run resumes bit for bit, but not in its lineage,
#: so that a finished run is loaded under others.
_RUNTIME = ("n_threads", "device")

#: Parameters added after checkpoints had been written, with the value that reproduces those
#: runs: left out of the key at that value, so that the checkpoints are still found.
PARAMETERS_ADDED_LATER = {"length_window": None}


def word_tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric words of ``text``."""
    return _WORD.findall(text.lower())


class TrainableModel(ValidatedParams, BaseEstimator):
    """The estimator base of the trainable models; subclasses define the tokens, the network,
    the loss and the scores, and :meth:`fit` runs the epochs with a :class:`~.trainer.Trainer`.

    Hooks: :meth:`_tokens` (text → tokens), :meth:`_build_network` (feature dimension →
    ``torch.nn.Module``), :meth:`_initialise_network` (pre-trained weights of a fresh network),
    :meth:`_batch_loss`, :meth:`_pair_scores` (numpy scores of images × texts, for dev
    selection), :meth:`_lr_factor` (the learning-rate schedule, :mod:`.schedules`),
    :meth:`_is_snapshot_epoch` and :attr:`_patience_from_epoch`.

    Attributes
    ----------
    image_encoder_ : Encoder
        The frozen image features used (``image_encoder``, or the default EfficientNet-Lite0).
    vocabulary_ : dict
        Token → index (0 is padding, 1 unknown).
    networks_ : list of torch.nn.Module
        The kept snapshots (one unless the model ensembles), in evaluation mode.
    history_ : list of dict
        Per epoch: ``epoch``, ``loss`` (mean per pair), ``lr`` (at the epoch's first step),
        ``seconds``, ``max_rss_gib`` (the process's peak resident memory so far), ``snapshot``
        (a snapshot epoch) and, with dev data, the dev
        ``annotation_R@k``, ``search_R@k`` and ``rsum``.
    best_epoch_ : int
        The epoch of the first kept snapshot (the dev-best one).
    snapshot_epochs_ : list of int
    stopped_by_ : {"max_epochs", "patience", "time budget"}
    checkpoint_path_ : Path or None
    resumed_from_epoch_ : int
        Epochs read from a checkpoint (0 for a fresh run; ``len(history_)`` for a finished one).
    timings_s_ : dict
        ``train``: seconds of training over all sessions of the run.
    """

    #: Snapshots kept and ensembled (subclasses with a parameter override it).
    n_snapshots = 1

    _parameter_constraints = {
        "image_encoder": [HasMethods(["embed_images"]), None],
        "lr": [POSITIVE_REAL],
        # A batch needs two pairs: each pair's negatives are the other pairs of its batch.
        "batch_size": [Interval(Integral, 2, None, closed="left")],
        "length_window": [POSITIVE_INT, None],
        "max_epochs": [POSITIVE_INT],
        "patience": [POSITIVE_INT, None],
        "grad_clip": [POSITIVE_REAL, None],
        "max_train_seconds": [POSITIVE_REAL, None],
        "n_threads": [POSITIVE_INT, None],
        "checkpoint": ["boolean"],
        "device": [str],
        "random_state": [SEED],
    }

    def _validate_params(self) -> None:
        """Every parameter checked and reported together, with what a constraint cannot state.

        The device must be one torch has on this machine, and the image encoder one that embeds
        images, with valid settings of its own (batch size, threads).
        """
        errors = parameter_errors(self)
        reported = {error.parameter for error in errors}
        if "device" not in reported:
            errors += torch_device_errors(self, torch_module(), self.device)
        encoder = self.image_encoder
        if "image_encoder" not in reported and encoder is not None:
            if "image" in getattr(encoder, "modalities", ("image",)):
                errors += validation_errors(encoder)
            else:
                errors.append(invalid_parameter(self, "image_encoder", "an encoder of images",
                                                getattr(encoder, "name", encoder)))
        raise_together(errors)

    def _store_parameters(self, arguments: dict) -> None:
        """Keep every ``__init__`` argument as given (scikit-learn: no work in ``__init__``).

        Subclasses call ``self._store_parameters(locals())`` as their ``__init__``'s only line.
        """
        for name in inspect.signature(type(self).__init__).parameters:
            if name != "self":
                setattr(self, name, arguments[name])

    # ------------------------------------------------------------------ hooks
    def _tokens(self, text: str) -> list[str]:
        raise NotImplementedError

    def _build_network(self, feature_dim: int):
        raise NotImplementedError

    def _batch_loss(self, network, features, ids, lengths, epoch: int):
        """The loss of one batch: ``features[i]`` is the image of text i, ``epoch`` counts from 1."""
        raise NotImplementedError

    def _pair_scores(self, networks, features: np.ndarray, texts: list[str]) -> np.ndarray:
        """(n_images, n_texts) scores of the snapshot ensemble ``networks`` (evaluation mode)."""
        raise NotImplementedError

    def _lr_factor(self, step: int, steps_per_epoch: int) -> float:
        """Learning rate of optimiser step ``step`` (from 0) as a multiple of ``lr``.

        It must not depend on ``max_epochs``: a longer run continues a shorter one's schedule.
        """
        return 1.0

    def _initialise_network(self, network) -> None:
        """Set weights of a freshly built ``network`` after :attr:`vocabulary_` is known (not on resume)."""

    @property
    def _patience_from_epoch(self) -> int:
        """Dev patience counts only epochs after this one (a schedule's last phase may start later)."""
        return 0

    def _is_snapshot_epoch(self, epoch: int) -> bool:
        return True

    def _optimiser_options(self) -> dict:
        """Keyword arguments of Adam besides the learning rate (e.g. ``weight_decay``)."""
        return {}

    # --------------------------------------------------------------- tokens
    @property
    def _min_count(self) -> int:
        return getattr(self, "min_count", 1)

    def _build_vocabulary(self, texts: list[str]) -> dict[str, int]:
        counts = Counter(tok for t in texts for tok in self._tokens(t))
        kept = sorted(tok for tok, c in counts.items() if c >= self._min_count)
        return {tok: i + 2 for i, tok in enumerate(kept)}  # 0 padding, 1 unknown

    def _token_ids(self, text: str) -> list[int]:
        """Vocabulary indices of one text; an empty text is one unknown token."""
        return [self.vocabulary_.get(tok, 1) for tok in self._tokens(text)] or [1]

    @property
    def _device(self):
        return torch_module().device(self.device)

    def _tensor(self, array: np.ndarray):
        """A float32 array as a tensor on ``device``."""
        return torch_module().from_numpy(np.ascontiguousarray(array, dtype=np.float32)).to(self._device)

    def _pad(self, sequences: list):
        """(B, T) zero-padded index tensor on ``device`` and (B,) lengths (on the CPU, as packing wants)."""
        torch = torch_module()
        lengths = torch.tensor([len(s) for s in sequences])
        ids = torch.zeros((len(sequences), int(lengths.max())), dtype=torch.long)
        for i, seq in enumerate(sequences):
            ids[i, :len(seq)] = torch.as_tensor(seq)
        return ids.to(self._device), lengths

    def _encode_texts(self, texts: list[str]):
        return self._pad([self._token_ids(t) for t in texts])

    # ---------------------------------------------------------------- fitting
    def _default_image_encoder(self):
        if self.image_encoder is not None:
            return self.image_encoder
        # The best offline image features of the survey (benchmarks/image_encoders.py).
        from ..adapters.efficientnet import EfficientNetLiteImageEncoder

        return EfficientNetLiteImageEncoder()

    def _features(self, images) -> np.ndarray:
        return np.ascontiguousarray(self.image_encoder_.embed_images(images), dtype=np.float32)

    def _check_fitted(self) -> None:
        if not hasattr(self, "networks_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted; call fit(train) first")

    def checkpoint_key(self, train: Dataset, dev: Dataset | None = None) -> str:
        """The key of this model's checkpoint for ``train`` (and ``dev``): every parameter,
        the image features' identity, the data, the torch version and the checkpoint format."""
        return self._checkpoint_keys(train, dev)[0]

    def _checkpoint_keys(self, train: Dataset, dev: Dataset | None) -> tuple[str, str]:
        """:meth:`checkpoint_key`, and the key of its lineage: the same without ``max_epochs``,
        ``patience`` and the runtime (threads, device), shared by the runs that are one another's
        beginnings."""
        torch = torch_module()
        encoder = self._default_image_encoder()
        identity = encoder.identity("image") if hasattr(encoder, "identity") else {}
        settings = {k: v for k, v in vars(encoder).items()
                    if not k.startswith("_") and k not in _NOT_FEATURES
                    and isinstance(v, (str, int, float, bool, type(None)))}

        def data(d):
            return None if d is None else {"images": [d.images.key(i) for i in range(len(d.images))],
                                           "captions": d.captions}

        params = {k: v for k, v in self.get_params(deep=False).items() if k not in ("image_encoder", "checkpoint")
                  and not (k in PARAMETERS_ADDED_LATER and v == PARAMETERS_ADDED_LATER[k])}
        # The clock stops a run without changing it: every budget shares the key of the run
        # without one, so that a run the clock stopped trains on under a larger budget.
        params["max_train_seconds"] = None
        common = {"model": type(self).__qualname__, "features": {**identity, **settings}, "train": data(train),
                  "dev": data(dev), "torch": torch.__version__, "format": CHECKPOINT_FORMAT}
        unset = dict.fromkeys(("max_epochs", "patience") + _RUNTIME)
        key, lineage = cache_keys([{"params": params}, {"params": {**params, **unset}, "lineage": True}], **common)
        return key, lineage

    def _starting_state(self, train: Dataset, dev: Dataset | None, *, record: bool) -> tuple[Path, dict | None]:
        """This run's checkpoint path and the state it starts from (:meth:`.Lineage.starting_state`);
        with ``record``, its lineage is written beside the checkpoint."""
        key, lineage_key = self._checkpoint_keys(train, dev)
        path = cache_dir("checkpoints") / key / "state.pt"
        lineage = Lineage(lineage_key, self.max_epochs, self.patience, self.max_train_seconds,
                          runtime={name: getattr(self, name) for name in _RUNTIME},
                          is_snapshot_epoch=self._is_snapshot_epoch, label=type(self).__name__)
        if record:
            lineage.write(path)
        return path, lineage.starting_state(path)

    def _prepare_fit(self, train: Dataset, dev: Dataset | None, *, record: bool) -> tuple[Path | None, dict | None]:
        """Validate a fit's settings and data; this run's checkpoint and starting state."""
        self._validate_params()
        require_dataset(train, f"{type(self).__name__}.fit")
        if dev is not None:
            require_dataset(dev, f"{type(self).__name__}.fit", name="dev")
        return self._starting_state(train, dev, record=record) if self.checkpoint else (None, None)

    def _load_finished(self, path: Path | None, state: dict | None) -> bool:
        """Fit from ``state`` when it is a finished run's (True), else leave the model as it is."""
        if state is None or not state["finished"]:
            return False
        LOGGER.info("%s: trained model loaded from %s", type(self).__name__, path)
        self.image_encoder_ = self._default_image_encoder()
        self._restore(state, path, resumed_from=len(state["run"]["history"]))
        return True

    def fit_from_checkpoint(self, train: Dataset, dev: Dataset | None = None) -> Path | None:
        """Fit as ``fit(train, dev)`` would by loading its finished checkpoint, never training.

        The checkpoint is this run's own, or that of an earlier run of its lineage that is this
        whole run (the same model trained under other threads, say).  Returns its path, the model
        fitted from it; or None, with the model left unfitted and nothing written, when ``checkpoint``
        is off or :meth:`fit` would train: a caller can tell, before any epoch, whether a model is at hand.
        """
        path, state = self._prepare_fit(train, dev, record=False)
        return path if self._load_finished(path, state) else None

    def fit(self, train: Dataset, dev: Dataset | None = None) -> "TrainableModel":
        """Train on every (image, caption) pair of ``train``; select snapshots on ``dev``.

        ``dev`` (a data set whose first split is used, one caption per image) selects the
        kept snapshots and stops training after ``patience`` epochs without improvement;
        without it the last ``n_snapshots`` snapshot epochs are kept.  A finished checkpoint of
        this run (:meth:`fit_from_checkpoint`) is loaded instead of training.
        """
        path, state = self._prepare_fit(train, dev, record=True)
        if self._load_finished(path, state):
            return self
        with torch_threads(torch_module(), self.n_threads):
            self._train(train, dev, path, state)
        return self

    def _train(self, train: Dataset, dev: Dataset | None, path: Path | None, state: dict | None) -> None:
        """Train from ``state`` (None: from the start), checkpointing to ``path``; fit from the result."""
        torch = torch_module()
        self.image_encoder_ = self._default_image_encoder()
        texts = [c for caps in train.captions for c in caps]
        image_of = np.array([i for i, caps in enumerate(train.captions) for _ in caps])
        if len(np.unique(image_of)) < 2:
            raise DataError(f"{type(self).__name__}.fit: training needs captions of at least 2 images, "
                             f"got {len(np.unique(image_of))}")
        features = self._tensor(self._features(train.images))
        dev_data = None
        if dev is not None:
            dev_view = dev.view(next(iter(dev.splits)), "hodosh")
            dev_data = (self._features(dev_view.images), list(dev_view.captions))

        torch.manual_seed(self.random_state)
        rng = np.random.default_rng(self.random_state)
        self.vocabulary_ = self._build_vocabulary(texts)
        network = self._build_network(features.shape[1]).to(self._device)
        if state is None:
            self._initialise_network(network)
        optimiser = torch.optim.Adam(network.parameters(), lr=self.lr, **self._optimiser_options())
        steps_per_epoch = -(-len(texts) // self.batch_size)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimiser, lambda step: self._lr_factor(step, steps_per_epoch))
        trainer = Trainer(self, network, optimiser, schedule, rng,
                          stopping=EarlyStopping(self.patience, self._patience_from_epoch),
                          selection=SnapshotSelection(self.n_snapshots, by_dev=dev_data is not None), path=path)
        resumed_from = 0
        if state is not None:
            trainer.load(state)
            resumed_from = trainer.epochs_done
            LOGGER.info("%s: resuming after epoch %d, checkpoints in %s", type(self).__name__, resumed_from, path)
        token_ids = [self._token_ids(t) for t in texts]
        self._restore(trainer.train(features, token_ids, image_of, dev_data), path, resumed_from)

    @contextlib.contextmanager
    def _inference(self) -> Iterator[None]:
        """The context of a forward pass outside training: no gradients, on ``n_threads`` threads."""
        torch = torch_module()
        with torch_threads(torch, self.n_threads), torch.no_grad():
            yield

    def _restore(self, state: dict, path: Path | None, resumed_from: int) -> None:
        """Set the fitted attributes from a checkpoint ``state``."""
        run = state["run"]
        self.vocabulary_ = state["vocabulary"]
        self.networks_ = []
        for snapshot in run["snapshots"]:
            network = self._build_network(state["feature_dim"]).to(self._device)
            network.load_state_dict(snapshot["state"])
            network.eval()
            self.networks_.append(network)
        self.history_ = [dict(r) for r in run["history"]]
        self.snapshot_epochs_ = [s["epoch"] for s in run["snapshots"]]
        self.best_epoch_ = self.snapshot_epochs_[0]
        self.stopped_by_ = run["stopped_by"]
        self.checkpoint_path_ = path
        self.resumed_from_epoch_ = resumed_from
        self.timings_s_ = {"train": run["seconds"]}

    # ------------------------------------------------------------- inspection
    def training_summary(self) -> dict:
        """The JSON-able record of training: history, kept snapshots, stop reason, seconds."""
        self._check_fitted()
        return {"history": self.history_, "best_epoch": self.best_epoch_, "snapshot_epochs": self.snapshot_epochs_,
                "stopped_by": self.stopped_by_, "epochs": len(self.history_),
                "resumed_from_epoch": self.resumed_from_epoch_, "train_s": self.timings_s_["train"]}

