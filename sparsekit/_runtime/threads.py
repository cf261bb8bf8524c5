"""One thread setting for every pool the library uses: Numba, BLAS and sparsekit's own threads.

The number of threads a call may use is resolved once, at the public boundary, and carried down
in one context variable owned by this module:

- an estimator's or function's ``n_jobs`` argument runs the call under ``thread_limit(n_jobs)``
  (:func:`n_jobs_limit`; ``-1`` means every usable CPU, ``None`` changes nothing);
- otherwise the innermost :func:`thread_limit` block in force in this context;
- otherwise :func:`default_threads`: the usable CPUs, at most ``NUMBA_NUM_THREADS`` (the
  environment variable, read once when Numba starts: a process started with
  ``NUMBA_NUM_THREADS=1``, a Dask worker for instance, runs single-threaded).

Code below the boundary reads the setting with :func:`effective_n_jobs`; nothing reads it back
from Numba's current thread count or the BLAS limit (``numba.set_num_threads`` and
``threadpoolctl.threadpool_limits`` bound Numba's and BLAS's own threads, not the library's
pools).
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

#: the thread count of the innermost ``thread_limit`` (None: ``default_threads()``)
_THREADS: contextvars.ContextVar = contextvars.ContextVar("sparsekit_threads", default=None)


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS reports one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _blas_controllers():
    """threadpoolctl's controllers of the loaded BLAS libraries, found once per process.

    Scanning the loaded libraries costs ~20 ms, so it is done once (after NumPy and SciPy's
    LAPACK are loaded); reading or setting a limit afterwards is a direct call into the library
    (:class:`_Blas`).
    """
    global _CONTROLLER, _LIBS
    if _CONTROLLER is None:
        with _CONTROLLER_LOCK:
            if _CONTROLLER is None:
                import scipy.linalg  # noqa: F401  (loads SciPy's BLAS before the scan)
                from threadpoolctl import ThreadpoolController

                controller = ThreadpoolController().select(user_api="blas")
                _LIBS = [_Blas(lib) for lib in controller.lib_controllers]
                _CONTROLLER = controller
    return _CONTROLLER


_LIBS: list = []


class _Blas:
    """One loaded BLAS library's thread-count getter and setter, looked up once.

    threadpoolctl looks a library's symbol up by name at every ``num_threads`` read and every
    limit set (about 5 µs each, and a limit reads every library); for OpenBLAS the two
    functions are kept here and called directly. ``shared`` is threadpoolctl's record of the
    thread controlling OpenBLAS's process-wide pool (see :func:`_set_blas`), or None.
    """

    __slots__ = ("get", "set", "shared")

    def __init__(self, lib):
        self.get, self.set = lib.get_num_threads, lib.set_num_threads
        self.shared = None
        if getattr(lib, "internal_api", None) != "openblas":
            return
        openmp = lib.threading_layer == "openmp"
        names = (
            ("omp_get_max_threads", "omp_set_num_threads")
            if openmp
            else ("openblas_get_num_threads", "openblas_set_num_threads")
        )
        get, set_ = (lib._get_symbol(name) for name in names)
        if get is None or set_ is None:
            return
        self.get, self.set = get, set_
        if not openmp:
            self.shared = getattr(type(lib), "_SHARED_STATE", None)


def _blas_libs() -> list:
    """The :class:`_Blas` of every loaded BLAS library."""
    _blas_controllers()
    return _LIBS


def blas_threads() -> int:
    """The smallest thread limit of the loaded BLAS libraries (threadpoolctl), at least 1."""
    counts = [lib.get() for lib in _blas_libs()]
    counts = [c for c in counts if c is not None and c > 0]
    return min(counts) if counts else usable_cpus()


def default_threads() -> int:
    """Threads of a call outside any :func:`thread_limit`: the usable CPUs, at most the
    ``NUMBA_NUM_THREADS`` the process started with."""
    import numba

    return max(1, min(usable_cpus(), numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]


def effective_n_jobs(n_jobs=None) -> int:
    """Threads a call may use: ``n_jobs`` if given (``-1``: all usable CPUs), else the
    innermost :func:`thread_limit` in force in this context, else :func:`default_threads`."""
    if n_jobs is None:
        n_threads = _THREADS.get()
        return default_threads() if n_threads is None else n_threads
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
    for i, (lib, value) in enumerate(zip(_blas_libs(), values)):
        if value is None or current[i] == value:
            continue
        current[i] = value
        if lib.shared is None:  # no controlling thread (or a threadpoolctl without it)
            lib.set(value)
            continue
        with lib.shared.lock:
            owner = lib.shared.controlling_thread
            if owner is None or owner is threading.current_thread() or not owner.is_alive():
                lib.set(value)


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
                self._saved = [lib.get() for lib in _blas_libs()]
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


_INNERMOST = threading.local()  # .value: this thread's innermost blas_limit request


class _BlasLimit:
    """The context manager of :func:`blas_limit` (a class: entering and leaving it is on the
    path of every small product). A request equal to the calling thread's innermost one changes
    nothing (the innermost request of each thread counts), so it is not registered."""

    __slots__ = ("n_threads", "token", "outer")

    def __init__(self, n_threads: int):
        self.n_threads = n_threads

    def __enter__(self) -> None:
        self.outer = getattr(_INNERMOST, "value", None)
        if self.outer == self.n_threads:
            self.token = None
            return
        self.token = _BLAS_LIMITS.enter(self.n_threads)
        _INNERMOST.value = self.n_threads

    def __exit__(self, *exc) -> None:
        if self.token is not None:
            _BLAS_LIMITS.leave(self.token)
            _INNERMOST.value = self.outer


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

    The library's setting (``effective_n_jobs``) is a context variable: it applies to the
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
