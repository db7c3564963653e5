"""The word similarities of Hodosh et al. (2013), Figure 6, fitted for a neighbour comparison.

Figure 6 of the paper lists the nearest neighbours of "rider" and "swim" under four sources of
word similarity: IBM Model 1 alignment of the captions of an image (A), distributional similarity
on the training captions (D_ic) and on an external corpus (D_ext), and WordNet similarity of Lin
(1998). The sources here are the toolkit's own (:data:`kcca_desc.text.WORD_SIMILARITIES`), fitted
as the soft trigram kernels fit them, so the neighbours show what those kernels see.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Mapping, Sequence

from kcca_desc._core.cache import cache_dir
from kcca_desc.kernels.text.similarity import WordNetUnavailableError, WordSimilarity, load_wordnet, top_neighbours
from kcca_desc.text import WORD_SIMILARITIES, TrainingText

__all__ = ["FIGURE6_WORDS", "FIGURE6_SOURCES", "wordnet_unavailable", "fit_word_similarities", "frequent_words",
           "neighbour_lists"]

#: The query words of Figure 6.
FIGURE6_WORDS = ("rider", "swim")

#: Figure 6's name of each source -> its name in :data:`kcca_desc.text.WORD_SIMILARITIES`.
FIGURE6_SOURCES: dict[str, str] = {"A": "a", "D_ic": "dic", "D_ext": "dext", "Lin": "lin"}

#: The sources that read WordNet.
_NEEDS_WORDNET = frozenset({"Lin"})


def wordnet_unavailable() -> str | None:
    """Why WordNet cannot be loaded, or None when it can: a check to make before expensive work."""
    try:
        # Where the toolkit's Lin similarity reads it, so the reader loaded here is the one it reuses.
        load_wordnet(cache_dir("nltk_data"))
    except WordNetUnavailableError as error:
        return str(error)
    return None


def fit_word_similarities(
    items: Sequence, tags: Sequence, sources: Mapping[str, str] = FIGURE6_SOURCES
) -> tuple[dict[str, WordSimilarity], dict[str, float], dict[str, str]]:
    """Fit the word similarities ``sources`` on preprocessed training items.

    Parameters
    ----------
    items : list of items
        Token lists of every caption of every training image (``Preprocessor.process_items``).
    tags : list of items
        Their Penn Treebank tags, in the same nesting (the alignment source needs them).
    sources : mapping of str to str, default=FIGURE6_SOURCES
        Display name -> name in :data:`kcca_desc.text.WORD_SIMILARITIES`.

    Returns
    -------
    similarities : dict of str to WordSimilarity
        The fitted sources, by display name.
    seconds : dict of str to float
        Wall time of each fit.
    unavailable : dict of str to str
        Sources that need WordNet when it cannot be loaded, with the reason; checked before any
        fit, so they are skipped rather than failing after the others.
    """
    missing = wordnet_unavailable() if _NEEDS_WORDNET & set(sources) else None
    unavailable = {name: missing for name in sources if name in _NEEDS_WORDNET and missing}
    train = TrainingText(kernel="word neighbours", items=list(items), tags=list(tags), view=list(items),
                         sentences=[caption for item in items for caption in item], random_state=0)
    similarities, seconds = {}, {}
    for name, registered in sources.items():
        if name in unavailable:
            continue
        start = time.perf_counter()
        similarities[name] = WORD_SIMILARITIES[registered](train)
        seconds[name] = time.perf_counter() - start
    return similarities, seconds, unavailable


def frequent_words(items: Sequence, min_count: int = 5) -> list[str]:
    """The words of ``items`` (token lists of captions, nested by item) seen at least ``min_count`` times."""
    if min_count < 1:
        raise ValueError(f"min_count must be >= 1, got {min_count}")
    counts = Counter(word for item in items for caption in item for word in caption)
    return sorted(word for word, count in counts.items() if count >= min_count)


def neighbour_lists(
    similarities: Mapping[str, WordSimilarity], words: Sequence[str], vocabulary: Sequence[str], k: int = 5
) -> dict[str, dict[str, list[list]]]:
    """``{word: {source: [[neighbour, σ rounded to 4 places], ...]}}``, the top ``k`` of each (JSON-able)."""
    return {word: {name: [[w, round(float(v), 4)] for w, v in top_neighbours(sim, word, vocabulary, k=k)]
                   for name, sim in similarities.items()}
            for word in words}
