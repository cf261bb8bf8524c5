"""Ridge-leverage-score compute on dense blocks (arrays in, arrays out).

Every function factors in float64 (LAPACK): a λ-regularized solve in float32 loses the small
scores to cancellation in l = 1 − λ [(K + λI)⁻¹]_ii. Callers cast the result back to the input
dtype.

Formulas (Cherfaoui 2022, PhD thesis, §2.1.3): l_i = [K (K + λI)⁻¹]_ii (2.1)
= 1 − λ [(K + λI)⁻¹]_ii (2.3).
With K + λI = UᵀU (Cholesky, upper U), (K + λI)⁻¹ = U⁻¹ U⁻ᵀ, so [(K + λI)⁻¹]_ii is the squared
norm of row i of U⁻¹: one ``potrf`` and one ``trtri`` (2m³/3 flops) instead of an LU inverse
(2m³).
"""

from __future__ import annotations

import numpy as np

from ..exceptions import NotPositiveDefiniteError
from ._lapack import potrf_upper, trmm_upper_t, trtri_upper


def _not_pd(what: str) -> NotPositiveDefiniteError:
    return NotPositiveDefiniteError(
        f"{what} is not positive definite: the kernel is not positive semi-definite on these "
        "points, or λ is too small for the rounding errors of the kernel values; use a PSD "
        "kernel or a larger lam"
    )


def rls_from_gram(K: np.ndarray, lam: float, overwrite: bool = False) -> np.ndarray:
    """Exact ridge leverage scores of the Gram block ``K`` (m, m), float64 of shape (m,).

    ``overwrite=True`` lets the function use ``K`` (float64, C-contiguous) as work space.
    """
    m = K.shape[0]
    if overwrite and K.dtype == np.float64 and K.flags.c_contiguous:
        A = K
    else:
        A = np.array(K, dtype=np.float64, order="C")
    A.flat[:: m + 1] += lam
    # A is symmetric, so its transpose is the same matrix in Fortran order (no copy for LAPACK);
    # both LAPACK calls release the GIL (see :mod:`._lapack`), so block workers run in parallel
    U = A.T
    if potrf_upper(U) != 0 or not _invert_upper_inplace(U):
        raise _not_pd("K + lam*I")
    scores = 1.0 - lam * _upper_row_norms(A)
    np.clip(scores, 0.0, 1.0, out=scores)
    return scores


#: bytes of one column block of :func:`_upper_row_norms` (its copy and mask stay small)
NORM_BLOCK_BYTES = 2**20


def _upper_row_norms(A: np.ndarray) -> np.ndarray:
    """Squared norms of the rows of the upper triangle of ``A.T``, read from the lower
    triangle of the C-ordered ``A`` in column blocks of ``NORM_BLOCK_BYTES`` (no second m x m
    array: the strict upper triangle of ``A`` holds what LAPACK did not overwrite)."""
    m = A.shape[0]
    block = max(1, NORM_BLOCK_BYTES // (8 * max(1, m)))
    out = np.empty(m)
    for c0 in range(0, m, block):
        c1 = min(m, c0 + block)
        L = np.tril(A[c0:, c0:c1])  # rows c0.. of columns c0..c1: on and below the diagonal
        out[c0:c1] = np.einsum("ij,ij->j", L, L)
    return out


def _invert_upper_inplace(U: np.ndarray) -> bool:
    """U <- U⁻¹ for a Fortran-ordered upper-triangular float64 ``U`` (LAPACK ``trtri``, GIL
    released); False if U is singular. The strict lower triangle is not read."""
    return trtri_upper(U) == 0


def nystrom_factor(W: np.ndarray, rcond: float = 1e-12, lam: float | None = None):
    """M with K_{X,S} M M^T K_{S,X} = K_{X,S} W⁺ K_{S,X}: M = V_+ diag(w_+^{-1/2}).

    Eigenvalues below ``rcond · max(w)`` are dropped (the pseudo-inverse floor). With ``lam``,
    raises :class:`NotPositiveDefiniteError` when W + λI is not positive definite (its smallest
    eigenvalue is not above 0), the test the exact scores make on K + λI by their Cholesky
    factorization: the pseudo-inverse would otherwise drop the negative eigenvalues of a kernel
    that is not positive semi-definite without a word.
    """
    w, V = np.linalg.eigh(np.asarray(W, dtype=np.float64))
    if lam is not None and w.size and not w[0] + lam > 0:
        raise _not_pd("K_S + lam*I")
    keep = w > rcond * max(float(w[-1]), 0.0) if w[-1] > 0 else np.zeros(w.shape, bool)
    if not keep.any():
        return np.zeros((W.shape[0], 0))
    return V[:, keep] / np.sqrt(w[keep])


def cholesky_upper(A: np.ndarray, what: str) -> np.ndarray:
    """Upper Cholesky factor U (UᵀU = A) of a float64 SPD matrix (Fortran order, lower triangle
    zero; LAPACK with the GIL released)."""
    A = np.array(A, dtype=np.float64, order="C")
    U = A.T  # A is symmetric: the same matrix in Fortran order
    if potrf_upper(U) != 0:
        raise _not_pd(what)
    return np.asfortranarray(np.triu(U))


def inverse_upper(U: np.ndarray) -> np.ndarray:
    """U⁻¹ of an upper-triangular float64 matrix (Fortran order, lower triangle zero)."""
    Uinv = np.array(U, dtype=np.float64, order="F")
    if trtri_upper(Uinv) != 0:
        raise _not_pd("the Cholesky factor")
    return np.asfortranarray(np.triu(Uinv))


def quadratic_rows(B: np.ndarray, Uinv: np.ndarray) -> np.ndarray:
    """q_i = B[i] A⁻¹ B[i]ᵀ for A = UᵀU, as ‖U⁻ᵀ B[i]ᵀ‖², given ``Uinv`` = U⁻¹.

    One triangular matrix product (TRMM, n r² flops), about twice as fast as a triangular solve
    or a dense product with A⁻¹ in OpenBLAS. ``B`` (C-contiguous float64) is overwritten. The
    product releases the GIL (:mod:`._lapack`), so row-block workers run it in parallel.
    """
    B = np.ascontiguousarray(B, dtype=np.float64)
    Z = trmm_upper_t(np.asfortranarray(Uinv, dtype=np.float64), B.T)  # U⁻ᵀ Bᵀ
    return np.einsum("ij,ij->j", Z, Z)
