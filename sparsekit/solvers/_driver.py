"""The iteration loop of the solvers' residual form (the prepared problem and the rest of the
frame are in :mod:`sparsekit.solvers.base`).

The "residual" strategy of MP, OMP and Frank–Wolfe runs a Python loop over iterations; each
iteration computes the correlations ``C = R D`` of the still-active signals with one BLAS
GEMM (the physical floor of an iteration) and hands them to a step kernel run over ranges of
signals on several threads. The Gram form of OMP gets its correlations block by block
(:func:`run_correlation_blocks`): each thread computes those of the signals it then solves.
"""

from __future__ import annotations

import threading

import numpy as np

from .._runtime.pools import run_blocks
from .._runtime.small_blas import is_skinny, one_blas_thread
from .._runtime.threads import effective_n_jobs

#: bytes of correlations one block of signals holds: enough rows for an efficient GEMM, few
#: enough that the block is still in cache when the solver's kernel reads it (measured on
#: 64 x 256 to 256 x 1024 dictionaries: 64-256 KiB blocks make the GEMM slower, 1-4 MiB are
#: equal)
CORRELATION_BLOCK_BYTES = 2**20

#: blocks of signals when they are few (while each keeps ``BLOCK_ALIGN`` rows): work for up to
#: 4 threads with 4 blocks each, taken one at a time
MIN_BLOCKS = 16

#: the blocks start at multiples of this many rows, a multiple of the GEMM kernels' row
#: unrolling: with OpenBLAS's float64 kernels each row then gets the bits of one whole product
#: ``Yt @ D`` on one thread (rows in an edge tile are rounded differently)
BLOCK_ALIGN = 16


def run_correlation_steps(R, D, active, n_steps, step):
    """Run ``step(k, rows, C)`` for ``k < n_steps`` while some signal is active.

    ``C = R[rows] @ D`` are the correlations of the active signals ``rows``. A skinny product
    (few active signals or atoms) runs on one BLAS thread; the limit is taken around the
    product alone, since ``step`` runs the library's own threads (which the limit would lower).
    """
    for k in range(n_steps):
        rows = np.flatnonzero(active)
        if rows.size == 0:
            break
        with one_blas_thread(is_skinny(rows.size, D.shape[1])):
            if rows.size == 1:  # one signal: a matrix-vector product (BLAS gemv)
                C = (D.T @ R[rows[0]])[None, :]
            elif rows.size == R.shape[0]:
                C = R @ D
            else:
                C = R[rows] @ D
        step(k, rows.astype(np.int64), C)


def run_correlation_blocks(solve_block, Yt, D, *, scratch=None, n_jobs=None, signals=False):
    """Call ``solve_block(rows, C, *work)`` on blocks of signals, in parallel.

    ``rows`` is a slice of the signals (the rows of ``Yt``) and ``C = Yt[rows] @ D`` their
    correlations, computed on one BLAS thread by the thread that then solves the block: the
    correlations never exist for all signals at once (``n_signals x n_atoms`` values), each
    block is still in cache when the kernel reads it, and no threaded GEMM runs between the
    pool's steps (the library's threads are the only ones).

    The blocks depend on the problem's shape only, never on the thread count, so every signal
    gets the same bits on any number of threads (a GEMM's rounding of a row can depend on the
    rows around it, and threaded BLAS splits the rows by its thread count). Each block holds at
    most :data:`CORRELATION_BLOCK_BYTES` of correlations; there are up to :data:`MIN_BLOCKS`
    blocks for the threads to share when the signals are few; blocks start at multiples of
    :data:`BLOCK_ALIGN` rows, and a last block of one signal joins the previous one (alone,
    its product would be a GEMV). The threads take the blocks one at a time, each the next one
    left (:func:`sparsekit._runtime.pools.run_blocks`, the calling thread included), so they
    finish together. ``scratch``, when given, is called once per thread and returns the work
    arrays appended to the call.

    ``Yt`` may be a transposed view (``Y.T`` of a C-contiguous ``Y``): each block's signals are
    then copied into a C-contiguous buffer by the thread that solves it, so the product reads
    the same bits in the same layout as from ``np.ascontiguousarray(Y.T)``, and no transposing
    copy of all the signals runs before the pool.

    Parameters
    ----------
    solve_block : callable
        ``solve_block(rows, C, *work)``, or ``solve_block(rows, S, C, *work)`` with
        ``signals``: solves the signals ``rows`` from their correlations (``S = Yt[rows]``,
        C-contiguous).
    Yt : ndarray of shape (n_signals, n_features)
        The signals as rows, C-contiguous or the transpose of a C-contiguous array.
    D : ndarray of shape (n_features, n_atoms)
        The dictionary, same dtype as ``Yt``.
    scratch : callable, optional
        Returns a tuple of work arrays (one set per thread).
    n_jobs : int, optional
        Threads (default: :func:`sparsekit._runtime.threads.effective_n_jobs`).
    signals : bool, default False
        Also pass each block's signals to ``solve_block``.
    """
    n_sig, n_features = Yt.shape
    n_threads = effective_n_jobs(n_jobs)
    budget = CORRELATION_BLOCK_BYTES // (D.shape[1] * D.itemsize)
    per_block = min(max(budget, 1), -(-n_sig // MIN_BLOCKS))
    per_block = BLOCK_ALIGN * max(1, -(-per_block // BLOCK_ALIGN))
    bounds = list(range(0, n_sig, per_block)) + [n_sig]
    if len(bounds) > 2 and bounds[-1] - bounds[-2] == 1:
        del bounds[-2]
    n_blocks = len(bounds) - 1
    widest = max(hi - lo for lo, hi in zip(bounds[:-1], bounds[1:]))
    rows_contiguous = Yt.flags.c_contiguous
    local = threading.local()

    def block(b):
        if not hasattr(local, "C"):
            local.C = np.empty((widest, D.shape[1]), dtype=D.dtype)
            local.S = None if rows_contiguous else np.empty((widest, n_features), dtype=D.dtype)
            local.work = scratch() if scratch is not None else ()
        rows = slice(bounds[b], bounds[b + 1])
        n = rows.stop - rows.start
        if rows_contiguous:
            S = Yt[rows]
        else:
            S = local.S[:n]
            np.copyto(S, Yt[rows])
        C = local.C[:n]
        np.matmul(S, D, out=C)
        if signals:
            solve_block(rows, S, C, *local.work)
        else:
            solve_block(rows, C, *local.work)

    run_blocks(block, n_blocks, n_jobs=n_threads)
