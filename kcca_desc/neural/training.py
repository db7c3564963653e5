"""The training loop shared by the trainable models: seeded, epoch-based, checkpointed, resumable.

A model (:class:`TrainableModel`) trains on every (image, caption) pair of a training
:class:`~kcca_desc.data.Dataset` over frozen image features, in mini-batches holding one
caption per image (a second caption of a batch's image would be a false negative).  What the
loop guarantees:

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
threads about 40× slower than one).  On a GPU, resumption restores the CUDA generators too, but
cuDNN's kernels are not bitwise deterministic.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import pickle
import re
import resource
import time
from collections import Counter
from numbers import Integral
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator

from .._core.cache import atomic_write_bytes, cache_dir, cache_keys
from ..data.dataset import Dataset
from .._core.progress import LOGGER, progress_bar
from .._core.validation import POSITIVE_INT, POSITIVE_REAL, SEED, HasMethods, Interval, ValidatedParams
from ..adapters.onnx_models import require_package

__all__ = ["TrainableModel", "torch_module", "word_tokens", "recall_sum"]

_WORD = re.compile(r"[a-z0-9]+")

#: Bumped when the checkpoint layout or the rule that ends a run changes, so an old checkpoint is
#: never misread (2: dev patience waits for the last learning-rate phase).
CHECKPOINT_FORMAT = 2

#: Attributes of an image encoder that do not change its features (kept out of the key).
_NOT_FEATURES = ("batch_size", "n_threads", "cache")

#: Parameters that change where and how fast a run goes, not what it learns (up to the order of
#: floating-point sums): in the key, so that a run resumes bit for bit, but not in its lineage,
#: so that a finished run is loaded under others.
_RUNTIME = ("n_threads", "device")

#: Parameters added after checkpoints had been written, with the value that reproduces those
#: runs: left out of the key at that value, so that the checkpoints are still found.
PARAMETERS_ADDED_LATER = {"length_window": None}


def torch_module():
    """``torch``, or an ImportError naming the ``torch`` extra."""
    return require_package("torch", "torch", "the trainable models (pip install torch==2.13.0)")


def word_tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric words of ``text``."""
    return _WORD.findall(text.lower())


def recall_sum(scores: np.ndarray) -> dict[str, float]:
    """R@1/5/10 of both directions on a square pool whose diagonal is the matching pairs.

    Ties count against the gold item (its rank is one plus the number of items scoring at
    least as high), so a constant scorer gets no credit.
    """
    gold = np.arange(len(scores))
    out = {}
    for task, M in (("annotation", scores), ("search", scores.T)):
        ranks = np.sum(M >= M[gold, gold][:, None], axis=1)
        for k in (1, 5, 10):
            out[f"{task}_R@{k}"] = float(100 * np.mean(ranks <= k))
    out["rsum"] = float(sum(out.values()))
    return out


def _write_checkpoint(path: Path, state: dict) -> None:
    """Save ``state`` at ``path`` atomically (serialised first, so the temporary file lives briefly)."""
    buffer = io.BytesIO()
    torch_module().save(state, buffer)
    atomic_write_bytes(path, lambda f: f.write(buffer.getvalue()))


def _copy_state(module) -> dict:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


class TrainableModel(ValidatedParams, BaseEstimator):
    """Shared fitting loop; subclasses define the tokens, the network, the loss and the scores.

    Hooks: :meth:`_tokens` (text → tokens), :meth:`_build_network` (feature dimension →
    ``torch.nn.Module``), :meth:`_initialise_network` (pre-trained weights of a fresh network),
    :meth:`_batch_loss`, :meth:`_pair_scores` (numpy scores of images × texts, for dev
    selection) and :meth:`_lr_factor` (the learning-rate schedule).

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
            raise RuntimeError(f"{type(self).__name__} is not fitted; call fit(train) first")

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

    def fit(self, train: Dataset, dev: Dataset | None = None) -> "TrainableModel":
        """Train on every (image, caption) pair of ``train``; select snapshots on ``dev``.

        ``dev`` (a data set whose first split is used, one caption per image) selects the
        kept snapshots and stops training after ``patience`` epochs without improvement;
        without it the last ``n_snapshots`` snapshot epochs are kept.
        """
        self._validate_params()
        torch = torch_module()
        try:
            device = torch.device(self.device)
        except RuntimeError as exc:
            raise ValueError(f"{type(self).__name__}: device={self.device!r} is not a torch device ({exc})") from None
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"{type(self).__name__}: device={self.device!r} but torch sees no CUDA device")
        if self.n_threads is not None:
            torch.set_num_threads(self.n_threads)
        self.image_encoder_ = self._default_image_encoder()
        path = None
        if self.checkpoint:
            key, lineage = self._checkpoint_keys(train, dev)
            path = cache_dir("checkpoints") / key / "state.pt"
            self._write_lineage(path, lineage)
        state = self._reopened_under_budget(self._read_checkpoint(path))
        if path is not None and (state is None or not state["finished"]):
            # An earlier run of this lineage may have gone further than this one's interrupted run.
            earlier = self._earlier_run(path, lineage)
            if earlier is not None and (state is None or earlier["finished"]
                                        or len(earlier["run"]["history"]) > len(state["run"]["history"])):
                state = earlier
                if state["finished"]:
                    _write_checkpoint(path, state)
        if state is not None and state["finished"]:
            LOGGER.info("%s: trained model loaded from %s", type(self).__name__, path)
            self._restore(state, path, resumed_from=len(state["run"]["history"]))
            return self
        texts = [c for caps in train.captions for c in caps]
        image_of = np.array([i for i, caps in enumerate(train.captions) for _ in caps])
        if len(np.unique(image_of)) < 2:
            raise ValueError(f"{type(self).__name__}.fit: training needs captions of at least 2 images, "
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
        run = {"history": [], "snapshots": [], "best_rsum": -np.inf, "waited": 0, "seconds": 0.0,
               "stopped_by": "max_epochs"}
        resumed_from = 0
        if state is not None:
            network.load_state_dict(state["network"])
            optimiser.load_state_dict(state["optimiser"])
            schedule.load_state_dict(state["schedule"])
            torch.set_rng_state(state["torch_rng"])
            if state["cuda_rng"] is not None:
                torch.cuda.set_rng_state_all(state["cuda_rng"])
            rng.bit_generator.state = state["numpy_rng"]
            run = state["run"]
            resumed_from = len(run["history"])
            LOGGER.info("%s: resuming after epoch %d, checkpoints in %s", type(self).__name__, resumed_from, path)
        token_ids = [self._token_ids(t) for t in texts]
        # Advanced by hand after each epoch's checkpoint, so that the epoch that ends the run counts.
        with contextlib.closing(progress_bar(self.max_epochs - resumed_from, desc=f"{type(self).__name__} epochs",
                                             unit="epoch", leave=True)) as bar:
            for epoch in range(resumed_from + 1, self.max_epochs + 1):
                start = time.perf_counter()
                lr = optimiser.param_groups[0]["lr"]  # the epoch's first (a cyclic schedule's highest)
                loss = self._run_epoch(network, optimiser, schedule, features, token_ids, image_of, rng, epoch)
                record = {"epoch": epoch, "loss": loss, "lr": lr}
                network.eval()
                if dev_data is not None:
                    with torch.no_grad():
                        record.update(recall_sum(self._pair_scores([network], *dev_data)))
                    if record["rsum"] > run["best_rsum"]:
                        run["best_rsum"], run["waited"] = record["rsum"], 0
                    elif epoch > self._patience_from_epoch:
                        run["waited"] += 1
                run["seconds"] += time.perf_counter() - start
                if self.patience is not None and run["waited"] >= self.patience:
                    run["stopped_by"] = "patience"
                elif self.max_train_seconds is not None and run["seconds"] > self.max_train_seconds:
                    run["stopped_by"] = "time budget"
                finished = epoch == self.max_epochs or run["stopped_by"] != "max_epochs"
                # A run stopped before its first snapshot epoch keeps its last weights.
                if self._is_snapshot_epoch(epoch) or (finished and not run["snapshots"]):
                    self._keep_snapshot(run, network, record, dev_data is not None)
                record["seconds"] = time.perf_counter() - start
                # The process's peak so far (Linux reports KiB): what training has needed up to here.
                record["max_rss_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
                run["history"].append(record)
                LOGGER.info("%s epoch %d: loss %.4f, lr %.2g%s, %.0f s", type(self).__name__, epoch, loss,
                            record["lr"], f", dev R-sum {record['rsum']:.1f}" if "rsum" in record else "",
                            record["seconds"])
                state = {"format": CHECKPOINT_FORMAT, "finished": finished, "feature_dim": int(features.shape[1]),
                         "vocabulary": self.vocabulary_, "network": network.state_dict(),
                         "optimiser": optimiser.state_dict(), "schedule": schedule.state_dict(),
                         "torch_rng": torch.get_rng_state(), "numpy_rng": rng.bit_generator.state, "run": run,
                         "cuda_rng": torch.cuda.get_rng_state_all() if self._device.type == "cuda" else None}
                if path is not None:
                    _write_checkpoint(path, state)
                bar.update()
                if finished:
                    break
        self._restore(state, path, resumed_from)
        return self

    def _run_epoch(self, network, optimiser, schedule, features, token_ids, image_of, rng, epoch: int) -> float:
        """One pass over the shuffled pairs; returns the mean loss per pair."""
        torch = torch_module()
        network.train()
        order = rng.permutation(len(token_ids))
        total, count = 0.0, 0
        for batch in self._batches(order, token_ids, rng):
            _, first = np.unique(image_of[batch], return_index=True)
            batch = batch[np.sort(first)]
            if len(batch) >= 2:
                ids, lengths = self._pad([token_ids[j] for j in batch])
                images = torch.as_tensor(image_of[batch], device=features.device)
                loss = self._batch_loss(network, features[images], ids, lengths, epoch)
                optimiser.zero_grad()
                loss.backward()
                if self.grad_clip is not None:
                    torch.nn.utils.clip_grad_norm_(network.parameters(), self.grad_clip)
                optimiser.step()
                total += loss.item() * len(batch)
                count += len(batch)
            # One schedule step per batch slot, so the schedule depends on the epoch only.
            schedule.step()
        return total / max(count, 1)

    def _batches(self, order: np.ndarray, token_ids: list, rng) -> list[np.ndarray]:
        """The epoch's batches of pair indices: consecutive slices of the shuffled ``order`` or,
        with ``length_window``, slices of its windows sorted by text length, in shuffled order.

        A recurrent network runs as many steps as the longest text of its batch; grouping texts
        of similar length halves the steps of a character-level batch (mean 55 characters, the
        longest of 32 random captions about 100).  Both ways cut ``ceil(n / batch_size)``
        batches, so the learning-rate schedule is the same.
        """
        size = self.batch_size
        if self.length_window is None:
            return [order[s:s + size] for s in range(0, len(order), size)]
        lengths = np.fromiter((len(token_ids[j]) for j in order), dtype=np.int64, count=len(order))
        window = self.length_window * size
        batches = []
        for w in range(0, len(order), window):
            chunk = order[w:w + window][np.argsort(lengths[w:w + window], kind="stable")]
            batches += [chunk[s:s + size] for s in range(0, len(chunk), size)]
        return [batches[i] for i in rng.permutation(len(batches))]

    def _keep_snapshot(self, run: dict, network, record: dict, with_dev: bool) -> None:
        """Add this epoch's weights to the kept snapshots, keeping the ``n_snapshots`` best."""
        score = record.get("rsum", 0.0)
        record["snapshot"] = True
        kept = run["snapshots"] + [{"epoch": record["epoch"], "rsum": score, "state": _copy_state(network)}]
        # Best dev first, the earlier of equals; without dev the latest first.
        kept.sort(key=(lambda s: (-s["rsum"], s["epoch"])) if with_dev else (lambda s: -s["epoch"]))
        run["snapshots"] = kept[:self.n_snapshots]

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

    def _write_lineage(self, path: Path, lineage: str) -> None:
        """Record beside the checkpoint at ``path`` its lineage, ``max_epochs``, ``patience`` and
        runtime (``lineage.json``), where :meth:`_earlier_run` of a longer, more patient or
        otherwise placed run finds it."""
        record = {"lineage": lineage, "max_epochs": self.max_epochs, "patience": self.patience,
                  **{name: getattr(self, name) for name in _RUNTIME}}
        sidecar = path.parent / "lineage.json"
        with contextlib.suppress(OSError, ValueError):
            if json.loads(sidecar.read_text()) == record:
                return
        atomic_write_bytes(sidecar, lambda f: f.write(json.dumps(record).encode()))

    def _earlier_run(self, path: Path, lineage: str) -> dict | None:
        """The state of an earlier run that is this run's beginning and went furthest, or None.

        Such a run (a checkpoint beside a ``lineage.json`` of the same ``lineage``) has every
        parameter of this one but ``max_epochs``, ``patience``, threads and device, stops no later than this one
        would (:meth:`_is_beginning`), and took its snapshots on the epochs this model would.
        Stopped on this run's patience, or ended on ``max_epochs`` at this run's last epoch, it is
        this whole run (returned finished).  Otherwise its state is this run's after as many
        epochs (returned unfinished, to be trained on): ended on fewer ``max_epochs``,
        interrupted, stopped on less patience, or stopped by the clock where this run's budget
        allows more (:meth:`_reopened_under_budget`); of several, the one with the most epochs.
        A run with other threads or on another device is only ever this whole run: resuming it
        here would not give the weights of an uninterrupted run bit for bit.
        """
        best = None
        for sidecar in sorted(path.parent.parent.glob("*/lineage.json")):
            try:
                other = json.loads(sidecar.read_text())
            except (OSError, ValueError):
                continue  # being written, or damaged from outside: not a run to build on
            if sidecar.parent == path.parent or other.get("lineage") != lineage or not self._is_beginning(other):
                continue
            state = self._read_checkpoint(sidecar.parent / "state.pt")
            if state is None or not self._repeats(state["run"]):
                continue
            run = state["run"]
            if (run["stopped_by"] == "patience" and other["patience"] == self.patience) or (
                    state["finished"] and run["stopped_by"] == "max_epochs" and len(run["history"]) == self.max_epochs):
                LOGGER.info("%s: the run of %s is this one", type(self).__name__, sidecar.parent)
                return state
            if any(other.get(name) != getattr(self, name) for name in _RUNTIME):
                continue
            if run["stopped_by"] == "patience":
                state = self._reopened(state)
            state = self._reopened_under_budget(state)
            if (state["finished"] and run["stopped_by"] == "time budget") or len(run["history"]) >= self.max_epochs:
                # The clock would have stopped this run no later; or it stopped early on this
                # run's last epoch, whose snapshots this run may take otherwise.
                continue
            if best is None or len(state["run"]["history"]) > len(best["run"]["history"]):
                best = {**state, "finished": False}
                LOGGER.info("%s: the run of %s went %d epochs; training on from there", type(self).__name__,
                            sidecar.parent, len(run["history"]))
        return best

    def _is_beginning(self, other: dict) -> bool:
        """Whether a run of ``other["max_epochs"]`` and ``other["patience"]`` can be this run's beginning.

        It stops no later than this run would: on as many epochs or fewer, on as much patience
        or less (without patience only where this run has none).
        """
        epochs, patience = other.get("max_epochs"), other.get("patience")
        if not isinstance(epochs, int) or epochs > self.max_epochs:
            return False
        return self.patience is None or (isinstance(patience, int) and patience <= self.patience)

    def _repeats(self, run: dict) -> bool:
        """Whether the epochs of an earlier ``run`` kept snapshots where this model would.

        A run stopped early (on patience or by the clock) before its first snapshot epoch kept
        its last epoch as its only snapshot; that one displaced none, and reopening the run
        drops it.
        """
        history = run["history"]
        if run["stopped_by"] != "max_epochs" and len(run["snapshots"]) == 1 and not any(
                record.get("snapshot", False) for record in history[:-1]):
            history = history[:-1]
        return all(record.get("snapshot", False) == self._is_snapshot_epoch(record["epoch"]) for record in history)

    def _reopened(self, state: dict) -> dict:
        """``state`` of a run stopped early, as the unfinished run that nothing stopped.

        Its snapshot of a last epoch that is no snapshot epoch (kept because the run stopped
        before its first) is dropped.
        """
        run = state["run"]
        history = [{k: v for k, v in record.items() if k != "snapshot" or self._is_snapshot_epoch(record["epoch"])}
                   for record in run["history"]]
        snapshots = [s for s in run["snapshots"] if self._is_snapshot_epoch(s["epoch"])]
        return {**state, "finished": False,
                "run": {**run, "history": history, "snapshots": snapshots, "stopped_by": "max_epochs"}}

    def _reopened_under_budget(self, state: dict | None) -> dict | None:
        """``state``, reopened for training (:meth:`_reopened`) when the clock stopped it and this
        run's budget allows more: up to its last epoch, a run the clock stopped is the run without
        a budget."""
        if state is None or not state["finished"] or state["run"]["stopped_by"] != "time budget":
            return state
        run = state["run"]
        if self.max_train_seconds is not None and run["seconds"] > self.max_train_seconds:
            return state
        LOGGER.info("%s: the clock stopped this run after epoch %d; training on", type(self).__name__,
                    len(run["history"]))
        return self._reopened(state)

    @staticmethod
    def _read_checkpoint(path: Path | None) -> dict | None:
        """The checkpoint at ``path``, or None when there is none (or it is of another format)."""
        if path is None or not path.is_file():
            return None
        torch = torch_module()
        try:
            # Our own pickle (vocabulary, history, generator states) from our own cache directory.
            state = torch.load(path, map_location="cpu", weights_only=False)
        except (OSError, RuntimeError, EOFError, pickle.UnpicklingError) as exc:
            # Writes are atomic, so this is damage from outside: retrain rather than trust it.
            LOGGER.warning("checkpoint %s is damaged (%s): training afresh", path, exc)
            return None
        if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
            LOGGER.info("checkpoint %s is not of format %d: training afresh", path, CHECKPOINT_FORMAT)
            return None
        return state

    # ------------------------------------------------------------- inspection
    def training_summary(self) -> dict:
        """The JSON-able record of training: history, kept snapshots, stop reason, seconds."""
        self._check_fitted()
        return {"history": self.history_, "best_epoch": self.best_epoch_, "snapshot_epochs": self.snapshot_epochs_,
                "stopped_by": self.stopped_by_, "epochs": len(self.history_),
                "resumed_from_epoch": self.resumed_from_epoch_, "train_s": self.timings_s_["train"]}

