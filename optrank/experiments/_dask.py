"""Fan cells out on Dask distributed: a LocalCluster by default, or an existing scheduler.

A cell is a pure function call, so it is submitted as a future; results come back with
``as_completed`` in whatever order they finish. A cell whose function raises, or whose
worker dies (``KilledWorker``), comes back as an ``Exception`` object for the caller to
record, and the other futures carry on.
"""

from __future__ import annotations

import contextlib
import logging
import numbers
import re
import time
from collections.abc import Callable, Iterable, Iterator

logger = logging.getLogger(__name__)

SCHEDULER_FORMS = (
    "None or 'sequential' (this process, one cell after another), 'local' (a Dask "
    "LocalCluster), or a scheduler address such as 'tcp://host:8786' or 'host:8786'"
)
_HOST_PORT = re.compile(r"(\[[^\]\s]+\]|[^\s:/\[\]]+):\d+")


def check_scheduler(scheduler: str | None, workers: int | None = None) -> str | None:
    """``scheduler`` as the executors read it: None for a sequential run, else ``"local"``
    or an address; anything else, or ``workers`` below 1, is a ``ValueError``.

    Examples
    --------
    >>> check_scheduler("sequential"), check_scheduler("local", 2), check_scheduler("h:8786")
    (None, 'local', 'h:8786')
    >>> check_scheduler("lcoal")
    Traceback (most recent call last):
    ...
    ValueError: scheduler 'lcoal' is not None or 'sequential' (this process, ...
    """
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1
    ):
        raise ValueError(f"workers must be an integer >= 1 (LocalCluster workers), got "
                         f"{workers!r}")
    if scheduler is None or scheduler == "sequential":
        return None
    if isinstance(scheduler, str) and (
        scheduler == "local" or "://" in scheduler or _HOST_PORT.fullmatch(scheduler)
    ):
        return scheduler
    raise ValueError(f"scheduler {scheduler!r} is not {SCHEDULER_FORMS}")


@contextlib.contextmanager
def dask_client(
    scheduler: str | None = "local", workers: int | None = None, processes: bool = True
):
    """A ``distributed.Client``: on a fresh LocalCluster, or connected to ``scheduler``.

    ``scheduler`` is ``"local"`` (or None) for a LocalCluster of ``workers`` workers with
    one thread each (default: one per core), or a scheduler address such as
    ``"tcp://10.0.0.5:8786"`` (or ``"host:8786"``). ``"sequential"`` starts nothing and
    yields None, which :func:`submit_all` reads as "run the items in turn in this
    process". Any other value, or ``workers`` below 1, is a ``ValueError`` (checked
    before Dask is imported). The LocalCluster is closed on exit; a remote cluster is
    left running. A scheduler that cannot be reached (within Dask's
    ``distributed.comm.timeouts.connect``) is a ``ConnectionError`` naming its address.
    """
    check_scheduler(scheduler, workers)
    if scheduler == "sequential":
        yield None
        return
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
    threads are in flight, counted again whenever a slot opens (workers that join
    later get items too), and the next is submitted only while the deadline has not
    passed: items already running finish, the rest are never started (and never
    yielded). ``client`` None (``dask_client("sequential")``) runs the items in turn
    in this process, an exception raised by ``fn`` propagating as in a sequential run.
    """
    items = list(items)
    if client is None:
        yield from _in_turn(fn, items, deadline)
        return
    from distributed import as_completed

    futures: dict = {}  # in flight -> index

    def window() -> int:
        return len(items) if deadline is None else max(1, sum(client.nthreads().values()))

    def open_slot() -> bool:
        return upcoming < len(items) and (deadline is None or time.monotonic() < deadline)

    def fill() -> list:
        nonlocal upcoming
        new = []
        limit = window() if open_slot() else 0
        while open_slot() and len(futures) < limit:
            future = client.submit(fn, items[upcoming], pure=False)
            futures[future] = upcoming
            new.append(future)
            upcoming += 1
        return new

    upcoming = 0
    running = as_completed(fill())
    for future in running:
        index = futures.pop(future)
        running.update(fill())  # keep the workers busy before handing back
        try:
            yield index, future.result()
        except Exception as exc:  # the cell raised, or its worker died
            logger.warning("cell %d failed on the cluster: %s", index, exc)
            yield index, exc
        finally:
            future.release()


def _in_turn(fn: Callable, items: list, deadline: float | None) -> Iterator[tuple[int, object]]:
    for index, item in enumerate(items):
        if deadline is not None and time.monotonic() >= deadline:
            return
        yield index, fn(item)


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
