"""The dense RBF Gram matrix of X with itself from one triangle.

K(X, X) is symmetric: BLAS's ``syrk`` computes one triangle of Xc Xc^T (half the flops of a
GEMM), the distances and the exp run on that triangle only, and each finished strip is copied
to the other triangle. NumPy's ``X @ X.T`` also calls ``syrk`` but mirrors the triangle before
returning, so the element-wise passes after it would cover all n^2 entries; here they cover
n (n + 1) / 2, which is what brings the Gram within a few per cent of the product alone.
"""

from __future__ import annotations

import numpy as np

from .._row_ranges import run_blocks
from . import _cpu


def syrk_upper(Xc: np.ndarray, out: np.ndarray) -> bool:
    """Write the upper triangle of ``Xc Xc^T`` into ``out`` (BLAS ``syrk``), in place.

    Parameters
    ----------
    Xc : ndarray of shape (n, d), float32 or float64
        The (centred) rows.
    out : ndarray of shape (n, n), dtype of ``Xc``
        C-contiguous output; only the entries with ``j >= i`` are written.

    Returns
    -------
    bool
        False (nothing written) when ``out`` is not C-contiguous or the dtype has no ``syrk``:
        the caller then takes the general path.
    """
    if out.dtype not in (np.float32, np.float64) or Xc.dtype != out.dtype:
        return False
    if not out.flags.c_contiguous or out.shape != (Xc.shape[0], Xc.shape[0]):
        return False
    from scipy.linalg import blas

    syrk = blas.dsyrk if out.dtype == np.float64 else blas.ssyrk
    # out.T is Fortran-ordered: its lower triangle is out's upper one; Xc.T (d x n, Fortran
    # order) with trans=1 gives Xc Xc^T without copying Xc
    res = syrk(1.0, Xc.T, c=out.T, trans=1, lower=1, overwrite_c=1)
    if not np.shares_memory(res, out):  # not written in place: nothing is lost, copy it back
        np.copyto(out.T, np.tril(res))
    return True


def rbf_from_upper(out: np.ndarray, sq: np.ndarray, scale, step: int) -> None:
    """out <- exp(scale * max(sq_i + sq_j - 2 out[i, j], 0)) on a Gram whose upper triangle
    holds the inner products, then the lower triangle <- the upper one.

    Parameters
    ----------
    out : ndarray of shape (n, n)
        Upper triangle (``j >= i``): <x_i, x_j>; the rest is ignored and overwritten.
    sq : ndarray of shape (n,)
        ||x_i||^2.
    scale : float of out's dtype
        -gamma.
    step : int
        Rows per block (the blocks do not depend on the thread count).
    """
    n = out.shape[0]

    def block(i):
        lo, hi = i * step, min(n, (i + 1) * step)
        diag = out[lo:hi, lo:hi]
        upper = np.triu(diag, 1)
        np.copyto(diag, upper + upper.T + np.diag(np.diagonal(diag)))
        part = out[lo:hi, lo:]
        _cpu._scaled_sq_dist_rows(0, hi - lo, part, sq[lo:hi], sq[lo:], scale)
        np.exp(part, out=part)
        out[hi:, lo:hi] = out[lo:hi, hi:].T

    run_blocks(block, -(-n // step))
