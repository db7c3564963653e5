"""A precomputed Gram matrix as a kernel over item numbers, for scikit-learn's model selection.

:class:`~kcca_desc.kcca.KCCA` with ``kernel_x="precomputed"`` takes the square training kernel
of each view. scikit-learn's cross-validation slices a pairwise ``X`` by rows and columns, but
the second view ``Y`` as a target, by rows only, so a grid search over two precomputed kernels
cannot work that way. Instead the items are named by their number (a column of indices,
:meth:`PrecomputedKernel.items`) and each view's kernel looks its Gram matrix up:
``k(i, j) = G[i, j]``. The folds then slice the index columns of both views alike, and every fit
sees exactly the submatrices ``G[train][:, train]`` and ``G[test][:, train]``.

>>> import numpy as np
>>> from sklearn.model_selection import GridSearchCV
>>> from kcca_desc.kcca import KCCA, PrecomputedKernel
>>> rng = np.random.default_rng(0)
>>> Z = rng.normal(size=(60, 2))
>>> X, Y = Z @ rng.normal(size=(2, 5)), Z @ rng.normal(size=(2, 4))
>>> Kx, Ky = PrecomputedKernel(X @ X.T), PrecomputedKernel(Y @ Y.T)
>>> items = Kx.items()
>>> search = GridSearchCV(KCCA(n_components=1, kernel_x=Kx, kernel_y=Ky), {"reg": [0.1, 10.0]}, cv=3)
>>> search.fit(items, items).best_params_
{'reg': 0.1}
"""

from __future__ import annotations

import numpy as np

from .._core.errors import DataError
from .._core.validation import check_array
from .preprocessing import symmetrised

__all__ = ["PrecomputedKernel"]


class PrecomputedKernel:
    """The kernel ``k(i, j) = gram[i, j]`` between items named by number.

    A callable kernel in scikit-learn's sense (``k(x, y) -> float`` on rows of a one-column
    array of item numbers), so it serves wherever a callable kernel does;
    :class:`~kcca_desc.kcca.KCCA` reads whole blocks with :meth:`matrix` instead of one call per
    pair.

    Parameters
    ----------
    gram : array-like of shape (n, n)
        The symmetric Gram matrix of all n items (training and held-out alike). It is copied
        once and made read-only; copies of the kernel (:func:`sklearn.base.clone`) share it.
    """

    def __init__(self, gram):
        gram = check_array(gram, dtype=np.float64, input_name="gram")
        if gram.shape[0] != gram.shape[1]:
            raise DataError(f"PrecomputedKernel: gram must be square, got shape {gram.shape}")
        gram, symmetric = symmetrised(np.array(gram), rtol=1e-6, atol=1e-8 * np.abs(gram).max())
        if not symmetric:
            raise DataError("PrecomputedKernel: gram is not symmetric")
        gram.setflags(write=False)
        self.gram = gram

    @property
    def n_items(self) -> int:
        """Number of items the Gram matrix covers."""
        return self.gram.shape[0]

    def items(self) -> np.ndarray:
        """The input that names every item: ``[[0], [1], ..., [n - 1]]`` (float, as estimators convert it)."""
        return np.arange(self.n_items, dtype=np.float64)[:, None]

    def indices(self, A, name: str = "X") -> np.ndarray:
        """Item numbers of the rows of ``A`` (one column of whole numbers in [0, n)).

        Raises
        ------
        DataError
            If ``A`` is not one column of whole numbers within the Gram matrix.
        """
        A = np.asarray(A, dtype=np.float64)
        if A.ndim == 1:
            A = A[:, None]
        if A.ndim != 2 or A.shape[1] != 1:
            raise DataError(f"{name}: a PrecomputedKernel's input is one column of item numbers, got shape {A.shape}")
        index = np.rint(A[:, 0])
        if not np.array_equal(index, A[:, 0]) or index.size and (index.min() < 0 or index.max() >= self.n_items):
            raise DataError(f"{name}: item numbers must be whole numbers in [0, {self.n_items}) "
                            "(see PrecomputedKernel.items)")
        return index.astype(np.intp)

    def matrix(self, A, B=None) -> np.ndarray:
        """The kernel block between the items of ``A`` and ``B`` (default ``A``): ``gram[a][:, b]``."""
        a = self.indices(A, "X")
        b = a if B is None else self.indices(B, "Y")
        return self.gram[np.ix_(a, b)]

    def __call__(self, x, y) -> float:
        """``k(x, y)`` of two one-element rows, as :func:`sklearn.metrics.pairwise.pairwise_kernels` calls it."""
        return float(self.matrix(np.reshape(x, (1, 1)), np.reshape(y, (1, 1)))[0, 0])

    def __deepcopy__(self, memo):
        # Immutable (read-only Gram): clone() and GridSearchCV share the one matrix instead of
        # copying n^2 floats per candidate and fold.
        return self

    def __repr__(self) -> str:
        return f"PrecomputedKernel(<{self.n_items} x {self.n_items} Gram>)"
