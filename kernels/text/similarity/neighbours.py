"""Nearest neighbours of words under a word similarity (Hodosh et al. 2013, Figure 6)."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ...errors import ParameterError
from .base import WordSimilarity

__all__ = ["top_neighbours", "neighbour_table"]


def top_neighbours(
    similarity: WordSimilarity, word: str, vocabulary: Sequence[str], *, k: int = 5
) -> list[tuple[str, float]]:
    """The ``k`` words of ``vocabulary`` most similar to ``word`` (``word`` itself excluded).

    Parameters
    ----------
    similarity : WordSimilarity
        A fitted word similarity.
    word : str
    vocabulary : sequence of str
        Candidate neighbours.
    k : int, default=5

    Returns
    -------
    list of (str, float)
        At most ``k`` (neighbour, σ) pairs with σ > 0, by decreasing σ, ties
        broken alphabetically.
    """
    if not isinstance(word, str):
        raise ParameterError(f"word must be a str, got {type(word).__name__}")
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"k must be an int >= 1, got {k!r}")
    candidates = np.array(sorted(set(vocabulary) - {word}), dtype=object)
    if candidates.size == 0:
        return []
    scores = similarity.pairwise([word], list(candidates))[0]
    order = np.argsort(-scores, kind="stable")[:k]  # candidates are sorted: ties stay alphabetical
    return [(str(candidates[i]), float(scores[i])) for i in order if scores[i] > 0]


def neighbour_table(
    similarities: Mapping[str, WordSimilarity], words: Sequence[str], vocabulary: Sequence[str], *, k: int = 5
) -> str:
    """A text table of the top-``k`` neighbours of each word, one column per similarity."""
    names = list(similarities)
    cell_width = 20
    lines = ["word".ljust(10) + "".join(name.ljust(cell_width) for name in names)]
    for word in words:
        columns = [top_neighbours(similarities[name], word, vocabulary, k=k) for name in names]
        for rank in range(k):
            cells = [f"{c[rank][0]} {c[rank][1]:.2f}" if rank < len(c) else "-" for c in columns]
            lines.append((word if rank == 0 else "").ljust(10) + "".join(c.ljust(cell_width) for c in cells))
        lines.append("")
    return "\n".join(lines)
