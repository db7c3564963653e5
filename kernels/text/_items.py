"""Shared input handling of the text kernels: items, vocabularies, idf, Gram normalisation.

An *item* is a list of sentences, a *sentence* a list of preprocessed tokens (str): a training
image is its captions, a query caption a one-sentence item.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import DataError, ParameterError

Items = Sequence[Sequence[Sequence[str]]]

#: Sentences of more tokens than this make the trigram kernels warn (:func:`warn_long_sentences`).
#: Their cost grows steeply with a sentence's length: one sentence against a one-word item took
#: 0.1 s at 100 tokens, 0.9 s at 200, 13 s at 400 and 54 s at 600 (2,000 tokens: minutes), while
#: a caption has about 12 and the longest of Flickr8K's about 40.
LONG_SENTENCE_TOKENS = 150


def check_items(items: Items, name: str) -> list[list[list[str]]]:
    """Validate ``items`` (a sequence of items, each a sequence of token lists) and copy them to lists."""
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise ParameterError(f"{name} must be a sequence of items (lists of sentences), got {type(items).__name__}")
    checked = []
    for i, item in enumerate(items):
        if isinstance(item, (str, bytes)) or not isinstance(item, Sequence):
            raise ParameterError(f"{name}[{i}] must be a list of sentences, got {type(item).__name__}")
        sentences = []
        for j, sentence in enumerate(item):
            if isinstance(sentence, (str, bytes)) or not isinstance(sentence, Sequence):
                raise ParameterError(f"{name}[{i}][{j}] must be a list of tokens, got {type(sentence).__name__}")
            sentence = list(sentence)
            # Token types and emptiness are checked at C speed (a table run validates the 30,000
            # training captions for every kernel); the slow loop runs only to name a bad token.
            if not (set(map(type, sentence)) <= {str} and all(sentence)):
                _check_tokens(sentence, f"{name}[{i}][{j}]")
            sentences.append(sentence)
        checked.append(sentences)
    return checked


def _check_tokens(sentence: list, where: str) -> None:
    """Raise naming the first token of ``sentence`` that is not a non-empty str (a str subclass passes)."""
    for k, token in enumerate(sentence):
        if not isinstance(token, str) or not token:
            raise ParameterError(f"{where}[{k}] must be a non-empty str, got {token!r}")


def check_pair(items_a: Items, items_b: Items | None) -> tuple[list, list, bool]:
    """Validated ``(items_a, items_b, symmetric)``; ``items_b=None`` means ``items_a`` against itself."""
    items_a = check_items(items_a, "items_a")
    if items_b is None:
        return items_a, items_a, True
    return items_a, check_items(items_b, "items_b"), False


def warn_long_sentences(items: list, name: str, what: str, *, limit: int = LONG_SENTENCE_TOKENS) -> None:
    """Warn, naming the longest, when sentences of ``items`` have more than ``limit`` tokens.

    A warning, not an error: such a sentence is valid but can take minutes (see
    :data:`LONG_SENTENCE_TOKENS`), most likely a paragraph or a file read as one caption.
    """
    long = [(len(sentence), i, j) for i, item in enumerate(items) for j, sentence in enumerate(item)
            if len(sentence) > limit]
    if not long:
        return
    length, i, j = max(long)
    start = " ".join(items[i][j][:6])
    others = f" ({len(long) - 1} more sentences over {limit} tokens)" if len(long) > 1 else ""
    warnings.warn(f"{what}: {name}[{i}][{j}] (\"{start} ...\") has {length:,} tokens{others}; the trigram kernel's "
                  f"cost grows steeply with a sentence's length (about 1 s at 200 tokens, 13 s at 400), so it "
                  f"may take minutes: is it a caption?", UserWarning, stacklevel=3)


def vocabulary_of(*item_lists: list) -> list[str]:
    """Sorted distinct tokens of the given item lists (sorted, so results do not depend on hashing)."""
    return sorted({token for items in item_lists for item in items for sentence in item for token in sentence})


def document_idf(items: Items) -> dict[str, float]:
    """Inverse document frequency of each word over items, ``idf(w) = log(|D| / |D(w)|)``.

    Parameters
    ----------
    items : sequence of items
        The documents D (training images; an item's captions form one document).

    Returns
    -------
    dict of str to float
        ``idf(w)`` for each word occurring in ``items``; 0 for words in every item.

    References
    ----------
    .. [1] Hodosh, Young & Hockenmaier (2013), "Framing image description as a ranking task",
       JAIR 47, Sections 3.1 and 3.4.1.
    """
    items = check_items(items, "items")
    if not items:
        raise DataError("document_idf: items is empty; idf needs at least one document")
    document_frequency: dict[str, int] = {}
    for item in items:
        for word in {token for sentence in item for token in sentence}:
            document_frequency[word] = document_frequency.get(word, 0) + 1
    n_documents = len(items)
    return {word: math.log(n_documents / count) for word, count in document_frequency.items()}


def idf_vector(vocabulary: Sequence[str], idf: Mapping[str, float]) -> np.ndarray:
    """idf of each vocabulary word; words unknown to ``idf`` get its largest value.

    An unseen word is at least as rare as the rarest training word, so it gets the largest idf
    (not 0, which would make it vanish from the query); an empty ``idf`` gives 1 everywhere.
    """
    values = np.fromiter(idf.values(), dtype=np.float64, count=len(idf))
    if values.size and not (np.all(np.isfinite(values)) and np.all(values >= 0)):
        raise DataError("idf values must be finite and non-negative")
    unknown = float(values.max()) if values.size else 1.0
    return np.array([idf.get(word, unknown) for word in vocabulary], dtype=np.float64)


def normalise_gram(cross: np.ndarray, self_a: np.ndarray, self_b: np.ndarray, symmetric: bool) -> np.ndarray:
    """``K(A, B) = S(A, B) / sqrt(S(A, A) S(B, B))``; zero-norm items give 0 (1 on a symmetric diagonal).

    A float64 ``cross`` is scaled in place and returned: at 6,000 items each temporary of the
    out-of-place product was another 288 MB and 2-5% of a soft trigram Gram's time.
    """
    norm_a = np.sqrt(np.maximum(self_a, 0.0))
    norm_b = np.sqrt(np.maximum(self_b, 0.0))
    scale_a = np.divide(1.0, norm_a, out=np.zeros_like(norm_a), where=norm_a > 0)
    scale_b = np.divide(1.0, norm_b, out=np.zeros_like(norm_b), where=norm_b > 0)
    gram = np.asarray(cross, dtype=np.float64)
    gram *= scale_a[:, None]
    gram *= scale_b[None, :]
    if symmetric:
        # Rounding can push the diagonal off 1 by an ulp; an empty item is identical to itself.
        np.fill_diagonal(gram, 1.0)
    return gram
