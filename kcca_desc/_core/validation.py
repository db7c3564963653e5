"""Parameter validation of every estimator, in the style of scikit-learn.

Each estimator declares what its constructor parameters may be in a class attribute
``_parameter_constraints`` (parameter name -> list of constraints, any one of which suffices), as
scikit-learn's own estimators do, and calls ``self._validate_params()`` first thing in ``fit``, so
that a bad parameter is reported before any costly work.  A violation raises
:class:`InvalidParameterError` (a ``ValueError`` and a ``TypeError``) worded as scikit-learn words
it: ``The 'diag' parameter of ImageSentenceRanker must be a float in the range [1.0, inf). Got 0.5
instead.``

The constraint types are scikit-learn's (:class:`Interval`, :class:`StrOptions`,
:class:`HasMethods`, the strings ``"boolean"`` and ``"array-like"``, a type, ``None``,
``callable``) plus four it lacks: :class:`Registered` (a name in a registry, looked up when
validating, so that kernels registered later are accepted), :class:`SequenceOf` (a non-empty
sequence whose every element meets a constraint), :class:`MappingOf` (a dict whose keys and
values meet constraints) and :class:`DtypeOptions`.

scikit-learn keeps this machinery in the private module ``sklearn.utils._param_validation`` and
its ``BaseEstimator._validate_params`` accepts only its own constraint classes, so this module is
the one place that imports it, and :class:`ValidatedParams` supplies a ``_validate_params`` that
accepts both kinds.

The input checks (:func:`check_array`, :func:`validate_data`, :func:`check_is_fitted`) are
scikit-learn's, raising the toolkit's :class:`~kcca_desc._core.errors.DataError` and
:class:`~kcca_desc._core.errors.NotFittedError`; they live in :mod:`kcca_desc.kernels._validation`
(``kernels/`` imports nothing of the rest of the toolkit) and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    Options,
    StrOptions,
    _Constraint,
    make_constraint,
)
from sklearn.utils._param_validation import InvalidParameterError as _SklearnInvalidParameterError

from ..kernels._validation import check_array, check_is_fitted, parameter_message, settings_requirement, validate_data
from .errors import ParameterError

__all__ = [
    "ValidatedParams", "validate_params", "parameter_errors", "constraint_errors", "validation_errors",
    "raise_together", "invalid_parameter", "settings_errors", "listed_items", "one_item", "InvalidParameterError",
    "Interval", "StrOptions", "Options", "HasMethods", "Registered", "SequenceOf", "MappingOf", "DtypeOptions",
    "POSITIVE_INT", "NON_NEGATIVE_INT", "POSITIVE_REAL", "FINITE_REAL", "SEED",
    "check_array", "validate_data", "check_is_fitted",
]


class InvalidParameterError(ParameterError, _SklearnInvalidParameterError):
    """A parameter breaks its constraints: scikit-learn's error and the toolkit's :class:`ParameterError`.

    So ``except InvalidParameterError`` catches it as it would scikit-learn's, and the command line
    prints it and exits with :attr:`ParameterError.exit_code`.

    Attributes
    ----------
    parameter : str or None
        The parameter's name (None when the error stands for several, see :attr:`errors`).
    owner : str or None
        The class whose parameter it is.
    errors : list of InvalidParameterError
        Every parameter error it reports: itself alone, or several (:func:`raise_together`).
    """

    def __init__(self, message: str, parameter: str | None = None, owner: str | None = None,
                 errors: list["InvalidParameterError"] | None = None):
        super().__init__(message)
        self.parameter, self.owner = parameter, owner
        self.errors = [self] if errors is None else errors


class Registered(_Constraint):
    """A string that names an entry of ``registry`` when the parameters are validated.

    Parameters
    ----------
    registry : mapping-like
        Supports ``in`` and iteration over the registered names (e.g. ``TEXT_KERNELS``).
    what : str
        What an entry is, for the error message (``"text kernel"``).
    """

    def __init__(self, registry: Mapping, what: str):
        super().__init__()
        self.registry = registry
        self.what = what

    def is_satisfied_by(self, val: Any) -> bool:
        return isinstance(val, str) and val in self.registry

    def __str__(self) -> str:
        return f"a registered {self.what} ({', '.join(map(str, self.registry))})"


class SequenceOf(_Constraint):
    """A non-empty list, tuple or 1-D array whose every element satisfies ``constraint``.

    Parameters
    ----------
    constraint : constraint
        Any constraint of :func:`validate_params` (e.g. ``Interval(Integral, 1, None, closed="left")``).
    distinct : bool, default=False
        Whether the elements must differ from each other.
    """

    def __init__(self, constraint, distinct: bool = False):
        super().__init__()
        self.constraint = _as_constraint(constraint)
        self.distinct = distinct

    def is_satisfied_by(self, val: Any) -> bool:
        if isinstance(val, np.ndarray):
            if val.ndim != 1:
                return False
        elif not isinstance(val, (list, tuple)):
            return False
        return (len(val) > 0 and all(self.constraint.is_satisfied_by(v) for v in val)
                and not (self.distinct and len(set(val)) != len(val)))

    def __str__(self) -> str:
        return f"a non-empty sequence of {'distinct ' if self.distinct else ''}{self.constraint}"


class MappingOf(_Constraint):
    """A dict whose every key satisfies ``keys`` and every value ``values``.

    Parameters
    ----------
    keys, values : constraint
        Any constraints of :func:`validate_params`.
    """

    def __init__(self, keys, values):
        super().__init__()
        self.keys = _as_constraint(keys)
        self.values = _as_constraint(values)

    def is_satisfied_by(self, val: Any) -> bool:
        return isinstance(val, dict) and all(self.keys.is_satisfied_by(k) and self.values.is_satisfied_by(v)
                                             for k, v in val.items())

    def __str__(self) -> str:
        return f"a dict of {self.keys} to {self.values}"


class DtypeOptions(_Constraint):
    """A type, name or dtype that :class:`numpy.dtype` turns into one of ``dtypes`` (not None,
    which numpy reads as float64)."""

    def __init__(self, dtypes):
        super().__init__()
        self.dtypes = tuple(np.dtype(d) for d in dtypes)

    def is_satisfied_by(self, val: Any) -> bool:
        if val is None:
            return False
        try:
            return np.dtype(val) in self.dtypes
        except (TypeError, ValueError):
            return False

    def __str__(self) -> str:
        return f"a numpy dtype among {{{', '.join(f'numpy.{d}' for d in self.dtypes)}}}"


#: Constraints that recur across the estimators.
POSITIVE_INT = Interval(Integral, 1, None, closed="left")
NON_NEGATIVE_INT = Interval(Integral, 0, None, closed="left")
POSITIVE_REAL = Interval(Real, 0, None, closed="neither")   # finite: an open right end excludes inf
FINITE_REAL = Interval(Real, None, None, closed="neither")
SEED = NON_NEGATIVE_INT  # every random choice takes an integer seed (numpy.random.default_rng)


def _as_constraint(constraint) -> _Constraint:
    return constraint if isinstance(constraint, _Constraint) else make_constraint(constraint)


def _describe(constraints: list[_Constraint]) -> str:
    shown = [str(c) for c in constraints if not c.hidden]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def invalid_parameter(owner: Any, name: str, requirement: str, value: Any) -> InvalidParameterError:
    """The error for a parameter value that breaks a requirement no single constraint can state.

    For requirements that involve another parameter or the data (``reg <= 1`` when
    ``reg_form="hardoon"``; fewer components than training items), worded like every other
    parameter error.  The caller raises it.
    """
    caller = owner if isinstance(owner, str) else type(owner).__name__
    return InvalidParameterError(parameter_message(caller, name, requirement, value), parameter=name, owner=caller)


def settings_errors(owner, name: str, target: type, set_by: Mapping[str, str] | None = None
                    ) -> list[InvalidParameterError]:
    """The error of ``owner``'s dict parameter ``name`` if it has a key the estimator class ``target`` does not take.

    For the parameters that hand further settings to a stage (``image_kernel_params`` to
    :class:`~kcca_desc.image.kernel.ImageKernel`, ``kcca_params`` to :class:`~kcca_desc.kcca.KCCA`...):
    ``set_by`` maps the keys ``owner`` sets itself to its parameter to use instead
    (:func:`kcca_desc.kernels._validation.settings_requirement`).  Checked before the stage is
    built, whose constructor would raise Python's ``TypeError``.
    """
    requirement = settings_requirement(getattr(owner, name), target._get_param_names(), target=target.__name__,
                                       owner=type(owner).__name__, set_by=set_by)
    return [] if requirement is None else [invalid_parameter(owner, name, requirement, getattr(owner, name))]


def listed_items(value: object, accepted: type | tuple[type, ...], *, owner: str, name: str, expected: str,
                 item: str, hint: str = "", single: bool = True, refused: type | tuple[type, ...] = ()) -> list:
    """``value``, an argument that takes one item or several, as a list of items of the types ``accepted``.

    One item of ``accepted`` is a list of one (unless ``single`` is false); any other iterable (a list, a tuple, a generator,
    read once) gives its items.  Checked before any work, where a wrong type would otherwise
    surface as an ``AttributeError`` on some item deep in the caller.

    Parameters
    ----------
    value : object
        The argument as given.
    accepted : type or tuple of type
        The types of an item.
    owner : str
        The function taking the argument, for the message (``"format_table"``).
    name : str
        The argument's name (``"results"``); an item is named ``name[i]``.
    expected : str
        What the argument must be (``"a Result or a list of Results"``).
    item : str
        What each item must be (``"a Result"``).
    hint : str, optional
        How to get a right one from a wrong one, appended to the message.
    single : bool, default=True
        Whether one item alone stands for a list of one; if false, it is refused as any other
        value that is no list (a list of ids where one id is no list of them).
    refused : type or tuple of type, optional
        Types refused as items although of ``accepted``: ``bool``, where ``accepted`` holds
        ``numbers.Integral`` for whole numbers (``True`` is no id).

    Returns
    -------
    list
        The items, in order.

    Raises
    ------
    ParameterError
        If ``value`` is neither an item nor an iterable of items (a string, bytes or a mapping
        counts as no list of items, unless ``accepted`` takes it as one item), or an item is not
        of ``accepted``; the message names ``owner``, ``name`` (``name[i]``) and the type given.
    """
    if single and isinstance(value, accepted) and not isinstance(value, refused):
        return [value]
    # A string or a mapping is iterable, but its characters or keys are no list of items.
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise _wrong_type(owner, name, expected, value, hint)
    items = list(value)
    for i, entry in enumerate(items):
        if not isinstance(entry, accepted) or isinstance(entry, refused):
            raise _wrong_type(owner, f"{name}[{i}]", item, entry, hint)
    return items


def one_item(value: object, accepted: type | tuple[type, ...], *, owner: str, name: str, expected: str,
             hint: str = "") -> Any:
    """``value``, an argument that takes exactly one item of the types ``accepted``, checked before any work.

    The one-item counterpart of :func:`listed_items`, worded as it is: an argument of another
    type (``None``, a result's dict, a list of items) would otherwise surface as an
    ``AttributeError`` deep in the caller.

    Parameters
    ----------
    value : object
        The argument as given.
    accepted : type or tuple of type
        The types it may have.
    owner, name, expected, hint : str
        As for :func:`listed_items`: the function, the argument, what it must be (``"a Result"``)
        and how to get a right one.

    Returns
    -------
    object
        ``value`` itself.

    Raises
    ------
    ParameterError
        If ``value`` is not of ``accepted``; the message names ``owner``, ``name`` and the type given.
    """
    if not isinstance(value, accepted):
        raise _wrong_type(owner, name, expected, value, hint)
    return value


def _wrong_type(owner: str, name: str, expected: str, value: object, hint: str) -> ParameterError:
    """The error of an argument (or item) ``name`` of ``owner`` that is not ``expected``."""
    advice = f"; {hint}" if hint else ""
    return ParameterError(f"{owner}: {name} must be {expected}, got {type(value).__name__}{advice}")


def constraint_errors(owner: Any, params: Mapping[str, Any],
                      constraints: Mapping[str, list]) -> list[InvalidParameterError]:
    """Every value of ``params`` that breaks its ``constraints``, as errors naming ``owner``.

    A parameter is valid when it satisfies at least one of its constraints; parameters without
    constraints are not checked (as in :func:`sklearn.utils._param_validation.validate_parameter_constraints`).
    """
    errors = []
    for name, value in params.items():
        checks = [_as_constraint(c) for c in constraints.get(name, ())]
        if checks and not any(c.is_satisfied_by(value) for c in checks):
            errors.append(invalid_parameter(owner, name, _describe(checks), value))
    return errors


def parameter_errors(estimator) -> list[InvalidParameterError]:
    """Every parameter of ``estimator`` that breaks its ``_parameter_constraints``, as errors."""
    return constraint_errors(estimator, estimator.get_params(deep=False), type(estimator)._parameter_constraints)


def validation_errors(estimator) -> list[InvalidParameterError]:
    """Every error ``estimator._validate_params()`` reports (those of its inner stages included).

    An estimator without ``_parameter_constraints`` has nothing to check; a plain scikit-learn
    estimator's error is returned as this module's.
    """
    if not hasattr(estimator, "_parameter_constraints"):
        return []
    try:
        estimator._validate_params()
    except InvalidParameterError as exc:
        return exc.errors
    except _SklearnInvalidParameterError as exc:
        return [InvalidParameterError(str(exc))]
    return []


def raise_together(errors: list[InvalidParameterError]) -> None:
    """Raise the one error of ``errors``, or one error listing them all (one per line); nothing if none."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise InvalidParameterError("\n".join(str(e) for e in errors), errors=list(errors))


def validate_params(estimator) -> None:
    """Check ``estimator.get_params(deep=False)`` against its class's ``_parameter_constraints``.

    Raises
    ------
    InvalidParameterError
        Naming the estimator, the parameter, what it must be and the value it has; with several
        bad parameters, one error listing them all.
    """
    raise_together(parameter_errors(estimator))


class ValidatedParams:
    """Mixin giving scikit-learn's ``_validate_params`` hook the constraint types of this module.

    Put it before :class:`sklearn.base.BaseEstimator` in the bases; the class declares
    ``_parameter_constraints`` and calls ``self._validate_params()`` at the top of ``fit``.
    """

    _parameter_constraints: ClassVar[dict] = {}

    def _validate_params(self) -> None:
        validate_params(self)
