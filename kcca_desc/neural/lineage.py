"""Lineages of checkpoints: a run of more epochs or more patience trains on from an earlier one.

Nothing a run does before it stops depends on ``max_epochs`` or ``patience`` (the schedule, the
shuffles and the snapshot epochs are functions of the epoch), so a run of otherwise equal
parameters that stopped earlier is this run's beginning.  Beside each checkpoint,
``lineage.json`` names its lineage (the checkpoint key without ``max_epochs``, ``patience`` and
the runtime, i.e. threads and device), both values and the runtime; :class:`Lineage` finds the
run of its lineage that went furthest and says from which state this run starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .._core.cache import read_json_entry, write_json_entry
from .._core.progress import LOGGER
from .checkpoints import read_checkpoint, write_checkpoint

__all__ = ["Lineage"]


@dataclass(frozen=True)
class Lineage:
    """One run's place in its lineage, and the earlier runs it may start from.

    Parameters
    ----------
    name : str
        The lineage key: the run's checkpoint key without ``max_epochs``, ``patience`` and
        the runtime.
    max_epochs : int
    patience : int or None
    max_train_seconds : float or None
        The run's time budget (a run the clock stopped trains on under a larger one).
    runtime : dict
        The parameters that change where and how fast the run goes, not what it learns
        (``n_threads``, ``device``).
    is_snapshot_epoch : callable
        The model's snapshot epochs, ``epoch -> bool``.
    label : str, default="model"
        Who the log messages speak of.
    """

    name: str
    max_epochs: int
    patience: int | None
    max_train_seconds: float | None
    runtime: dict[str, Any]
    is_snapshot_epoch: Callable[[int], bool]
    label: str = "model"

    def write(self, path: Path) -> None:
        """Record beside the checkpoint at ``path`` its lineage, ``max_epochs``, ``patience`` and
        runtime (``lineage.json``), where :meth:`earlier_run` of a longer, more patient or
        otherwise placed run finds it."""
        record = {"lineage": self.name, "max_epochs": self.max_epochs, "patience": self.patience, **self.runtime}
        sidecar = path.parent / "lineage.json"
        # A cache entry like the checkpoint: a damaged record is reported, deleted and rewritten.
        if read_json_entry(sidecar, legacy=True) != record:
            write_json_entry(sidecar, record)

    def starting_state(self, path: Path) -> dict | None:
        """The state this run starts from: its own checkpoint at ``path`` (reopened when the
        clock stopped it and the budget allows more), or an earlier run's that went further
        (written to ``path`` when it is this whole run); None: train afresh."""
        state = self.reopened_under_budget(read_checkpoint(path))
        if state is None or not state["finished"]:
            # An earlier run of this lineage may have gone further than this one's interrupted run.
            earlier = self.earlier_run(path)
            if earlier is not None and (state is None or earlier["finished"]
                                        or len(earlier["run"]["history"]) > len(state["run"]["history"])):
                state = earlier
                if state["finished"]:
                    write_checkpoint(path, state)
        return state

    def earlier_run(self, path: Path) -> dict | None:
        """The state of an earlier run that is this run's beginning and went furthest, or None.

        Such a run (a checkpoint beside a ``lineage.json`` of the same lineage) has every
        parameter of this one but ``max_epochs``, ``patience``, threads and device, stops no later than this one
        would (:meth:`is_beginning`), and took its snapshots on the epochs this model would.
        Stopped on this run's patience, or ended on ``max_epochs`` at this run's last epoch, it is
        this whole run (returned finished).  Otherwise its state is this run's after as many
        epochs (returned unfinished, to be trained on): ended on fewer ``max_epochs``,
        interrupted, stopped on less patience, or stopped by the clock where this run's budget
        allows more (:meth:`reopened_under_budget`); of several, the one with the most epochs.
        A run with other threads or on another device is only ever this whole run: resuming it
        here would not give the weights of an uninterrupted run bit for bit.
        """
        best = None
        for sidecar in sorted(path.parent.parent.glob("*/lineage.json")):
            if sidecar.parent == path.parent:
                continue
            # Written atomically, so a damaged record is damage from outside: reported, deleted
            # (its run writes it again), and not a run to build on.
            other = read_json_entry(sidecar, legacy=True)
            if not isinstance(other, dict) or other.get("lineage") != self.name or not self.is_beginning(other):
                continue
            state = read_checkpoint(sidecar.parent / "state.pt")
            if state is None or not self.repeats(state["run"]):
                continue
            run = state["run"]
            if (run["stopped_by"] == "patience" and other["patience"] == self.patience) or (
                    state["finished"] and run["stopped_by"] == "max_epochs" and len(run["history"]) == self.max_epochs):
                LOGGER.info("%s: the run of %s is this one", self.label, sidecar.parent)
                return state
            if any(other.get(name) != value for name, value in self.runtime.items()):
                continue
            if run["stopped_by"] == "patience":
                state = self.reopened(state)
            state = self.reopened_under_budget(state)
            if (state["finished"] and run["stopped_by"] == "time budget") or len(run["history"]) >= self.max_epochs:
                # The clock would have stopped this run no later; or it stopped early on this
                # run's last epoch, whose snapshots this run may take otherwise.
                continue
            if best is None or len(state["run"]["history"]) > len(best["run"]["history"]):
                best = {**state, "finished": False}
                LOGGER.info("%s: the run of %s went %d epochs; training on from there", self.label,
                            sidecar.parent, len(run["history"]))
        return best

    def is_beginning(self, other: dict) -> bool:
        """Whether a run of ``other["max_epochs"]`` and ``other["patience"]`` can be this run's beginning.

        It stops no later than this run would: on as many epochs or fewer, on as much patience
        or less (without patience only where this run has none).
        """
        epochs, patience = other.get("max_epochs"), other.get("patience")
        if not isinstance(epochs, int) or epochs > self.max_epochs:
            return False
        return self.patience is None or (isinstance(patience, int) and patience <= self.patience)

    def repeats(self, run: dict) -> bool:
        """Whether the epochs of an earlier ``run`` kept snapshots where this model would.

        A run stopped early (on patience or by the clock) before its first snapshot epoch kept
        its last epoch as its only snapshot; that one displaced none, and reopening the run
        drops it.
        """
        history = run["history"]
        if run["stopped_by"] != "max_epochs" and len(run["snapshots"]) == 1 and not any(
                record.get("snapshot", False) for record in history[:-1]):
            history = history[:-1]
        return all(record.get("snapshot", False) == self.is_snapshot_epoch(record["epoch"]) for record in history)

    def reopened(self, state: dict) -> dict:
        """``state`` of a run stopped early, as the unfinished run that nothing stopped.

        Its snapshot of a last epoch that is no snapshot epoch (kept because the run stopped
        before its first) is dropped.
        """
        run = state["run"]
        history = [{k: v for k, v in record.items() if k != "snapshot" or self.is_snapshot_epoch(record["epoch"])}
                   for record in run["history"]]
        snapshots = [s for s in run["snapshots"] if self.is_snapshot_epoch(s["epoch"])]
        return {**state, "finished": False,
                "run": {**run, "history": history, "snapshots": snapshots, "stopped_by": "max_epochs"}}

    def reopened_under_budget(self, state: dict | None) -> dict | None:
        """``state``, reopened for training (:meth:`reopened`) when the clock stopped it and this
        run's budget allows more: up to its last epoch, a run the clock stopped is the run without
        a budget."""
        if state is None or not state["finished"] or state["run"]["stopped_by"] != "time budget":
            return state
        run = state["run"]
        if self.max_train_seconds is not None and run["seconds"] > self.max_train_seconds:
            return state
        LOGGER.info("%s: the clock stopped this run after epoch %d; training on", self.label, len(run["history"]))
        return self.reopened(state)
