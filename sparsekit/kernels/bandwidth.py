"""Bandwidth rules for translation-invariant kernels (gamma from the data).

All rules return ``gamma`` for the form k(x, z) = exp(-gamma * ||x - z||^2).

- ``"scale"``: gamma = 1 / (d * Var(X)), scikit-learn's ``gamma="scale"`` (variance over all
  entries of X).
- ``"mean-sq-dist"``: sigma^2 = (1/n^2) sum_i sum_j ||x_i - x_j||^2, the Gaussian "variance"
  of the DAC-RLS experiments (Cherfaoui thesis §3.3, after Brefeld et al. 2006), and
  gamma = 1 / (2 sigma^2). The thesis gives sigma^2 without the kernel formula (digest §8
  erratum 2); we read it as the variance of exp(-||x-z||^2 / (2 sigma^2)). The double sum is
  computed exactly in O(n d): (1/n^2) sum_ij ||x_i - x_j||^2 = 2 (mean_i ||x_i||^2 - ||mean_i x_i||^2).
- ``"median"``: the median heuristic, sigma = median of the pairwise distances ||x_i - x_j||
  (i < j) and gamma = 1 / (2 sigma^2). For n > ``max_samples`` it is computed on a random subset of
  ``max_samples`` points (seeded) so that no n x n matrix is formed.

Every rule is a deterministic function of X (the median's subset is drawn from a fixed seed).
Sparse X is read without densifying it, except the median's subset of at most ``max_samples``
rows.
"""
from __future__ import annotations

import numpy as np

from .._validation import check_option, check_random_state, is_sparse

RULES = ("median", "mean-sq-dist", "scale")


def gamma_from_rule(X: np.ndarray, rule: str, *, max_samples: int = 2000, random_state=0) -> float:
    """Gamma of exp(-gamma ||x - z||^2) chosen by ``rule`` on the (validated) data ``X``."""
    rule = check_option(rule, "bandwidth", RULES)
    sparse = is_sparse(X)
    X64 = X.astype(np.float64) if sparse else np.asarray(X, dtype=np.float64)
    n, d = X64.shape
    sum_sq = float(X64.multiply(X64).sum()) if sparse else float(np.einsum("ij,ij->", X64, X64))
    if rule == "scale":
        var = sum_sq / (n * d) - (float(X64.sum()) / (n * d)) ** 2 if sparse else X64.var()
        if var <= 0:
            raise ValueError("bandwidth='scale' needs X with non-zero variance")
        return 1.0 / (d * var)
    if rule == "mean-sq-dist":
        mean = np.asarray(X64.mean(axis=0)).ravel()
        sigma2 = 2.0 * (sum_sq / n - mean @ mean)
        if sigma2 <= 0:
            raise ValueError("bandwidth='mean-sq-dist' needs at least two distinct points in X")
        return 1.0 / (2.0 * sigma2)
    # median
    if n > max_samples:
        rng = check_random_state(random_state)
        X64 = X64[rng.choice(n, max_samples, replace=False)]
        n = max_samples
    if sparse:
        X64 = X64.toarray()
    if n < 2:
        raise ValueError("bandwidth='median' needs at least two points in X")
    scale = float(np.abs(X64).max()) or 1.0  # distances of X / scale cannot overflow
    Xs = X64 / scale
    sq = np.einsum("ij,ij->i", Xs, Xs)
    D = sq[:, None] + sq[None, :] - 2.0 * (Xs @ Xs.T)
    iu = np.triu_indices(n, k=1)
    med = scale * np.median(np.sqrt(np.maximum(D[iu], 0.0)))
    if med <= 0:
        raise ValueError("bandwidth='median' needs points at distinct positions (median distance is 0)")
    return 1.0 / (2.0 * med * med)
