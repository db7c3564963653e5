"""Where the blocks of the large-n solver run: in this process, or on a Dask cluster.

Both engines take the same per-chunk functions and combine their partial
results by the same pairwise tree, ``((p0 + p1) + (p2 + p3)) + ...``
(:func:`tree_reduce`), so the Dask path sums exactly the partial products the
single-process path sums, in the same order, and either holds only a few
partial results at a time.

``DaskEngine`` submits the chunks to a :class:`distributed.Client` and builds
the tree from futures: Dask schedules the work, moves the partial products
between workers and combines each pair as soon as both are ready.  Large
read-only inputs (the views, the landmark maps) are scattered once to every
worker.  :func:`dask_engine` opens the client: on an existing scheduler
(``scheduler=ADDRESS`` or ``$KCCA_DESC_SCHEDULER``), else on a
:class:`distributed.LocalCluster` sized to this machine.
"""

from __future__ import annotations

import atexit
import contextlib
import operator
import os
from typing import Any, Callable, Iterable, Iterator, Sequence

__all__ = ["SCHEDULER_ENV", "LocalEngine", "DaskEngine", "dask_engine", "open_dask_engine", "tree_reduce",
           "available_cores"]

#: Environment variable naming the address of an existing Dask scheduler.
SCHEDULER_ENV = "KCCA_DESC_SCHEDULER"


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def _tree(values: Iterable[Any], combine_at: Callable[[int], Callable[[Any, Any], Any]]) -> Any:
    """Pairwise tree over ``values`` as they come: two subtrees of equal height are combined at once.

    A binary counter: at most one pending subtree per height, so a stream of n values holds
    O(log n) partial results.  ``combine_at(h)`` combines two subtrees into one of height h.
    """
    stack: list[tuple[int, Any]] = []
    for value in values:
        height = 0
        while stack and stack[-1][0] == height:
            _, left = stack.pop()
            height += 1
            value = combine_at(height)(left, value)
        stack.append((height, value))
    if not stack:
        raise ValueError("tree_reduce: nothing to reduce")
    _, value = stack.pop()
    while stack:
        height, left = stack.pop()
        value = combine_at(height + 1)(left, value)
    return value


def tree_reduce(values: Iterable[Any], combine: Callable[[Any, Any], Any]) -> Any:
    """``combine`` over ``values`` by a balanced pairwise tree in a fixed order, holding O(log n) partials.

    The tree depends on the number of values only: ``((v0 v1)(v2 v3))`` for four, and the last,
    smaller subtrees joined from the right (``(((v0 v1)(v2 v3)) v4)`` for five).
    """
    return _tree(values, lambda height: combine)


class LocalEngine:
    """Runs every chunk in this process, one after the other."""

    name = "local"

    def share(self, obj: Any) -> Any:
        return obj

    def map(self, fn: Callable, tasks: Sequence, **shared) -> list:
        return [fn(task, **shared) for task in tasks]

    def map_reduce(self, fn: Callable, tasks: Sequence, combine: Callable = operator.add, **shared) -> Any:
        # A generator: each chunk's partial is combined as soon as its sibling exists.
        return tree_reduce((fn(task, **shared) for task in tasks), combine)


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
        """``combine`` over ``fn(task)`` by :func:`tree_reduce`'s tree, with a bounded number of chunks in flight.

        At most :attr:`window` chunk tasks are unfinished at a time, and each pair is combined as
        soon as both exist, so memory holds O(window + log n) partial results. Submitted all at
        once, the chunks ran ahead of their combines: at 566,435 pairs and rank 2,000 the partial
        r x r sums of 139 chunks made a peak of 15.7 GiB.
        """
        from distributed import wait

        inputs = self._scattered(tasks)
        window = self.window

        def submitted():
            pending = []
            for task in inputs:
                pending = [future for future in pending if not future.done()]
                if len(pending) >= window:
                    wait(pending, return_when="FIRST_COMPLETED")
                    pending = [future for future in pending if not future.done()]
                future = self.client.submit(fn, task, pure=False, priority=0, **shared)
                pending.append(future)
                yield future

        # Combines outrank the chunks (higher subtrees first).
        total = _tree(submitted(), lambda height: lambda a, b: self.client.submit(combine, a, b, pure=False,
                                                                                 priority=height))
        return total.result()

    @property
    def window(self) -> int:
        """Chunk tasks :meth:`map_reduce` keeps in flight: two per worker thread, so none waits idle."""
        threads = sum(w.get("nthreads", 1) for w in self.client.scheduler_info()["workers"].values())
        return 2 * max(1, threads)


def open_dask_engine(scheduler: str | None = None, n_workers: int | None = None, threads_per_worker: int = 1,
                     processes: bool = True) -> DaskEngine:
    """A :class:`DaskEngine` that stays open until the interpreter exits (for a command-line run).

    As :func:`dask_engine`, whose context is entered here and closed by :mod:`atexit`.
    """
    context = dask_engine(scheduler, n_workers, threads_per_worker, processes)
    engine = context.__enter__()
    atexit.register(context.__exit__, None, None, None)
    return engine


@contextlib.contextmanager
def dask_engine(scheduler: str | None = None, n_workers: int | None = None, threads_per_worker: int = 1,
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
    try:
        from distributed import Client, LocalCluster
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError("the Dask engine needs dask and distributed: pip install 'kcca_desc[dask]'") from error
    address = scheduler or os.environ.get(SCHEDULER_ENV)
    if address:
        with Client(address) as client:
            yield DaskEngine(client)
        return
    workers = n_workers or max(1, available_cores() // threads_per_worker)
    # BLAS and Numba would otherwise start a thread per core in every worker.
    env = {name: str(threads_per_worker) for name in
           ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}
    extra = {"env": env} if processes else {}
    with LocalCluster(n_workers=workers, threads_per_worker=threads_per_worker, processes=processes,
                      memory_limit=memory_limit, dashboard_address=None, **extra) as cluster, \
            Client(cluster) as client:
        yield DaskEngine(client)
