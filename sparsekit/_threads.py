"""One thread setting for every pool the library uses: Numba, BLAS and sparsekit's own threads.

The number of threads a call may use is resolved once, at the call's boundary:

- an explicit ``n_jobs`` argument wins (``-1`` means every usable CPU);
- otherwise Numba's current setting (``NUMBA_NUM_THREADS``, ``numba.set_num_threads`` or
  :func:`thread_limit`), capped by the usable CPUs.

:func:`thread_limit` sets Numba's thread count and limits BLAS (threadpoolctl) together, so a
single ``with sparsekit.thread_limit(1):`` makes a whole computation single-threaded.
"""
from __future__ import annotations

import os
from contextlib import contextmanager


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS reports one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def effective_n_jobs(n_jobs=None) -> int:
    """Threads a call may use: ``n_jobs`` if given (``-1``: all usable CPUs), else Numba's
    current thread count, never more than the usable CPUs."""
    if n_jobs is None:
        import numba

        return max(1, min(numba.get_num_threads(), usable_cpus()))
    n_jobs = int(n_jobs)
    if n_jobs == -1:
        return usable_cpus()
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive integer or -1, got {n_jobs}")
    return n_jobs


@contextmanager
def thread_limit(n_threads: int):
    """Run the enclosed code with at most ``n_threads`` threads in Numba, BLAS and sparsekit.

    Numba's setting is thread-local (it applies to parallel regions launched by the calling
    thread); BLAS is limited process-wide through threadpoolctl for the duration.
    """
    import numba
    from threadpoolctl import threadpool_limits

    n_threads = effective_n_jobs(n_threads)
    previous = numba.get_num_threads()
    numba.set_num_threads(min(n_threads, numba.config.NUMBA_NUM_THREADS))
    try:
        with threadpool_limits(limits=n_threads, user_api="blas"):
            yield n_threads
    finally:
        numba.set_num_threads(previous)
