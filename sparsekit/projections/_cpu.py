"""Compute layer: top-k selection masks with deterministic tie-breaking."""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def top_k_rows_mask(A, k, mask):
    """Set ``mask[i, j] = True`` for the ``k`` largest ``A[i, j]`` of every row ``i``.

    The threshold is the row's ``k``-th largest value (a selection, O(columns) per row); every
    entry above it is kept, and entries equal to it are kept in increasing column order until
    the row holds ``k``: ties go to the lowest column index. ``mask`` must be all False.
    """
    n_rows, n_cols = A.shape
    if k >= n_cols:
        mask[:, :] = True
        return mask
    for i in range(n_rows):
        row = A[i]
        t = np.partition(row.copy(), n_cols - k)[n_cols - k]
        need = k
        for j in range(n_cols):
            if row[j] > t:
                mask[i, j] = True
                need -= 1
        for j in range(n_cols):
            if need == 0:
                break
            if row[j] == t:
                mask[i, j] = True
                need -= 1
    return mask
