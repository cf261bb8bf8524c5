"""Recursive ridge-leverage-score sampling (Musco & Musco 2017).

Reviewed in Cherfaoui 2022, PhD thesis, §3.1.2. A random permutation defines nested uniform
subsets of sizes n, ⌈n/2⌉, ⌈n/4⌉, … (L = ⌈log₂(n/s)⌉ halvings, at least one). The coarsest
subset is the first dictionary S with weights w = 1. At each finer level, every point i of the
level gets the estimate

    l̃_i = (1/λ) max(0, k_ii − K_{i,S} (K_S + λ W⁻²)⁻¹ K_{S,i}),     W = diag(w),

and (except on the last level) the next dictionary keeps i with probability
p_i = min(1, log(s) l̃_i), weights w_i = p_i^{-1/2}. A level with an empty draw falls back to
a uniform sample of s points. The scores of the last level (all n points, capped at 1, without
the log(s) factor) are the sampler's scores; landmarks are drawn from them with the sampler's
drawing mode.

λ modes (``lam``):

- ``"adaptive"`` (Musco & Musco's choice, used by the public port): at each level
  λ = (Σ_i w_i² [K_S]_ii − Σ_{top k} eig(W K_S W)) / k, k = ⌈s / (4 log s)⌉. When ``k ≥ |S|``, or
  when rounding makes that value non-positive, λ = 1e-5 (the port's fallback constant).
- a number (or ``"inverse-mean-norm"``): the same λ at every level, so the scores estimate the
  ridge leverage scores of that λ (comparable with ``rls`` and ``dac-rls``).

s is the ``n_landmarks`` of :meth:`~sparsekit.samplers.base.ScoreSampler.sample`;
:meth:`~sparsekit.samplers.base.ScoreSampler.scores` uses ``level_size`` when given, else
⌈√n⌉. Cost Θ(n s²) (every level streams K_{level,S} in row blocks and solves with one Cholesky
factor, so memory stays O(s² + block · s)).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy.linalg import eigvalsh

from .._runtime.pools import run_blocks
from .._runtime.progress import progress
from .._runtime.threads import blas_limit, effective_n_jobs, numba_limit
from .._validation import check_scalar
from ._rls_cpu import cholesky_upper, inverse_upper, quadratic_rows
from .base import ScoreSampler
from .lam import LAM_RULES
from .rls import _gram64, _score_dtype, _stream_step

ADAPTIVE_FLOOR = 1e-5


def adaptive_lambda(SKS: np.ndarray, w: np.ndarray, k: int) -> float:
    """λ = (Σ_i w_i² [K_S]_ii − Σ top-k eigenvalues of W K_S W) / k (floored at 1e-5)."""
    size = SKS.shape[0]
    if k >= size:
        return ADAPTIVE_FLOOR
    A = SKS * w[:, None] * w[None, :]
    top = eigvalsh(A, subset_by_index=[size - k, size - 1], check_finite=False)
    lam = (float(np.dot(np.diag(SKS), w * w)) - float(np.sum(np.abs(top)))) / k
    return lam if lam > ADAPTIVE_FLOOR else ADAPTIVE_FLOOR


def level_estimates(Xp, kernel, rows, S_idx, w, lam, kdiag, n_jobs=1, K_S=None) -> np.ndarray:
    """(1/λ) max(0, k_ii − K_{i,S}(K_S + λW⁻²)⁻¹K_{S,i}) for the samples ``rows`` (float64).

    K_{rows,S} is streamed in row blocks, ``n_jobs`` blocks at a time. ``K_S`` (float64,
    overwritten), when given, is the Gram matrix of the dictionary, already evaluated.
    """
    XS = kernel.take(Xp, S_idx)
    A = _gram64(kernel, XS) if K_S is None else K_S
    A.flat[:: A.shape[0] + 1] += lam / (w * w)
    Uinv = inverse_upper(cholesky_upper(A, "K_S + lam*W^-2"))
    out = np.empty(rows.size, dtype=np.float64)
    step = _stream_step(rows.size, S_idx.size)

    def work(r0):
        part = rows[r0 : r0 + step]
        q = quadratic_rows(_gram64(kernel, kernel.take(Xp, part), XS), Uinv)
        out[r0 : r0 + step] = np.maximum(0.0, kdiag[part] - q) / lam

    run_blocks(lambda i: work(i * step), -(-rows.size // step), n_jobs=n_jobs, numba_regions=True)
    return out


def recursive_scores(
    Xp, kernel, s: int, lam, rng: np.random.Generator, n_jobs: int = 1
) -> np.ndarray:
    """Last-level recursive RLS estimates min(1, l̃_i) of every sample (float64, data order)."""
    n = kernel.n_samples(Xp)
    s = max(1, min(int(s), n))
    oversample = math.log(s) if s > 1 else 1.0
    k = max(1, math.ceil(s / (4.0 * oversample)))
    n_levels = max(1, math.ceil(math.log2(n / s))) if n > s else 1
    sizes = [n]
    for _ in range(n_levels):
        sizes.append(math.ceil(sizes[-1] / 2))
    perm = rng.permutation(n)
    kdiag = np.asarray(kernel.diag(Xp), dtype=np.float64)
    sample = np.arange(sizes[-1])  # positions in perm of the current dictionary
    w = np.ones(sample.size)

    def estimates(rows, S_idx, w):  # the level's estimates; K_S evaluated once for λ and A
        K_S = _gram64(kernel, kernel.take(Xp, S_idx))
        lam_l = adaptive_lambda(K_S, w, k) if isinstance(lam, str) else float(lam)  # "adaptive"
        return level_estimates(Xp, kernel, rows, S_idx, w, lam_l, kdiag, n_jobs, K_S)

    bar = progress(n_levels, "recursive-rls levels", unit="level")
    for level in range(n_levels - 1, 0, -1):
        rows = perm[: sizes[level]]
        S_idx = perm[sample]
        est = estimates(rows, S_idx, w)
        p = np.minimum(1.0, oversample * est)
        sample = np.flatnonzero(rng.random(rows.size) < p)
        if sample.size == 0:
            sample = np.sort(rng.choice(rows.size, min(s, rows.size), replace=False))
            w = np.full(sample.size, math.sqrt(rows.size / sample.size))
        else:
            w = 1.0 / np.sqrt(p[sample])
        bar.update()
    S_idx = perm[sample]
    everyone = np.arange(n)  # the last level holds every sample; stream them in data order
    est = estimates(everyone, S_idx, w)
    bar.update()
    bar.close()
    return np.minimum(1.0, est)


class RecursiveRLSSampler(ScoreSampler):
    """Landmarks ∝ recursive ridge leverage scores (Musco & Musco 2017).

    Parameters
    ----------
    lam : "adaptive", float > 0 or "inverse-mean-norm", default "adaptive"
        See the module docstring.
    level_size : int, optional
        The expected dictionary size s of the recursion, for
        :meth:`~sparsekit.samplers.base.ScoreSampler.scores`;
        :meth:`~sparsekit.samplers.base.ScoreSampler.sample`
        uses its ``n_landmarks`` (in Bernoulli mode without a cap: ``level_size`` or ⌈√n⌉).
    n_jobs : int, optional
        Threads streaming the row blocks of K_{level,S}; default: the library-wide setting
        (:func:`sparsekit.thread_limit`, else every usable CPU).
    mode : {"fixed", "bernoulli"}, default "fixed"
        ``"fixed"`` is the last level of Musco & Musco's algorithm (s points ∝ scores, without
        replacement). ``"bernoulli"`` applies Algorithm 3 to the last-level scores, which are
        constant-factor estimates (not certified over-estimates) of the ridge leverage scores.
    rho : float in (0, 1), default 0.1
        Failure probability ρ of the Bernoulli rule (``mode="bernoulli"``).
    """

    name = "recursive-rls"

    def __init__(
        self,
        lam: float | str = "adaptive",
        level_size: int | None = None,
        n_jobs: int | None = None,
        mode: str = "fixed",
        rho: float = 0.1,
    ):
        self.lam: float | str = lam
        self.level_size: int | None = level_size
        self.n_jobs: int | None = n_jobs
        self.mode: str = mode
        self.rho: float = rho
        self._check_common()
        self._check_level_size()

    def _lam_rules(self):
        return LAM_RULES + ("adaptive",)

    def _check_level_size(self):
        if self.level_size is not None:
            check_scalar(
                self.level_size, "level_size", kind=numbers.Integral, low=1, low_inclusive=True
            )
        if self.n_jobs is not None:
            check_scalar(self.n_jobs, "n_jobs", kind=numbers.Integral, low=1, low_inclusive=True)

    def _scores(self, Xp, kernel, lam, rng, n_landmarks=None):
        self._check_level_size()
        n = kernel.n_samples(Xp)
        if n_landmarks is not None:
            s = n_landmarks
        elif self.level_size is not None:
            s = int(self.level_size)
        else:
            s = math.isqrt(n - 1) + 1
        n_jobs = effective_n_jobs(self.n_jobs)
        # the small factorizations on one thread; row blocks run on n_jobs threads
        with numba_limit(1), blas_limit(1):
            scores = recursive_scores(Xp, kernel, s, lam, rng, n_jobs)
        return scores.astype(_score_dtype(Xp), copy=False)


__all__ = ["RecursiveRLSSampler"]
