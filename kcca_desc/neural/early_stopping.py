"""Dev patience: how many epochs a run may go without a better dev R-sum."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EarlyStopping"]


@dataclass
class EarlyStopping:
    """Stop after ``patience`` counted epochs in a row without a better dev R-sum.

    Epochs up to ``from_epoch`` still record a better figure but never count as waiting: a
    schedule's later phase (VSE's learning-rate decay) lifts dev predictably, so a plateau
    before it must not end the run.  ``best`` and ``waited`` are the state a checkpoint keeps.

    Parameters
    ----------
    patience : int or None
        None: never stop.
    from_epoch : int, default=0
    best : float, default=-inf
        The best dev R-sum so far.
    waited : int, default=0
        Counted epochs since it.

    Examples
    --------
    >>> stopping = EarlyStopping(patience=2, from_epoch=2)
    >>> for epoch, rsum in enumerate([10.0, 10.0, 9.0, 9.5], start=1):
    ...     stopping.update(epoch, rsum)
    >>> stopping.waited, stopping.stop
    (2, True)
    """

    patience: int | None
    from_epoch: int = 0
    best: float = float("-inf")
    waited: int = 0

    def update(self, epoch: int, rsum: float) -> None:
        """Record epoch ``epoch``'s dev R-sum (epochs count from 1)."""
        if rsum > self.best:
            self.best, self.waited = rsum, 0
        elif epoch > self.from_epoch:
            self.waited += 1

    @property
    def stop(self) -> bool:
        """Whether the run has waited its patience out."""
        return self.patience is not None and self.waited >= self.patience
