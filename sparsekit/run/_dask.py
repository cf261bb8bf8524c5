"""The runs of ``sparsekit run --scheduler`` as they come back from Dask, with a deadline when
the cluster is lost mid-sweep.

Dask waits for a worker without a time limit: with every worker gone, a sweep would wait
forever. A lost scheduler cancels the futures, which ``Future.result`` reports as a Dask error
("Stream is closed", "scheduler-connection-lost"). Both stop the sweep here with a
:class:`ClusterLostError` (the runner adds what is recorded and how to resume).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any


class ClusterLostError(ConnectionError):
    """The Dask cluster was lost mid-sweep: no worker for the deadline, or no scheduler."""


def completed(
    client, futures: Iterable, worker_timeout: float, poll: float = 0.2
) -> Iterator[tuple[Any, Any]]:
    """Yield ``(future, result)`` for each of ``futures`` as it finishes.

    Parameters
    ----------
    client : distributed.Client
        The client the futures belong to.
    futures : iterable of distributed.Future
        The runs (``_timed_point``, which catches a task's own errors: a future that raises
        was lost by Dask).
    worker_timeout : float
        Seconds the cluster may have no worker (all stopped or lost), or the client no
        connection to the scheduler, before the sweep stops.
    poll : float, default 0.2
        Seconds between looks at the finished futures and the worker count while none finishes.

    Yields
    ------
    tuple
        The future and its result.

    Raises
    ------
    ClusterLostError
        The cluster had no worker for ``worker_timeout`` seconds, or a future failed in Dask
        (its scheduler gone).
    """
    from distributed import as_completed

    pending = as_completed(futures)
    no_worker_since = None
    while not pending.is_empty():
        batch = pending.next_batch(block=False)
        for fut in batch:
            try:
                result = fut.result()
            except Exception as exc:  # noqa: BLE001 (whatever Dask raised: the runs are lost)
                why = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
                if client.status != "running":
                    raise ClusterLostError(f"lost the Dask scheduler mid-sweep ({why})") from None
                raise ClusterLostError(f"Dask lost a run mid-sweep ({why})") from None
            yield fut, result
        if batch:
            continue
        connected = client.status == "running"  # else reconnecting, or given up
        if connected and _n_workers(client):
            no_worker_since = None
        elif no_worker_since is None:
            no_worker_since = time.monotonic()
        elif time.monotonic() - no_worker_since > worker_timeout:
            raise ClusterLostError(
                f"the Dask cluster has had no worker for {worker_timeout:g} s (its workers "
                "stopped or were lost mid-sweep)"
                if connected
                else f"lost the Dask scheduler mid-sweep (no connection for {worker_timeout:g} s)"
            )
        time.sleep(poll)


def _n_workers(client) -> int:
    """The number of workers the scheduler knows: a small request where Dask takes
    ``n_workers=0``; older releases answer with every worker's details, and no ``n_workers``."""
    try:
        info = client.scheduler_info(n_workers=0)
        return info["n_workers"] if "n_workers" in info else len(info["workers"])
    except Exception as exc:  # noqa: BLE001 (a scheduler that does not answer is lost)
        why = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
        raise ClusterLostError(f"lost the Dask scheduler mid-sweep ({why})") from None
