"""CUDA histogram intersection through a CuPy RawKernel (imported only when CuPy runs).

Each 16 x 16 thread block computes a TILE x TILE (64 x 64) tile of K: it stages a TILE x DEPTH
slice of A and of B in shared memory (feature-major, so the micro-tile reads are conflict-free broadcasts or consecutive
words; one column of padding spreads the staging stores over the banks), then every thread accumulates a 4 x 4
register micro-tile of min+add. Loads past the edge of A, B or the features are filled with zero,
which cannot change a sum of min(a, b) over non-negative values. For a Gram matrix the blocks
below the diagonal return at once and the upper triangle is mirrored afterwards.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["cupy_histogram_intersection", "TILE", "DEPTH", "THREADS"]

#: Output rows (and columns) per thread block, features per shared-memory stage, threads per side.
TILE, DEPTH, THREADS = 64, 16, 16

_SOURCE = r"""
extern "C" __global__ void intersection_{T}(const {T}* __restrict__ A, const {T}* __restrict__ B,
                                          {T}* __restrict__ K, const int n, const int m,
                                          const int d, const int symmetric)
{{
    if (symmetric && blockIdx.y > blockIdx.x) return;
    __shared__ {T} As[{DEPTH}][{TILE} + 1];
    __shared__ {T} Bs[{DEPTH}][{TILE} + 1];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * {THREADS} + tx;
    const int i0 = blockIdx.y * {TILE}, j0 = blockIdx.x * {TILE};
    const int per_side = {TILE} / {THREADS};
    {T} acc[{TILE} / {THREADS}][{TILE} / {THREADS}];
    for (int r = 0; r < per_side; ++r)
        for (int c = 0; c < per_side; ++c) acc[r][c] = 0;

    for (int k0 = 0; k0 < d; k0 += {DEPTH}) {{
        // Consecutive threads read consecutive features of a row: coalesced global loads.
        for (int e = tid; e < {TILE} * {DEPTH}; e += {THREADS} * {THREADS}) {{
            const int row = e / {DEPTH}, col = e % {DEPTH}, k = k0 + col;
            const int i = i0 + row, j = j0 + row;
            As[col][row] = (i < n && k < d) ? A[(size_t)i * d + k] : ({T})0;
            Bs[col][row] = (j < m && k < d) ? B[(size_t)j * d + k] : ({T})0;
        }}
        __syncthreads();
        for (int k = 0; k < {DEPTH}; ++k) {{
            {T} a[{TILE} / {THREADS}], b[{TILE} / {THREADS}];
            for (int r = 0; r < per_side; ++r) a[r] = As[k][ty + r * {THREADS}];
            for (int c = 0; c < per_side; ++c) b[c] = Bs[k][tx + c * {THREADS}];
            for (int r = 0; r < per_side; ++r)
                for (int c = 0; c < per_side; ++c) acc[r][c] += (a[r] < b[c]) ? a[r] : b[c];
        }}
        __syncthreads();
    }}
    for (int r = 0; r < per_side; ++r) {{
        const int i = i0 + ty + r * {THREADS};
        for (int c = 0; c < per_side; ++c) {{
            const int j = j0 + tx + c * {THREADS};
            if (i < n && j < m) K[(size_t)i * m + j] = acc[r][c];
        }}
    }}
}}
"""

_C_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


@functools.lru_cache(maxsize=None)
def _kernel(dtype: np.dtype):
    import cupy

    c_type = _C_TYPES[dtype]
    source = _SOURCE.format(T=c_type, TILE=TILE, DEPTH=DEPTH, THREADS=THREADS)
    return cupy.RawKernel(source, f"intersection_{c_type}")


def cupy_histogram_intersection(A: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
    """K_ij = sum_v min(A_iv, B_jv) on the GPU; ``B=None`` for the symmetric Gram matrix of A.

    A and B must already be validated (C-contiguous, finite, non-negative, float32 or float64,
    same number of columns): see :func:`kcca_desc.kernels.image.histogram_intersection`, the public entry.
    Returns a NumPy array.
    """
    import cupy

    symmetric = B is None
    a = cupy.asarray(A)
    b = a if symmetric else cupy.asarray(B)
    n, d = a.shape
    m = b.shape[0]
    K = cupy.zeros((n, m), dtype=a.dtype)
    if n and m and d:
        grid = (-(-m // TILE), -(-n // TILE))
        _kernel(a.dtype)(grid, (THREADS, THREADS),
                         (a, b, K, np.int32(n), np.int32(m), np.int32(d), np.int32(symmetric)))
        if symmetric:
            # Diagonal blocks were computed whole; keep their upper part and mirror it.
            K = cupy.triu(K)
            K += cupy.triu(K, 1).T
    return cupy.asnumpy(K)
