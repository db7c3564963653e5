"""The record a benchmark keeps of one evaluated system: its figures and what recomputes them.

Two runs on the same queries are compared query by query: McNemar's test of the R@K hits and
the paired randomisation test of the median rank need the per-query ranks of both runs
(:func:`kcca_desc.evaluate.statistics.add_significance`), and a bootstrap interval of the search
task under the karpathy protocol resamples the five captions of an image together, so it needs
the image of each search query (:func:`kcca_desc.evaluate.statistics.add_confidence_intervals`).
A record of figures alone would force a re-run for either; :func:`result_record` keeps both.
"""

from __future__ import annotations

import numpy as np

from kcca_desc.data.dataset import RetrievalView
from kcca_desc.evaluate.ranks import TASKS
from kcca_desc.evaluate.results import Result

__all__ = ["result_record"]


def result_record(result: Result, view: RetrievalView) -> dict:
    """The JSON form of ``result`` with its per-query ranks and its search queries' images.

    Parameters
    ----------
    result : Result
        Evaluated on ``view`` (e.g. by :func:`kcca_desc.evaluate.evaluate_fitted`), with its
        per-query ranks of both tasks.
    view : RetrievalView
        The pools the result was measured on.

    Returns
    -------
    dict
        ``result.to_dict(include_ranks=True)`` (``"ranks"``: one rank per image for annotation,
        one per pool caption for search) and ``"caption_image"``: the pool index of each search
        query's image, the clusters of a bootstrap by image. :meth:`Result.from_dict` reads it
        back (``caption_image`` into ``extras``).

    Raises
    ------
    ValueError
        If the result lacks the ranks of a task, or was measured on another view than ``view``.
    """
    missing = [task for task in TASKS if task not in result.ranks]
    if missing:
        raise ValueError(f"result of {result.system!r} has no per-query ranks for {', '.join(missing)}: "
                         "a record must keep them")
    measured = (result.dataset, result.split, result.protocol)
    given = (view.dataset, view.split, view.protocol)
    sizes = (len(result.ranks["annotation"]), len(result.ranks["search"]))
    if measured != given or sizes != (view.n_images, view.n_captions):
        raise ValueError(f"result of {result.system!r}: measured on {':'.join(measured)} with {sizes[0]} images "
                         f"and {sizes[1]} captions, but view is {':'.join(given)} with {view.n_images} and "
                         f"{view.n_captions}")
    return {**result.to_dict(include_ranks=True), "caption_image": np.asarray(view.caption_image).tolist()}
