"""Greedy residual-trace selection: the per-step updates (Numba, arrays in and out).

Notation of :mod:`sparsekit.samplers.greedy`: P is the residual diagonal diag(K − CᵀC), c the new
row of the pivoted Cholesky factor C, and crit the selection criterion. Points whose residual
diagonal is at or below ``thr`` (already in the span of the selection, or selected: P = −inf)
get crit = −inf.
"""
import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def sketch_step(D, P, c, u, thr, crit):
    """D[i] -= c[i] u;  P[i] -= c[i]²;  crit[i] = ‖D[i]‖² / P[i]  (P[i] > thr, else −inf).

    D holds (Ψ Ψᵀ − CᵀC) Ξ, the sketched residual Gram rows (poster: M − N).
    """
    n, xi = D.shape
    for i in prange(n):
        ci = c[i]
        acc = 0.0
        for t in range(xi):
            v = D[i, t] - ci * u[t]
            D[i, t] = v
            acc += v * v
        P[i] -= ci * ci
        crit[i] = acc / P[i] if P[i] > thr else -np.inf


@njit(parallel=True, cache=True)
def exact_step(num, P, c, Rc, cc, thr, crit):
    """num[i] += c[i]² ‖c‖² − 2 c[i] (Rc)[i];  P[i] -= c[i]²;  crit[i] = num[i] / P[i].

    num[i] = ‖(K − CᵀC) e_i‖² before the update (R − c cᵀ replaces the residual R).
    """
    n = num.shape[0]
    for i in prange(n):
        ci = c[i]
        v = num[i] + ci * ci * cc - 2.0 * ci * Rc[i]
        num[i] = v if v > 0.0 else 0.0
        P[i] -= ci * ci
        crit[i] = num[i] / P[i] if P[i] > thr else -np.inf
