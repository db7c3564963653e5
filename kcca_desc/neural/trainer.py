"""The epoch loop of the trainable models: one run over a network, its optimiser and schedule.

:class:`Trainer` owns what a run changes (the network's weights, the optimiser and
learning-rate schedule state, the numpy generator of the shuffles, the history and the kept
snapshots) and hands the decisions to small objects: :class:`~.early_stopping.EarlyStopping`
(dev patience), :class:`~.snapshots.SnapshotSelection` (which weights are kept) and the
checkpoint file (:func:`~.checkpoints.write_checkpoint`, after every epoch).  The model supplies
the batches' loss and the dev scores (:class:`~.training.TrainableModel`'s hooks).
"""

from __future__ import annotations

import contextlib
import resource
import time
from pathlib import Path

import numpy as np

from .._core.progress import LOGGER, progress_bar
from ._torch import torch_module
from .checkpoints import CHECKPOINT_FORMAT, write_checkpoint
from .dev import recall_sum
from .early_stopping import EarlyStopping
from .snapshots import SnapshotSelection, copy_weights

__all__ = ["Trainer", "batches"]


def batches(order: np.ndarray, token_ids: list, batch_size: int, length_window: int | None,
            rng: np.random.Generator) -> list[np.ndarray]:
    """An epoch's batches of pair indices: consecutive slices of the shuffled ``order`` or,
    with ``length_window``, slices of its windows sorted by text length, in shuffled order.

    A recurrent network runs as many steps as the longest text of its batch; grouping texts
    of similar length halves the steps of a character-level batch (mean 55 characters, the
    longest of 32 random captions about 100).  Both ways cut ``ceil(n / batch_size)``
    batches, so the learning-rate schedule is the same.  Without a window ``rng`` draws nothing.

    Parameters
    ----------
    order : ndarray of int
        The epoch's shuffled pair indices.
    token_ids : list of list of int
        The tokens of every pair's text (their lengths matter).
    batch_size : int
    length_window : int or None
        Batches per window of sorted pairs; None: plain slices.
    rng : numpy.random.Generator
        Shuffles the windows' batches.
    """
    if length_window is None:
        return [order[s:s + batch_size] for s in range(0, len(order), batch_size)]
    lengths = np.fromiter((len(token_ids[j]) for j in order), dtype=np.int64, count=len(order))
    window = length_window * batch_size
    cut = []
    for w in range(0, len(order), window):
        chunk = order[w:w + window][np.argsort(lengths[w:w + window], kind="stable")]
        cut += [chunk[s:s + batch_size] for s in range(0, len(chunk), batch_size)]
    return [cut[i] for i in rng.permutation(len(cut))]


class Trainer:
    """Train ``network`` for ``model`` epoch by epoch, checkpointing each epoch at ``path``.

    Parameters
    ----------
    model : TrainableModel
        Its parameters (``max_epochs``, ``max_train_seconds``, ``grad_clip``, ``batch_size``,
        ``length_window``) and hooks (``_batch_loss``, ``_pair_scores``, ``_is_snapshot_epoch``,
        ``_pad``).
    network, optimiser, schedule
        The torch module, its optimiser and the learning-rate schedule (one step per batch slot).
    rng : numpy.random.Generator
        The shuffles.
    stopping : EarlyStopping
    selection : SnapshotSelection
    path : Path or None
        The checkpoint file; None: no checkpoint.
    """

    # model is not annotated: naming TrainableModel would import training.py, which imports this module.
    def __init__(self, model, network, optimiser, schedule, rng: np.random.Generator, *,
                 stopping: EarlyStopping, selection: SnapshotSelection, path: Path | None):
        self.model, self.network, self.optimiser, self.schedule, self.rng = model, network, optimiser, schedule, rng
        self.stopping, self.selection, self.path = stopping, selection, path
        self.run = {"history": [], "snapshots": [], "seconds": 0.0, "stopped_by": "max_epochs"}

    @property
    def epochs_done(self) -> int:
        return len(self.run["history"])

    def state(self, finished: bool, feature_dim: int) -> dict:
        """The checkpoint of the run so far (the layout of :mod:`.checkpoints`)."""
        torch = torch_module()
        run = {"history": self.run["history"], "snapshots": self.run["snapshots"], "best_rsum": self.stopping.best,
               "waited": self.stopping.waited, "seconds": self.run["seconds"], "stopped_by": self.run["stopped_by"]}
        return {"format": CHECKPOINT_FORMAT, "finished": finished, "feature_dim": feature_dim,
                "vocabulary": self.model.vocabulary_, "network": self.network.state_dict(),
                "optimiser": self.optimiser.state_dict(), "schedule": self.schedule.state_dict(),
                "torch_rng": torch.get_rng_state(), "numpy_rng": self.rng.bit_generator.state, "run": run,
                "cuda_rng": torch.cuda.get_rng_state_all() if self.model._device.type == "cuda" else None}

    def load(self, state: dict) -> None:
        """Continue the run of checkpoint ``state``: weights, optimiser, schedule, generators, history."""
        torch = torch_module()
        self.network.load_state_dict(state["network"])
        self.optimiser.load_state_dict(state["optimiser"])
        self.schedule.load_state_dict(state["schedule"])
        torch.set_rng_state(state["torch_rng"])
        if state["cuda_rng"] is not None:
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        self.rng.bit_generator.state = state["numpy_rng"]
        run = state["run"]
        self.run = {name: run[name] for name in ("history", "snapshots", "seconds", "stopped_by")}
        self.stopping.best, self.stopping.waited = run["best_rsum"], run["waited"]

    def train(self, features, token_ids: list, image_of: np.ndarray, dev_data: tuple | None) -> dict:
        """Train the epochs after the run's last, up to ``max_epochs`` or a stop; the last state.

        ``features`` (a tensor on the device) holds the image of pair j at row
        ``image_of[j]``; ``dev_data`` is ``(dev image features, one caption per image)`` or None.
        """
        torch = torch_module()
        model, run = self.model, self.run
        name = type(model).__name__
        feature_dim = int(features.shape[1])
        state = self.state(False, feature_dim)  # the state of a run that has no epoch left to train
        # Advanced by hand after each epoch's checkpoint, so that the epoch that ends the run counts.
        with contextlib.closing(progress_bar(model.max_epochs - self.epochs_done, desc=f"{name} epochs",
                                             unit="epoch", leave=True)) as bar:
            for epoch in range(self.epochs_done + 1, model.max_epochs + 1):
                start = time.perf_counter()
                lr = self.optimiser.param_groups[0]["lr"]  # the epoch's first (a cyclic schedule's highest)
                loss = self.run_epoch(features, token_ids, image_of, epoch)
                record = {"epoch": epoch, "loss": loss, "lr": lr}
                self.network.eval()
                if dev_data is not None:
                    with torch.no_grad():
                        record.update(recall_sum(model._pair_scores([self.network], *dev_data)))
                    self.stopping.update(epoch, record["rsum"])
                run["seconds"] += time.perf_counter() - start
                if self.stopping.stop:
                    run["stopped_by"] = "patience"
                elif model.max_train_seconds is not None and run["seconds"] > model.max_train_seconds:
                    run["stopped_by"] = "time budget"
                finished = epoch == model.max_epochs or run["stopped_by"] != "max_epochs"
                if self.selection.takes(model._is_snapshot_epoch(epoch), finished, run["snapshots"]):
                    record["snapshot"] = True
                    run["snapshots"] = self.selection.keep(run["snapshots"], epoch, record.get("rsum", 0.0),
                                                           copy_weights(self.network))
                record["seconds"] = time.perf_counter() - start
                # The process's peak so far (Linux reports KiB): what training has needed up to here.
                record["max_rss_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
                run["history"].append(record)
                LOGGER.info("%s epoch %d: loss %.4f, lr %.2g%s, %.0f s", name, epoch, loss, record["lr"],
                            f", dev R-sum {record['rsum']:.1f}" if "rsum" in record else "", record["seconds"])
                state = self.state(finished, feature_dim)
                if self.path is not None:
                    write_checkpoint(self.path, state)
                bar.update()
                if finished:
                    break
        return state

    def run_epoch(self, features, token_ids: list, image_of: np.ndarray, epoch: int) -> float:
        """One pass over the shuffled pairs; returns the mean loss per pair.

        A batch holds one caption per image: a second caption of a batch's image would be a
        false negative, so later ones are dropped from the batch (a batch left with fewer than
        two pairs takes no step).
        """
        torch = torch_module()
        model = self.model
        self.network.train()
        order = self.rng.permutation(len(token_ids))
        total, count = 0.0, 0
        for batch in batches(order, token_ids, model.batch_size, model.length_window, self.rng):
            _, first = np.unique(image_of[batch], return_index=True)
            batch = batch[np.sort(first)]
            if len(batch) >= 2:
                ids, lengths = model._pad([token_ids[j] for j in batch])
                images = torch.as_tensor(image_of[batch], device=features.device)
                loss = model._batch_loss(self.network, features[images], ids, lengths, epoch)
                self.optimiser.zero_grad()
                loss.backward()
                if model.grad_clip is not None:
                    torch.nn.utils.clip_grad_norm_(self.network.parameters(), model.grad_clip)
                self.optimiser.step()
                total += loss.item() * len(batch)
                count += len(batch)
            # One schedule step per batch slot, so the schedule depends on the epoch only.
            self.schedule.step()
        return total / max(count, 1)
