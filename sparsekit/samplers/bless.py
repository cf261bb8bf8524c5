"""BLESS: bottom-up leverage score sampling (Rudi, Calandriello, Carratino & Rosasco 2018).

"On Fast Leverage Score Sampling and Optimal Learning", NeurIPS 2018, Algorithm 1. The ridge
parameter follows the other RLS samplers (:mod:`sparsekit.samplers.rls`): the scores estimate
l_i = [K (K + λI)⁻¹]_ii, so the λ of this module is n times the λ of the paper, whose scores
are [K (K + λnI)⁻¹]_ii. In that scaling, with κ² = max_i k(x_i, x_i):

- λ_h = λ_0 / q^h for h = 1, …, H, from λ_0 = nκ² (κ² in the paper's scaling: its Theorem 1
  starts at κ²/min(t, 1), here with t = 1; the authors' code, LCSL/bless, starts at n, which is
  nκ² for κ = 1), H = ⌈log(λ_0/λ) / log q⌉ (at least 1), and the last level at λ_H = λ exactly;
- the estimator of the paper's Section 2, for a dictionary J with positive diagonal weights A,

      l̃_{J,A}(i, λ) = (1/λ) (k(x_i, x_i) − K_{i,J} (K_J + λA)⁻¹ K_{J,i})

  (the empty dictionary J_0 gives k(x_i, x_i)/λ);
- level h draws R_h = ⌈q1 · n · min(1, κ²/λ_h)⌉ candidates U_h uniformly, with replacement (the
  paper's R_h = q1 min(κ²/λ_h, n)), estimates their scores with (J_{h−1}, A_{h−1}) at λ_h,
  sets p_k = l̃_k / Σ_{u∈U_h} l̃_u, d_h = (n/R_h) Σ_{u∈U_h} l̃_u and M_h = ⌈q2 d_h⌉ (the paper
  writes R_h and M_h without rounding; we round up, and draw at least one of each), and draws
  J_h: M_h points of U_h ∝ p, **with replacement** (Algorithm 1; the Bernoulli variant is the
  paper's BLESS-R), with A_h = (R_h/n) M_h diag(p_{j_1}, …, p_{j_{M_h}}).

A point drawn c times enters K_J + λA as one point of weight a/c: both give the same
Σ_j φ(x_j) φ(x_j)ᵀ / a_j, so the estimates are unchanged and K_J stays non-singular.

The sampler's scores are min(1, l̃_{J_H,A_H}(i, λ)) for every sample (the final dictionary's
estimates, streamed in row blocks: O(n m_H²) time, O(m_H² + block · m_H) memory (m_H = #J_H); no n×n
matrix is formed); landmarks are drawn from them with the sampler's drawing mode
(:mod:`sparsekit.samplers._draw`). Theorem 1 of the paper: for q1, q2 large enough (growing
like log(n/δ)/t²), with probability ≥ 1 − δ every level is t-accurate,
l/(1+t) ≤ l̃ ≤ (1+t) l, with #J_h of order q2 d_eff(λ_h).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._runtime.progress import progress
from .._runtime.threads import blas_limit, effective_n_jobs, numba_limit
from .._validation import check_scalar
from ..exceptions import NotPositiveDefiniteError
from .base import ScoreSampler
from .recursive import level_estimates
from .rls import _score_dtype


def bless_dictionary(Xp, kernel, lam: float, q: float, q1: float, q2: float, rng, kdiag, n_jobs=1):
    """The final dictionary (J_H, A_H) of BLESS (Algorithm 1; module docstring).

    Returns
    -------
    J : ndarray of int64
        Distinct sample positions of the dictionary (sorted).
    a : ndarray of float64
        Their weights, the diagonal of A_H (duplicates merged: a/c for c draws).
    """
    n = kdiag.size
    kappa2 = float(kdiag.max())
    lam0 = n * kappa2
    H = max(1, math.ceil(math.log(lam0 / lam) / math.log(q))) if lam0 > lam else 1
    J = np.empty(0, dtype=np.int64)
    a = np.empty(0)
    bar = progress(H, "bless levels", unit="level")
    for h in range(1, H + 1):
        lam_h = max(lam, lam0 / q**h)
        R = max(1, math.ceil(q1 * n * min(1.0, kappa2 / lam_h)))
        cand, counts = np.unique(rng.integers(0, n, size=R), return_counts=True)
        if J.size == 0:
            est = kdiag[cand] / lam_h
        else:
            est = level_estimates(Xp, kernel, cand, J, 1.0 / np.sqrt(a), lam_h, kdiag, n_jobs)
        total = float(np.dot(counts, est))
        bar.update()
        if not total > 0:  # nothing left to explain on these candidates: keep J_{h-1}
            continue
        p = est / total  # per copy in U_h
        M = max(1, math.ceil(q2 * n * total / R))
        draws, copies = np.unique(rng.choice(cand.size, M, p=counts * p), return_counts=True)
        J = cand[draws].astype(np.int64)
        a = (R / n) * M * p[draws] / copies
    bar.close()
    return J, a


def bless_scores(Xp, kernel, lam: float, q: float, q1: float, q2: float, rng, n_jobs=1):
    """min(1, l̃_{J_H,A_H}(i, λ)) of every sample (float64, data order)."""
    kdiag = np.asarray(kernel.diag(Xp), dtype=np.float64)
    if kdiag.min() < 0:
        raise NotPositiveDefiniteError(
            f"the kernel has negative diagonal values (min {kdiag.min():g}): it is not positive "
            "semi-definite, and K + lam*I is not positive definite for a small lam; use a PSD "
            "kernel"
        )
    if not kdiag.max() > 0:  # the zero kernel: every ridge leverage score is 0
        return np.zeros(kdiag.size)
    J, a = bless_dictionary(Xp, kernel, lam, q, q1, q2, rng, kdiag, n_jobs)
    if J.size == 0:
        est = kdiag / lam
    else:
        everyone = np.arange(kdiag.size)
        est = level_estimates(Xp, kernel, everyone, J, 1.0 / np.sqrt(a), lam, kdiag, n_jobs)
    return np.minimum(1.0, est)


class BLESSSampler(ScoreSampler):
    """Landmarks ∝ BLESS ridge leverage score estimates (Rudi et al. 2018, Algorithm 1).

    Parameters
    ----------
    lam : float > 0 or "inverse-mean-norm"
        The target ridge parameter λ (no default: the schedule of levels descends to it),
        in the convention of ``rls``: the scores estimate [K (K + λI)⁻¹]_ii.
    q : float > 1, default 2
        Ratio λ_{h−1}/λ_h of successive levels.
    q1 : float > 0, default 2
        Oversampling of the uniform candidates, R_h = ⌈q1 n min(1, κ²/λ_h)⌉.
    q2 : float > 0, default 2
        Oversampling of the dictionary, M_h = ⌈q2 d_h⌉ for the estimated effective dimension d_h.
    n_jobs : int, optional
        Threads streaming the row blocks of K_{rows,J}; default: the library-wide setting
        (:func:`sparsekit._runtime.threads.effective_n_jobs`).
    mode : {"fixed", "bernoulli"}, default "fixed"
        ``"fixed"`` draws ``n_landmarks`` points ∝ the final scores without replacement.
        ``"bernoulli"`` applies Algorithm 3 to them; they are (1+t)-approximations of the ridge
        leverage scores (Theorem 1), not certified over-estimates, as for ``recursive-rls``.
    rho : float in (0, 1), default 0.1
        Failure probability ρ of the Bernoulli rule (``mode="bernoulli"``).

    Notes
    -----
    Algorithm, estimator and scaling of λ: :mod:`sparsekit.samplers.bless`. Theorem 1 of Rudi
    et al. (2018) asks for q1 and q2 growing like log(n/δ)/t², far more than needed in
    practice; the defaults q1 = q2 = 2 are the oversampling factor ``qbar = 2`` of the
    authors' code (LCSL/bless), which uses one factor for both draws. With them the scores
    are rough (on a 300-point Gaussian mixture at λ = 1, the worst score of a run was off the
    exact one by a factor of up to about 5) but the draw still favours the high-leverage
    points; raise q1 and q2 for sharper scores (q1 = q2 = 32 kept every score within a
    factor 2 there).
    """

    name = "bless"

    def __init__(
        self,
        lam: float | str,
        q: float = 2.0,
        q1: float = 2.0,
        q2: float = 2.0,
        n_jobs: int | None = None,
        mode: str = "fixed",
        rho: float = 0.1,
    ):
        self.lam: float | str = lam
        self.q: float = q
        self.q1: float = q1
        self.q2: float = q2
        self.n_jobs: int | None = n_jobs
        self.mode: str = mode
        self.rho: float = rho
        self._check_common()
        self._check_constants()

    def _check_constants(self):
        check_scalar(self.q, "q", low=1.0, low_inclusive=False)
        check_scalar(self.q1, "q1", low=0.0, low_inclusive=False)
        check_scalar(self.q2, "q2", low=0.0, low_inclusive=False)
        if self.n_jobs is not None:
            check_scalar(self.n_jobs, "n_jobs", kind=numbers.Integral, low=1, low_inclusive=True)

    def _scores(self, Xp, kernel, lam, rng, n_landmarks=None):
        self._check_constants()
        n_jobs = effective_n_jobs(self.n_jobs)
        with numba_limit(1), blas_limit(1):
            scores = bless_scores(
                Xp, kernel, float(lam), float(self.q), float(self.q1), float(self.q2), rng, n_jobs
            )
        return scores.astype(_score_dtype(Xp), copy=False)


__all__ = ["BLESSSampler"]
