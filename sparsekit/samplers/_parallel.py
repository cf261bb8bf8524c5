"""Coarse-grained parallelism over independent blocks (DAC blocks, row blocks of K_{X,S}).

Each block's work (a kernel block, a factorization or a triangular solve) is too small to be
split further with profit: multi-threaded BLAS and Numba's parallel loops on such blocks spend
more time synchronizing threads than computing, and on a loaded machine a descheduled thread
stalls every barrier. So ``n_jobs`` threads each take whole blocks, and inside a block BLAS,
Numba and the kernels' ``exp`` run on one thread (the library's process-wide BLAS limit,
:func:`sparsekit._threads.blas_limit`, taken once by the calling thread; Numba's thread-local
``set_num_threads``, which :func:`sparsekit._threads.effective_n_jobs` reads). The blocks' heavy
steps (BLAS, LAPACK, NumPy ufuncs) release the GIL, so the threads run them in parallel.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from .._threads import blas_limit, effective_n_jobs, numba_limit

#: the thread count of a sampler's ``n_jobs`` (None: the library-wide setting)
default_n_jobs = effective_n_jobs


@contextmanager
def single_threaded_numba():
    """One Numba thread for the parallel regions launched by the calling thread.

    Used before multi-threaded LAPACK calls: OpenMP workers left spinning after a Numba
    parallel region would otherwise compete with the BLAS threads for the cores.
    """
    with numba_limit(1):
        yield


@contextmanager
def single_threaded():
    """One BLAS thread, and one Numba thread for parallel regions launched by this thread."""
    with numba_limit(1), blas_limit(1):
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
    worker threads may launch Numba code). The calling thread takes part in the work; at most
    ``n_jobs`` items are in progress at once.
    """
    items = list(items)
    if not items:
        return

    with single_threaded():
        work(items[0])
        rest = items[1:]
        if n_jobs <= 1 or not rest or not _threads_may_launch_numba():
            for item in rest:
                work(item)
            return

        position = iter(range(len(rest)))

        def drain():  # each thread takes the next item until none is left
            for i in position:  # ``next`` on a range iterator is atomic under the GIL
                work(rest[i])

        def in_worker():
            with numba_limit(1):  # thread-local: this worker's parallel regions run serially
                drain()

        with ThreadPoolExecutor(max_workers=n_jobs - 1) as pool:
            futures = [pool.submit(in_worker) for _ in range(n_jobs - 1)]
            drain()
            for future in futures:
                future.result()
