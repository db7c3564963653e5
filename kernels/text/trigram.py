"""Truncated subsequence ("trigram") string kernel, exact and lexically soft (Hodosh et al. 2013, §4.2).

The exact kernel is one sparse product of subsequence-count feature maps; the soft kernel is a
Numba dynamic programme over caption pairs that reads word similarities from a dense
vocabulary x vocabulary matrix.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from itertools import combinations

import numba
import numpy as np
import scipy.sparse as sp

from ._items import Items, check_pair, idf_vector, normalise_gram, vocabulary_of

__all__ = ["trigram_kernel", "subsequence_features"]


def _check_params(lam: float, max_len: int) -> None:
    if isinstance(max_len, bool) or not isinstance(max_len, (int, np.integer)) or max_len < 1:
        raise ValueError(f"trigram_kernel: max_len must be a positive int, got {max_len!r}")
    if not (isinstance(lam, (int, float, np.number)) and np.isfinite(lam) and lam > 0):
        raise ValueError(f"trigram_kernel: lam must be a finite number > 0, got {lam!r}")


@lru_cache(maxsize=None)
def _index_tuples(length: int, n: int) -> np.ndarray:
    """All increasing n-tuples of positions 0..length-1, shape (C(length, n), n)."""
    return np.array(list(combinations(range(length), n)), dtype=np.int64).reshape(-1, n)


def subsequence_features(
    items: list, column_of: Mapping[str, int], word_weight: np.ndarray, lam: float, max_len: int
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Feature map ``phi_w(A) = sqrt(lam^|w| idf_w) sum_{s in A} |M_{s,w}|`` of each item.

    Parameters
    ----------
    items : list of items (validated)
    column_of : mapping of str to int
        Word ids, 0..V-1.
    word_weight : ndarray of shape (V,)
        Per-word idf (ones for the unweighted kernel); a sequence gets the geometric mean of its
        words' values.
    lam, max_len : see :func:`trigram_kernel`.

    Returns
    -------
    features : csr_matrix of shape (len(items), n_keys)
    keys : ndarray of int64, the sequence code of each column (sorted)
        A sequence ``(w_1..w_n)`` of word ids is coded ``offset_n + sum_k w_k V^(n-k)``.
    """
    n_words = max(len(word_weight), 1)
    if max_len * np.log(n_words + 1) >= np.log(2.0**62):
        raise ValueError(f"trigram_kernel: {n_words} words and max_len={max_len} overflow int64 sequence codes")
    log_weight = np.log(np.where(word_weight > 0, word_weight, 1.0))
    zero_weight = word_weight <= 0
    # Group sentences by length so that each group enumerates its index tuples at once.
    by_length: dict[int, list[tuple[int, list[int]]]] = {}
    for i, item in enumerate(items):
        for sentence in item:
            by_length.setdefault(len(sentence), []).append((i, [column_of[t] for t in sentence]))
    rows, keys, values = [], [], []
    for length, group in by_length.items():
        item_index = np.array([i for i, _ in group], dtype=np.int64)
        ids = np.array([s for _, s in group], dtype=np.int64).reshape(len(group), length)
        for n in range(1, min(max_len, length) + 1):
            tuples = ids[:, _index_tuples(length, n)]            # (sentences, C(length, n), n)
            code = np.zeros(tuples.shape[:2], dtype=np.int64)
            for k in range(n):
                code = code * n_words + tuples[:, :, k]
            # Distinct lengths never share a code: lengths are offset by the number of shorter codes.
            offset_n = sum(n_words**m for m in range(1, n))
            weight = lam**n * np.exp(log_weight[tuples].mean(axis=2))
            weight[zero_weight[tuples].any(axis=2)] = 0.0
            rows.append(np.repeat(item_index, tuples.shape[1]))
            keys.append((code + offset_n).ravel())
            values.append(np.sqrt(weight).ravel())
    if not rows:
        return sp.csr_matrix((len(items), 0)), np.zeros(0, dtype=np.int64)
    all_keys, columns = np.unique(np.concatenate(keys), return_inverse=True)
    features = sp.csr_matrix((np.concatenate(values), (np.concatenate(rows), columns.ravel())),
                             shape=(len(items), len(all_keys)))
    features.sum_duplicates()
    return features, all_keys


def _exact_gram(items_a, items_b, symmetric, column_of, word_weight, lam, max_len):
    if symmetric:
        features_a, _ = subsequence_features(items_a, column_of, word_weight, lam, max_len)
        features_b = features_a
    else:
        # One feature space for both sides: encode together, then split rows.
        features, _ = subsequence_features(items_a + items_b, column_of, word_weight, lam, max_len)
        features_a, features_b = features[: len(items_a)], features[len(items_a):]
    cross = (features_a @ features_b.T).toarray()
    self_a = np.asarray(features_a.multiply(features_a).sum(axis=1)).ravel()
    self_b = self_a if symmetric else np.asarray(features_b.multiply(features_b).sum(axis=1)).ravel()
    return cross, self_a, self_b


# ---------------------------------------------------------------------------------------------
# Soft kernel: dynamic programme over sentence pairs.
#
# For sequences of length n let E(i, j) = lam * sigma(s_i, t_j) * f_n(s_i) * f_n(t_j) with
# f_n(w) = idf(w)^(1/(2n)), so that a matched pair of n-tuples contributes prod_k E(i_k, j_k) =
# lam^n prod_k sigma * sqrt(idf_w idf_w'). Summing over increasing tuples without a gap penalty:
# D_1 = E, D_l(i, j) = E(i, j) * sum_{i' < i, j' < j} D_{l-1}(i', j'), and k_n = sum_ij D_n(i, j).
# Without idf, E does not depend on n and one chain of max_len levels gives every length; with
# idf, the chain for length n runs n levels and only its last is counted.
# ---------------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
def _sentence_pair(sim, factor, tok, a0, a1, b0, b1, lam, max_len, per_length, base, cur, work):
    m = a1 - a0
    n = b1 - b0
    for i in range(m):
        row = sim[tok[a0 + i]]
        for j in range(n):
            base[i, j] = lam * row[tok[b0 + j]]
    total = 0.0
    n_chains = max_len if per_length else 1
    acc = work[0]
    column_factor = work[1]
    for chain in range(n_chains):
        depth = chain + 1 if per_length else max_len
        for j in range(n):
            column_factor[j] = factor[chain, tok[b0 + j]]
        level_sum = 0.0
        for i in range(m):
            fi = factor[chain, tok[a0 + i]]
            for j in range(n):
                value = base[i, j] * fi * column_factor[j]
                cur[i, j] = value
                level_sum += value
        if depth == 1 or not per_length:
            total += level_sum
        for level in range(2, depth + 1):
            # One pass per level: acc[j] holds the sum of D_{level-1} over the rows above and the
            # columns left of j, updated in place once cell (i, j) has used it.
            acc[:n] = 0.0
            level_sum = 0.0
            for i in range(m):
                fi = factor[chain, tok[a0 + i]]
                running = 0.0
                for j in range(n):
                    previous = cur[i, j]
                    value = base[i, j] * fi * column_factor[j] * acc[j]
                    acc[j] += running
                    running += previous
                    cur[i, j] = value
                    level_sum += value
            if level == depth or not per_length:
                total += level_sum
    return total


@numba.njit(cache=True, nogil=True)
def _item_pair(sim, factor, tok, sent_ptr, item_ptr_a, item_ptr_b, ia, ib, lam, max_len, per_length,
               base, cur, work):
    total = 0.0
    for sa in range(item_ptr_a[ia], item_ptr_a[ia + 1]):
        for sb in range(item_ptr_b[ib], item_ptr_b[ib + 1]):
            total += _sentence_pair(sim, factor, tok, sent_ptr[sa], sent_ptr[sa + 1], sent_ptr[sb],
                                    sent_ptr[sb + 1], lam, max_len, per_length, base, cur, work)
    return total


@numba.njit(cache=True)
def _scratch(longest):
    """Per-thread buffers: lam * sigma of a sentence pair, the current level, and the running
    prefix sums and column idf factors."""
    return np.empty((longest, longest)), np.empty((longest, longest)), np.empty((2, longest))


@numba.njit(parallel=True, cache=True)
def _soft_cross(sim, factor, tok, sent_ptr, item_ptr_a, item_ptr_b, lam, max_len, per_length, longest,
                symmetric):
    n_a = item_ptr_a.size - 1
    n_b = item_ptr_b.size - 1
    out = np.zeros((n_a, n_b))
    # Symmetric: row r is paired with row n_a-1-r so that every task has about the same share of
    # the upper triangle.
    n_tasks = (n_a + 1) // 2 if symmetric else n_a
    for task in numba.prange(n_tasks):
        base, cur, work = _scratch(longest)
        first_row = np.int64(task)
        mirror = n_a - 1 - first_row
        for r in range(2 if symmetric and mirror != first_row else 1):
            ia = first_row if r == 0 else mirror
            start = ia if symmetric else 0
            for ib in range(start, n_b):
                value = _item_pair(sim, factor, tok, sent_ptr, item_ptr_a, item_ptr_b, ia, ib, lam, max_len,
                                   per_length, base, cur, work)
                out[ia, ib] = value
                if symmetric:
                    out[ib, ia] = value
    return out


@numba.njit(parallel=True, cache=True)
def _soft_self(sim, factor, tok, sent_ptr, item_ptr, lam, max_len, per_length, longest):
    n = item_ptr.size - 1
    out = np.zeros(n)
    for ia in numba.prange(n):
        base, cur, work = _scratch(longest)
        out[ia] = _item_pair(sim, factor, tok, sent_ptr, item_ptr, item_ptr, ia, ia, lam, max_len, per_length,
                             base, cur, work)
    return out


def _flatten(items, column_of, first_sentence=0):
    """Token ids, sentence offsets and item offsets (into sentences) of ``items``."""
    tok, sent_ptr, item_ptr = [], [0], [first_sentence]
    for item in items:
        for sentence in item:
            tok.extend(column_of[t] for t in sentence)
            sent_ptr.append(len(tok))
        item_ptr.append(item_ptr[-1] + len(item))
    return tok, sent_ptr, np.array(item_ptr, dtype=np.int64)


def _similarity_matrix(similarity, vocabulary: list[str]) -> np.ndarray:
    sim = similarity.pairwise(vocabulary)
    sim = np.asarray(sim)
    name = getattr(similarity, "name", type(similarity).__name__)
    if sim.shape != (len(vocabulary), len(vocabulary)):
        raise ValueError(f"trigram_kernel: similarity {name!r} returned shape {sim.shape} for "
                         f"{len(vocabulary)} words")
    if not np.all(np.isfinite(sim)) or sim.min(initial=0.0) < 0 or sim.max(initial=0.0) > 1:
        raise ValueError(f"trigram_kernel: similarity {name!r} returned values outside [0, 1] or NaN")
    return np.ascontiguousarray(sim, dtype=np.float32)


def _soft_gram(items_a, items_b, symmetric, vocabulary, column_of, word_weight, lam, max_len, similarity,
               idf_given):
    sim = _similarity_matrix(similarity, vocabulary)
    per_length = bool(idf_given)
    exponents = 1.0 / (2.0 * np.arange(1, max_len + 1)) if per_length else np.ones(1)
    factor = np.power(word_weight[None, :], exponents[:, None]) if per_length else np.ones((1, len(vocabulary)))
    tok_a, ptr_a, item_ptr_a = _flatten(items_a, column_of)
    if symmetric:
        tok, sent_ptr, item_ptr_b = tok_a, ptr_a, item_ptr_a
    else:
        tok_b, ptr_b, item_ptr_b = _flatten(items_b, column_of, first_sentence=len(ptr_a) - 1)
        tok = tok_a + tok_b
        sent_ptr = ptr_a + [len(tok_a) + p for p in ptr_b[1:]]
    tok = np.array(tok, dtype=np.int64)
    sent_ptr = np.array(sent_ptr, dtype=np.int64)
    longest = max(int(np.diff(sent_ptr).max(initial=0)), 1)
    args = (sim, factor, tok, sent_ptr)
    params = (float(lam), int(max_len), per_length, longest)
    cross = _soft_cross(*args, item_ptr_a, item_ptr_b, *params, symmetric)
    if symmetric:
        self_a = self_b = np.diag(cross).copy()
    else:
        self_a = _soft_self(*args, item_ptr_a, *params)
        self_b = _soft_self(*args, item_ptr_b, *params)
    return cross, self_a, self_b


def trigram_kernel(
    items_a: Items,
    items_b: Items | None = None,
    lam: float = 0.5,
    max_len: int = 3,
    idf: Mapping[str, float] | None = None,
    similarity=None,
) -> np.ndarray:
    """Normalised truncated subsequence kernel between items of sentences.

    For sentences ``s, s'`` and word sequences ``w`` of length 1..``max_len``, with
    ``|M_{s,w}|`` the number of occurrences of ``w`` as a subsequence of ``s`` (gaps allowed and
    not penalised),

    .. math:: k(s, s') = \\sum_w |M_{s,w}| |M_{s',w}| \\lambda^{|w|} \\,\\mathrm{idf}_w

    with ``idf_w`` the geometric mean of the idf of ``w``'s words (1 without ``idf``). With a word
    similarity ``sigma``, sequences of equal length match softly:

    .. math:: k_\\sigma(s, s') = \\sum_{w, w'} |M_{s,w}| |M_{s',w'}| \\lambda^{|w|}
              \\prod_k \\sigma(w_k, w'_k) \\sqrt{\\mathrm{idf}_w \\mathrm{idf}_{w'}}

    Items aggregate sentences, ``S(A, B) = sum_{s in A, s' in B} k(s, s')``, and the result is
    ``S(A, B) / sqrt(S(A, A) S(B, B))``.

    Parameters
    ----------
    items_a : sequence of items
        Each item a list of sentences, each a list of tokens.
    items_b : sequence of items, default=None
        None computes the symmetric Gram of ``items_a`` (upper triangle only in the soft case).
    lam : float, default=0.5
        Weight per matched word, ``lambda_m``.
    max_len : int, default=3
        Longest sequence; ``max_len=1`` is the (unnormalised) bag-of-words inner product.
    idf : mapping of str to float, default=None
        Word idf values; words it does not know get its largest value.
    similarity : WordSimilarity, default=None
        None: exact matching, one sparse product of subsequence-count features. Otherwise an
        object with ``pairwise(words) -> ndarray`` (values in [0, 1], 1 for equal words), called
        once on the joint vocabulary; the kernel is then a Numba dynamic programme in
        O(max_len |s| |s'|) per sentence pair (O(max_len^2 |s| |s'|) with idf).

    Returns
    -------
    ndarray of shape (len(items_a), len(items_b)), float64
        Zero-norm items (no words) give 0 off the diagonal and 1 on a symmetric diagonal.

    See Also
    --------
    kernels.text.bow.bow_kernel : cosine of word counts.
    subsequence_features : the exact kernel's sparse feature map.

    References
    ----------
    .. [1] Hodosh, Young & Hockenmaier (2013), "Framing image description as a ranking task:
       data, models and evaluation metrics", JAIR 47, 853-899, §4.2.
    .. [2] Lodhi et al. (2002), "Text classification using string kernels", JMLR 2, 419-444.
    .. [3] Bloehdorn, Basili, Cammisa & Moschitti (2006), "Semantic kernels for text
       classification based on topological measures of feature similarity", ICDM.
    """
    _check_params(lam, max_len)
    items_a, items_b, symmetric = check_pair(items_a, items_b)
    vocabulary = vocabulary_of(items_a, items_b)
    column_of = {word: j for j, word in enumerate(vocabulary)}
    word_weight = idf_vector(vocabulary, idf) if idf is not None else np.ones(len(vocabulary))
    if similarity is None:
        cross, self_a, self_b = _exact_gram(items_a, items_b, symmetric, column_of, word_weight, lam, max_len)
    else:
        cross, self_a, self_b = _soft_gram(items_a, items_b, symmetric, vocabulary, column_of, word_weight,
                                           lam, max_len, similarity, idf is not None)
    return normalise_gram(cross, self_a, self_b, symmetric)
