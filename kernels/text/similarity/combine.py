"""Combinations of word similarities (Hodosh et al. 2013, Section 3.5.6)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import ParameterError
from .base import WordSimilarity

__all__ = ["AverageSimilarity", "MaxSimilarity"]


class _Combination(WordSimilarity):
    """Word similarities folded element-wise, in place, by the binary ufunc ``_fold``."""

    _fold: np.ufunc

    def __init__(self, similarities: Sequence[WordSimilarity]):
        self.similarities = similarities

    def _components(self) -> list[WordSimilarity]:
        components = list(self.similarities)
        if not components:
            raise ParameterError(f"{type(self).__name__}: similarities must name at least one WordSimilarity")
        for i, s in enumerate(components):
            if not isinstance(s, WordSimilarity):
                raise ParameterError(
                    f"{type(self).__name__}: similarities[{i}] is a {type(s).__name__}, not a WordSimilarity"
                )
        return components

    @property
    def name(self) -> str:
        return f"{self._symbol}({','.join(s.name for s in self._components())})"

    def _similarity(self, words_a: list[str], words_b: list[str]) -> np.ndarray:
        components = self._components()
        result = components[0].pairwise(words_a, words_b)
        for s in components[1:]:
            self._fold(result, s.pairwise(words_a, words_b), out=result)
        return result


class AverageSimilarity(_Combination):
    r"""Mean of word similarities: :math:`\sigma(w, w') = \frac1K \sum_k \sigma_k(w, w')`.

    With :math:`D_{ext}` and :math:`D_{ic}` this is the paper's
    :math:`D_{ext+ic}` ("captures aspects of the distributional similarities
    computed over both corpora").  Each component keeps its own vocabulary, so a
    word known to one source only gets that source's similarity divided by K.

    Parameters
    ----------
    similarities : sequence of WordSimilarity
        Fitted components.

    See Also
    --------
    MaxSimilarity, DistributionalSimilarity

    References
    ----------
    .. [1] Hodosh, M., Young, P. and Hockenmaier, J. (2013). Framing image
       description as a ranking task. JAIR 47, 853-899.
    """

    _symbol = "mean"
    _fold = np.add

    def _similarity(self, words_a: list[str], words_b: list[str]) -> np.ndarray:
        total = super()._similarity(words_a, words_b)
        total /= len(self._components())
        return total


class MaxSimilarity(_Combination):
    r"""Element-wise maximum of word similarities: :math:`\sigma(w, w') = \max_k \sigma_k(w, w')`.

    With a distributional similarity D and the alignment similarity A this is
    the paper's :math:`\sigma_{D+A} = \max(\sigma_D, \sigma_A)`.

    Parameters
    ----------
    similarities : sequence of WordSimilarity
        Fitted components.

    See Also
    --------
    AverageSimilarity, AlignmentSimilarity

    References
    ----------
    .. [1] Hodosh, M., Young, P. and Hockenmaier, J. (2013). Framing image
       description as a ranking task. JAIR 47, 853-899.
    """

    _symbol = "max"
    _fold = np.maximum
