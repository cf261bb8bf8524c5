"""CPU compute for kernels on CSR rows: Numba loops on the CSR/CSC arrays (no Python objects).

Both functions visit only the pairs of non-zeros that share a column (Gustavson's row-by-row
product): row i of X in CSR meets the columns of Y in CSC, so the cost is the number of such
pairs, not n_X n_Y n_features.

- :func:`csr_inner_products`: <x_i, y_j> into a dense block.
- :func:`csr_l1_distances`: ||x_i - y_j||_1 = ||x_i||_1 + ||y_j||_1 - sum over shared columns
  k of (|x_ik| + |y_jk| - |x_ik - y_jk|), clipped at 0 (the absolute rounding error is about
  eps (||x_i||_1 + ||y_j||_1), as for the GEMM form of squared distances).

The rows of ``X`` are independent: a serial ``nogil`` kernel runs on row ranges of the
library's pool (:func:`sparsekit._runtime.pools.run_row_ranges`).
"""

import numpy as np
from numba import njit

from .._runtime.pools import run_row_ranges


@njit(cache=True, nogil=True)
def _shared_column_sums(lo, hi, xptr, xind, xval, ycptr, yrow, yval, out, l1):
    """out[i, j] (+)= sum over shared columns k of x_ik y_jk, or, for ``l1``, out[i, j] -=
    |x_ik| + |y_jk| - |x_ik - y_jk| (out holding ||x_i||_1 + ||y_j||_1 on entry), rows
    ``lo:hi``."""
    m = out.shape[1]
    zero = out.dtype.type(0.0)
    for i in range(lo, hi):
        if not l1:
            for j in range(m):
                out[i, j] = zero
        for p in range(xptr[i], xptr[i + 1]):
            k = xind[p]
            a = xval[p]
            for q in range(ycptr[k], ycptr[k + 1]):
                b = yval[q]
                if l1:
                    out[i, yrow[q]] -= abs(a) + abs(b) - abs(a - b)
                else:
                    out[i, yrow[q]] += a * b
        if l1:
            for j in range(m):
                if out[i, j] < zero:
                    out[i, j] = zero


def _run(X, Y, out, l1):
    Yc = Y.tocsc()
    idx = np.int64
    run_row_ranges(
        _shared_column_sums,
        X.shape[0],
        X.indptr.astype(idx, copy=False),
        X.indices.astype(idx, copy=False),
        X.data,
        Yc.indptr.astype(idx, copy=False),
        Yc.indices.astype(idx, copy=False),
        Yc.data,
        out,
        l1,
    )
    return out


def csr_inner_products(X, Y, out):
    """out[i, j] = <X[i], Y[j]> for CSR ``X``, ``Y`` of one dtype."""
    return _run(X, Y, out, False)


def csr_l1_distances(X, Y, out):
    """out[i, j] = sum_k |X[i, k] - Y[j, k]| for CSR ``X``, ``Y`` of one dtype."""
    nx = np.asarray(abs(X).sum(axis=1), dtype=out.dtype).ravel()
    ny = np.asarray(abs(Y).sum(axis=1), dtype=out.dtype).ravel()
    np.add(nx[:, None], ny[None, :], out=out)
    return _run(X, Y, out, True)
