"""``method="auto"`` chooses the exact solver only when its peak fits the memory available."""

import numpy as np
import pytest

from kcca_desc.kcca import KCCA
from kcca_desc.kcca import estimator


@pytest.fixture
def kernels():
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((40, 3)), rng.standard_normal((40, 2))
    return X @ X.T + np.eye(40), Y @ Y.T + np.eye(40)


@pytest.mark.parametrize("available, expected", [(None, "exact"), (10**12, "exact"),
                                                 (estimator.EXACT_PEAK_MATRICES * 8 * 40 * 40 - 1, "lowrank")])
def test_auto_falls_back_to_lowrank_when_memory_is_short(monkeypatch, kernels, available, expected):
    monkeypatch.setattr(estimator, "available_memory", lambda: available)
    model = KCCA(n_components=2, reg=0.1, method="auto").fit(*kernels)
    assert model.method_ == expected
