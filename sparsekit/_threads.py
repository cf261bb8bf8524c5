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

Numba's setting is per thread. BLAS's is one value for the whole process, so every BLAS limit
the library takes goes through one lock-protected controller (``blas_limit``): it saves the
process's value when the first holder enters, keeps the smallest of the holders' requests in
force (each thread counting with its innermost request), and restores the saved value when the
last holder leaves, whatever order the threads enter and leave in.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
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


def _set_blas(values) -> None:
    """Set each BLAS library's thread limit, leaving threadpoolctl's controlling thread as it was.

    threadpoolctl (3.8 and later) lets one Python thread at a time change a process-wide pool
    such as OpenBLAS's: the first thread to set a limit becomes its "controlling thread" and the
    others' calls are silently ignored until it lets go. A thread that takes control here gives
    it back at once, so that it does not keep other threads (the user's included) from setting
    limits afterwards; while another thread holds control, that thread's limit stays in force.
    """
    for lib, value in zip(_blas_controllers().lib_controllers, values):
        if value is None:
            continue
        cls = type(lib)
        owner = getattr(getattr(cls, "_SHARED_STATE", None), "controlling_thread", None)
        lib.set_num_threads(value)
        if owner is not threading.current_thread() and hasattr(cls, "clear_controlling_thread"):
            cls.clear_controlling_thread()  # clears only if this thread took control


class _BlasLimits:
    """The process's BLAS limit, shared by every thread that takes one through :func:`blas_limit`.

    The value the process had is saved when the first holder enters and restored when the last
    one leaves. While holders are active, the smallest of their requests is in force, each
    thread counting with its innermost (latest) request, so nesting in one thread behaves as a
    stack and one thread's larger request never lifts another thread's smaller one.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._held = {}  # token -> (thread id, n_threads), in the order they entered
        self._saved = None

    def enter(self, n_threads: int):
        token = object()
        with self._lock:
            if not self._held:
                self._saved = [lib.num_threads for lib in _blas_controllers().lib_controllers]
            self._held[token] = (threading.get_ident(), n_threads)
            try:
                self._apply()
            except BaseException:
                self._leave_locked(token)
                raise
        return token

    def leave(self, token) -> None:
        with self._lock:
            self._leave_locked(token)

    def _leave_locked(self, token) -> None:
        del self._held[token]
        if self._held:
            self._apply()
        else:
            saved, self._saved = self._saved, None
            _set_blas(saved)

    def _apply(self) -> None:
        innermost = {}
        for thread, n_threads in self._held.values():
            innermost[thread] = n_threads  # later entries of a thread replace earlier ones
        value = min(innermost.values())
        _set_blas([value] * len(_blas_controllers().lib_controllers))


_BLAS_LIMITS = _BlasLimits()


@contextmanager
def blas_limit(n_threads: int):
    """At most ``n_threads`` BLAS threads (process-wide) for the duration.

    Safe from several threads at once: the process's limit is the smallest request among the
    threads inside a ``blas_limit`` (each thread's innermost one), and when the last of them
    leaves, the value the process had before the first entered is restored.
    """
    n_threads = int(n_threads)
    if n_threads < 1:
        raise ValueError(f"n_threads must be a positive integer, got {n_threads}")
    token = _BLAS_LIMITS.enter(n_threads)
    try:
        yield
    finally:
        _BLAS_LIMITS.leave(token)


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
def thread_limit(n_threads: int) -> Iterator[int]:
    """Run the enclosed code with at most ``n_threads`` threads in Numba, BLAS and sparsekit.

    Numba's setting is thread-local (it applies to parallel regions launched by the calling
    thread); BLAS is limited process-wide for the duration through ``blas_limit``, which is
    safe when several threads hold limits at once (the smallest is in force, and the process's
    value comes back when the last holder leaves).

    Parameters
    ----------
    n_threads : int >= 1, or -1
        The most threads (-1: every usable CPU).

    Yields
    ------
    int
        ``n_threads`` (the number of usable CPUs for -1).
    """
    if int(n_threads) < 1 and int(n_threads) != -1:
        raise ValueError(
            f"n_threads must be a positive integer or -1 (every usable CPU), got {n_threads}"
        )
    n_threads = effective_n_jobs(n_threads)
    with numba_limit(n_threads), blas_limit(n_threads):
        yield n_threads
