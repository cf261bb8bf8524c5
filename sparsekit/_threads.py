"""One thread setting for every pool the library uses: Numba, BLAS and sparsekit's own threads.

The number of threads a call may use is resolved once, at the call's boundary:

- an explicit ``n_jobs`` argument wins (``-1`` means every usable CPU);
- otherwise the smallest of Numba's current setting (``NUMBA_NUM_THREADS``,
  ``numba.set_num_threads`` or :func:`thread_limit`), the BLAS limit set through threadpoolctl
  (``threadpool_limits(1)`` or :func:`thread_limit`) and the usable CPUs.

:func:`thread_limit` sets Numba's thread count and limits BLAS (threadpoolctl) together, so a
single ``with sparsekit.thread_limit(1):`` makes a whole computation single-threaded; a
``threadpoolctl.threadpool_limits(1)`` block or ``NUMBA_NUM_THREADS=1`` has the same effect on
sparsekit's own pools.
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager

_CONTROLLER = None
_CONTROLLER_LOCK = threading.Lock()


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS reports one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _blas_controllers():
    """threadpoolctl's controllers of the loaded BLAS libraries, found once per process.

    Scanning the loaded libraries costs ~20 ms, so it is done once (after NumPy and SciPy's
    LAPACK are loaded); reading or setting a limit afterwards is a direct call into the library.
    """
    global _CONTROLLER
    if _CONTROLLER is None:
        with _CONTROLLER_LOCK:
            if _CONTROLLER is None:
                import scipy.linalg  # noqa: F401  (loads SciPy's BLAS before the scan)
                from threadpoolctl import ThreadpoolController

                _CONTROLLER = ThreadpoolController().select(user_api="blas")
    return _CONTROLLER


def blas_threads() -> int:
    """The smallest thread limit of the loaded BLAS libraries (threadpoolctl), at least 1."""
    counts = [lib.num_threads for lib in _blas_controllers().lib_controllers]
    counts = [c for c in counts if c is not None and c > 0]
    return min(counts) if counts else usable_cpus()


def effective_n_jobs(n_jobs=None) -> int:
    """Threads a call may use: ``n_jobs`` if given (``-1``: all usable CPUs), else the smallest
    of Numba's current thread count, the BLAS limit and the usable CPUs."""
    if n_jobs is None:
        import numba

        return max(1, min(numba.get_num_threads(), blas_threads(), usable_cpus()))
    n_jobs = int(n_jobs)
    if n_jobs == -1:
        return usable_cpus()
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive integer or -1, got {n_jobs}")
    return n_jobs


@contextmanager
def blas_limit(n_threads: int):
    """At most ``n_threads`` BLAS threads (process-wide) for the duration."""
    with _blas_controllers().limit(limits=int(n_threads)):
        yield


@contextmanager
def numba_limit(n_threads: int):
    """At most ``n_threads`` Numba threads for the parallel regions launched by this thread."""
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(n_threads), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(previous)


@contextmanager
def thread_limit(n_threads: int):
    """Run the enclosed code with at most ``n_threads`` threads in Numba, BLAS and sparsekit.

    Numba's setting is thread-local (it applies to parallel regions launched by the calling
    thread); BLAS is limited process-wide through threadpoolctl for the duration.
    """
    n_threads = effective_n_jobs(n_threads)
    with numba_limit(n_threads), blas_limit(n_threads):
        yield n_threads
