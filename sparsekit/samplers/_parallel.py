"""Coarse-grained parallelism over independent blocks (DAC blocks, row blocks of K_{X,S}).

Each block's work (a kernel block, a factorization or a triangular solve) is too small to be
split further with profit: multi-threaded BLAS and Numba's parallel loops on such blocks spend
more time synchronizing threads than computing, and on a loaded machine a descheduled thread
stalls every barrier. So ``n_jobs`` threads each take whole blocks, and inside a block BLAS and
Numba run on one thread (threadpoolctl for BLAS, Numba's thread-local ``set_num_threads``).
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor


def default_n_jobs(n_jobs=None) -> int:
    """``n_jobs`` as given, or the number of usable CPUs (at most 8)."""
    if n_jobs is not None:
        return int(n_jobs)
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(8, count or 1))


@contextmanager
def single_threaded_blas():
    """Limit BLAS/LAPACK to one thread for the duration (threadpoolctl, when installed)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # without threadpoolctl the pool still works, possibly oversubscribed
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@contextmanager
def single_threaded_numba():
    """One Numba thread for the parallel regions launched by the calling thread.

    Used before multi-threaded LAPACK calls: OpenMP workers left spinning after a Numba
    parallel region would otherwise compete with the BLAS threads for the cores.
    """
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


@contextmanager
def single_threaded():
    """One BLAS thread, and one Numba thread for parallel regions launched by this thread."""
    with single_threaded_numba(), single_threaded_blas():
        yield


def _threads_may_launch_numba() -> bool:
    """False when Numba's threading layer is "workqueue", which cannot run parallel regions
    launched from several threads at once."""
    import numba

    try:
        return numba.threading_layer() != "workqueue"
    except ValueError:  # no parallel region has run yet: nothing launches one
        return True


def run_blocks(work, items, n_jobs: int) -> None:
    """Call ``work(item)`` for every item, on ``n_jobs`` threads, single-threaded inside.

    ``work`` stores its own results (into disjoint parts of an output array). The first item
    runs on the calling thread (it also starts Numba's threading layer, which decides whether
    worker threads may launch Numba code). At most ``n_jobs`` items are in progress at once.
    """
    import numba

    items = list(items)
    if not items:
        return

    def serial(batch):
        for item in batch:
            work(item)

    with single_threaded():
        serial(items[:1])
        rest = items[1:]
        if n_jobs <= 1 or not rest or not _threads_may_launch_numba():
            serial(rest)
            return

        def in_worker(item):
            numba.set_num_threads(1)  # thread-local: this worker's parallel regions run serially
            work(item)

        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            for fut in [pool.submit(in_worker, item) for item in rest]:
                fut.result()
