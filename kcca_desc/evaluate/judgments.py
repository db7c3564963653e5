"""Metrics from human judgments of Flickr8K test pairs (Hodosh et al. 2013, Sections 4.2-4.3).

Inputs are the dictionaries of :mod:`kcca_desc.data.judgments`::

    crowd[(image_id, caption_id)]  = (pct_yes, n_yes, n_no)
    expert[(image_id, caption_id)] = (e1, e2, e3)       # scores 1..4

and a score matrix over a ``hodosh``-protocol view (one caption per image,
the ``#2`` captions that were judged).

Crowd relevance
    A pair is relevant when ``pct_yes >= 2/3`` (a majority of three
    judges); the original (image, own caption) pair is always relevant
    (Section 4.3.2).  S@K is the percentage of queries with a relevant item
    in the top K and R-precision the mean over queries of the precision at
    rank R_q, the number of relevant items of query q (Section 4.3.3).
    Ties are broken pessimistically, as for the gold ranks of
    :mod:`kcca_desc.evaluate.ranks`: a non-relevant item tied with a
    relevant one is ranked above it (our choice, see ``docs/design.md``).
First caption (annotation only)
    The top-ranked caption of each image (ties: the lowest caption column)
    is scored by the mean of its three expert scores (Section 4.2.1);
    reported are the mean over images whose top caption was judged, the
    cumulative percentage of them at or above 4, 3.66, 3.33, 3, 2.66, 2.33
    and 2, and the number of images whose top caption has no expert score.
    Against the image's reference captions it gets unigram BLEU (clipped
    precision, no brevity penalty; Papineni et al. 2002) and ROUGE-1 recall
    (Lin 2004), the automatic scores of Section 4.2.2.

Every function also returns per-query values for the tests of
:mod:`kcca_desc.evaluate.statistics`.

References
----------
.. [1] M. Hodosh, P. Young and J. Hockenmaier, "Framing image description as a
   ranking task: data, models and evaluation metrics", JAIR 47, 853-899, 2013.
.. [2] K. Papineni, S. Roukos, T. Ward and W.-J. Zhu, "BLEU: a method for
   automatic evaluation of machine translation", ACL 2002.
.. [3] C.-Y. Lin, "ROUGE: a package for automatic evaluation of summaries",
   ACL Workshop on Text Summarization Branches Out, 2004.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Mapping, Sequence

import numpy as np

from .._core.errors import DataError, ParameterError
from ..data.dataset import RetrievalView
from .scores import DirectionalScores
from .ranks import gold_ranks

__all__ = [
    "EXPERT_THRESHOLDS", "RELEVANCE_THRESHOLD", "crowd_relevance", "crowd_metrics", "first_caption_metrics",
    "unigram_bleu", "rouge1_recall", "simple_tokenize", "judgment_metrics",
]

RELEVANCE_THRESHOLD = 2 / 3
#: Mean expert scores at or above which the first caption's cumulative percentages are reported
#: (Hodosh et al. 2013, Section 4.2.1).
EXPERT_THRESHOLDS = (4.0, 3.66, 3.33, 3.0, 2.66, 2.33, 2.0)
_WORD = re.compile(r"[a-z0-9]+")


def simple_tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric runs: the default tokens of candidate captions."""
    return _WORD.findall(text.lower())


def _check_view(scores, view: RetrievalView, what: str) -> tuple[np.ndarray, np.ndarray]:
    if view.protocol != "hodosh":
        raise ParameterError(f"{what}: judgments are defined on hodosh-protocol views, got {view.protocol!r}")
    matrices = (scores.annotation, scores.search) if isinstance(scores, DirectionalScores) else (scores, scores)
    out = []
    for m in matrices:
        m = np.asarray(m)
        if m.shape != (view.n_images, view.n_captions):
            raise DataError(f"{what}: scores have shape {m.shape}, the view needs "
                             f"{(view.n_images, view.n_captions)}")
        if not np.isfinite(m).all():
            raise DataError(f"{what}: scores contain NaN or infinite values")
        out.append(m)
    return out[0], out[1]


def _pool_pairs(view: RetrievalView, pairs, what: str) -> tuple[np.ndarray, np.ndarray, list]:
    """Rows and columns of the judged pairs that lie in the view's pools."""
    row_of = {image_id: i for i, image_id in enumerate(view.images.ids)}
    col_of = {caption_id: j for j, caption_id in enumerate(view.caption_ids)}
    rows, cols, keys = [], [], []
    for key in pairs:
        image_id, caption_id = key
        i, j = row_of.get(image_id), col_of.get(caption_id)
        if i is not None and j is not None:
            rows.append(i)
            cols.append(j)
            keys.append(key)
    if not keys:
        raise DataError(f"{what}: no judged pair lies in the pools of {view.dataset}:{view.split} "
                         f"(judgments cover the Flickr8K test split)")
    return np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64), keys


def crowd_relevance(view: RetrievalView, crowd: Mapping[tuple[str, str], Sequence[float]],
                    *, threshold: float = RELEVANCE_THRESHOLD) -> np.ndarray:
    """Boolean relevance matrix ``(n_images, n_captions)`` of a hodosh view.

    ``relevant[i, j]`` is true when the crowd judged pair (i, j) with
    ``pct_yes >= threshold`` or caption j is image i's own caption.  Judged
    pairs outside the pools are ignored.
    """
    rows, cols, keys = _pool_pairs(view, crowd, "crowd_relevance")
    pct_yes = np.asarray([crowd[k][0] for k in keys], dtype=np.float64)
    # pct_yes is printed with 15 digits: 2/3 may read 0.666666666666667 or ...666.
    keep = pct_yes >= threshold - 1e-9
    relevant = np.zeros((view.n_images, view.n_captions), dtype=bool)
    relevant[rows[keep], cols[keep]] = True
    relevant[view.caption_image, np.arange(view.n_captions)] = True
    return relevant


def _r_precision(scores: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """Per-row precision at R_q, relevant items losing ties (row by row blocks)."""
    n_relevant = relevant.sum(axis=1)
    out = np.empty(scores.shape[0])
    chunk = max(1, 2**22 // max(scores.shape[1], 1))
    for start in range(0, scores.shape[0], chunk):
        s, r = scores[start:start + chunk], relevant[start:start + chunk]
        # lexsort: the last key is primary (score, descending); ties put non-relevant first.
        order = np.lexsort((r, -s), axis=1)
        hits = np.cumsum(np.take_along_axis(r, order, axis=1), axis=1)
        rq = n_relevant[start:start + chunk]
        out[start:start + chunk] = hits[np.arange(len(rq)), rq - 1] / rq
    return out


def crowd_metrics(scores, view: RetrievalView, crowd: Mapping[tuple[str, str], Sequence[float]],
                  *, ks: Sequence[int] = (1, 5, 10), threshold: float = RELEVANCE_THRESHOLD) -> dict[str, dict]:
    """S@K and R-precision of both tasks from crowd relevance judgments.

    ``S@K = 100 * #{q : a relevant item in the top K} / n_queries`` and
    ``R-precision = 100 * mean_q (#relevant in top R_q) / R_q`` (percent).

    Parameters
    ----------
    scores : ndarray of shape (n_images, n_captions) or DirectionalScores
    view : RetrievalView
        Hodosh protocol.
    crowd : mapping
        ``(image_id, caption_id) -> (pct_yes, n_yes, n_no)``.
    ks : sequence of int, default=(1, 5, 10)
    threshold : float, default=2/3
        Smallest ``pct_yes`` that makes a pair relevant.

    Returns
    -------
    dict
        Per task (``"annotation"``, ``"search"``): ``"S@K"`` for each K,
        ``"R-precision"``, ``"n_queries"``, ``"mean_relevant"`` (mean R_q),
        and per-query arrays ``"success_ranks"`` (rank of the best-ranked
        relevant item; ``success_ranks <= K`` are the S@K hits) and
        ``"r_precision"`` (0-1).
    """
    annotation, search = _check_view(scores, view, "crowd_metrics")
    relevant = crowd_relevance(view, crowd, threshold=threshold)
    out = {}
    for task, s, rel in (("annotation", annotation, relevant), ("search", search.T, relevant.T)):
        ranks = gold_ranks(s, [np.flatnonzero(row) for row in rel])
        r_prec = _r_precision(s, rel)
        metrics: dict[str, object] = {f"S@{k}": float(100.0 * np.mean(ranks <= k)) for k in ks}
        metrics["R-precision"] = float(100.0 * r_prec.mean())
        metrics["n_queries"] = int(ranks.size)
        metrics["mean_relevant"] = float(rel.sum(axis=1).mean())
        metrics["success_ranks"] = ranks
        metrics["r_precision"] = r_prec
        out[task] = metrics
    return out


def _check_tokens(tokens, what: str) -> list[str]:
    if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
        raise ParameterError(f"{what} must be a list of token strings, got {tokens!r}")
    return list(tokens)


def _clipped_counts(candidate: Sequence[str], references: Sequence[Sequence[str]], what: str):
    candidate = _check_tokens(candidate, f"{what}: candidate")
    if not references:
        raise DataError(f"{what}: no reference captions")
    refs = [_check_tokens(r, f"{what}: reference {k}") for k, r in enumerate(references)]
    return Counter(candidate), [Counter(r) for r in refs], candidate, refs


def unigram_bleu(candidate: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """Unigram BLEU without brevity penalty: clipped unigram precision.

    ``p_1 = Σ_w min(c(w), max_r c_r(w)) / Σ_w c(w)``, with ``c`` the
    candidate's counts and ``c_r`` those of reference ``r`` (Papineni et al.
    2002, modified precision).

    Raises
    ------
    ValueError
        If the candidate is empty or there is no reference.
    """
    counts, ref_counts, candidate, _ = _clipped_counts(candidate, references, "unigram_bleu")
    if not candidate:
        raise DataError("unigram_bleu: the candidate caption has no token")
    clipped = sum(min(c, max(rc[w] for rc in ref_counts)) for w, c in counts.items())
    return clipped / len(candidate)


def rouge1_recall(candidate: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """ROUGE-1 recall over several references (Lin 2004, eq. 1).

    ``Σ_r Σ_w min(c(w), c_r(w)) / Σ_r |r|`` — matched reference unigrams over
    all reference unigrams.

    Raises
    ------
    ValueError
        If there is no reference or all references are empty.
    """
    counts, ref_counts, _, refs = _clipped_counts(candidate, references, "rouge1_recall")
    total = sum(len(r) for r in refs)
    if total == 0:
        raise DataError("rouge1_recall: the reference captions have no token")
    matched = sum(min(c, counts[w]) for rc in ref_counts for w, c in rc.items())
    return matched / total


def first_caption_metrics(scores, view: RetrievalView,
                          *, expert: Mapping[tuple[str, str], Sequence[int]] | None = None,
                          references: Sequence[Sequence[Sequence[str]]] | None = None,
                          caption_tokens: Sequence[Sequence[str]] | None = None,
                          thresholds: Sequence[float] = EXPERT_THRESHOLDS) -> dict[str, object]:
    """Quality of the top-ranked caption of each image (annotation).

    Parameters
    ----------
    scores : ndarray of shape (n_images, n_captions) or DirectionalScores
        The annotation matrix is used.  The top caption of image i is
        ``argmax_j scores[i, j]`` (ties: the lowest column).
    view : RetrievalView
        Hodosh protocol.
    expert : mapping, optional
        ``(image_id, caption_id) -> (e1, e2, e3)``; gives the expert metrics.
    references : sequence, optional
        ``references[i]`` are the reference captions of pool image i, each a
        list of tokens; gives BLEU and ROUGE-1.  Which captions are
        references (e.g. all five, or the four not in the pool) is the
        caller's choice.
    caption_tokens : sequence of list of str, optional
        Tokens of each pool caption (tokenised like the references); default
        :func:`simple_tokenize` of ``view.captions``.
    thresholds : sequence of float, default=(4, 3.66, 3.33, 3, 2.66, 2.33, 2)

    Returns
    -------
    dict
        ``"n_queries"`` and ``"top_caption"`` (per-image column); with
        ``expert``: ``"mean_expert_score"`` (over judged top captions),
        ``"expert_at_least"`` (``{str(t): percent of judged top captions with
        mean score >= t}``), ``"n_unscored"``, per-query ``"expert_scores"``
        and ``"expert_scored"`` (mask; scores of unjudged queries are 0);
        with ``references``: ``"bleu1"``, ``"rouge1_recall"`` (percent) and
        per-query ``"bleu1_per_query"``, ``"rouge1_per_query"`` (0-1).

    Raises
    ------
    ValueError
        If no top caption has an expert score, the references do not match
        the pool, or a caption or its references are empty.
    """
    annotation, _ = _check_view(scores, view, "first_caption_metrics")
    top = np.argmax(annotation, axis=1)
    out: dict[str, object] = {"n_queries": int(view.n_images), "top_caption": top}
    if expert is not None:
        pairs = list(zip(view.images.ids, (view.caption_ids[j] for j in top)))
        scored = np.array([p in expert for p in pairs])
        if not scored.any():
            raise DataError("first_caption_metrics: no top caption has an expert score "
                             "(expert judgments cover the Flickr8K test split)")
        values = np.array([np.mean(expert[p]) if ok else 0.0 for p, ok in zip(pairs, scored)])
        judged = values[scored]
        out["mean_expert_score"] = float(judged.mean())
        # Means of three integers are k/3; a tolerance keeps 11/3 >= 3.66 exact.
        out["expert_at_least"] = {f"{t:g}": float(100.0 * np.mean(judged >= t - 1e-9)) for t in thresholds}
        out["n_unscored"] = int((~scored).sum())
        out["expert_scores"] = values
        out["expert_scored"] = scored
    if references is not None:
        if len(references) != view.n_images:
            raise DataError(f"first_caption_metrics: references for {len(references)} images, "
                             f"the pool has {view.n_images}")
        if caption_tokens is None:
            caption_tokens = [simple_tokenize(c) for c in view.captions]
        elif len(caption_tokens) != view.n_captions:
            raise DataError(f"first_caption_metrics: tokens for {len(caption_tokens)} captions, "
                             f"the pool has {view.n_captions}")
        bleu, rouge = np.empty(view.n_images), np.empty(view.n_images)
        for i, j in enumerate(top):
            try:
                bleu[i] = unigram_bleu(caption_tokens[j], references[i])
                rouge[i] = rouge1_recall(caption_tokens[j], references[i])
            except ValueError as exc:
                raise DataError(f"first_caption_metrics: image {view.images.ids[i]!r}, top caption "
                                 f"{view.caption_ids[j]!r}: {exc}") from None
        out["bleu1"] = float(100.0 * bleu.mean())
        out["rouge1_recall"] = float(100.0 * rouge.mean())
        out["bleu1_per_query"] = bleu
        out["rouge1_per_query"] = rouge
    return out


def judgment_metrics(scores, view: RetrievalView,
                     *, crowd: Mapping[tuple[str, str], Sequence[float]] | None = None,
                     expert: Mapping[tuple[str, str], Sequence[int]] | None = None,
                     references: Sequence[Sequence[Sequence[str]]] | None = None,
                     ks: Sequence[int] = (1, 5, 10)) -> tuple[dict, dict]:
    """All judgment metrics that the given inputs allow, split into figures and per-query values.

    Parameters
    ----------
    scores, view
        As for :func:`crowd_metrics`.
    crowd, expert, references : optional
        As for :func:`crowd_metrics` and :func:`first_caption_metrics`.
    ks : sequence of int, default=(1, 5, 10)
        The cut-offs K of S@K (:func:`crowd_metrics`).

    Returns
    -------
    summary : dict
        JSON-ready figures: ``{"annotation": {S@K, R-precision, ...,
        first-caption figures}, "search": {S@K, R-precision, ...}}``, the
        ``"judgments"`` entry of a result.
    per_query : dict
        The per-query arrays of the same computations, keyed like
        ``summary`` (``"success_ranks"``, ``"r_precision"``,
        ``"expert_scores"``, ``"bleu1_per_query"``...).
    """
    summary: dict[str, dict] = {"annotation": {}, "search": {}}
    per_query: dict[str, dict] = {"annotation": {}, "search": {}}

    def split(task: str, metrics: Mapping) -> None:
        for key, value in metrics.items():
            target = per_query if isinstance(value, np.ndarray) else summary
            target[task][key] = value

    if crowd is not None:
        for task, metrics in crowd_metrics(scores, view, crowd, ks=ks).items():
            split(task, metrics)
    if expert is not None or references is not None:
        first = first_caption_metrics(scores, view, expert=expert, references=references)
        first.pop("n_queries")
        split("annotation", first)
    return summary, per_query
