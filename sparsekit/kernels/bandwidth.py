"""Bandwidth rules for translation-invariant kernels (gamma from the data).

All rules return ``gamma`` for the form k(x, z) = exp(-gamma * ||x - z||^2).

- ``"scale"``: gamma = 1 / (d * Var(X)), scikit-learn's ``gamma="scale"`` (variance over all
  entries of X).
- ``"mean-sq-dist"``: sigma^2 = (1/n^2) sum_i sum_j ||x_i - x_j||^2, the Gaussian "variance"
  of the DAC-RLS experiments (Cherfaoui thesis §3.3, after Brefeld et al. 2006), and
  gamma = 1 / (2 sigma^2). The thesis gives sigma^2 without the kernel formula (§3.3 names a
  Gaussian kernel "of variance sigma^2" and nothing more); we read it as the variance of
  exp(-||x-z||^2 / (2 sigma^2)). The double sum is computed exactly in O(n d):
  (1/n^2) sum_ij ||x_i - x_j||^2 = 2 (mean_i ||x_i||^2 - ||mean_i x_i||^2).
- ``"median"``: the median heuristic, sigma = median of the pairwise distances ||x_i - x_j||
  (i < j) and gamma = 1 / (2 sigma^2). For n > ``max_samples`` it is computed on a random subset of
  ``max_samples`` points (seeded) so that no n x n matrix is formed.

Every rule is a deterministic function of X (the median's subset is drawn from a fixed seed).
Sparse X is read without densifying it, except the median's subset of at most ``max_samples``
rows.

Every rule is scale-equivariant: gamma(c X) = gamma(X) / c^2. The rules run on X * 2^-e, with
2^e the power of two just above ``max |X|`` (an exact scaling), and return gamma as the pair
``(g, e)``, gamma = g * 2^(-2e) (``gamma_parts_from_rule``): g does not depend on the scale
of the data, so nothing underflows or overflows on the way, even where gamma itself lies outside
the float64 range (data beyond about 1e±154, where gamma ~ 1 / max|X|^2 does not exist as a
float). The RBF kernel evaluates such a pair exactly by scaling its data by the same powers of
two; :func:`gamma_from_rule` returns the float gamma and refuses, naming the scale, where it
does not exist.
"""

from __future__ import annotations

import numpy as np

from .._typing import RandomStateLike
from .._validation import check_option, check_random_state, is_sparse

RULES = ("median", "mean-sq-dist", "scale")


def gamma_from_rule(
    X: np.ndarray, rule: str, *, max_samples: int = 2000, random_state: RandomStateLike = 0
) -> float:
    """Choose the gamma of ``exp(-gamma ||x - z||^2)`` by ``rule`` on the data ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Validated data.
    rule : {"median", "mean-sq-dist", "scale"}
        The bandwidth rule (module docstring).
    max_samples : int, default 2000
        Rows of a uniform subsample the rule reads (all rows when fewer).
    random_state : int, numpy.random.Generator or None, default 0
        Seeds the subsample.

    Returns
    -------
    float
        The gamma of ``exp(-gamma ||x - z||^2)``.

    Raises
    ------
    ValueError
        The gamma lies outside the float64 range (the message names the data's scale; see
        ``gamma_parts_from_rule`` for the exact pair).
    """
    g, e = gamma_parts_from_rule(X, rule, max_samples=max_samples, random_state=random_state)
    gamma = parts_to_float(g, e)
    if not is_normal(gamma):
        raise ValueError(out_of_range_message(rule, g, e))
    return gamma


def is_normal(gamma: float) -> bool:
    """Whether ``gamma`` is a normal float64 > 0 (neither inf nor 0 nor subnormal)."""
    return float(np.finfo(np.float64).tiny) <= gamma < np.inf


def parts_to_float(g: float, e: int) -> float:
    """g * 2^(-2e) as a float64: inf, 0.0 or subnormal where it lies outside the range."""
    with np.errstate(over="ignore", under="ignore"):
        return float(np.ldexp(np.float64(g), -2 * int(e)))


def out_of_range_message(rule, g: float, e: int) -> str:
    """Why gamma = g * 2^(-2e), chosen by ``rule``, is not a float64, and what to do."""
    log10 = np.log10(g) - 2 * e * np.log10(2.0)
    scale = np.floor((e - 1) * np.log10(2.0))  # max |x| lies in [2^(e-1), 2^e)
    return (
        f"bandwidth={rule!r} gives gamma ~ 1e{log10:+.0f} for data at scale 1e{scale:+.0f} "
        "(largest |x|), outside the float64 range (gamma ~ 1 / scale^2); rescale the data "
        "(e.g. divide it by its largest absolute value), or give gamma for the rescaled data"
    )


def gamma_parts_from_rule(
    X: np.ndarray, rule: str, *, max_samples: int = 2000, random_state=0
) -> tuple[float, int]:
    """``(g, e)`` with gamma = g * 2^(-2e) the gamma chosen by ``rule`` on the (validated) ``X``.

    ``e`` is the binary exponent of max |X| (max |X| = m 2^e, 0.5 <= m < 1; 0 for X = 0) and
    ``g`` the rule's gamma for X * 2^-e, a float of order one for any scale of X.
    """
    rule = check_option(rule, "bandwidth", RULES)
    sparse = is_sparse(X)
    X64 = X.astype(np.float64) if sparse else np.asarray(X, dtype=np.float64)
    data = X64.data if sparse else X64
    amax = float(np.abs(data).max()) if data.size else 0.0
    e = int(np.frexp(amax)[1]) if amax > 0 else 0
    if sparse:  # astype copied it
        X64.data = np.ldexp(X64.data, -e)
    else:
        X64 = np.ldexp(X64, -e)
    return _gamma(X64, rule, sparse, max_samples, random_state), e


def _gamma(X64, rule, sparse, max_samples, random_state) -> float:
    """The rule's gamma on float64 ``X64`` whose entries lie in [-1, 1]."""
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
    sq = np.einsum("ij,ij->i", X64, X64)
    D = sq[:, None] + sq[None, :] - 2.0 * (X64 @ X64.T)
    iu = np.triu_indices(n, k=1)
    med = np.median(np.sqrt(np.maximum(D[iu], 0.0)))
    if med <= 0:
        raise ValueError(
            "bandwidth='median' needs points at distinct positions (median distance is 0)"
        )
    return 1.0 / (2.0 * med * med)


__all__ = ["gamma_from_rule"]
