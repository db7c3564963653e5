"""Row chunks of a mapping of arrays, computed by an engine and kept in a chunk store.

:func:`map_chunks` is how inputs too large for one process (the pyramid histograms of a
hundred thousand images are several GB) are computed: each task gets one chunk's payload
(e.g. the chunk's images), computes ``{name: array}`` for its rows and writes each array's
chunk to the :class:`~.store.ChunkStore` itself, so the results never travel back through
the client; the caller gets Zarr arrays that later tasks read chunk by chunk.  Chunks already
flagged in the store are not recomputed.  The store is a cache: when it cannot be written (a full
or read-only disk) the chunks are computed in memory instead, with one warning.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .._core.cache import cache_write_failed
from .store import ChunkStore

__all__ = ["map_chunks"]


def _stored_chunk(task: tuple[int, Any], *, compute: Callable, store: ChunkStore, **shared) -> None:
    chunk, payload = task
    for name, array in compute(payload, **shared).items():
        store.write(name, chunk, np.asarray(array))


def _concat(parts: list[dict]) -> dict[str, np.ndarray]:
    return {name: np.concatenate([p[name] for p in parts], axis=0) for name in parts[0]}


def map_chunks(engine, compute: Callable[..., dict], payloads: Sequence[Any], n_rows: int, chunk_rows: int,
               *, store: ChunkStore | None = None, **shared) -> dict:
    """``compute(payloads[c], **shared) -> {name: array}`` for every chunk ``c`` of ``n_rows`` rows.

    Parameters
    ----------
    engine : LocalEngine or DaskEngine
    compute : callable
        Picklable; returns arrays whose first axis holds the chunk's rows.
    payloads : sequence
        One per chunk of ``chunk_rows`` rows (the last may be shorter).
    n_rows : int
        Rows of the result, summed over the chunks: the length of each array of the store.
    chunk_rows : int
        Rows per chunk (the last may have fewer): the store's chunk length along the first axis,
        so that each chunk is written and resumed as a whole.
    store : ChunkStore, optional
        Where the chunks are written and resumed from; None: computed and concatenated in memory.
    **shared
        Arguments of every call, sent once to every worker.

    Returns
    -------
    dict of str to array
        Zarr arrays of the store (read lazily), or NumPy arrays without a store.
    """
    if store is None:
        return _concat(engine.map(compute, payloads, **{k: engine.share(v) for k, v in shared.items()}))
    try:
        return _map_stored(engine, compute, payloads, n_rows, chunk_rows, store, shared)
    except OSError as exc:
        cache_write_failed(store.path, exc)
        return map_chunks(engine, compute, payloads, n_rows, chunk_rows, store=None, **shared)


def _map_stored(engine, compute: Callable[..., dict], payloads: Sequence[Any], n_rows: int, chunk_rows: int,
                store: ChunkStore, shared: dict) -> dict:
    """:func:`map_chunks` with a store: the chunks it lacks computed into it, its arrays returned."""
    names = store.names()
    if names is None:
        # The first chunk tells the arrays' names, shapes and dtypes.
        first = compute(payloads[0], **shared)
        for name, array in first.items():
            array = np.asarray(array)
            store.create(name, (n_rows, *array.shape[1:]), chunk_rows, array.dtype)
            store.write(name, 0, array)
        store.set_names(list(first))
        names = list(first)
    else:
        for name in names:
            store.verify(name)
    missing = sorted(set().union(*(store.missing(name).tolist() for name in names)))
    if missing:
        shared = {key: engine.share(value) for key, value in shared.items()}
        engine.map(_stored_chunk, [(c, payloads[c]) for c in missing], compute=compute, store=store, **shared)
    return {name: store.array(name) for name in names}
