"""The dense RBF Gram matrix of X with itself from its upper triangle.

K(X, X) is symmetric. Each strip of rows ``lo:hi`` gets only its part on and right of the
diagonal, ``Xc[lo:hi] @ Xc[lo:].T`` (NumPy's BLAS), then the distances and the exp while the
strip is in cache, and is finally copied, transposed, into the columns ``lo:hi`` below it. The
products cost about what one ``syrk`` does (half a GEMM) and the element-wise passes cover
n (n + 1) / 2 entries instead of n^2: NumPy's ``X @ X.T`` also calls ``syrk`` but mirrors its
triangle before returning, so passes after it cover every entry. The strips are shared out
dynamically by :func:`sparsekit._runtime.pools.run_blocks` (one BLAS thread each).
"""

from __future__ import annotations

import numpy as np

from .._runtime.pools import run_blocks
from . import _cpu

#: rows per strip; a fixed count, so the Gram does not depend on the number of threads
SYM_STRIP_ROWS = 256


def rbf_gram_upper(Xc: np.ndarray, sq: np.ndarray, scale, out: np.ndarray, step: int = 0):
    """out <- exp(scale * max(sq_i + sq_j - 2 <x_i, x_j>, 0)) for all i, j, from the strips of
    the upper triangle.

    Parameters
    ----------
    Xc : ndarray of shape (n, d), float32 or float64
        The (centred) rows.
    sq : ndarray of shape (n,)
        ||x_i||^2 of the rows of ``Xc``.
    scale : float of out's dtype
        -gamma.
    out : ndarray of shape (n, n), dtype of ``Xc``
        C-contiguous; every entry is written.
    step : int, optional
        Rows per strip (default :data:`SYM_STRIP_ROWS`).
    """
    n = Xc.shape[0]
    step = min(max(1, n), step or SYM_STRIP_ROWS)

    def strip(i):
        lo, hi = i * step, min(n, (i + 1) * step)
        part = out[lo:hi, lo:]
        np.matmul(Xc[lo:hi], Xc[lo:].T, out=part)
        # the square on the diagonal from its upper triangle: exactly symmetric whatever the
        # order of the GEMM's sums
        diag = out[lo:hi, lo:hi]
        upper = np.triu(diag, 1)
        np.copyto(diag, upper + upper.T + np.diag(np.diagonal(diag)))
        _cpu._scaled_sq_dist_rows(0, hi - lo, part, sq[lo:hi], sq[lo:], scale)
        np.exp(part, out=part)
        out[hi:, lo:hi] = out[lo:hi, hi:].T

    run_blocks(strip, -(-n // step))
