"""One BLAS thread for the small and skinny products of hot loops.

Multi-threaded BLAS (OpenBLAS) splits a product among its threads and waits for all of them at
every step. A product with one small dimension (a few clusters, candidates or rows) streams its
tall operand once and is bound by memory, so more threads gain little on an idle machine; on a
machine where another process holds a core, a descheduled BLAS thread stalls every step, and
such a product took 10-100x its single-threaded time (kernel k-means' Lloyd step: 28 s instead
of 0.06 s for a whole fit). These products run on one BLAS thread, taken around a whole loop of
them (entering and leaving a limit costs about 7 µs, as much as a small product).

The limit does not change the library's own thread setting
(:func:`sparsekit._runtime.threads.effective_n_jobs`): a loop may run the library's pools inside
it.
"""

from __future__ import annotations

from contextlib import nullcontext

from .threads import blas_limit

#: a product whose output has a side of at most this runs on one BLAS thread
SKINNY_DIM = 64

#: below this many rows a factorization (Cholesky, eigendecomposition) runs on one BLAS thread.
#: Threaded OpenBLAS waits at every panel of a blocked factorization for all its threads, so when
#: another process holds a core a 600 x 600 ``potrf`` went from 2.5 ms to 840 ms on 2 cores and a
#: 500 x 500 ``eigh`` from 0.1 s to 0.6-2.3 s (measured); one thread costs at most a few
#: milliseconds at this size (``potrf`` 600: 9.7 ms against 7.1 ms on an idle machine).
THREADED_FACTOR_MIN_ROWS = 1024


def is_skinny(*sides: int) -> bool:
    """Whether a product whose output has these sides (m, n of an (m, k) by (k, n) GEMM) is
    skinny: one side of at most :data:`SKINNY_DIM` (a matrix-vector product has a side of 1)."""
    return min(int(d) for d in sides) <= SKINNY_DIM


def one_blas_thread(when: bool = True):
    """One BLAS thread (process-wide, :func:`~sparsekit._runtime.threads.blas_limit`) for the
    enclosed code when ``when`` is true; otherwise nothing changes."""
    return blas_limit(1) if when else nullcontext()
