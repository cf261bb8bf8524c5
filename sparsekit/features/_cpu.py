"""CPU compute for the Fastfood feature map: Numba loops on contiguous arrays (no Python objects).

- :func:`fwht_inplace`: the fast Walsh–Hadamard transform (unnormalized, Sylvester order) of
  every row of a 2-D array.
- :func:`fastfood_project`: the Fastfood projection V x = c ⊙ H G Π H (B ⊙ x) of every row,
  block after block (Le, Sarlós & Smola 2013; Giffon 2020, PhD thesis, Ch. 1, Eq. 1.19).

Nothing here compiles at import time; every function keeps the dtype of its inputs. The loops are
serial ``nogil`` Numba kernels over a row range, run on row ranges from several threads by
:func:`sparsekit._runtime.pools.run_row_ranges` (no ``parallel=True``: short first-call compiles).
"""

import numpy as np
from numba import njit

from .._runtime.pools import run_row_ranges


@njit(cache=True, nogil=True, inline="always")
def _fwht_row(a):
    """In-place unnormalized Walsh–Hadamard transform of a 1-D array of length 2^p."""
    n = a.shape[0]
    h = 1
    while h < n:
        for start in range(0, n, 2 * h):
            for k in range(start, start + h):
                u = a[k]
                v = a[k + h]
                a[k] = u + v
                a[k + h] = u - v
        h *= 2


def fwht_inplace(A):
    """A[i] <- H A[i] for every row, H the 2^p x 2^p Hadamard matrix (entries ±1)."""
    run_row_ranges(_fwht_rows, A.shape[0], A)


@njit(cache=True, nogil=True)
def _fwht_rows(lo, hi, A):
    for i in range(lo, hi):
        _fwht_row(A[i])


def fastfood_project(X, B, perm, G, C, n_out, out):
    """Fastfood projections of the rows of ``X`` (zero-padded to length ``d_pad``).

    For block b, v_b = C[b] ⊙ H G[b] Π_b H (B[b] ⊙ x), with Π_b y = y[perm[b]]; the blocks are
    stacked and the first ``n_out`` values of every row are written to ``out[i, :n_out]``.

    Parameters
    ----------
    X : (n, d) array, d <= d_pad
    B, G, C : (n_blocks, d_pad) arrays of the dtype of X
    perm : (n_blocks, d_pad) int64 array of permutations
    n_out : int <= n_blocks * d_pad
    out : (n, >= n_out) array of the dtype of X
    """
    d_pad = B.shape[1]
    run_row_ranges(
        _fastfood_rows,
        X.shape[0],
        X,
        B,
        perm,
        G,
        C,
        n_out,
        out,
        scratch=lambda: (np.empty(d_pad, dtype=X.dtype), np.empty(d_pad, dtype=X.dtype)),
    )


@njit(cache=True, nogil=True)
def _fastfood_rows(lo, hi, X, B, perm, G, C, n_out, out, buf, tmp):
    d = X.shape[1]
    n_blocks, d_pad = B.shape
    for i in range(lo, hi):
        for b in range(n_blocks):
            col0 = b * d_pad
            if col0 >= n_out:
                break
            for k in range(d):
                buf[k] = B[b, k] * X[i, k]
            for k in range(d, d_pad):
                buf[k] = 0.0
            _fwht_row(buf)
            for k in range(d_pad):
                tmp[k] = G[b, k] * buf[perm[b, k]]
            _fwht_row(tmp)
            stop = min(d_pad, n_out - col0)
            for k in range(stop):
                out[i, col0 + k] = C[b, k] * tmp[k]
