"""Truncated subsequence ("trigram") string kernel, exact and lexically soft.

The exact kernel is Tri of Hodosh, Young & Hockenmaier (2013), Section 3.4.3; the soft one
matches words by a lexical similarity as in its Section 3.5.1.

The exact kernel is one sparse product of subsequence-count feature maps; the soft kernel is a
Numba dynamic programme over caption pairs that reads word similarities from a dense
vocabulary x vocabulary matrix.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from functools import lru_cache
from itertools import combinations
from typing import NamedTuple

import numba
import numpy as np
import scipy.sparse as sp

from ..errors import DataError, ParameterError
from ._items import Items, check_pair, idf_vector, normalise_gram, vocabulary_of, warn_long_sentences

__all__ = ["trigram_kernel", "subsequence_features"]


def _check_params(lam: float, max_len: int) -> None:
    if isinstance(max_len, bool) or not isinstance(max_len, (int, np.integer)) or max_len < 1:
        raise ParameterError(f"trigram_kernel: max_len must be a positive int, got {max_len!r}")
    if not (isinstance(lam, (int, float, np.number)) and np.isfinite(lam) and lam > 0):
        raise ParameterError(f"trigram_kernel: lam must be a finite number > 0, got {lam!r}")


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
        raise DataError(f"trigram_kernel: {n_words} words and max_len={max_len} overflow int64 sequence codes")
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
#
# One sentence pair is a few dozen cells whose prefix sums form chains of dependent loads and
# stores. The column sentences are therefore grouped by length and each row sentence runs the
# programme against up to _LANES column sentences of one length at once: every lane follows the
# same (i, j) loop, so the innermost loop runs over lanes, contiguous in memory, and vectorises
# (1.9x the pair-at-a-time loop on the 6,000-item Flickr8K Gram, measured side by side; narrower
# blocks pay more loop set-up per cell: 16 lanes were slower than one pair at a time). sigma is
# gathered once per distinct word of the row item, whose captions share many words, and only
# the last level of a chain is summed without being stored. E of a chain is computed once and
# read by each of its levels, and every level sums into its total as it is computed (no separate
# pass); the scratch cells are viewed as compact (m, n, lanes) blocks, so that a pair of short
# sentences stays in cache (1.3x the CPU time of a strided (longest, longest, lanes) buffer with
# E recomputed per level, on 600 Flickr8K items, one thread, measured side by side; results
# bitwise equal).
# ---------------------------------------------------------------------------------------------

_LANES = 128


class _ColumnLayout(NamedTuple):
    """Column sentences grouped by length (then item), tokens stored ``[j, lane]`` per group."""

    lengths: np.ndarray   # (K,) sentence length of each group
    bounds: np.ndarray    # (K + 1,) group k holds sorted sentences bounds[k]..bounds[k+1]-1
    offsets: np.ndarray   # (K + 1,) group k's tokens are tokens[offsets[k]:offsets[k+1]], shape (L, G)
    tokens: np.ndarray    # word ids
    factors: np.ndarray   # (chains, len(tokens)) idf factor of each token per chain
    items: np.ndarray     # (bounds[-1],) item of each sorted sentence, ascending within a group


def _column_layout(tok: np.ndarray, sent_ptr: np.ndarray, item_ptr: np.ndarray, factor: np.ndarray) -> _ColumnLayout:
    sentences = np.arange(item_ptr[0], item_ptr[-1])
    items = np.repeat(np.arange(item_ptr.size - 1), np.diff(item_ptr))
    lengths = sent_ptr[sentences + 1] - sent_ptr[sentences]
    # Empty sentences match nothing.
    keep = lengths > 0
    order = np.lexsort((items[keep], lengths[keep]))
    sentences, items, lengths = sentences[keep][order], items[keep][order], lengths[keep][order]
    group_lengths, starts = np.unique(lengths, return_index=True)
    bounds = np.append(starts, sentences.size)
    offsets = np.concatenate([[0], np.cumsum(group_lengths * np.diff(bounds))])
    tokens = np.concatenate([tok[sent_ptr[sentences[a:b]][None, :] + np.arange(n)[:, None]].ravel()
                             for n, a, b in zip(group_lengths, bounds[:-1], bounds[1:])] or [np.zeros(0, np.int64)])
    return _ColumnLayout(group_lengths.astype(np.int64), bounds.astype(np.int64), offsets.astype(np.int64),
                         tokens.astype(np.int64), np.ascontiguousarray(factor[:, tokens]), items.astype(np.int64))


@numba.njit(cache=True, nogil=True)
def _edges(word_rows, slots, row_tok, factor, lam, chain, column_factor, first, stride, n, lanes, store, edges,
           level_sum):
    """E(i, j) = lam sigma(s_i, t_j) f(s_i) f(t_j) of one chain into ``edges`` (if ``store``), summed into ``level_sum``."""
    for i in range(slots.size):
        fi = lam * factor[chain, row_tok[i]]
        si = slots[i]
        for j in range(n):
            column = first + j * stride
            if store:
                for g in range(lanes):
                    value = word_rows[si, j, g] * fi * column_factor[column + g]
                    edges[i, j, g] = value
                    level_sum[g] += value
            else:
                for g in range(lanes):
                    level_sum[g] += word_rows[si, j, g] * fi * column_factor[column + g]


@numba.njit(cache=True, nogil=True)
def _next_level(edges, previous, m, n, lanes, store, out, acc, running, level_sum):
    """D_l = E * (sum of D_{l-1} above and left of the cell), D_{l-1} in ``previous``.

    Written to ``out`` if ``store``; summed into ``level_sum``.
    """
    # acc[j] holds the sum of D_{l-1} over the rows above and the columns left of j, updated in
    # place once cell (i, j) has used it; running is the prefix sum of D_{l-1} along the row.
    acc[:n, :lanes] = 0.0
    for i in range(m):
        running[:lanes] = 0.0
        for j in range(n):
            if store:
                for g in range(lanes):
                    value = edges[i, j, g] * acc[j, g]
                    out[i, j, g] = value
                    level_sum[g] += value
                    acc[j, g] += running[g]
                    running[g] += previous[i, j, g]
            else:
                for g in range(lanes):
                    level_sum[g] += edges[i, j, g] * acc[j, g]
                    acc[j, g] += running[g]
                    running[g] += previous[i, j, g]


@numba.njit(cache=True, nogil=True)
def _lane_block(word_rows, slots, row_tok, factor, lam, col_factors, first, stride, n, lanes, max_len, per_length,
                cells, acc, running, sums, totals):
    """Kernel values of one row sentence against ``lanes`` column sentences of length ``n``.

    ``cells`` holds three flat scratch arrays of at least rows x n x _LANES values (E and two
    levels of D, viewed compactly so that a short pair stays in the L1 cache); ``sums`` two rows
    of _LANES: the counted levels' sum and a sink for the levels a chain with idf does not count.
    """
    m = slots.size
    size = m * n * _LANES
    edges = cells[0, :size].reshape((m, n, _LANES))
    levels = (cells[1, :size].reshape((m, n, _LANES)), cells[2, :size].reshape((m, n, _LANES)))
    totals[:lanes] = 0.0
    for chain in range(max_len if per_length else 1):
        depth = chain + 1 if per_length else max_len
        column_factor = col_factors[chain]
        sums[0, :lanes] = 0.0
        # Without idf every level counts; with idf only the chain's last.
        _edges(word_rows, slots, row_tok, factor, lam, chain, column_factor, first, stride, n, lanes, depth > 1,
               edges, sums[0] if depth == 1 or not per_length else sums[1])
        previous = edges
        for level in range(2, depth + 1):
            out = levels[level % 2]
            _next_level(edges, previous, m, n, lanes, level < depth, out, acc, running,
                        sums[0] if level == depth or not per_length else sums[1])
            previous = out
        totals[:lanes] += sums[0, :lanes]


@numba.njit(cache=True, nogil=True)
def _soft_row(sim, factor, tok, sent_ptr, item_ptr_a, ia, layout, first_item, stop_item, out_row, shift, lam,
              max_len, per_length, longest):
    """Add S(A_ia, B_ib) to ``out_row[ib - shift]`` for every column item first_item <= ib < stop_item."""
    lengths, bounds, offsets, col_tokens, col_factors, col_items = layout
    item_tok = tok[sent_ptr[item_ptr_a[ia]]:sent_ptr[item_ptr_a[ia + 1]]]
    if item_tok.size == 0:
        return
    # The captions of one item share words: sigma rows are gathered once per distinct word.
    words = np.unique(item_tok)
    slots = np.searchsorted(words, item_tok)
    row_buffer = np.empty(words.size * longest * _LANES, dtype=np.float32)
    cells = np.empty((3, longest * longest * _LANES))
    acc = np.empty((longest, _LANES))
    running = np.empty(_LANES)
    sums = np.empty((2, _LANES))
    totals = np.empty(_LANES)
    item_first_token = sent_ptr[item_ptr_a[ia]]
    for k in range(lengths.size):
        n = lengths[k]
        items = col_items[bounds[k]:bounds[k + 1]]
        stop = np.searchsorted(items, stop_item)
        for g0 in range(np.searchsorted(items, first_item), stop, _LANES):
            lanes = min(_LANES, stop - g0)
            first = offsets[k] + g0
            # Compact (words, n, lanes): the rows of short sentences stay close together in cache.
            word_rows = row_buffer[:words.size * n * _LANES].reshape((words.size, n, _LANES))
            for w in range(words.size):
                row = sim[words[w]]
                for j in range(n):
                    column = first + j * items.size
                    for g in range(lanes):
                        word_rows[w, j, g] = row[col_tokens[column + g]]
            for sa in range(item_ptr_a[ia], item_ptr_a[ia + 1]):
                a0 = sent_ptr[sa] - item_first_token
                a1 = sent_ptr[sa + 1] - item_first_token
                if a1 == a0:
                    continue
                _lane_block(word_rows, slots[a0:a1], item_tok[a0:a1], factor, lam, col_factors, first, items.size, n,
                            lanes, max_len, per_length, cells, acc, running, sums, totals)
                for g in range(lanes):
                    out_row[items[g0 + g] - shift] += totals[g]


@numba.njit(parallel=True, cache=True)
def _soft_cross(sim, factor, tok, sent_ptr, item_ptr_a, layout_b, n_b, lam, max_len, per_length, longest,
                symmetric):
    n_a = item_ptr_a.size - 1
    out = np.zeros((n_a, n_b))
    # Symmetric: row r is paired with row n_a-1-r so that every task has about the same share of
    # the upper triangle, which is then mirrored.
    n_tasks = (n_a + 1) // 2 if symmetric else n_a
    for task in numba.prange(n_tasks):
        first_row = np.int64(task)
        mirror = n_a - 1 - first_row
        for r in range(2 if symmetric and mirror != first_row else 1):
            ia = first_row if r == 0 else mirror
            _soft_row(sim, factor, tok, sent_ptr, item_ptr_a, ia, layout_b, ia if symmetric else 0, n_b, out[ia], 0,
                      lam, max_len, per_length, longest)
            if symmetric:
                for ib in range(ia + 1, n_b):
                    out[ib, ia] = out[ia, ib]
    return out


@numba.njit(parallel=True, cache=True)
def _soft_self(sim, factor, tok, sent_ptr, item_ptr, layout, lam, max_len, per_length, longest):
    n = item_ptr.size - 1
    out = np.zeros(n)
    for ia in numba.prange(n):
        _soft_row(sim, factor, tok, sent_ptr, item_ptr, ia, layout, ia, ia + 1, out[ia:ia + 1], ia, lam, max_len,
                  per_length, longest)
    return out


#: Items per group whose self-similarities S(A, A) are computed together (cross kernels): each
#: group gathers word similarities over its own vocabulary only.
_SELF_GROUP = 256


def _flatten(items, vocabulary):
    """Token ids (into ``vocabulary``), sentence offsets and item offsets (into sentences) of ``items``."""
    column_of = {word: j for j, word in enumerate(vocabulary)}
    tok, sent_ptr, item_ptr = [], [0], [0]
    for item in items:
        for sentence in item:
            tok.extend(column_of[t] for t in sentence)
            sent_ptr.append(len(tok))
        item_ptr.append(item_ptr[-1] + len(item))
    return np.array(tok, dtype=np.int64), np.array(sent_ptr, dtype=np.int64), np.array(item_ptr, dtype=np.int64)


def _similarity_matrix(similarity, words_a: list[str], words_b: list[str] | None = None) -> np.ndarray:
    sim = np.asarray(similarity.pairwise(words_a, words_b))
    name = getattr(similarity, "name", type(similarity).__name__)
    shape = (len(words_a), len(words_a if words_b is None else words_b))
    if sim.shape != shape:
        raise ParameterError(f"trigram_kernel: similarity {name!r} returned shape {sim.shape} for {shape[0]} x "
                         f"{shape[1]} words")
    if not np.all(np.isfinite(sim)) or sim.min(initial=0.0) < 0 or sim.max(initial=0.0) > 1:
        raise ParameterError(f"trigram_kernel: similarity {name!r} returned values outside [0, 1] or NaN")
    return np.ascontiguousarray(sim, dtype=np.float32)


class _SoftSide(NamedTuple):
    """One side of a soft kernel: its vocabulary, flattened tokens and idf factors per chain."""

    vocabulary: list
    tok: np.ndarray
    sent_ptr: np.ndarray
    item_ptr: np.ndarray
    factor: np.ndarray

    @property
    def longest(self) -> int:
        return max(int(np.diff(self.sent_ptr).max(initial=0)), 1)

    def layout(self) -> tuple:
        return tuple(_column_layout(self.tok, self.sent_ptr, self.item_ptr, self.factor))


def _soft_side(items, idf, max_len: int) -> _SoftSide:
    vocabulary = vocabulary_of(items)
    if idf is None:
        factor = np.ones((1, len(vocabulary)))
    else:
        # E(i, j) of a chain of length n carries idf(w)^(1/(2n)) of both words.
        exponents = 1.0 / (2.0 * np.arange(1, max_len + 1))
        factor = np.power(idf_vector(vocabulary, idf)[None, :], exponents[:, None])
    return _SoftSide(vocabulary, *_flatten(items, vocabulary), factor)


#: Most items a ``self_cache`` of :func:`trigram_kernel` is filled with (it stops growing there).
SELF_CACHE_ITEMS = 100_000


def _soft_self_terms(items, lam, max_len, similarity, idf, cache: MutableMapping | None) -> np.ndarray:
    """S(A, A) of every item, in groups that each gather similarities over their own words only.

    With ``cache`` (item as a tuple of token tuples -> S(A, A)), items found there are not
    recomputed: a block of rows against the same landmarks recomputes neither side.
    """
    if cache is None:
        missing = list(range(len(items)))
    else:
        keys = _self_keys(items)
        first = {}
        for i, key in enumerate(keys):
            if key not in cache:
                first.setdefault(key, i)
        missing = list(first.values())
    computed = []
    for start in range(0, len(missing), _SELF_GROUP):
        side = _soft_side([items[i] for i in missing[start:start + _SELF_GROUP]], idf, max_len)
        sim = _similarity_matrix(similarity, side.vocabulary)
        computed.append(_soft_self(sim, side.factor, side.tok, side.sent_ptr, side.item_ptr, side.layout(),
                                   float(lam), int(max_len), idf is not None, side.longest))
    values = np.concatenate(computed) if computed else np.zeros(0)
    if cache is None:
        return values
    new = _remember_self_terms(cache, [keys[i] for i in missing], values)
    return np.array([new[key] if key in new else cache[key] for key in keys], dtype=np.float64)


def _self_keys(items) -> list[tuple]:
    """The keys of ``self_cache``: each item as a tuple of token tuples."""
    return [tuple(map(tuple, item)) for item in items]


def _remember_self_terms(cache: MutableMapping, keys: list[tuple], values: np.ndarray) -> dict:
    """Add S(A, A) of the items ``keys`` to ``cache`` unless that would exceed :data:`SELF_CACHE_ITEMS`."""
    new = dict(zip(keys, values.tolist()))
    if len(cache) + len(new) <= SELF_CACHE_ITEMS:
        cache.update(new)
    return new


#: Row items per block of a soft cross kernel.  Each block gathers the dense similarities
#: between its own words and the column items' words only: as one block, 4,096 COCO-sized
#: training items against 2,000 landmark items span about 15,000 x 10,000 words (0.6 GB).
_CROSS_ROWS = 512


def _soft_gram(items_a, items_b, symmetric, lam, max_len, similarity, idf, self_cache):
    """Unnormalised S(A, B) and the self-similarities of both sides.

    A cross kernel gathers similarities between the words of A and the words of B only (a block
    against a few landmark items needs a thin slice of the joint vocabulary's square matrix), one
    block of :data:`_CROSS_ROWS` rows of A at a time.
    """
    if symmetric:
        side = _soft_side(items_a, idf, max_len)
        sim = _similarity_matrix(similarity, side.vocabulary)
        cross = _soft_cross(sim, side.factor, side.tok, side.sent_ptr, side.item_ptr, side.layout(), len(items_a),
                            float(lam), int(max_len), idf is not None, side.longest, True)
        self_a = np.diag(cross).copy()
        if self_cache is not None:
            # The diagonal is S(A, A): a later cross kernel against these items (the training
            # items against queries) reads it rather than recomputing it.
            _remember_self_terms(self_cache, _self_keys(items_a), self_a)
        return cross, self_a, self_a
    side_b = _soft_side(items_b, idf, max_len)
    layout_b = side_b.layout()
    cross = np.empty((len(items_a), len(items_b)))
    for start in range(0, len(items_a), _CROSS_ROWS):
        side_a = _soft_side(items_a[start:start + _CROSS_ROWS], idf, max_len)
        sim = _similarity_matrix(similarity, side_a.vocabulary, side_b.vocabulary)
        cross[start:start + _CROSS_ROWS] = _soft_cross(
            sim, side_a.factor, side_a.tok, side_a.sent_ptr, side_a.item_ptr, layout_b, len(items_b), float(lam),
            int(max_len), idf is not None, max(side_a.longest, side_b.longest), False)
    self_a = _soft_self_terms(items_a, lam, max_len, similarity, idf, self_cache)
    self_b = _soft_self_terms(items_b, lam, max_len, similarity, idf, self_cache)
    return cross, self_a, self_b


def trigram_kernel(
    items_a: Items,
    items_b: Items | None = None,
    *,
    lam: float = 0.5,
    max_len: int = 3,
    idf: Mapping[str, float] | None = None,
    similarity=None,
    self_cache: MutableMapping | None = None,
) -> np.ndarray:
    """Normalised truncated subsequence kernel between items of sentences.

    For sentences ``s, s'`` and word sequences ``w`` of length 1 to ``max_len``, with
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
        object with ``pairwise(words_a, words_b=None) -> ndarray`` (values in [0, 1], 1 for equal
        words), called on the words of each block of 512 items of ``items_a`` against those of
        ``items_b`` (the vocabulary against itself for a symmetric Gram), and for the
        self-similarities of a cross kernel on the words of each group of 256 items; the kernel
        is then a Numba dynamic programme in ``O(max_len |s| |s'|)`` per sentence pair
        (``O(max_len^2 |s| |s'|)`` with idf).
    self_cache : mutable mapping, default=None
        Soft kernels only: the unnormalised self-similarities S(A, A) of items already seen
        (keyed by the item as a tuple of token tuples), read by cross kernels and filled by every
        soft kernel, a symmetric Gram from its diagonal (up to :data:`SELF_CACHE_ITEMS` items). One mapping per fitted kernel: its values hold for this
        ``lam``, ``max_len``, ``idf`` and ``similarity`` only.

    Warns
    -----
    UserWarning
        If a sentence has more than :data:`~kcca_desc.kernels.text._items.LONG_SENTENCE_TOKENS`
        (150) tokens, naming the longest: the cost grows steeply with a sentence's length.

    Returns
    -------
    ndarray of shape (len(items_a), len(items_b)), float64
        Zero-norm items (no words) give 0 off the diagonal and 1 on a symmetric diagonal.

    See Also
    --------
    kcca_desc.kernels.text.bow.bow_kernel : cosine of word counts.
    subsequence_features : the exact kernel's sparse feature map.

    References
    ----------
    .. [1] Hodosh, Young & Hockenmaier (2013), "Framing image description as a ranking task:
       data, models and evaluation metrics", JAIR 47, 853-899, Sections 3.4.3 and 3.5.1.
    .. [2] Lodhi et al. (2002), "Text classification using string kernels", JMLR 2, 419-444.
    .. [3] Bloehdorn, Basili, Cammisa & Moschitti (2006), "Semantic kernels for text
       classification based on topological measures of feature similarity", ICDM.
    """
    _check_params(lam, max_len)
    if similarity is not None and not callable(getattr(similarity, "pairwise", None)):
        raise ParameterError(f"trigram_kernel: similarity must be None or a WordSimilarity (an object with "
                             f"pairwise(words_a, words_b)), got {type(similarity).__name__} {similarity!r}; a "
                             "similarity by name is built by make_text_kernel (WORD_SIMILARITIES)")
    items_a, items_b, symmetric = check_pair(items_a, items_b)
    warn_long_sentences(items_a, "items_a", "trigram_kernel")
    if not symmetric:
        warn_long_sentences(items_b, "items_b", "trigram_kernel")
    if similarity is None:
        vocabulary = vocabulary_of(items_a, items_b)
        column_of = {word: j for j, word in enumerate(vocabulary)}
        word_weight = idf_vector(vocabulary, idf) if idf is not None else np.ones(len(vocabulary))
        cross, self_a, self_b = _exact_gram(items_a, items_b, symmetric, column_of, word_weight, lam, max_len)
    else:
        cross, self_a, self_b = _soft_gram(items_a, items_b, symmetric, lam, max_len, similarity, idf, self_cache)
    return normalise_gram(cross, self_a, self_b, symmetric)
