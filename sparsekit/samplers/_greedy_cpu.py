"""Greedy residual-trace selection: the per-step updates (Numba, arrays in and out).

Notation of :mod:`sparsekit.samplers.greedy`: P is the residual diagonal diag(K − CᵀC), c the new
row of the pivoted Cholesky factor C, and crit the selection criterion. Points whose residual
diagonal is at or below ``thr`` (already in the span of the selection, or selected: P = −inf)
get crit = −inf.

The updates are serial ``nogil`` Numba kernels over a range of points, run on ranges from
several threads by :func:`sparsekit._runtime.pools.run_row_ranges` (no ``parallel=True``).
"""

import numpy as np
from numba import njit

from .._runtime.pools import run_row_ranges

#: fewest points for which a step uses threads (below, a thread hand-off costs more)
MIN_PARALLEL_ROWS = 4096


def sketch_step(D, P, c, u, thr, crit, n_jobs=None):
    """D[i] -= c[i] u;  P[i] -= c[i]²;  crit[i] = ‖D[i]‖² / P[i]  (P[i] > thr, else −inf).

    D holds (Ψ Ψᵀ − CᵀC) Ξ, the sketched residual Gram rows (poster: M − N). ``n_jobs``:
    threads (default: :func:`sparsekit._runtime.threads.effective_n_jobs`).
    """
    run_row_ranges(
        _sketch_rows, D.shape[0], D, P, c, u, thr, crit, n_jobs=n_jobs, min_rows=MIN_PARALLEL_ROWS
    )


@njit(cache=True, nogil=True, error_model="numpy")
def _sketch_rows(lo, hi, D, P, c, u, thr, crit):
    xi = D.shape[1]
    for i in range(lo, hi):
        ci = c[i]
        acc = 0.0
        for t in range(xi):
            v = D[i, t] - ci * u[t]
            D[i, t] = v
            acc += v * v
        P[i] -= ci * ci
        crit[i] = acc / P[i] if P[i] > thr else -np.inf


def exact_step(num, P, c, Rc, cc, thr, crit, n_jobs=None):
    """num[i] += c[i]² ‖c‖² − 2 c[i] (Rc)[i];  P[i] -= c[i]²;  crit[i] = num[i] / P[i].

    num[i] = ‖(K − CᵀC) e_i‖² before the update (R − c cᵀ replaces the residual R).
    O(1) per point: threads pay only for large n. ``n_jobs`` as :func:`sketch_step`.
    """
    run_row_ranges(
        _exact_rows,
        num.shape[0],
        num,
        P,
        c,
        Rc,
        cc,
        thr,
        crit,
        n_jobs=n_jobs,
        min_rows=16 * MIN_PARALLEL_ROWS,
    )


@njit(cache=True, nogil=True, error_model="numpy")
def _exact_rows(lo, hi, num, P, c, Rc, cc, thr, crit):
    for i in range(lo, hi):
        ci = c[i]
        v = num[i] + ci * ci * cc - 2.0 * ci * Rc[i]
        num[i] = v if v > 0.0 else 0.0
        P[i] -= ci * ci
        crit[i] = num[i] / P[i] if P[i] > thr else -np.inf
