"""Fan cells out on Dask distributed: a LocalCluster by default, or an existing scheduler.

A cell is a pure function call, so it is submitted as a future; results come back with
``as_completed`` in whatever order they finish. A cell whose function raises, or whose
worker dies (``KilledWorker``), comes back as an ``Exception`` object for the caller to
record, and the other futures carry on.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Iterator

logger = logging.getLogger(__name__)


@contextlib.contextmanager
def dask_client(
    scheduler: str | None = "local", workers: int | None = None, processes: bool = True
):
    """A ``distributed.Client``: on a fresh LocalCluster, or connected to ``scheduler``.

    ``scheduler`` is ``"local"`` (or None) for a LocalCluster of ``workers`` workers with
    one thread each (default: one per core), or a scheduler address such as
    ``"tcp://10.0.0.5:8786"``. The LocalCluster is closed on exit; a remote cluster is
    left running. A scheduler that cannot be reached (within Dask's
    ``distributed.comm.timeouts.connect``) is a ``ConnectionError`` naming its address.
    """
    from distributed import Client, LocalCluster

    if scheduler in (None, "local"):
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=processes,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        )
        try:
            with Client(cluster) as client:
                yield client
        finally:
            cluster.close()
    else:
        try:  # only the connection: an OSError of the work inside is not about the address
            client = Client(scheduler)
        except OSError as exc:
            raise ConnectionError(f"cannot reach the Dask scheduler {scheduler}: {exc} (is it "
                                  "running, and is the address its 'Scheduler at' line?)") from exc
        with client:
            yield client


def submit_all(
    client, fn: Callable, items: list, deadline: float | None = None
) -> Iterator[tuple[int, object]]:
    """Yield ``(index, result)`` as futures finish; a failure yields its exception.

    Without a ``deadline`` every item is submitted at once. With one (a
    :func:`time.monotonic` value), at most as many items as the cluster has worker
    threads are in flight, and the next is submitted only while the deadline has not
    passed: items already running finish, the rest are never started (and never yielded).
    """
    from distributed import as_completed

    items = list(items)
    window = len(items) if deadline is None else max(1, sum(client.nthreads().values()))
    futures: dict = {}

    def submit(index: int):
        future = client.submit(fn, items[index], pure=False)
        futures[future] = index
        return future

    def open_slot() -> bool:
        return upcoming < len(items) and (deadline is None or time.monotonic() < deadline)

    upcoming = 0
    first = []
    while open_slot() and upcoming < window:
        first.append(submit(upcoming))
        upcoming += 1
    running = as_completed(first)
    for future in running:
        index = futures.pop(future)
        if open_slot():
            running.add(submit(upcoming))  # keep the worker busy before handing back
            upcoming += 1
        try:
            yield index, future.result()
        except Exception as exc:  # the cell raised, or its worker died
            logger.warning("cell %d failed on the cluster: %s", index, exc)
            yield index, exc
        finally:
            future.release()


def dask_map(client) -> Callable[[Callable, Iterable], list]:
    """A ``map_fn`` for :func:`optrank.experiments.run_protocol` that runs on ``client``.

    Results come back in input order; a failure is returned as its exception.
    """

    def map_fn(fn: Callable, items: Iterable) -> list:
        items = list(items)
        out: list = [None] * len(items)
        for index, result in submit_all(client, fn, items):
            out[index] = result
        return out

    return map_fn
