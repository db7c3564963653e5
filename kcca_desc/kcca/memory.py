"""The exact solver's cache: kernel spectra and canonical solutions as checksummed entries.

What :class:`~kcca_desc.kcca.KCCA` keeps in its ``memory`` directory: the positive spectrum of
each centred training kernel (``spectra/``), keyed by a digest of the kernel's bytes, and each
canonical solution's correlations and directions (``solutions/``), keyed by the two kernels'
digests and the settings that determine it.  Both are :class:`~kcca_desc._core.cache.NpzCache` entries of plain arrays, so
they share the toolkit's cache contract: written atomically, verified against their SHA-256 on
every read (a damaged entry is named in one warning, discarded and recomputed, never trusted),
computed once under a lock when concurrent runs share the directory, and nothing is unpickled.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._core.cache import NpzCache, cache_key
from .spectral import (
    KernelSpectrum,
    solve_canonical,
    spectrum_from_kernel,
    warn_if_indefinite,
)

__all__ = ["SolverMemory"]


def _to_arrays(record: Any) -> dict[str, np.ndarray]:
    """The fields of a dataclass of arrays and scalars, as an ``.npz`` entry's arrays."""
    return {field.name: np.asarray(getattr(record, field.name)) for field in dataclasses.fields(record)}


def _from_arrays(kind: type, arrays: dict[str, np.ndarray]) -> Any:
    """The dataclass ``kind`` back from :func:`_to_arrays` (0-d arrays become Python scalars)."""
    return kind(**{field.name: arrays[field.name] if arrays[field.name].ndim else arrays[field.name].item()
                   for field in dataclasses.fields(kind)})


class SolverMemory:
    """Spectra and canonical directions of the exact KCCA solver, cached in ``location``.

    Parameters
    ----------
    location : path-like
        The directory of the entries (created on the first write).
    """

    def __init__(self, location: str | os.PathLike):
        self.spectra = NpzCache("spectra", root=location)
        self.solutions = NpzCache("solutions", root=location)

    def spectrum(self, K_centred: np.ndarray, name: str) -> tuple[KernelSpectrum, str]:
        """:func:`~kcca_desc.kcca.spectral.spectrum_from_kernel` of ``K_centred``, and its key.

        ``K_centred`` is overwritten when the spectrum is computed (as by
        ``spectrum_from_kernel``).  The key (a digest of the kernel's bytes) names the kernel in
        :meth:`solution`, so that systems sharing a kernel decompose it once.
        """
        kernel_key = cache_key(kernel=K_centred)
        with warnings.catch_warnings():
            # Warned below, whether the spectrum is computed or read from the cache.
            warnings.filterwarnings("ignore", "the training kernel .* not positive semi-definite", RuntimeWarning)
            arrays = self.spectra.get_or_compute(lambda: _to_arrays(spectrum_from_kernel(K_centred, name)),
                                                 kernel=kernel_key)
        spectrum = _from_arrays(KernelSpectrum, arrays)
        warn_if_indefinite(spectrum, name)
        return spectrum, kernel_key

    def directions(self, kernel_keys: tuple[str, str], spectrum_x: KernelSpectrum, spectrum_y: KernelSpectrum,
                   cross: Callable[[], np.ndarray], reg: float, form: str, n_components: int,
                   dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The canonical correlations and directions of :func:`~kcca_desc.kcca.spectral.solve_canonical`.

        Keyed by the kernels and the settings; ``cross`` returns ``Ux'Uy`` and is called only when
        the entry is not cached.  The entry holds the directions ``alpha = Ux coef_x`` and
        ``beta = Uy coef_y`` (:meth:`CanonicalSolution.directions
        <kcca_desc.kcca.spectral.CanonicalSolution.directions>`) rather than the coefficients:
        at n = 6,000 the two products with the eigenvectors cost more than the rest of a fit read
        back from the cache (about 0.8 s per regulariser), reading them a few hundredths.

        Returns
        -------
        correlations, alpha, beta : ndarray
        """
        def compute() -> dict[str, np.ndarray]:
            solution = solve_canonical(spectrum_x, spectrum_y, cross(), reg, form, n_components, dtype=dtype)
            alpha, beta = solution.directions(spectrum_x, spectrum_y)
            return {"correlations": solution.correlations, "alpha": alpha, "beta": beta}

        arrays = self.solutions.get_or_compute(
            compute, kind="directions", kernels=list(kernel_keys), reg=float(reg), form=form,
            n_components=int(n_components), dtype=np.dtype(dtype).name)
        return arrays["correlations"], arrays["alpha"], arrays["beta"]
