"""Compute layer: sparse (CSR) times dense products, batched over the columns of the operand.

Pure array functions; nothing here knows about operators or estimators.
"""

import numpy as np
from numba import njit

from .._runtime.pools import run_row_ranges


def csr_matmat(indptr, indices, data, B, out):
    """``out = S @ B`` for ``S`` in CSR form (``indptr, indices, data``) and a C-contiguous ``B``.

    Row ``i`` of the result is ``sum_p data[p] * B[indices[p], :]``: each non-zero is one
    contiguous AXPY over the columns of ``B`` (the batch), so the inner loop vectorizes; rows
    are independent and run on row ranges of the library's pool
    (:func:`sparsekit._runtime.pools.run_row_ranges`).
    """
    n_rows = indptr.shape[0] - 1
    if data.shape[0] * B.shape[1] < 2 * MATMAT_WORK_PER_THREAD:
        _csr_matmat_rows(0, n_rows, indptr, indices, data, B, out)
    else:
        run_row_ranges(_csr_matmat_rows, n_rows, indptr, indices, data, B, out)
    return out


#: multiply-adds of ``csr_matmat`` per thread below which a hand-off to the pool costs more
#: than it saves (Palm4MSA's many small products: see ``benchmarks/bench_palm.py``)
MATMAT_WORK_PER_THREAD = 1 << 18


@njit(cache=True, nogil=True, fastmath={"contract"})
def _csr_matmat_rows(lo, hi, indptr, indices, data, B, out):
    # two non-zeros per pass over the output row: one load and one store of it per two rows
    # of B (the loop is bound by those, not by the multiply-adds)
    n_cols = B.shape[1]
    for i in range(lo, hi):
        for c in range(n_cols):
            out[i, c] = 0.0
        p = indptr[i]
        end = indptr[i + 1]
        while p + 1 < end:
            v = data[p]
            u = data[p + 1]
            j = indices[p]
            k = indices[p + 1]
            for c in range(n_cols):
                out[i, c] += v * B[j, c] + u * B[k, c]
            p += 2
        if p < end:
            v = data[p]
            j = indices[p]
            for c in range(n_cols):
                out[i, c] += v * B[j, c]


def stack_csr(csrs, n_rows, index_dtype=None, dtype=None):
    """The CSR arrays ``(indptr, indices, data)`` of several matrices back to back, as
    :func:`csr_chain_block` takes them: ``(ptr_off, nnz_off, indptr, indices, data)``, where
    matrix ``q`` (``n_rows[q]`` rows) has its row pointers at ``indptr[ptr_off[q]:]`` (from 0)
    and its entries at ``nnz_off[q]``. ``index_dtype`` / ``dtype``: casts of the index and
    value arrays (None keeps them)."""
    n_rows = np.asarray(n_rows, dtype=np.int64)
    ptr_off = np.concatenate([[0], np.cumsum(n_rows + 1)[:-1]]).astype(np.int64)
    nnz_off = np.concatenate([[0], np.cumsum([c[1].shape[0] for c in csrs])[:-1]])
    indptr = np.concatenate([c[0] for c in csrs])
    indices = np.concatenate([c[1] for c in csrs])
    data = np.concatenate([c[2] for c in csrs])
    if index_dtype is not None:
        indptr, indices = indptr.astype(index_dtype), indices.astype(index_dtype)
    if dtype is not None:
        data = data.astype(dtype, copy=False)
    return ptr_off, nnz_off.astype(np.int64), indptr, indices, data


def csr_times_dense(S, B):
    """``S @ B`` for a scipy CSR matrix ``S`` (same dtype as ``B``) and a 2-D array ``B``."""
    B = np.ascontiguousarray(B, dtype=S.dtype)
    out = np.empty((S.shape[0], B.shape[1]), dtype=S.dtype)
    return csr_matmat(S.indptr, S.indices, S.data, B, out)


@njit(cache=True, nogil=True)
def csr_chain_block(n_rows, ptr_off, nnz_off, indptr, indices, data, B, buf_a, buf_b, out):
    """``out = S_{Q-1} ⋯ S_1 S_0 B`` for one column block ``B``, on the calling thread.

    The factors are stored back to back: factor ``q`` has ``n_rows[q]`` rows, its row pointers
    are ``indptr[ptr_off[q] : ptr_off[q] + n_rows[q] + 1]`` (starting at 0) and its entries
    ``indices[nnz_off[q] + p]`` and ``data[nnz_off[q] + p]`` (:func:`stack_csr`). Intermediate
    products alternate between ``buf_a`` and ``buf_b`` (at least as many rows as the largest
    factor, as many columns as ``B``), so a narrow block goes through every factor while it
    stays in cache, with one kernel call per block instead of one parallel launch per factor.
    Each factor is one call of the row kernel of :func:`csr_matmat` (compiled once for both
    when the index arrays have its types). The GIL is released: blocks run on a thread pool.
    """
    n_factors = n_rows.shape[0]
    src = B
    for q in range(n_factors):
        if q == n_factors - 1:
            dst = out
        elif q % 2 == 0:
            dst = buf_a
        else:
            dst = buf_b
        p0 = ptr_off[q]
        e0 = nnz_off[q]
        e1 = e0 + indptr[p0 + n_rows[q]]
        ptr = indptr[p0 : p0 + n_rows[q] + 1]
        # np.int64(0): a literal 0 would compile a second specialization of the row kernel
        _csr_matmat_rows(np.int64(0), n_rows[q], ptr, indices[e0:e1], data[e0:e1], src, dst)
        src = dst


@njit(cache=True, nogil=True)
def dense_to_csr_pair(D):
    """The CSR arrays of ``D`` and of ``Dᵀ`` (``indptr, indices, data`` each; exact zeros and
    ``-0.0`` dropped, column and row indices increasing: scipy's ``csr_matrix(D)`` layout).

    One counting pass and one filling pass over ``D``, with ``int32`` indices as scipy uses for
    such sizes.
    """
    n_rows, n_cols = D.shape
    indptr = np.zeros(n_rows + 1, np.int32)
    t_indptr = np.zeros(n_cols + 1, np.int32)
    for i in range(n_rows):
        for j in range(n_cols):
            if D[i, j] != 0:
                indptr[i + 1] += 1
                t_indptr[j + 1] += 1
    for i in range(n_rows):
        indptr[i + 1] += indptr[i]
    for j in range(n_cols):
        t_indptr[j + 1] += t_indptr[j]
    nnz = indptr[n_rows]
    indices = np.empty(nnz, np.int32)
    data = np.empty(nnz, D.dtype)
    t_indices = np.empty(nnz, np.int32)
    t_data = np.empty(nnz, D.dtype)
    fill = t_indptr[:n_cols].copy()
    p = 0
    for i in range(n_rows):
        for j in range(n_cols):
            v = D[i, j]
            if v != 0:
                indices[p] = j
                data[p] = v
                p += 1
                q = fill[j]
                t_indices[q] = i
                t_data[q] = v
                fill[j] = q + 1
    return indptr, indices, data, t_indptr, t_indices, t_data
