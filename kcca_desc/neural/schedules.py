"""Learning-rate schedules of the trainable models, as multiples of the base rate per optimiser step.

Each is a function of the step (counted from 0 over the whole run) and of the steps per epoch
only, never of ``max_epochs``: a longer run continues a shorter one's schedule, which is what
lets it train on from the shorter run's checkpoint (:mod:`.lineage`).
"""

from __future__ import annotations

import math

__all__ = ["step_decay", "cosine_cycles"]


def step_decay(step: int, steps_per_epoch: int, decay_epoch: int | None, decay: float) -> float:
    """1 up to the end of epoch ``decay_epoch``, ``decay`` after it (VSE++, Faghri et al. 2018).

    Parameters
    ----------
    step : int
        Optimiser step, from 0.
    steps_per_epoch : int
    decay_epoch : int or None
        The last epoch at the full rate; None: no decay.
    decay : float
        The factor after it.

    Examples
    --------
    >>> [step_decay(s, 10, 2, 0.1) for s in (19, 20)]
    [1.0, 0.1]
    """
    if decay_epoch is not None and step >= decay_epoch * steps_per_epoch:
        return decay
    return 1.0


def cosine_cycles(step: int, steps_per_epoch: int, cycle_epochs: int, low: float) -> float:
    """A half cosine from 1 down to ``low`` over each cycle of ``cycle_epochs`` epochs (Smith 2017).

    ``f(m) = low + ½(1 − low)(1 + cos(π (m mod M) / M))``, M the steps of a cycle: every cycle
    restarts at the full rate, and its last step is near ``low`` (a snapshot's local minimum,
    Huang et al. 2017).

    Examples
    --------
    >>> [round(cosine_cycles(s, 2, 2, 0.0), 3) for s in range(5)]
    [1.0, 0.854, 0.5, 0.146, 1.0]
    """
    cycle = cycle_epochs * steps_per_epoch
    return low + 0.5 * (1 - low) * (1 + math.cos(math.pi * (step % cycle) / cycle))
