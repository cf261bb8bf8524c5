"""The Nyström kernel ridge system and its FALKON preconditioner (array functions only).

With n samples, m landmarks L, K_nm = k(X, L), K_mm = k(L, L) and λ > 0, Nyström kernel ridge
regression minimizes (1/n)‖K_nm α − y‖² + λ αᵀ K_mm α over α ∈ ℝ^m, whose normal equations are

    H α = K_nmᵀ y,     H = K_nmᵀ K_nm + λ n K_mm

(Rudi, Carratino & Rosasco, "FALKON: An Optimal Large Scale Kernel Method", NeurIPS 2017, Eq. 6).
FALKON's preconditioner B with B Bᵀ ≈ (n/m K_mm² + λ n K_mm)⁻¹ is built from two Cholesky
factors (Alg. 1 of the paper; upper triangular, Rᵀ R = the matrix):

    T = chol(K_mm + δ I),   A = chol(T Tᵀ / m + λ I),   B = T⁻¹ A⁻¹ / √n

and the system solved by conjugate gradient is Bᵀ H B β = Bᵀ K_nmᵀ y, α = B β; written out (the
1/√n moved into both sides), with the jitter δ I taking the place of nothing in K_mm's
null space:

    W β = A⁻ᵀ T⁻ᵀ K_nmᵀ y / n,    W = A⁻ᵀ (T⁻ᵀ K_nmᵀ K_nm T⁻¹ / n + λ I) A⁻¹,    α = T⁻¹ A⁻¹ β.

W is K_nm's only use: one product K_nmᵀ (K_nm v) per iteration, computed in row blocks by the
caller (``gram_pass``), so K_nm is never stored.

Jitter (a decision): K_mm is only positive semi-definite (duplicate landmarks, a low-rank
kernel), so T is the Cholesky factor of K_mm + δ I with δ = m · eps(float64) · max_i K_ii, the
rank tolerance of ``numpy.linalg.pinv`` on a PSD matrix; FALKON adds eps · m (an absolute
value, which assumes kernel values of order one). The factor is retried with δ ten times
larger while LAPACK finds a non-positive pivot, up to √eps · max_i K_ii. The regularizer is then
λ αᵀ (K_mm + δ I) α: on K_mm's range the jitter moves α by O(δ / λ) relative, and on its null
space (directions v with K_mm v = 0, hence K_nm v = 0 for a PSD kernel) it picks the
minimum-norm α, so the predictions k(x, L) α are those of the pseudo-inverse solution
α = (K_nmᵀ K_nm + λ n K_mm)⁺ K_nmᵀ y.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular

from .._runtime.small_blas import THREADED_FACTOR_MIN_ROWS, is_skinny, one_blas_thread
from ..exceptions import NotPositiveDefiniteError

#: the largest jitter tried, relative to max_i K_ii (beyond it K_mm is not PSD in any useful
#: sense: the kernel is indefinite)
MAX_RELATIVE_JITTER = float(np.sqrt(np.finfo(np.float64).eps))


def jittered_cholesky(K_mm):
    """``(T, delta)``: upper T with Tᵀ T = K_mm + δ I, δ the smallest of the jitter ladder
    (module docstring) for which Cholesky succeeds."""
    K = np.asarray(K_mm, dtype=np.float64)
    K = 0.5 * (K + K.T)
    m = K.shape[0]
    scale = float(np.max(np.diag(K))) if m else 0.0
    if not np.isfinite(scale) or scale <= 0.0:
        raise NotPositiveDefiniteError(
            "the landmarks' Gram matrix has no positive diagonal entry (max k(l, l) = "
            f"{scale}); the kernel is not positive definite on these landmarks"
        )
    delta = m * np.finfo(np.float64).eps * scale
    while True:
        try:
            with one_blas_thread(m < THREADED_FACTOR_MIN_ROWS):
                T = cholesky(K + delta * np.eye(m), lower=False, check_finite=False)
        except np.linalg.LinAlgError:
            T = None
        if T is not None and np.all(np.isfinite(T)):
            return T, delta
        if delta > MAX_RELATIVE_JITTER * scale:
            raise NotPositiveDefiniteError(
                "the landmarks' Gram matrix K_mm is not positive semi-definite (Cholesky "
                f"failed with a jitter of {delta:.3g} on the diagonal); use a positive "
                "definite kernel"
            )
        delta *= 10.0


class FalkonSystem:
    """The preconditioned system W β = b of the module docstring.

    Parameters
    ----------
    K_mm : (m, m) array, or the pair ``(T, jitter)`` of :func:`jittered_cholesky`
        Gram matrix of the landmarks (or its factor, computed once for several systems).
    alpha : float > 0
        The ridge parameter λ.
    n : int
        Number of training samples.
    gram_pass : callable
        ``gram_pass(V)`` returns K_nmᵀ D K_nm V for an (m, t) float64 array V, as float64 (D
        the identity for least squares, the loss's curvatures for a Newton step).
    landmark_weights : (m,) array, optional
        An estimate of D at the landmarks, for the preconditioner: A = chol(T diag(w) Tᵀ / m +
        λ I) (Meanti et al., NeurIPS 2020, §3: the Hessian's weights at the Nyström centres).
        Any positive weights give a correct solution; close ones give fewer iterations.

    Attributes
    ----------
    T, A : (m, m) upper triangular arrays
    jitter : float
        δ of the module docstring.
    """

    def __init__(self, K_mm, alpha, n, gram_pass, landmark_weights=None):
        self.T, self.jitter = K_mm if isinstance(K_mm, tuple) else jittered_cholesky(K_mm)
        m = self.T.shape[0]
        TD = self.T if landmark_weights is None else self.T * landmark_weights
        with one_blas_thread(m < THREADED_FACTOR_MIN_ROWS):
            self.A = cholesky(TD @ self.T.T / m + alpha * np.eye(m), lower=False)
        self.alpha, self.n, self.gram_pass = float(alpha), int(n), gram_pass

    def _left(self, V):
        """T⁻¹ A⁻¹ V (maps β to α)."""
        with one_blas_thread(is_skinny(V.shape[1])):
            return solve_triangular(self.T, solve_triangular(self.A, V), check_finite=False)

    def _left_t(self, V):
        """A⁻ᵀ T⁻ᵀ V."""
        with one_blas_thread(is_skinny(V.shape[1])):
            return solve_triangular(
                self.A, solve_triangular(self.T, V, trans="T", check_finite=False), trans="T"
            )

    def apply(self, P):
        """W P for an (m, t) array P (one pass over the data)."""
        # the triangular solves of a few columns stay on one BLAS thread (the pass does not)
        with one_blas_thread(is_skinny(P.shape[1])):
            V = solve_triangular(self.A, P, check_finite=False)
            W = solve_triangular(self.T, V, check_finite=False)
        C = self.gram_pass(W) / self.n
        with one_blas_thread(is_skinny(P.shape[1])):
            U = solve_triangular(self.T, C, trans="T", check_finite=False) + self.alpha * V
            return solve_triangular(self.A, U, trans="T", check_finite=False)

    def rhs(self, KnmT_y):
        """b = A⁻ᵀ T⁻ᵀ K_nmᵀ y / n."""
        return self._left_t(KnmT_y) / self.n

    def coefficients(self, beta):
        """α = T⁻¹ A⁻¹ β."""
        return self._left(beta)

    def start(self, coef):
        """β with α = T⁻¹ A⁻¹ β for a given α (a warm start): β = A T α."""
        return self.A @ (self.T @ coef)

    def solve_direct(self, blocks, targets):
        """α from the normal equations, exactly: with Z = K_nm T⁻¹ accumulated block by block
        (its Gram matrix is positive semi-definite by construction, whatever the rounding of
        the blocks), γ solves (Zᵀ Z / n + λ I) γ = Zᵀ y / n by Cholesky and α = T⁻¹ γ.

        ``blocks`` yields ``(r0, r1, K_b)``, the rows r0:r1 of K_nm; ``targets`` is y (n, t).
        Forming T⁻ᵀ (K_nmᵀ K_nm) T⁻¹ instead would amplify the rounding of K_nmᵀ K_nm by
        1/δ on K_mm's null space (beyond λ: an indefinite matrix)."""
        m = self.T.shape[0]
        H = np.zeros((m, m))
        rhs = np.zeros((m, targets.shape[1]))
        for r0, r1, K_b in blocks:
            Z = solve_triangular(self.T, np.asarray(K_b, dtype=np.float64).T, trans="T").T
            H += Z.T @ Z
            rhs += Z.T @ targets[r0:r1]
        H /= self.n
        H[np.diag_indices_from(H)] += self.alpha
        with one_blas_thread(m < THREADED_FACTOR_MIN_ROWS):
            factor = cholesky(H, lower=False, check_finite=False)
        with one_blas_thread(is_skinny(rhs.shape[1])):
            return solve_triangular(self.T, cho_solve((factor, False), rhs / self.n))


def conjugate_gradient(apply, b, x0=None, tol=1e-4, max_iter=100, callback=None):
    """Solve W x = b for a symmetric positive definite W, column by column (Hestenes & Stiefel
    1952; Saad, *Iterative Methods for Sparse Linear Systems*, 2003, Alg. 6.18).

    Every column of ``b`` runs its own recurrence; one call of ``apply`` serves them all. A
    column stops once its residual ‖b − W x‖ is at most ``tol`` · ‖b‖ (its step sizes are then
    zero).

    Parameters
    ----------
    apply : callable
        ``apply(P)`` = W P for an (m, t) array.
    b : (m, t) array
    x0 : (m, t) array, optional
        Starting point (default zero).
    tol : float
        Relative residual at which a column stops.
    max_iter : int
        Most products with W after the start (one more for a given ``x0``).
    callback : callable, optional
        ``callback(iteration, x)`` after each iteration.

    Returns
    -------
    x : (m, t) array
    n_iter : int
        Iterations made (products with W, not counting the one of a warm start).
    residuals : list of float
        max over columns of ‖r‖ / ‖b‖ at the start and after each iteration.
    """
    b_norm = np.linalg.norm(b, axis=0)
    b_norm[b_norm == 0.0] = 1.0
    if x0 is None:
        x = np.zeros_like(b)
        r = b.copy()
    else:
        x = np.array(x0, dtype=np.float64)
        r = b - apply(x)
    p = r.copy()
    rs = np.einsum("ij,ij->j", r, r)
    residuals = [float(np.max(np.sqrt(rs) / b_norm))]
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        active = np.sqrt(rs) > tol * b_norm
        if not active.any():
            return x, n_iter - 1, residuals
        Wp = apply(p)
        pWp = np.einsum("ij,ij->j", p, Wp)
        step = np.where(active & (pWp > 0.0), rs / np.where(pWp > 0.0, pWp, 1.0), 0.0)
        x += step * p
        r -= step * Wp
        rs_new = np.einsum("ij,ij->j", r, r)
        ratio = np.where(active & (rs > 0.0), rs_new / np.where(rs > 0.0, rs, 1.0), 0.0)
        p = r + ratio * p
        rs = rs_new
        residuals.append(float(np.max(np.sqrt(rs) / b_norm)))
        if callback is not None:
            callback(n_iter, x)
    return x, n_iter, residuals
