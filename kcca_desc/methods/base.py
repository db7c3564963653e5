"""The method protocol that every retrieval system implements.

A *method* learns from a training :class:`~kcca_desc.data.Dataset` and then
scores any set of images against any list of captions::

    method.fit(train_dataset)                      # returns the method
    S = method.score(images, captions)             # (n_images, n_captions), higher = better

Kernel systems (NN, KCCA) implement :class:`RetrievalMethod` directly.
Two-tower models (neural encoders) may instead implement
:class:`TwoTowerMethod` — ``embed_images`` / ``embed_texts`` — and inherit a
``score`` that takes the cosine of the two embeddings.  The evaluation
harness only ever calls ``fit`` and ``score``, so every system is measured by
the same code.
"""

from __future__ import annotations

import functools
from numbers import Integral
from typing import Sequence

import numpy as np

from .._core.errors import DataError, warn_user
from .._core.validation import (ValidatedParams, invalid_parameter, parameter_errors, raise_together,
                                validation_errors)
from ..data.dataset import Dataset
from ..adapters.base import check_texts
from ..data.images import ImageSource, require_image_source
from ..evaluate.scores import DirectionalScores, cosine_scores

__all__ = ["RetrievalMethod", "TwoTowerMethod", "check_score_inputs", "keep_supported_components",
           "keep_below_training_size"]


def check_score_inputs(images: ImageSource, captions: Sequence[str]) -> tuple[ImageSource, list[str]]:
    """``images`` and ``captions`` as a method's ``score`` takes them, or one error naming the bad one.

    Checked before any work: one string would otherwise be scored as one caption per character,
    a list of arrays or paths fails deep inside feature extraction, and an empty side as a
    scikit-learn error about "0 sample(s)".  An empty side is an error rather than an empty score
    matrix: no system is evaluated on it, and a caller passing none has lost its data.

    Returns
    -------
    images : ImageSource
    captions : list of str

    Raises
    ------
    ParameterError
        If ``images`` is not an :class:`~kcca_desc.data.ImageSource` or ``captions`` not a
        sequence of strings.
    DataError
        If either is empty.
    """
    require_image_source(images)
    captions = check_texts(captions, "captions")
    for name, size in (("images", len(images)), ("captions", len(captions))):
        if size == 0:
            raise DataError(f"{name} is empty: score needs at least one image and one caption")
    return images, captions


class RetrievalMethod:
    """Base class of retrieval systems.

    Subclasses override :meth:`fit` and :meth:`score`.  ``name`` is the system
    name written into results.  Every subclass's ``score`` checks its inputs first
    (:func:`check_score_inputs`), so that no system can forget to.
    """

    name: str = "method"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # The template of every score: wrapped here, once, rather than repeated in each system.
        if "score" in cls.__dict__:
            cls.score = _checking_inputs(cls.__dict__["score"])

    def fit(self, train: Dataset) -> "RetrievalMethod":
        """Learn from the images and captions of ``train``; return ``self``."""
        raise NotImplementedError

    def score(self, images: ImageSource, captions: Sequence[str]) -> np.ndarray | DirectionalScores:
        """Affinity f(i, s) of every image against every caption.

        Returns
        -------
        ndarray of shape (len(images), len(captions)) or DirectionalScores
            Higher means more related.  Must be finite.  A method whose two
            tasks use different scores returns
            :class:`~kcca_desc.evaluate.scores.DirectionalScores`.

        Raises
        ------
        ParameterError
            If ``images`` is not an ImageSource or ``captions`` not a sequence of strings (one
            string is refused, not scored as one caption per character).
        DataError
            If ``images`` or ``captions`` is empty.
        """
        raise NotImplementedError


def _checking_inputs(score):
    """``score`` with its inputs checked first (:func:`check_score_inputs`)."""
    if getattr(score, "_checks_inputs", False):
        return score

    @functools.wraps(score)
    def checked(self, images, captions, *args, **kwargs):
        return score(self, *check_score_inputs(images, captions), *args, **kwargs)

    checked._checks_inputs = True
    return checked


class TwoTowerMethod(RetrievalMethod):
    """A method that embeds images and texts separately; scores are cosines."""

    def embed_images(self, images: ImageSource) -> np.ndarray:
        """``(len(images), d)`` image embeddings."""
        raise NotImplementedError

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), d)`` text embeddings in the same space."""
        raise NotImplementedError

    def score(self, images: ImageSource, captions: Sequence[str]) -> np.ndarray:
        return cosine_scores(self.embed_images(images), self.embed_texts(list(captions)))


class WrapsModel(ValidatedParams):
    """Parameter checks of a method that wraps one model: its own, then the model's (if it declares any).

    So that a wrapped model's bad setting (a trainable model's epochs, an encoder's batch size) is
    found with the method's, all in one error, before any data is read, not when the model first
    runs.  The class names the attribute holding the model in ``_model_attribute``.
    """

    _model_attribute: str

    def _validate_params(self) -> None:
        errors = parameter_errors(self)
        if self._model_attribute not in {error.parameter for error in errors}:
            errors += validation_errors(getattr(self, self._model_attribute))
        raise_together(errors)


def keep_supported_components(owner, grid: Sequence[int], limit: int, requirement: str, why: str, *,
                              default: int | Sequence[int]) -> tuple[int, ...]:
    """The values of ``grid`` up to ``limit``, the canonical pairs there can be.

    So that small data run on the defaults: values above ``limit`` are dropped with one warning
    (``why``, then the values used).  When none is left, the default ``n_components`` of ``owner``
    falls back to ``limit``, and a value the user chose is an error naming the parameter and its
    ``requirement`` (replacing every value asked for would fit another model than the one asked for).

    Parameters
    ----------
    owner : estimator
        Its ``n_components`` (one int or a grid) is the parameter checked and named.
    grid : sequence of int
        The values still in use (``n_components``, or what an earlier limit kept of it).
    limit : int
        The most canonical pairs there can be.
    requirement, why : str
        What ``n_components`` must be (for the error), and why (for the warning).
    default : int or sequence of int
        ``owner``'s default ``n_components``.

    Returns
    -------
    tuple of int
    """
    kept = tuple(n for n in grid if n <= limit)
    if len(kept) == len(grid):
        return kept
    chosen = owner.n_components
    single = isinstance(chosen, Integral)
    if not kept and (chosen != default if single else tuple(chosen) != tuple(default)):
        raise invalid_parameter(owner, "n_components", requirement, chosen)
    kept = kept or (limit,)
    used = (f"n_components={kept[0]} is used instead of {grid[0]}" if single
            else f"the grid of n_components uses {list(kept)} instead of {list(grid)}")
    warn_user(f"{why}: {used}")
    return kept


def keep_below_training_size(owner, grid: Sequence[int], n_train: int, *,
                             default: int | Sequence[int]) -> tuple[int, ...]:
    """:func:`keep_supported_components` for the n_train - 1 canonical pairs of ``n_train`` training images.

    Known before any work: the centred kernels of ``n_train`` images have rank n_train - 1 at
    most (also when each image repeats once per caption).
    """
    return keep_supported_components(
        owner, grid, n_train - 1, f"below the number of training images ({n_train})",
        f"{n_train} training images support at most {n_train - 1} KCCA dimensions", default=default)
