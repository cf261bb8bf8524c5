"""Keep the C heap of a worker process during a chunk task (glibc only).

Why: a ``distributed`` nanny starts its worker processes with ``MALLOC_TRIM_THRESHOLD_=65536``
(Dask's ``distributed.nanny.pre-spawn-environ``, so that freed memory goes back to the
operating system). Setting it turns off glibc's dynamic thresholds (``mallopt(3)``: setting
M_TRIM_THRESHOLD or M_MMAP_THRESHOLD disables the adjustment): every allocation above the
default mmap threshold of 128 KiB is then a fresh ``mmap`` and every free of the heap's top is
handed back. Block algorithms allocate and free temporaries of hundreds of KiB per block (a
200 × 200 Gram block is 320 KiB), so each block faults its pages in again: DAC-RLS on a chunk
of 250,000 rows takes about 200,000 page faults and +50 % CPU time compared with the same
call in a process started without the variable.

What: :func:`keep_heap` raises the mmap and trim thresholds (:data:`TASK_MMAP_THRESHOLD`,
:data:`TASK_TRIM_THRESHOLD`) while at least one chunk task runs in the process, then restores
the process's own values and calls ``malloc_trim(0)``, so that between tasks the worker returns
its free memory as configured. It acts only where glibc read a fixed trim threshold at process
start (``MALLOC_TRIM_THRESHOLD_`` in the process's initial environment, ``/proc/self/environ``)
below :data:`TASK_TRIM_THRESHOLD`; elsewhere (other C libraries, processes on glibc's dynamic
thresholds, which adapt by themselves) it does nothing.
"""

from __future__ import annotations

import functools
import threading
from contextlib import contextmanager

#: Thresholds (bytes) while chunk tasks run: the temporaries of a block come from the heap (up
#: to glibc's largest mmap threshold on 64-bit, 32 MiB), and the heap keeps them for the next.
TASK_MMAP_THRESHOLD = 32 * 2**20
TASK_TRIM_THRESHOLD = 64 * 2**20
#: glibc's mmap threshold when none is given (DEFAULT_MMAP_THRESHOLD_MIN)
DEFAULT_MMAP_THRESHOLD = 128 * 2**10
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameter numbers (malloc.h)

_lock = threading.Lock()
_active = 0
_libc = None
_restore = None  # {parameter: value at start}, or {} when there is nothing to do


def startup_thresholds(environ_path="/proc/self/environ") -> dict:
    """``{"trim": bytes, "mmap": bytes}`` from ``MALLOC_TRIM_THRESHOLD_`` and
    ``MALLOC_MMAP_THRESHOLD_`` of the process's initial environment (absent keys omitted)."""
    try:
        with open(environ_path, "rb") as fh:
            entries = fh.read().split(b"\0")
    except OSError:
        return {}
    found = {}
    for key, name in ((b"MALLOC_TRIM_THRESHOLD_=", "trim"), (b"MALLOC_MMAP_THRESHOLD_=", "mmap")):
        for entry in entries:
            if entry.startswith(key):
                try:
                    found[name] = max(int(entry[len(key) :]), 0)
                except ValueError:
                    pass
    return found


def _setup():
    global _libc, _restore
    _restore = {}
    import platform

    if platform.libc_ver()[0] != "glibc":
        return
    start = startup_thresholds()
    if not 0 < start.get("trim", 0) < TASK_TRIM_THRESHOLD:
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
    except (OSError, AttributeError):
        return
    _libc = libc
    _restore = {
        _M_TRIM_THRESHOLD: start["trim"],
        _M_MMAP_THRESHOLD: start.get("mmap", DEFAULT_MMAP_THRESHOLD),
    }


@contextmanager
def keep_heap():
    """Raise glibc's mmap and trim thresholds for the duration of a chunk task (module
    docstring); a no-op where they were not fixed at process start."""
    global _active
    with _lock:
        if _restore is None:
            _setup()
        if _restore:
            if _active == 0:
                _libc.mallopt(
                    _M_MMAP_THRESHOLD, max(TASK_MMAP_THRESHOLD, _restore[_M_MMAP_THRESHOLD])
                )
                _libc.mallopt(_M_TRIM_THRESHOLD, TASK_TRIM_THRESHOLD)
            _active += 1
    try:
        yield
    finally:
        if _restore:
            with _lock:
                _active -= 1
                if _active == 0:
                    for param, value in _restore.items():
                        _libc.mallopt(param, value)
                    _libc.malloc_trim(0)


def chunk_task(func):
    """Decorator: run ``func`` (a per-chunk task of the Dask backend) inside :func:`keep_heap`."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with keep_heap():
            return func(*args, **kwargs)

    return wrapper
