"""Kernel CCA beyond one machine's memory: landmark feature maps in chunks, on Dask, out of core.

:class:`LandmarkKCCA` solves the regularised KCCA of :mod:`kcca_desc.kcca` on Nyström
approximations of both kernels; only kernel columns against the landmarks are computed,
chunk by chunk, by a :class:`LocalEngine` in this process or a :class:`DaskEngine` on a
Dask cluster (:func:`dask_engine`), stored in Zarr (:class:`ChunkStore`) so that a killed run
resumes, and reduced to small sums solved locally.  :func:`base_columns` caches the columns of
several base kernels against one set of landmarks, so that weighted sums of them
(multiple-kernel KCCA) are solved without computing a kernel value again.
"""

from .chunked import map_chunks
from .engine import (SCHEDULER_ENV, DaskEngine, LocalEngine, available_cores, dask_engine, open_dask_engine,
                     running_sum)
from .estimator import DEFAULT_CHUNK_SIZE, DEFAULT_RANK, LandmarkFeatures, LandmarkKCCA
from .landmarks import LANDMARKS, NystromMap, nystrom_map, nystrom_transform, pivot_landmarks, uniform_landmarks
from .store import ChunkStore
from .sums import BaseColumns, KernelSum, Landmarks, base_columns, centred_inner_products
from .views import HistogramIntersection, KernelView, LinearKernel, SparseRows, take

__all__ = [
    "LandmarkKCCA", "LandmarkFeatures", "DEFAULT_RANK", "DEFAULT_CHUNK_SIZE",
    "LocalEngine", "DaskEngine", "dask_engine", "open_dask_engine", "running_sum", "available_cores", "SCHEDULER_ENV",
    "LANDMARKS", "NystromMap", "nystrom_map", "nystrom_transform", "pivot_landmarks", "uniform_landmarks",
    "ChunkStore", "map_chunks", "BaseColumns", "KernelSum", "Landmarks", "base_columns",
    "centred_inner_products", "KernelView", "SparseRows", "HistogramIntersection", "LinearKernel", "take",
]
