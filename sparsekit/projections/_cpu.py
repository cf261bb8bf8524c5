"""Compute layer: top-k selection masks with deterministic tie-breaking.

Plain NumPy: a row-wise ``np.partition`` finds the thresholds in O(columns) per row, and the
masks are elementwise; a Numba twin was no faster and its selection routine cost seconds of
compilation on the first call.
"""

import numpy as np


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
