"""Where the blocks of the large-n solver run: in this process, or on a Dask cluster.

Both engines take the same per-chunk functions and add their partial results
to one running sum in chunk order, ``((p0 + p1) + p2) + ...``
(:func:`running_sum`), so the Dask path sums exactly the partial products the
single-process path sums, in the same order, and either holds only a few
partial results at a time, however many chunks there are.

``DaskEngine`` submits the chunks to a :class:`distributed.Client` and chains
the sums as futures: Dask schedules the work, moves the partial products
between workers and adds each chunk as soon as it and the sum before it are ready.  Large
read-only inputs (the views, the landmark maps) are scattered once to every
worker.  :func:`dask_engine` opens the client: on an existing scheduler
(``scheduler=ADDRESS`` or ``$KCCA_DESC_SCHEDULER``), else on a
:class:`distributed.LocalCluster` sized to this machine.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import operator
import os
from typing import Any, Callable, Iterable, Iterator, Sequence

from .._core.errors import DataError, ParameterError, UnreachableServiceError, import_optional

__all__ = ["SCHEDULER_ENV", "LocalEngine", "DaskEngine", "dask_engine", "open_dask_engine", "running_sum",
           "available_cores"]

#: What an empty stream of values gives :func:`running_sum` first (None may be a value).
_NOTHING = object()

#: Environment variable naming the address of an existing Dask scheduler.
SCHEDULER_ENV = "KCCA_DESC_SCHEDULER"
#: Seconds to wait for a scheduler to answer: Dask's own default (30 s, with retries) leaves a
#: mistyped address looking like a hang.
CONNECT_TIMEOUT_S = 5


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def running_sum(values: Iterable[Any], combine: Callable[[Any, Any], Any] = operator.add) -> Any:
    """``combine`` over ``values`` from the left, ``((v0 v1) v2) ...``, holding one partial result.

    The order depends on the number of values only.  In float64 the rounding error of n terms
    summed in a row grows as n·eps at worst (Higham 2002, §4.2) against log2(n)·eps for a
    pairwise tree: about 1e-13 relative for the thousands of chunks of any run here, far below the
    regularisation; the tree would keep log2(n) partial results alive, the row one.

    References
    ----------
    Higham, N. J. (2002). Accuracy and Stability of Numerical Algorithms, 2nd ed. SIAM.
    """
    iterator = iter(values)
    first = next(iterator, _NOTHING)
    if first is _NOTHING:
        raise DataError("running_sum: nothing to reduce")
    return functools.reduce(combine, iterator, first)


class LocalEngine:
    """Runs every chunk in this process, one after the other."""

    name = "local"

    def share(self, obj: Any) -> Any:
        return obj

    def map(self, fn: Callable, tasks: Sequence, **shared) -> list:
        return [fn(task, **shared) for task in tasks]

    def map_reduce(self, fn: Callable, tasks: Sequence, combine: Callable = operator.add, **shared) -> Any:
        # A generator: each chunk's partial is added to the running sum as soon as it exists.
        return running_sum((fn(task, **shared) for task in tasks), combine)


class DaskEngine:
    """Runs every chunk as a task of a Dask cluster.

    Parameters
    ----------
    client : distributed.Client
    """

    name = "dask"

    def __init__(self, client):
        self.client = client

    def share(self, obj: Any) -> Any:
        """A future of ``obj`` held by every worker (sent once, not once per task)."""
        return self.client.scatter([obj], broadcast=True, hash=False)[0]

    def _scattered(self, tasks: Sequence) -> list:
        """The tasks' inputs as futures, each sent to one worker directly.

        Passed as plain arguments they would be embedded in the task graph, which goes through
        the scheduler: the synthetic COCO images made a graph of 724 MiB.
        """
        return self.client.scatter(list(tasks), hash=False)

    def map(self, fn: Callable, tasks: Sequence, **shared) -> list:
        return self.client.gather(self.client.map(fn, self._scattered(tasks), pure=False, **shared))

    def map_reduce(self, fn: Callable, tasks: Sequence, combine: Callable = operator.add, **shared) -> Any:
        """``combine`` over ``fn(task)`` as :func:`running_sum` does, with a bounded number of chunks in flight.

        Each chunk is added to the running sum by a task of its own, in chunk order, and at most
        :attr:`window` chunks are not yet in the sum at a time, so the cluster holds O(window)
        partial results whatever n.  Submitted all at once, the chunks ran ahead of their sums:
        at 566,435 pairs and rank 2,000 the r x r partial sums of 139 chunks made a peak of
        15.7 GiB; a pairwise tree, the next design, still held log2(n) of them.
        """
        from distributed import wait

        if not tasks:
            raise DataError("map_reduce: no tasks")
        window = self.window
        total, unsummed = None, []
        for task in self._scattered(tasks):
            # The sums form a chain, so a finished one finishes all before it; dropping them
            # releases their data.
            unsummed = [future for future in unsummed if not future.done()]
            if len(unsummed) >= window:
                wait(unsummed[0])
                unsummed = [future for future in unsummed if not future.done()]
            chunk = self.client.submit(fn, task, pure=False, priority=0, **shared)
            # Sums outrank the chunks, so none waits behind a chunk for a worker.
            total = chunk if total is None else self.client.submit(combine, total, chunk, pure=False, priority=1)
            unsummed.append(total)
        return total.result()

    @property
    def window(self) -> int:
        """Chunks :meth:`map_reduce` lets be outside the running sum: two per worker thread, so none waits idle."""
        threads = sum(w.get("nthreads", 1) for w in self.client.scheduler_info()["workers"].values())
        return 2 * max(1, threads)


def open_dask_engine(scheduler: str | None = None, *, n_workers: int | None = None, threads_per_worker: int = 1,
                     processes: bool = True) -> DaskEngine:
    """A :class:`DaskEngine` that stays open until the interpreter exits (for a command-line run).

    As :func:`dask_engine`, whose context is entered here and closed by :mod:`atexit`.
    """
    context = dask_engine(scheduler, n_workers=n_workers, threads_per_worker=threads_per_worker,
                          processes=processes)
    engine = context.__enter__()
    atexit.register(context.__exit__, None, None, None)
    return engine


def _connect(distributed, address: str):
    """A client of the scheduler at ``address``, or one clear error within :data:`CONNECT_TIMEOUT_S`."""
    try:
        return distributed.Client(address, timeout=CONNECT_TIMEOUT_S)
    except ValueError as exc:  # an address Dask cannot parse
        raise ParameterError(f"scheduler {address!r} (--scheduler or ${SCHEDULER_ENV}): {exc}") from None
    except OSError as exc:
        raise UnreachableServiceError(f"the Dask scheduler at {address!r} does not answer ({exc}); start it, correct "
                                      f"--scheduler (or ${SCHEDULER_ENV}), or run with --engine local") from None


@contextlib.contextmanager
def dask_engine(scheduler: str | None = None, *, n_workers: int | None = None, threads_per_worker: int = 1,
                processes: bool = True, memory_limit: str | float | None = "auto") -> Iterator[DaskEngine]:
    """A :class:`DaskEngine` on an existing cluster or on a new local one, closed on exit.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running scheduler (``tcp://host:8786``); default ``$KCCA_DESC_SCHEDULER``.
        When neither is set, a :class:`distributed.LocalCluster` is started.
    n_workers : int, optional
        Workers of the local cluster; default one per available core.
    threads_per_worker : int, default=1
        Threads per local worker.  One: the blocks are BLAS and Numba calls that keep a core busy.
    processes : bool, default=True
        Local workers as processes (no shared GIL) or as threads of this process.
    memory_limit : str, float or None, default="auto"
        Per-worker memory limit of the local cluster (Dask's meaning).
    """
    distributed = import_optional("distributed", "dask", "the Dask engine")
    address = scheduler or os.environ.get(SCHEDULER_ENV)
    if address:
        with _connect(distributed, address) as client:
            yield DaskEngine(client)
        return
    workers = n_workers or max(1, available_cores() // threads_per_worker)
    # BLAS and Numba would otherwise start a thread per core in every worker.
    env = {name: str(threads_per_worker) for name in
           ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}
    extra = {"env": env} if processes else {}
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=threads_per_worker, processes=processes,
                                  memory_limit=memory_limit, dashboard_address=None, **extra) as cluster, \
            distributed.Client(cluster) as client:
        yield DaskEngine(client)
