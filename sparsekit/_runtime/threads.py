"""One thread setting for every pool the library uses: Numba, BLAS and sparsekit's own threads.

The number of threads a call may use is resolved once, at the public boundary, and carried down
in one context variable owned by this module:

- an estimator's or function's ``n_jobs`` argument runs the call under ``thread_limit(n_jobs)``
  (:func:`n_jobs_limit`; ``-1`` means every usable CPU, ``None`` changes nothing);
- otherwise the innermost :func:`thread_limit` block in force in this context;
- otherwise every usable CPU.

Code below the boundary reads the setting with :func:`effective_n_jobs`; nothing reads it back
from Numba's thread count or the BLAS limit (``NUMBA_NUM_THREADS``, ``numba.set_num_threads`` and
``threadpoolctl.threadpool_limits`` bound Numba's and BLAS's own threads, not the library's pools).
Inside a worker of the library's pools (and in the calling thread while it runs blocks of
:func:`sparsekit._runtime.pools.run_blocks`) the setting is 1: pools are not nested.

:func:`thread_limit` sets the context variable, Numba's thread count and the BLAS limit
(threadpoolctl) together, so a single ``with sparsekit.thread_limit(1):`` makes a whole
computation single-threaded. Each of the three is changed only when it differs from the value in
force, so nested or repeated limits of the same size cost no call into Numba or BLAS.

Numba's setting is per thread. BLAS's is one value for the whole process, so every BLAS limit
the library takes goes through one lock-protected controller (``blas_limit``): it saves the
process's value when the first holder enters, keeps the smallest of the holders' requests in
force (each thread counting with its innermost request), and restores the saved value when the
last holder leaves, whatever order the threads enter and leave in. A child made by ``fork``
keeps only the requests of the thread that forked (the others' threads do not exist there).
"""

from __future__ import annotations

import contextvars
import functools
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

_CONTROLLER = None
_CONTROLLER_LOCK = threading.Lock()

#: the thread count of the innermost ``thread_limit`` (None: every usable CPU)
_THREADS: contextvars.ContextVar = contextvars.ContextVar("sparsekit_threads", default=None)


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
    """Threads a call may use: ``n_jobs`` if given (``-1``: all usable CPUs), else the
    innermost :func:`thread_limit` in force in this context, else every usable CPU."""
    if n_jobs is None:
        n_threads = _THREADS.get()
        return usable_cpus() if n_threads is None else n_threads
    n_jobs = int(n_jobs)
    if n_jobs == -1:
        return usable_cpus()
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive integer or -1, got {n_jobs}")
    return n_jobs


@contextmanager
def one_thread_context() -> Iterator[None]:
    """The library's setting is 1 in the enclosed code (a pool's worker: no nested pools)."""
    token = _THREADS.set(1)
    try:
        yield
    finally:
        _THREADS.reset(token)


def _set_blas(values, current) -> None:
    """Set each BLAS library's thread limit to ``values`` where it differs from ``current``
    (the limits in force, updated in place), leaving threadpoolctl's controlling thread as it
    was.

    A library already at its value is left alone, so that entering a limit that is already in
    force (nested limits, ``threadpool_limits(1)`` around the call) costs no call into BLAS.

    threadpoolctl (3.8 and later) lets one Python thread at a time change a process-wide pool
    such as OpenBLAS's: the first thread to set a limit becomes its "controlling thread" and the
    others' calls are silently ignored until it lets go. Here a limit is set when no other live
    thread holds control, without taking it, so that other threads (the user's included) can
    set limits afterwards; while another thread holds control, that thread's limit stays in
    force.
    """
    for i, (lib, value) in enumerate(zip(_blas_controllers().lib_controllers, values)):
        if value is None or current[i] == value:
            continue
        current[i] = value
        shared = getattr(type(lib), "_SHARED_STATE", None)
        real_set = getattr(lib, "_real_set_num_threads", None)
        if shared is None or real_set is None or lib.threading_layer == "openmp":
            # no controlling thread (or a threadpoolctl without it): set the limit plainly
            lib.set_num_threads(value)
            continue
        with shared.lock:
            owner = shared.controlling_thread
            if owner is None or owner is threading.current_thread() or not owner.is_alive():
                real_set(value)


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
        self._current = None  # the limits in force while there are holders

    def enter(self, n_threads: int):
        token = object()
        with self._lock:
            if not self._held:
                self._saved = [lib.num_threads for lib in _blas_controllers().lib_controllers]
                self._current = list(self._saved)
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
            _set_blas(self._saved, self._current)
            self._saved = self._current = None

    def forget_other_threads(self) -> None:
        """In a child made by ``fork``, which has only the thread that forked: drop the other
        threads' requests (they would never be left) and take a new lock (another thread may
        have held the old one at the fork). The child's BLAS limit is left as it inherited it;
        when the forking thread held no request, no saved value is restored later."""
        self._lock = threading.Lock()
        me = threading.get_ident()
        self._held = {token: held for token, held in self._held.items() if held[0] == me}
        if not self._held:
            self._saved = self._current = None

    def _apply(self) -> None:
        innermost = {}
        for thread, n_threads in self._held.values():
            innermost[thread] = n_threads  # later entries of a thread replace earlier ones
        value = min(innermost.values())
        _set_blas([value] * len(self._current), self._current)


_BLAS_LIMITS = _BlasLimits()


def _after_fork_in_child() -> None:
    global _CONTROLLER_LOCK
    _CONTROLLER_LOCK = threading.Lock()
    _BLAS_LIMITS.forget_other_threads()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class _BlasLimit:
    """The context manager of :func:`blas_limit` (a class: entering and leaving it is on the
    path of every small product)."""

    __slots__ = ("n_threads", "token")

    def __init__(self, n_threads: int):
        self.n_threads = n_threads

    def __enter__(self) -> None:
        self.token = _BLAS_LIMITS.enter(self.n_threads)

    def __exit__(self, *exc) -> None:
        _BLAS_LIMITS.leave(self.token)


def blas_limit(n_threads: int) -> _BlasLimit:
    """At most ``n_threads`` BLAS threads (process-wide) for the duration of a ``with`` block.

    Safe from several threads at once: the process's limit is the smallest request among the
    threads inside a ``blas_limit`` (each thread's innermost one), and when the last of them
    leaves, the value the process had before the first entered is restored.
    """
    n_threads = int(n_threads)
    if n_threads < 1:
        raise ValueError(f"n_threads must be a positive integer, got {n_threads}")
    return _BlasLimit(n_threads)


@contextmanager
def numba_limit(n_threads: int):
    """At most ``n_threads`` Numba threads for the parallel regions launched by this thread
    (Numba's setting is left alone when it is already ``n_threads``)."""
    import numba

    previous = numba.get_num_threads()
    wanted = max(1, min(int(n_threads), numba.config.NUMBA_NUM_THREADS))
    if wanted == previous:
        yield
        return
    numba.set_num_threads(wanted)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


@contextmanager
def thread_limit(n_threads: int) -> Iterator[int]:
    """Run the enclosed code with at most ``n_threads`` threads in Numba, BLAS and sparsekit.

    The library's setting (:func:`effective_n_jobs`) is a context variable: it applies to the
    calling thread (and to tasks that copy its context). Numba's setting is thread-local (it
    applies to parallel regions launched by the calling thread); BLAS is limited process-wide for
    the duration through ``blas_limit``, which is safe when several threads hold limits at once
    (the smallest is in force, and the process's value comes back when the last holder leaves).
    A setting already in force is not set again.

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
    token = _THREADS.set(n_threads) if _THREADS.get() != n_threads else None
    try:
        with numba_limit(n_threads), blas_limit(n_threads):
            yield n_threads
    finally:
        if token is not None:
            _THREADS.reset(token)


def n_jobs_limit(n_jobs):
    """The public boundary of a call with an ``n_jobs`` argument: ``thread_limit(n_jobs)``
    when it is given, else no change (the setting in force applies)."""
    if n_jobs is None:
        return nullcontext()
    return thread_limit(effective_n_jobs(n_jobs))


def with_n_jobs(method):
    """``method`` of an estimator run under ``n_jobs_limit(self.n_jobs)``: its public boundary."""

    @functools.wraps(method)
    def bounded(self, *args, **kwargs):
        with n_jobs_limit(self.n_jobs):
            return method(self, *args, **kwargs)

    return bounded
