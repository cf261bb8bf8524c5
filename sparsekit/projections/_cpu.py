"""Compute layer: top-k selection masks with deterministic tie-breaking.

Two implementations of the same rule. :func:`top_k_rows_mask` is plain NumPy: a row-wise
``np.partition`` finds the thresholds in O(columns) per row, whatever ``k``.
:func:`small_k_keep` selects the rows' and the columns' ``k`` largest magnitudes in one compiled
pass (a sorted buffer of ``k`` entries per row and per column, O(entries · k) at worst) and
writes the kept entries and their sum of squares in a second: for the small ``k`` of sparse
factors it replaces two partitions, a transposing copy, a cumulative sum, ``np.abs``,
``np.where`` and the norm's ``einsum``, and costs a fraction of a millisecond to compile (plain
loops, no sorting routine).
"""

import numpy as np
from numba import njit

#: :func:`small_k_keep` is used when both counts are at most this (its insertion cost
#: grows with ``k``; the partition's does not)
SMALL_K = 32


def top_k_rows_mask(A, k):
    """Boolean mask of the ``k`` largest ``A[i, j]`` of every row ``i``.

    The threshold is the row's ``k``-th largest value; every entry above it is kept, and
    entries equal to it are kept in increasing column order until the row holds ``k``: ties go
    to the lowest column index.
    """
    n_rows, n_cols = A.shape
    if k >= n_cols:
        return np.ones(A.shape, dtype=bool)
    t = np.partition(A, n_cols - k, axis=1)[:, n_cols - k, None]
    mask = A > t
    need = k - mask.sum(axis=1, keepdims=True)
    eq = A == t
    mask |= eq & (np.cumsum(eq, axis=1) <= need)
    return mask


@njit(cache=True, nogil=True)
def small_k_keep(M, k_row, k_col, mask, out):
    """Keep the ``k_row`` largest ``|M[i, j]|`` of every row of ``M`` or the ``k_col`` largest
    of every column (0 selects none): ``mask`` marks them, ``out`` holds ``M`` there and 0
    elsewhere, and the sum of the squares of ``out`` (float64) is returned, for the
    normalization. Ties follow :func:`top_k_rows_mask`'s rule (applied to ``|M|``): the lowest
    column index within a row, the lowest row index within a column.

    Each row (column) keeps a buffer of its ``k`` largest magnitudes so far, in decreasing
    order; an entry enters only when it is strictly larger than the buffer's smallest, and is
    placed after the entries equal to it, so among equal values the first met stay. One pass
    selects (the magnitudes are taken on the fly, no ``|M|`` copy), one writes ``out``.
    """
    A = M
    n_rows, n_cols = A.shape
    kr = min(k_row, n_cols)
    kc = min(k_col, n_rows)
    vals = np.empty(max(kr, 1), A.dtype)
    idx = np.empty(max(kr, 1), np.int64)
    cvals = np.empty((max(kc, 1), n_cols), A.dtype)
    cidx = np.empty((max(kc, 1), n_cols), np.int64)
    for i in range(n_rows):
        for j in range(n_cols):
            mask[i, j] = False
        held = 0
        for j in range(n_cols):
            v = abs(A[i, j])
            if held < kr or v > vals[kr - 1]:
                p = held if held < kr else kr - 1
                while p > 0 and vals[p - 1] < v:
                    vals[p] = vals[p - 1]
                    idx[p] = idx[p - 1]
                    p -= 1
                vals[p] = v
                idx[p] = j
                if held < kr:
                    held += 1
        for t in range(held):
            mask[i, idx[t]] = True
        if kc > 0:
            held = min(i, kc)  # every column holds as many entries as rows seen, up to kc
            for j in range(n_cols):
                v = abs(A[i, j])
                if held < kc or v > cvals[kc - 1, j]:
                    p = held if held < kc else kc - 1
                    while p > 0 and cvals[p - 1, j] < v:
                        cvals[p, j] = cvals[p - 1, j]
                        cidx[p, j] = cidx[p - 1, j]
                        p -= 1
                    cvals[p, j] = v
                    cidx[p, j] = i
    for j in range(n_cols):
        for t in range(kc):
            mask[cidx[t, j], j] = True
    sq = 0.0
    for i in range(n_rows):
        for j in range(n_cols):
            v = M[i, j] if mask[i, j] else 0.0
            out[i, j] = v
            sq += v * v
    return sq
