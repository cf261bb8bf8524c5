"""CPU compute for vector kernels: Numba loops on contiguous arrays (no Python objects).

The GEMM-shaped part of RBF/polynomial kernels is done by BLAS (NumPy) before these loops;
the loops fuse the element-wise tail in place. ``fastmath`` is limited to re-association and
contraction (vectorized reductions); the float64 tests against scikit-learn at rtol 1e-10
bound its effect.
"""
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit, prange

_FAST = {"reassoc", "contract"}


@njit(parallel=True, cache=True)
def scaled_sq_dist_from_inner_inplace(G, xsq, ysq, scale):
    """G[i, j] <- scale * max(xsq[i] + ysq[j] - 2 G[i, j], 0).

    ``G`` holds the inner products <x_i, y_j> on entry; the clip removes the small negative
    values that cancellation leaves for nearly equal points.
    """
    n, m = G.shape
    two = G.dtype.type(2.0)
    zero = G.dtype.type(0.0)
    for i in prange(n):
        for j in range(m):
            d = xsq[i] + ysq[j] - two * G[i, j]
            if d < zero:
                d = zero
            G[i, j] = scale * d


_POOL = None


def exp_inplace(A):
    """A <- exp(A) with NumPy's SIMD exp, row chunks spread over the cores.

    NumPy's vectorized exp is several times faster per core than the scalar exp of a Numba
    loop, and ufuncs release the GIL, so a thread pool gives both SIMD and all cores.
    """
    global _POOL
    n_threads = os.cpu_count() or 1
    if n_threads == 1 or A.size < 1 << 16 or A.ndim != 2:
        np.exp(A, out=A)
        return A
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=n_threads, thread_name_prefix="sparsekit-exp")
    bounds = np.linspace(0, A.shape[0], n_threads + 1).astype(int)
    parts = [A[a:b] for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    list(_POOL.map(lambda part: np.exp(part, out=part), parts))
    return A


@njit(parallel=True, cache=True, fastmath=_FAST)
def l1_distances(X, Y, out):
    """out[i, j] = sum_k |X[i, k] - Y[j, k]|."""
    n, d = X.shape
    m = Y.shape[0]
    for i in prange(n):
        for j in range(m):
            acc = out.dtype.type(0.0)
            for k in range(d):
                acc += abs(X[i, k] - Y[j, k])
            out[i, j] = acc


@njit(parallel=True, cache=True)
def exp_scale_inplace(A, scale):
    """A <- exp(scale * A), element-wise."""
    n, m = A.shape
    for i in prange(n):
        for j in range(m):
            A[i, j] = np.exp(scale * A[i, j])


@njit(parallel=True, cache=True, fastmath=_FAST)
def chi2_sums(X, Y, out):
    """out[i, j] = sum_k (X[i,k] - Y[j,k])^2 / (X[i,k] + Y[j,k]), terms with 0/0 taken as 0.

    Inputs are non-negative, so a zero denominator implies a zero numerator: dividing by
    ``s + (s == 0)`` gives the 0 term without a branch, which lets LLVM vectorize the loop.
    """
    n, d = X.shape
    m = Y.shape[0]
    zero = out.dtype.type(0.0)
    one = out.dtype.type(1.0)
    for i in prange(n):
        for j in range(m):
            acc = zero
            for k in range(d):
                a = X[i, k]
                b = Y[j, k]
                s = a + b
                t = a - b
                acc += t * t / (s + (one if s == zero else zero))
            out[i, j] = acc


@njit(parallel=True, cache=True)
def copy_rows(src, dst):
    """dst[i, j] = src[i, j] with one thread per row block (moves GPU results to their place)."""
    n, m = src.shape
    for i in prange(n):
        for j in range(m):
            dst[i, j] = src[i, j]
