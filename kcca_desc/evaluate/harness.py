"""The one evaluation harness: every system is fitted, scored and measured by this code.

A method needs only ``fit(train)`` and ``score(images, captions)`` (see
:class:`kcca_desc.methods.base.RetrievalMethod`); the harness times both,
computes the metrics of :mod:`kcca_desc.evaluate.ranks` and returns a
:class:`~kcca_desc.evaluate.results.Result` that keeps the per-query ranks for
the statistics of :mod:`kcca_desc.evaluate.statistics`.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import asdict
from numbers import Integral
from typing import Mapping, Sequence

from .._core.errors import DataError, ParameterError
from .._core.profile import profiled
from .._core.provenance import environment
from ..data.dataset import Dataset, RetrievalView, require_view
from .judgments import judgment_metrics
from .ranks import REQUIRED_KS, TASKS, evaluate_scores
from .results import Result

__all__ = ["evaluate_method", "evaluate_fitted", "result_from_scores"]


def _system_name(method, name: str | None) -> str:
    return name if name is not None else getattr(method, "name", type(method).__name__)


def _method_params(method, params: Mapping | None) -> dict:
    if params is not None:
        return dict(params)
    get_params = getattr(method, "get_params", None)
    recorded = dict(get_params()) if callable(get_params) else {}
    # What fitting chose on train and dev (the grid of components used, a multiple-kernel system's
    # weights) beside what was set.
    chosen = getattr(method, "chosen_params_", None)
    if chosen:
        recorded["chosen"] = dict(chosen)
    return recorded


def _check_ks(ks: Sequence[int]) -> tuple[int, ...]:
    """The recall cut-offs ``ks`` as whole numbers, checked to include the 1, 5 and 10 of every result."""
    try:
        checked = tuple(sorted({int(k) for k in ks}))
        whole = all(int(k) == k and not isinstance(k, bool) for k in ks)
    except (TypeError, ValueError):
        raise ParameterError(f"ks: cut-offs must be positive integers, got {ks!r}") from None
    if not whole or not checked or checked[0] < 1:
        raise ParameterError(f"ks: cut-offs must be positive integers, got {ks!r}")
    missing = [k for k in REQUIRED_KS if k not in checked]
    if missing:
        raise ParameterError(f"ks: every result reports R@1, R@5 and R@10, so ks must include "
                             f"{', '.join(map(str, missing))} (further cut-offs are kept beside them), got {ks!r}")
    return checked


def _check_run(owner: str, method, view: object, *, name: object, top_k: object, fits: bool) -> RetrievalView:
    """The arguments of a run, checked before its fit and scores, which may take long."""
    needed = ("fit", "score") if fits else ("score",)
    lacking = [attribute for attribute in needed if not callable(getattr(method, attribute, None))]
    if lacking:
        raise ParameterError(f"{owner}: method must be a retrieval system with "
                             f"{'fit and score methods' if fits else 'a score method'} "
                             f"(kcca_desc.methods.RetrievalMethod), got {type(method).__name__}, which has no "
                             f"{' or '.join(lacking)}")
    view = require_view(view, owner, name="view")
    if not view.n_images:
        raise DataError(f"{owner}: view has no queries: the split {view.split!r} of {view.dataset} holds no image")
    if name is not None and not isinstance(name, str):
        raise ParameterError(f"{owner}: name must be a str (the run's label) or None, got {type(name).__name__}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, Integral) or top_k < 0):
        raise ParameterError(f"{owner}: top_k must be a non-negative integer (candidates kept per query; 0 or None "
                             f"keeps none), got {top_k!r}")
    return view


def result_from_scores(scores, view: RetrievalView, system: str, *, params: Mapping | None = None,
                       timings: Mapping | None = None, ks: Sequence[int] = (1, 5, 10),
                       judgments=None, references=None, top_k: int = 10) -> Result:
    """A :class:`Result` of a score matrix already computed over ``view``.

    Parameters
    ----------
    scores : ndarray of shape (n_images, n_captions) or DirectionalScores
        Higher is better (e.g. fused scores of :func:`kcca_desc.methods.fusion.borda_fuse`).
    view : RetrievalView
    system : str
        The name written into the result.
    params, timings : mapping, optional
        Hyperparameters and stage timings (seconds, or ``{"wall_s", "cpu_s"}`` entries) to record;
        ``timings_s["evaluate"]`` is added, the wall and CPU time of the metrics, which the run's
        profile counts under its stage ``"evaluation"``.
    ks : sequence of int, default=(1, 5, 10)
        Recall cut-offs, positive integers including 1, 5 and 10 (every result reports R@1, R@5
        and R@10); further cut-offs (e.g. ``(1, 5, 10, 20)``) add ``R@K`` figures to the result,
        which the tables, CSV and intervals include.
    judgments : Flickr8kJudgments, optional
        ``(expert, crowdflower)`` dictionaries
        (:func:`kcca_desc.data.judgments.load_flickr8k_judgments`).  On a
        ``hodosh`` view their metrics (:func:`judgment_metrics`) go into
        ``extras["judgments"]`` and their per-query values into
        ``per_query``; on a ``karpathy`` view they are not computed, since
        the judgments cover only the ``#2`` captions.
    references : sequence, optional
        Reference token lists per pool image for unigram BLEU and ROUGE-1
        (hodosh views only, like ``judgments``).
    top_k : int, default=10
        Retrieved candidates kept per query in ``Result.queries["top"]``
        (0: none), with the query ids, so that a gallery of what each query
        retrieved can be drawn from the results file.
    """
    ks = _check_ks(ks)
    with profiled("evaluation", watch=False) as elapsed:
        metrics = evaluate_scores(scores, view, ks=ks, method=system, top_k=top_k)
        extras, per_query = {}, {}
        if view.protocol == "hodosh" and (judgments is not None or references is not None):
            extras["judgments"], per_query = judgment_metrics(
                scores, view,
                crowd=judgments.crowdflower if judgments is not None else None,
                expert=judgments.expert if judgments is not None else None,
                references=references, ks=ks)
    return Result(
        system=system, dataset=view.dataset, protocol=view.protocol, split=view.split,
        annotation={k: v for k, v in metrics["annotation"].items() if k != "ranks"},
        search={k: v for k, v in metrics["search"].items() if k != "ranks"},
        params=dict(params or {}),
        timings_s={**(timings or {}), "evaluate": asdict(elapsed)},
        extras=extras,
        ranks={task: metrics[task]["ranks"] for task in TASKS},
        queries={"images": view.images.ids, "captions": view.caption_ids, "caption_image": view.caption_image,
                 "top": {task: metrics[task]["top"] for task in TASKS if "top" in metrics[task]}},
        per_query=per_query,
    )


def evaluate_fitted(method, view: RetrievalView, *, name: str | None = None, params: Mapping | None = None,
                    timings: Mapping | None = None, ks: Sequence[int] = (1, 5, 10),
                    judgments=None, references=None, top_k: int = 10) -> Result:
    """Score ``view`` with an already fitted method and measure both tasks.

    Parameters
    ----------
    method : RetrievalMethod
        Fitted; ``method.score(view.images, view.captions)`` is called once.
    view : RetrievalView
        Pools and gold items (hodosh or karpathy protocol).
    name : str, optional
        The run's label in the result and every table; default ``method.name`` (else the
        class name).
    params : mapping, optional
        Recorded hyperparameters; default ``method.get_params()`` when the
        method has it, with what its fit chose (``method.chosen_params_``, e.g. kernel weights)
        under ``"chosen"``.
    timings : mapping, optional
        Earlier stage timings (e.g. ``{"fit": 12.3}``, or a profile's table) to record with
        ``"score"`` and ``"evaluate"`` (wall and CPU seconds; both are the stage ``"evaluation"``
        of the run's profile).
    ks : sequence of int, default=(1, 5, 10)
        Recall cut-offs, including 1, 5 and 10; further ones add ``R@K`` figures (see
        :func:`result_from_scores`).
    judgments, references, top_k : optional
        Human judgments, reference captions and retrieved candidates kept per
        query, see :func:`result_from_scores`.

    Returns
    -------
    Result
        With the per-query ranks in ``result.ranks``.

    Raises
    ------
    ParameterError
        If ``method`` has no ``score``, ``view`` is not a RetrievalView, ``name`` not a str,
        ``top_k`` not a non-negative integer or ``ks`` lacks 1, 5 or 10 (checked before scoring).
    DataError
        If ``view`` has no queries (the view of an empty split).
    """
    _check_run("evaluate_fitted", method, view, name=name, top_k=top_k, fits=False)
    _check_ks(ks)  # before the scores, which may take long
    label = _system_name(method, name)
    with profiled("evaluation") as scoring:
        scores = method.score(view.images, view.captions)
    result = result_from_scores(scores, view, label, params=_method_params(method, params),
                                timings={**(timings or {}), "score": asdict(scoring)}, ks=ks, judgments=judgments,
                                references=references, top_k=top_k)
    # The software and machine that made the figures (toolkit version and commit, libraries).
    result.extras["environment"] = environment()
    return result


def _fit_accepts_dev(method) -> bool:
    """Whether ``method.fit`` takes a dev view (a ``dev`` parameter, as the rankers that select models)."""
    try:
        parameters = inspect.signature(method.fit).parameters
    except (TypeError, ValueError):  # a fit without a signature Python can read (a builtin)
        return False
    return "dev" in parameters


def evaluate_method(method, train: Dataset, view: RetrievalView, *, dev: RetrievalView | None = None,
                    name: str | None = None, params: Mapping | None = None, timings: Mapping | None = None,
                    ks: Sequence[int] = (1, 5, 10), judgments=None, references=None, top_k: int = 10) -> Result:
    """Fit ``method`` on ``train`` (with ``dev`` if given), score ``view`` and measure both tasks.

    ``timings_s`` records ``fit``, ``score`` and ``evaluate`` seconds, plus
    any stage timings the method reports in a ``timings_s_`` attribute.

    Parameters
    ----------
    method : RetrievalMethod
        ``method.fit(train)`` (``method.fit(train, dev)`` with ``dev``) is called once, then
        ``method.score(view.images, view.captions)``.
    train : Dataset
        The training data.
    view : RetrievalView
        Pools and gold items (hodosh or karpathy protocol).
    dev : RetrievalView, optional
        The view a method that selects models on held-out data fits with (e.g.
        ``data.view("dev", "hodosh")`` for :class:`~kcca_desc.methods.ranker.ImageSentenceRanker`
        with a grid of settings); only for a method whose ``fit`` takes a ``dev`` argument.
    name, params, timings, ks, judgments, references, top_k
        As for :func:`evaluate_fitted`, which scores the fitted method; ``timings`` are recorded
        beside those of the fit.

    Returns
    -------
    Result
        With the per-query ranks in ``result.ranks``.

    Raises
    ------
    ParameterError
        If ``method`` has no ``fit`` or ``score``, ``view`` or ``dev`` is not a RetrievalView,
        ``name`` not a str, ``top_k`` not a non-negative integer, ``dev`` is given to a method
        whose ``fit`` takes no dev view, or ``ks`` lacks 1, 5 or 10 (all checked before fitting).
    DataError
        If ``view`` has no queries (the view of an empty split), also before fitting.

    See Also
    --------
    evaluate_fitted : the same for a method that is already fitted.
    """
    _check_run("evaluate_method", method, view, name=name, top_k=top_k, fits=True)
    _check_ks(ks)  # before the fit, which may take long
    if dev is not None:
        require_view(dev, "evaluate_method", name="dev")
    if dev is not None and not _fit_accepts_dev(method):
        raise ParameterError(f"dev: {_system_name(method, name)!r} fits on train alone "
                             f"({type(method).__name__}.fit takes no dev view); leave dev=None")
    start = time.perf_counter()
    if dev is None:
        method.fit(train)
    else:
        method.fit(train, dev=dev)
    fit_s = time.perf_counter() - start
    timings = {**(timings or {}), **getattr(method, "timings_s_", {}), "fit": fit_s}
    return evaluate_fitted(method, view, name=name, params=params, timings=timings, ks=ks, judgments=judgments,
                           references=references, top_k=top_k)
