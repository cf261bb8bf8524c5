"""Drawing landmark indices from scores (pure array functions).

- :func:`fixed_size`: exactly ``s`` indices ∝ scores, without replacement (the Chapter 3
  experiments of the Cherfaoui thesis draw ``np.random.choice(n, s, replace=False, p=l/Σl)``).
  We use the equivalent exponential-key form of successive weighted draws (Efraimidis &
  Spirakis 2006): key_i = log(u_i) / w_i, keep the ``s`` largest keys, in O(n).
- :func:`bernoulli`: Algorithm 3 of the thesis (Musco & Musco 2017): keep i independently with
  probability p_i = min(1, 16 l_i log(Σ_j l_j / ρ)), natural logarithm (the thesis, §3.2, leaves
  the base implicit).

Both return ``(indices, weights)`` with sorted int64 indices and the inverse inclusion
probabilities as float64 weights (1 / p_i for the Bernoulli rule; 1 / min(1, s q_i), q = w / Σw,
the first-order inclusion probability, for fixed-size draws).
"""

from __future__ import annotations

import numpy as np


def normalized(scores: np.ndarray) -> np.ndarray:
    """Scores as a probability vector (negative rounding noise clipped at 0)."""
    w = np.clip(np.asarray(scores, dtype=np.float64), 0.0, None)
    total = w.sum()
    if not np.isfinite(total) or total <= 0:
        return np.full(w.shape, 1.0 / w.size)
    return w / total


def fixed_size(scores: np.ndarray, s: int, rng: np.random.Generator):
    """``s`` distinct indices drawn ∝ ``scores`` (successive draws without replacement).

    When fewer than ``s`` scores are positive, all positive-score points are kept and the rest
    are drawn uniformly among the zero-score points (they are drawn last in successive draws).
    """
    q = normalized(scores)
    n = q.size
    u = rng.random(n)
    with np.errstate(divide="ignore"):
        keys = np.where(q > 0, np.log(u) / np.where(q > 0, q, 1.0), -np.inf)
    positive = int(np.count_nonzero(q > 0))
    if positive >= s:
        idx = np.argpartition(-keys, s - 1)[:s] if s < n else np.arange(n)
    else:
        zero = np.flatnonzero(q <= 0)
        idx = np.concatenate([np.flatnonzero(q > 0), rng.choice(zero, s - positive, replace=False)])
    idx = np.sort(idx).astype(np.int64)
    incl = np.minimum(1.0, s * q[idx])
    weights = 1.0 / np.where(incl > 0, incl, 1.0 / n)
    return idx, weights


def bernoulli_probabilities(scores: np.ndarray, rho: float) -> np.ndarray:
    """p_i = min(1, 16 l_i log(Σ_j l_j / ρ)) (Algorithm 3).

    The log factor is floored at 1: when Σ l < e ρ the printed factor is below 1 (or negative)
    and would make p vanish, a regime where the theorem's rank bound is vacuous anyway.
    """
    lev = np.clip(np.asarray(scores, dtype=np.float64), 0.0, None)
    factor = max(1.0, float(np.log(lev.sum() / rho))) if lev.sum() > 0 else 1.0
    return np.minimum(1.0, 16.0 * factor * lev)


def bernoulli(scores: np.ndarray, rho: float, rng: np.random.Generator):
    """Independent inclusions with the probabilities of :func:`bernoulli_probabilities`.

    An empty draw (possible only when every p_i is small) returns the single point with the
    largest probability, since a Nyström approximation needs at least one landmark.
    """
    p = bernoulli_probabilities(scores, rho)
    idx = np.flatnonzero(rng.random(p.size) < p).astype(np.int64)
    if idx.size == 0:
        idx = np.array([int(np.argmax(p))], dtype=np.int64)
    return idx, 1.0 / np.maximum(p[idx], np.finfo(np.float64).tiny)
