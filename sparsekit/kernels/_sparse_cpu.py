"""CPU compute for kernels on CSR rows: Numba loops on the CSR arrays (no Python objects).

:func:`csr_l1_distances` walks the merged column indices of two rows, so a pair costs
O(nnz(x) + nnz(z)) instead of O(n_features): the L1 distance sum_k |x_k - z_k| of the Laplacian
kernel vanishes on the columns where both rows are zero. Indices must be sorted without
duplicates (the canonical CSR format).
"""
import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def _csr_l1(xptr, xind, xval, yptr, yind, yval, out):
    n = xptr.shape[0] - 1
    m = yptr.shape[0] - 1
    zero = out.dtype.type(0.0)
    for i in prange(n):
        a0 = xptr[i]
        a1 = xptr[i + 1]
        for j in range(m):
            p = a0
            q = yptr[j]
            b1 = yptr[j + 1]
            acc = zero
            while p < a1 and q < b1:
                ip = xind[p]
                iq = yind[q]
                if ip == iq:
                    acc += abs(xval[p] - yval[q])
                    p += 1
                    q += 1
                elif ip < iq:
                    acc += abs(xval[p])
                    p += 1
                else:
                    acc += abs(yval[q])
                    q += 1
            while p < a1:
                acc += abs(xval[p])
                p += 1
            while q < b1:
                acc += abs(yval[q])
                q += 1
            out[i, j] = acc


def csr_l1_distances(X, Y, out):
    """out[i, j] = sum_k |X[i, k] - Y[j, k]| for canonical CSR ``X``, ``Y`` of one dtype.

    Indices are passed as int64 (one compiled signature per float dtype).
    """
    def parts(A):
        return (A.indptr.astype(np.int64, copy=False), A.indices.astype(np.int64, copy=False),
                A.data)

    _csr_l1(*parts(X), *parts(Y), out)
    return out
