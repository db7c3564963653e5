"""The dev figure of the trainable models: R@1/5/10 of both directions and their sum.

It ranks a square pool whose diagonal holds the matching pairs (one caption per image) with
:func:`~kcca_desc.evaluate.ranks.gold_ranks`, so that the tie rule is the toolkit's one:
ties count against the gold item, and a constant scorer gets no credit.
"""

from __future__ import annotations

import numpy as np

from ..evaluate.ranks import gold_ranks, retrieval_metrics

__all__ = ["recall_sum"]

_KS = (1, 5, 10)


def recall_sum(scores: np.ndarray) -> dict[str, float]:
    """R@1/5/10 of both directions on a square pool whose diagonal is the matching pairs.

    Parameters
    ----------
    scores : ndarray of shape (n, n)
        ``scores[i, j]`` scores image ``i`` against text ``j``; text ``i`` is image ``i``'s.

    Returns
    -------
    dict
        ``annotation_R@k`` (images rank the texts, rows) and ``search_R@k`` (texts rank the
        images, columns) for k = 1, 5, 10, in percent, and ``rsum``, their sum (at most 600).

    Raises
    ------
    ValueError
        If ``scores`` holds NaN or infinite values (a diverged network), as
        :func:`~kcca_desc.evaluate.ranks.gold_ranks` does.

    Examples
    --------
    >>> recall_sum(np.eye(20))["rsum"]
    600.0
    >>> recall_sum(np.ones((20, 20)))["annotation_R@10"]
    0.0
    """
    gold = [[i] for i in range(len(scores))]
    out = {}
    for task, queries in (("annotation", scores), ("search", scores.T)):
        recalls = retrieval_metrics(gold_ranks(queries, gold), _KS)
        for k in _KS:
            out[f"{task}_R@{k}"] = recalls[f"R@{k}"]
    out["rsum"] = float(sum(out.values()))
    return out
