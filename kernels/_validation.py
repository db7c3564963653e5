"""scikit-learn's input checks, raising the toolkit's errors.

:func:`sklearn.utils.validation.check_array`, :func:`~sklearn.utils.validation.validate_data` and
:func:`~sklearn.utils.validation.check_is_fitted` with the same signatures, tests and messages,
except that what they raise is of the toolkit's tree (:mod:`kcca_desc.kernels.errors`): bad input
arrays a :class:`~kcca_desc.kernels.errors.DataError` (a ``ValueError``, as scikit-learn's own;
objects that are no numbers a ``ParameterError``, also a ``TypeError``),
an unfitted estimator a :class:`~kcca_desc.kernels.errors.NotFittedError` (also scikit-learn's
class).  So ``except KccaDescError`` catches them like every other user error, and the command
line prints them as one line.  :mod:`kcca_desc._core.validation` re-exports them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import inspect

import numpy as np
from sklearn.exceptions import NotFittedError as _SklearnNotFittedError
from sklearn.utils import validation as _sklearn

from .errors import DataError, NotFittedError, ParameterError

__all__ = ["check_array", "validate_data", "check_is_fitted", "parameter_message", "settings_requirement",
           "check_settings", "kernel_keywords"]


def check_array(array, *, input_name: str = "", **options) -> np.ndarray:
    """:func:`sklearn.utils.validation.check_array`, raising :class:`DataError`.

    Parameters
    ----------
    array : array-like
        The input to check and convert.
    input_name : str, default=""
        Its name, for the message (scikit-learn's ``X``, ``y``, or the parameter's name).
    **options
        scikit-learn's other keywords (``dtype``, ``ensure_2d``, ``ensure_min_samples``, ...).

    Returns
    -------
    ndarray
        The converted array.

    Raises
    ------
    DataError
        With scikit-learn's message (e.g. ``Input X contains NaN.``), if the input is empty, of
        the wrong dimension or holds non-finite values or strings.
    ParameterError
        With scikit-learn's message, if it holds objects that are no numbers (a ``TypeError``
        too, as every argument of the wrong type: :mod:`kcca_desc._core.errors`).
    """
    try:
        return _sklearn.check_array(array, input_name=input_name, **options)
    except ValueError as exc:
        raise DataError(str(exc)) from None
    except TypeError as exc:  # values of a type that is no number
        raise ParameterError(str(exc)) from None


def validate_data(estimator, X, y="no_validation", **options):
    """:func:`sklearn.utils.validation.validate_data`, raising :class:`DataError`.

    Checks ``X`` (and ``y``) as :func:`check_array` does, and records (``reset=True``) or checks
    (``reset=False``) ``n_features_in_``.

    Raises
    ------
    DataError
        With scikit-learn's message, on an input :func:`check_array` refuses or a number of
        features that differs from ``fit``'s.
    ParameterError
        As :func:`check_array`'s.
    """
    try:
        return _sklearn.validate_data(estimator, X, y, **options)
    except ValueError as exc:
        raise DataError(_without_imputation_advice(str(exc))) from None
    except TypeError as exc:
        raise ParameterError(str(exc)) from None


def _without_imputation_advice(message: str) -> str:
    # Given the estimator, scikit-learn follows "Input X contains NaN." with a paragraph on
    # estimators that accept missing values and on imputers: no advice for a kernel's input.
    return "\n".join(line for line in message.splitlines()
                     if "does not accept missing values encoded as NaN natively" not in line)


def check_is_fitted(estimator, attributes: str | Sequence[str] | None = None) -> None:
    """:func:`sklearn.utils.validation.check_is_fitted`, raising :class:`NotFittedError`.

    Parameters
    ----------
    estimator : estimator instance
        The estimator to check.
    attributes : str or sequence of str, optional
        Attributes that ``fit`` sets; by default any attribute ending in ``_`` that does not start
        with ``__``.

    Raises
    ------
    NotFittedError
        If any of ``attributes`` (or every fitted attribute) is missing.
    """
    try:
        _sklearn.check_is_fitted(estimator, attributes)
    except _SklearnNotFittedError as exc:
        raise NotFittedError(str(exc)) from None


def parameter_message(owner: str, name: str, requirement: str, value) -> str:
    """A bad parameter's message, worded as scikit-learn words it (``The 'reg' parameter of KCCA must be ...``)."""
    return f"The {name!r} parameter of {owner} must be {requirement}. Got {value!r} instead."


def settings_requirement(settings: Mapping, accepted: Iterable[str], *, target: str, owner: str,
                         set_by: Mapping[str, str] | None = None) -> str | None:
    """What a dict of settings that ``owner`` passes on to ``target`` must be, if its keys break it; else None.

    The one check of every parameter that hands a dict of keyword arguments to a stage
    (``image_kernel_params``, ``kcca_params``, ``kernel_params``...), so that a key the stage does
    not take is named up front rather than by Python's ``TypeError`` deep inside a fit.

    Parameters
    ----------
    settings : mapping
        The dict given (anything else is left to the parameter's own constraint).
    accepted : iterable of str
        The keys ``target`` takes (its ``get_params()`` names, or its signature's keywords).
    target : str
        What receives them, for the message (``"ImageKernel"``).
    owner : str
        The estimator or function that passes them on, for the message.
    set_by : mapping of str to str, optional
        Keys that ``owner`` sets itself, each to the parameter of ``owner`` to use instead
        (``{"power": "power"}``); they are refused too (Python's "got multiple values" otherwise,
        or a value silently overridden).

    Returns
    -------
    str or None
        The requirement, for :func:`parameter_message` (None when every key is accepted).
    """
    if not isinstance(settings, Mapping):
        return None
    set_by = dict(set_by or {})
    takes = sorted(set(accepted) - set(set_by))
    listed = ", ".join(takes) if takes else "none"
    for key in settings:
        if key in set_by:
            return (f"a dict of {target} parameters without {key!r}, which {owner} sets itself: "
                    f"use its {set_by[key]!r} parameter instead")
    unknown = [key for key in settings if key not in takes]
    if unknown:
        keys = ", ".join(map(repr, unknown))
        return f"a dict of {target} parameters ({listed}); {keys} {'is' if len(unknown) == 1 else 'are'} not one"
    return None


def kernel_keywords(kernel, *, pairwise: bool = True) -> set[str] | None:
    """The keyword arguments a kernel function takes, for checking its ``*_params``; None when any are taken.

    Parameters
    ----------
    kernel : str or callable
        A metric of :func:`sklearn.metrics.pairwise.pairwise_kernels` (it takes the keywords of
        ``KERNEL_PARAMS``), ``"precomputed"`` (none), or a callable ``f(a, b, **params)`` (the
        keywords of its signature after ``a, b``; None when it takes ``**kwargs`` or has no
        signature).
    pairwise : bool, default=True
        Whether ``pairwise_kernels`` calls it, which takes ``n_jobs`` itself.
    """
    from sklearn.metrics.pairwise import KERNEL_PARAMS

    own = {"n_jobs"} if pairwise else set()
    if isinstance(kernel, str):
        return set() if kernel == "precomputed" else {*KERNEL_PARAMS.get(kernel, ()), *own}
    try:
        parameters = list(inspect.signature(kernel).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature
        return None
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    positional = [p for p in parameters if p.kind is not p.KEYWORD_ONLY][:2]
    return {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and p not in positional} | own


def check_settings(owner: str, name: str, settings: Mapping | None, accepted: Iterable[str], *, target: str,
                   set_by: Mapping[str, str] | None = None) -> None:
    """Raise :class:`ParameterError` if ``settings`` has a key ``target`` does not take (:func:`settings_requirement`)."""
    requirement = settings_requirement(settings, accepted, target=target, owner=owner, set_by=set_by)
    if requirement is not None:
        raise ParameterError(parameter_message(owner, name, requirement, settings))
