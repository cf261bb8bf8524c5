"""Compute layer: sparse (CSR) times dense products, batched over the columns of the operand.

Pure array functions; nothing here knows about operators or estimators.
"""
import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True, nogil=True)
def csr_matmat(indptr, indices, data, B, out):
    """``out = S @ B`` for ``S`` in CSR form (``indptr, indices, data``) and a C-contiguous ``B``.

    Row ``i`` of the result is ``sum_p data[p] * B[indices[p], :]``: each non-zero is one
    contiguous AXPY over the columns of ``B`` (the batch), so the inner loop vectorizes; rows
    are independent and run in parallel.
    """
    n_rows = indptr.shape[0] - 1
    n_cols = B.shape[1]
    for i in prange(n_rows):
        for c in range(n_cols):
            out[i, c] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            v = data[p]
            j = indices[p]
            for c in range(n_cols):
                out[i, c] += v * B[j, c]
    return out


def csr_times_dense(S, B):
    """``S @ B`` for a scipy CSR matrix ``S`` (same dtype as ``B``) and a 2-D array ``B``."""
    B = np.ascontiguousarray(B, dtype=S.dtype)
    out = np.empty((S.shape[0], B.shape[1]), dtype=S.dtype)
    return csr_matmat(S.indptr, S.indices, S.data, B, out)
