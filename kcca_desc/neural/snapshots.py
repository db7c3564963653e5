"""Snapshot selection: which epochs' weights a run keeps and ensembles."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SnapshotSelection", "copy_weights"]


def copy_weights(module) -> dict:
    """A detached copy of ``module``'s state dict (a snapshot the training goes on without touching)."""
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


@dataclass(frozen=True)
class SnapshotSelection:
    """Keep the ``n_snapshots`` best snapshot epochs: best dev R-sum first, or the latest first.

    With dev data the kept snapshots are the epochs of highest dev R@1+R@5+R@10, the earlier of
    equals first; the first one is the dev-best epoch, and several are ensembled (snapshot
    ensembling, Huang et al. 2017).  Without dev data the latest ``n_snapshots`` are kept.

    Parameters
    ----------
    n_snapshots : int
    by_dev : bool
        Whether snapshots carry a dev R-sum to select on.

    Examples
    --------
    >>> selection = SnapshotSelection(n_snapshots=2, by_dev=True)
    >>> kept = []
    >>> for epoch, rsum in [(1, 5.0), (2, 7.0), (3, 5.0), (4, 7.0)]:
    ...     kept = selection.keep(kept, epoch, rsum, weights={})
    >>> [s["epoch"] for s in kept]
    [2, 4]
    """

    n_snapshots: int
    by_dev: bool

    @staticmethod
    def takes(is_snapshot_epoch: bool, finished: bool, kept: list[dict]) -> bool:
        """Whether an epoch's weights become a snapshot: on a snapshot epoch, or on the last
        epoch of a run stopped before its first one (a model needs weights)."""
        return is_snapshot_epoch or (finished and not kept)

    def keep(self, kept: list[dict], epoch: int, rsum: float, weights: dict) -> list[dict]:
        """``kept`` with epoch ``epoch``'s snapshot added, cut to the ``n_snapshots`` best.

        Each snapshot is ``{"epoch", "rsum", "state"}`` (the checkpoint's format); ``rsum`` is
        0 without dev data.
        """
        kept = kept + [{"epoch": epoch, "rsum": rsum, "state": weights}]
        kept.sort(key=(lambda s: (-s["rsum"], s["epoch"])) if self.by_dev else (lambda s: -s["epoch"]))
        return kept[:self.n_snapshots]
