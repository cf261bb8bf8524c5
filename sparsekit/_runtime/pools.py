"""Run a serial Numba kernel over row ranges on a thread pool (instead of ``parallel=True``).

A kernel compiled with ``@njit(nogil=True, cache=True)`` whose first two arguments are a row
range ``lo, hi`` is called on contiguous ranges of the rows from ``n_threads`` threads. The
kernel releases the GIL, so the threads run in parallel; the kernel itself compiles as plain
serial code, several times faster than a ``prange`` loop (no parfor passes, no gufunc wrapper).
Rows are independent, so the results do not depend on the number of threads.

The thread count comes from :func:`sparsekit._runtime.threads.effective_n_jobs` (an explicit
``n_jobs``, else the library's setting, which :func:`sparsekit.thread_limit` sets).

:func:`run_blocks` runs the blocks of a pipeline (a BLAS product and element-wise passes on the
same rows, or a kernel block and its sum) on the same pool, each block on one thread and one
BLAS thread, the threads taking the next block as they finish: on a machine where another
process holds a core, the thread that shares that core takes fewer blocks, instead of every
step of a multi-threaded BLAS call or of a static split waiting for it.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

from .threads import _THREADS, blas_limit, effective_n_jobs, numba_limit, one_thread_context

#: ranges per thread: more ranges than threads balance the load when a thread is descheduled
RANGES_PER_THREAD = 4

_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()
_IN_WORKER = threading.local()


def _forget_pools():
    """A forked child has none of the parent's threads: start new pools there."""
    global _POOLS_LOCK
    _POOLS.clear()
    _POOLS_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)


def _pool(n_threads: int) -> ThreadPoolExecutor:
    with _POOLS_LOCK:
        pool = _POOLS.get(n_threads)
        if pool is None:
            pool = ThreadPoolExecutor(
                max_workers=n_threads, initializer=_mark_worker, thread_name_prefix="sparsekit-rows"
            )
            _POOLS[n_threads] = pool
        return pool


def _mark_worker():
    _IN_WORKER.active = True
    _THREADS.set(1)  # the worker thread's own context: code it runs sees one thread


def run_row_ranges(
    kernel, n_rows: int, *args, n_jobs=None, min_rows: int = 2, scratch=None
) -> None:
    """Call ``kernel(lo, hi, *args)`` on ranges covering ``range(n_rows)``, in parallel.

    Runs on the calling thread alone when one thread is allowed, when ``n_rows < min_rows``
    (a thread hand-off costs more than a few rows of work) or when called from one of the
    pool's own threads (no nested pools).

    ``scratch``, when given, is called once per range and returns a tuple of work arrays that
    are appended to that range's arguments (``kernel(lo, hi, *args, *scratch())``): the kernels
    allocate nothing themselves, which keeps NumPy's allocation code out of their compile.
    """
    if scratch is not None:
        run_row_ranges(
            lambda lo, hi, *a: kernel(lo, hi, *a, *scratch()),
            n_rows,
            *args,
            n_jobs=n_jobs,
            min_rows=min_rows,
        )
        return
    n_threads = min(effective_n_jobs(n_jobs), n_rows)
    if n_threads <= 1 or n_rows < min_rows or getattr(_IN_WORKER, "active", False):
        kernel(0, n_rows, *args)
        return
    n_ranges = min(n_rows, RANGES_PER_THREAD * n_threads)
    bounds = [(n_rows * r) // n_ranges for r in range(n_ranges + 1)]
    pool = _pool(n_threads)
    futures = [
        pool.submit(kernel, lo, hi, *args) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo
    ]
    for fut in futures:
        fut.result()


def _threads_may_launch_numba() -> bool:
    """False when Numba's threading layer is, or will be, "workqueue", which cannot run
    parallel regions launched from several threads at once.

    Before a first parallel region has started the layer, this is the layer Numba's selection
    will pick (``NUMBA_THREADING_LAYER`` and its priority list; the first of TBB and OpenMP
    that loads, else workqueue), predicted once per process."""
    import numba

    try:
        return numba.threading_layer() != "workqueue"
    except ValueError:  # no parallel region has run yet: the layer Numba will select
        pass
    global _PREDICTED_SAFE
    if _PREDICTED_SAFE is None:
        _PREDICTED_SAFE = _predicted_layer() not in ("workqueue", None)
    return _PREDICTED_SAFE


_PREDICTED_SAFE: bool | None = None


def _predicted_layer() -> str | None:
    """The threading layer Numba's first parallel region will load (None: none loads)."""
    import sys

    from numba import config

    wanted = str(getattr(config, "THREADING_LAYER", "default")).lower()
    if wanted in ("tbb", "omp", "workqueue"):
        return wanted
    candidates = {
        "default": list(getattr(config, "THREADING_LAYER_PRIORITY", ["tbb", "omp", "workqueue"])),
        "safe": ["tbb"],
        "threadsafe": ["tbb", "omp"],
        # GNU OpenMP (Linux) is not fork-safe, so Numba skips it there
        "forksafe": ["tbb"] + ([] if sys.platform.startswith("linux") else ["omp"]) + ["workqueue"],
    }.get(wanted, [])
    for layer in candidates:
        if layer == "workqueue" or _layer_loads(layer):
            return layer
    return None


def _layer_loads(layer: str) -> bool:
    import importlib

    try:
        if layer == "tbb":
            from numba.np.ufunc import parallel

            parallel._check_tbb_version_compatible()
        importlib.import_module(f"numba.np.ufunc.{layer}pool")  # what Numba loads
    except Exception:  # missing or incompatible library: Numba goes on to the next layer
        return False
    return True


def run_blocks(work, n_blocks: int, *, n_jobs=None, numba_regions: bool = False) -> None:
    """Call ``work(i)`` for every ``i`` in ``range(n_blocks)``, each block on one thread.

    The calling thread and ``n_jobs - 1`` threads of the library's pool take the blocks in
    order, each the next one left when it has finished its last (a dynamic split): a thread
    slowed down by another process on its core takes fewer blocks. The blocks must be
    independent (each writes its own part of an output); the split of the work into blocks is
    the caller's and should not depend on the thread count, so that results do not either.

    Inside a block BLAS runs on one thread (the process-wide limit of
    :func:`~sparsekit._runtime.threads.blas_limit`, held by the calling thread for the
    duration), and the library's own pools are not entered: :func:`run_row_ranges`,
    :func:`run_blocks` and everything that reads
    :func:`~sparsekit._runtime.threads.effective_n_jobs` run on the block's thread.

    Parameters
    ----------
    work : callable
        ``work(i) -> None``; it should release the GIL for most of its time (BLAS, NumPy
        ufuncs, ``nogil`` Numba kernels) for the threads to run in parallel.
    n_blocks : int
        The number of blocks.
    n_jobs : int, optional
        Threads (default: :func:`~sparsekit._runtime.threads.effective_n_jobs`). Blocks called
        from a pool thread run on that thread.
    numba_regions : bool, default False
        True when a block may launch a Numba parallel region (a ``parallel=True`` kernel: the
        library has none, a plugin's kernel may): every thread then runs such regions on one
        Numba thread (:func:`~sparsekit._runtime.threads.numba_limit`, thread-local). If
        Numba's threading layer is, or will be, "workqueue", which cannot run regions launched
        from several threads at once, every block runs on the calling thread. (TBB and
        OpenMP can; Numba starts its layer under a lock, so the first regions may come from
        several threads.)

    Raises
    ------
    Exception
        The first exception a block raised, once every thread has stopped.
    """
    n_threads = min(effective_n_jobs(n_jobs), n_blocks)
    if getattr(_IN_WORKER, "active", False):
        n_threads = 1
    if n_blocks <= 0:
        return
    was_worker = getattr(_IN_WORKER, "active", False)
    blocks = iter(range(n_blocks))  # ``next`` on a range iterator is atomic under the GIL
    failed: list[BaseException] = []

    def run(i) -> bool:
        try:
            work(i)
        except BaseException as exc:
            failed.append(exc)
            return False
        return True

    def drain():
        with numba_limit(1) if numba_regions else nullcontext():
            for i in blocks:
                if failed or not run(i):  # a thread failed: leave the remaining blocks
                    return

    with blas_limit(1), one_thread_context():
        _IN_WORKER.active = True  # nested pool calls from the caller's blocks run inline
        try:
            futures = []
            if numba_regions and n_threads > 1 and not _threads_may_launch_numba():
                n_threads = 1
            if n_threads > 1:
                pool = _pool(n_threads)
                futures = [pool.submit(drain) for _ in range(n_threads - 1)]
            drain()
            for fut in futures:
                fut.result()
        finally:
            _IN_WORKER.active = was_worker
    if failed:
        raise failed[0]


#: outputs from this size are allocated by :func:`empty_touched` with their pages mapped on
#: the library's threads before they are written
TOUCH_MIN_BYTES = 16 * 2**20

#: bytes between two touched entries: one per 4 KiB page (the smallest page size)
_PAGE_BYTES = 4096


def empty_touched(shape, dtype, *, n_jobs=None):
    """``np.empty(shape, dtype)`` whose pages the OS has already mapped (and zeroed).

    The pages of a fresh array are mapped on their first write. When that write is in the
    blocks of a threaded computation, each thread also zeroes the pages it faults in, between
    its products and element-wise passes, and the page faults of two threads scale worse than
    their arithmetic. Touching one entry per page first, on the same threads in a pass of its
    own, maps them before the computation starts. Below :data:`TOUCH_MIN_BYTES`, on one
    thread, or inside a block of the pool, this is ``np.empty``.
    """
    import numpy as np

    out = np.empty(shape, dtype)
    n_threads = effective_n_jobs(n_jobs)
    if out.nbytes < TOUCH_MIN_BYTES or n_threads <= 1 or getattr(_IN_WORKER, "active", False):
        return out
    flat = out.reshape(-1)
    stride = max(1, _PAGE_BYTES // out.itemsize)
    n_blocks = 4 * n_threads
    step = -(-flat.size // n_blocks)

    def touch(i):
        flat[i * step : (i + 1) * step : stride] = 0

    run_blocks(touch, n_blocks, n_jobs=n_threads)
    return out
