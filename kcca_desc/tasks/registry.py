"""Evaluation tasks by name, each a callable ``task(method, view, *, seed=0) -> dict``.

A task measures a fitted system (anything with ``score(images, captions)``) on a
:class:`~kcca_desc.data.dataset.RetrievalView` and returns its metrics as a dictionary of
JSON-able values.  The command line runs the tasks named by ``--task`` on every view it
evaluates and records them under ``"tasks"`` in its results file; the built-in tasks add the
bootstrap interval of each figure under ``"ci"`` (with ``"ci_settings"``), which the tables,
``compare`` and the report show beside it.  A further task is one registration::

    @TASKS.register("mine", help="what it measures")
    def mine(method, view, *, seed=0):
        return {...}

=============  ==================================================================
name           measures
=============  ==================================================================
retrieval      R@K and median rank of annotation and search (the results table)
forced_choice  1-of-6 caption choice for every image
off_topic      off-topic detection among on- and off-topic (image, text) pairs
=============  ==================================================================

vSTS (:mod:`.vsts`) is not a task of this kind: it compares pairs of image-caption items of
its own data set through the representations of an encoder, not a system's scores on a view.
"""

from __future__ import annotations

from typing import Protocol

from ..data.dataset import RetrievalView
from ..evaluate.harness import evaluate_fitted
from .._core.registry import Registry
from ..evaluate.scores import Scorer
from .forced_choice import evaluate_forced_choice
from .offtopic import evaluate_off_topic

__all__ = ["Task", "TASKS", "RETRIEVAL"]

#: The task whose metrics are the command line's results table.
RETRIEVAL = "retrieval"


class Task(Protocol):
    """The signature of every entry of :data:`TASKS`."""

    def __call__(self, method: Scorer, view: RetrievalView, *, seed: int = 0) -> dict:
        """Metrics of the fitted ``method`` on ``view``; ``seed`` seeds every random choice."""


#: Name -> :class:`Task` of every evaluation task.
TASKS: Registry[Task] = Registry("task")


@TASKS.register(RETRIEVAL, help="R@1, R@5, R@10 and median rank of image annotation and image search")
def retrieval(method: Scorer, view: RetrievalView, *, seed: int = 0) -> dict:
    """Annotation and search metrics of :func:`~kcca_desc.evaluate.harness.evaluate_fitted`.

    Deterministic: ``seed`` is taken for the common signature only.
    """
    result = evaluate_fitted(method, view)
    return {"annotation": result.annotation, "search": result.search}


@TASKS.register("forced_choice", help="accuracy of choosing each image's caption among 6 (5 of other images)")
def forced_choice(method: Scorer, view: RetrievalView, *, seed: int = 0) -> dict:
    """:func:`~kcca_desc.tasks.forced_choice.evaluate_forced_choice` with 6 candidates."""
    return evaluate_forced_choice(method, view, n_choices=6, seed=seed)


@TASKS.register("off_topic", help="AP, P@50 and accuracy of detecting captions paired with another image")
def off_topic(method: Scorer, view: RetrievalView, *, seed: int = 0) -> dict:
    """:func:`~kcca_desc.tasks.offtopic.evaluate_off_topic` on the view's images and captions.

    Each image's text is its captions in the view (one under the hodosh protocol, all under
    karpathy).  P@k is taken at k = 50 (Rei 2017), or at the number of pairs,
    2 n_images, on a smaller view.
    """
    return evaluate_off_topic(method, view.images, view.caption_lists(), seed=seed,
                              k=min(50, 2 * view.n_images))
