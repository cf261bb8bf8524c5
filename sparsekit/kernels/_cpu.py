"""CPU compute for vector kernels: Numba loops on contiguous arrays (no Python objects).

The GEMM-shaped part of RBF/polynomial kernels is done by BLAS (NumPy) before these loops;
the loops fuse the element-wise tail in place. Each loop is a serial ``nogil`` Numba kernel over
a row range, run on row ranges from several threads by
:func:`sparsekit._runtime.pools.run_row_ranges` (one compiled function per dtype, no
``parallel=True``: short first-call compiles). ``fastmath`` is limited to re-association and
contraction (vectorized reductions); the float64 tests against scikit-learn at rtol 1e-10
bound its effect.
"""

import numpy as np
from numba import njit

from .._runtime.pools import run_row_ranges

_FAST = {"reassoc", "contract"}


def scaled_sq_dist_from_inner_inplace(G, xsq, ysq, scale):
    """G[i, j] <- scale * max(xsq[i] + ysq[j] - 2 G[i, j], 0).

    ``G`` holds the inner products <x_i, y_j> on entry; the clip removes the small negative
    values that cancellation leaves for nearly equal points. Blocks of fewer than
    ``2 * EXP_ENTRIES_PER_THREAD`` entries run on the calling thread (as in :func:`exp_inplace`).
    """
    if G.size < 2 * EXP_ENTRIES_PER_THREAD:
        _scaled_sq_dist_rows(0, G.shape[0], G, xsq, ysq, scale)
        return
    run_row_ranges(_scaled_sq_dist_rows, G.shape[0], G, xsq, ysq, scale)


@njit(cache=True, nogil=True)
def _scaled_sq_dist_rows(lo, hi, G, xsq, ysq, scale):
    m = G.shape[1]
    two = G.dtype.type(2.0)
    zero = G.dtype.type(0.0)
    for i in range(lo, hi):
        for j in range(m):
            d = xsq[i] + ysq[j] - two * G[i, j]
            if d < zero:
                d = zero
            G[i, j] = scale * d


#: entries of exp per thread below which handing work to another thread costs more than it saves
EXP_ENTRIES_PER_THREAD = 1 << 16


def exp_inplace(A, n_threads=None):
    """A <- exp(A) with NumPy's SIMD exp, on row ranges of the library's pool.

    NumPy's vectorized exp is several times faster per core than the scalar exp of a Numba
    loop, and ufuncs release the GIL, so the pool's threads give both SIMD and several cores.
    ``n_threads`` defaults to :func:`sparsekit._runtime.threads.effective_n_jobs` (the library's
    setting: one thread inside the block workers of the samplers). Arrays of fewer than
    ``EXP_ENTRIES_PER_THREAD`` entries per thread run inline on the calling thread. Exp is
    element-wise, so the split does not change the result.
    """
    if A.size < 2 * EXP_ENTRIES_PER_THREAD or A.ndim != 2:
        np.exp(A, out=A)
        return A
    from .._runtime.threads import effective_n_jobs, usable_cpus

    n_threads = min(effective_n_jobs(n_threads), usable_cpus(), A.size // EXP_ENTRIES_PER_THREAD)
    if n_threads <= 1 or A.shape[0] < n_threads:
        np.exp(A, out=A)
        return A
    run_row_ranges(_exp_rows, A.shape[0], A, n_jobs=n_threads)
    return A


def _exp_rows(lo, hi, A):
    part = A[lo:hi]
    np.exp(part, out=part)


def l1_distances(X, Y, out):
    """out[i, j] = sum_k |X[i, k] - Y[j, k]|."""
    run_row_ranges(_l1_distances_rows, X.shape[0], X, Y, out)


@njit(cache=True, nogil=True, fastmath=_FAST)
def _l1_distances_rows(lo, hi, X, Y, out):
    d = X.shape[1]
    m = Y.shape[0]
    for i in range(lo, hi):
        for j in range(m):
            acc = out.dtype.type(0.0)
            for k in range(d):
                acc += abs(X[i, k] - Y[j, k])
            out[i, j] = acc


def exp_scale_inplace(A, scale):
    """A <- exp(scale * A), element-wise: NumPy's multiply and SIMD exp (:func:`exp_inplace`).

    A Numba loop calling ``exp`` stays scalar (no vector math library is linked), which made
    the exp step the larger part of a float32 chi2 Gram. ``scale`` multiplies as
    :func:`scalar_of` gives it (in float64 where it is no normal float of A's dtype).
    """
    with np.errstate(over="ignore"):  # -inf, whose exp is the right 0
        np.multiply(A, scalar_of(A.dtype, scale), out=A, casting="same_kind")
    return exp_inplace(A)


def scalar_of(dtype, value):
    """``value`` as a scalar of ``dtype``, or as a float64 where it is no normal float of it.

    gamma = 1e40 rounded to float32 is inf, and inf * 0 NaN where exp(-gamma * 0) = 1 (a
    subnormal gamma would lose digits): a float64 scalar makes the product float64, rounded
    once to the data's dtype when stored, so the entries are right at any gamma.
    """
    info = np.finfo(dtype)
    if float(info.tiny) <= abs(float(value)) <= float(info.max):
        return np.dtype(dtype).type(value)
    return np.float64(value)


def chi2_sums(X, Y, out):
    """out[i, j] = sum_k (X[i,k] - Y[j,k])^2 / (X[i,k] + Y[j,k]), terms with 0/0 taken as 0.

    Inputs are non-negative, so a zero denominator implies a zero numerator: dividing by
    ``s + (s == 0)`` gives the 0 term without a branch, which lets LLVM vectorize the loop.
    Each term is ``t * (t / s)`` (t = x - y, s = x + y) rather than ``t * t / s``: |t / s| <= 1,
    so no term overflows or underflows unless its true value does (``t * t`` overflows from
    |t| ~ 1.8e19 in float32 and underflows below ~1e-19). When the largest x plus the largest
    y overflows, the entries where some ``x + y`` does are computed again from halved inputs
    (exact at that size).
    """
    run_row_ranges(_chi2_sums_rows, X.shape[0], X, Y, out)


# error_model="numpy": the default "python" model tests every divisor for zero (to raise
# ZeroDivisionError), which keeps the loop scalar; the divisor here is never zero anyway
@njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy")
def _chi2_sums_rows(lo, hi, X, Y, out):
    d = X.shape[1]
    m = Y.shape[0]
    zero = out.dtype.type(0.0)
    one = out.dtype.type(1.0)
    half = out.dtype.type(0.5)
    big = out.dtype.type(np.finfo(out.dtype).max)
    x_max = zero
    for i in range(lo, hi):
        for k in range(d):
            x_max = max(x_max, X[i, k])
    y_max = zero
    for j in range(m):
        for k in range(d):
            y_max = max(y_max, Y[j, k])
    may_overflow = x_max + y_max > big
    for i in range(lo, hi):
        for j in range(m):
            acc = zero
            for k in range(d):
                a = X[i, k]
                b = Y[j, k]
                s = a + b
                t = a - b
                # min() never changes t / s (|t| <= s) but stops fastmath's re-association
                # from turning t * (t / s) back into t * t / s
                acc += t * min(t / (s + (one if s == zero else zero)), one)
            if may_overflow:
                s_sum = zero  # inf when some x + y overflowed (or only the sum: exact anyway)
                for k in range(d):
                    s_sum += X[i, k] + Y[j, k]
                if s_sum > big:
                    acc = zero
                    for k in range(d):
                        a = half * X[i, k]
                        b = half * Y[j, k]
                        s = a + b
                        t = a - b
                        acc += t * min(t / (s + (one if s == zero else zero)), one)
                    acc = acc + acc
            out[i, j] = acc


def copy_rows(src, dst):
    """dst[i, j] = src[i, j] with one thread per row range (moves GPU results to their place)."""
    run_row_ranges(_copy_rows, src.shape[0], src, dst)


@njit(cache=True, nogil=True)
def _copy_rows(lo, hi, src, dst):
    m = src.shape[1]
    for i in range(lo, hi):
        for j in range(m):
            dst[i, j] = src[i, j]
