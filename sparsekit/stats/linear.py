"""Linear-time and block MMD² estimators (unbiased, O(n) and O(n B) kernel evaluations).

- Linear statistic (Gretton et al. 2012, §6, Lemma 14): pair the samples,
  h_i = k(x_{2i−1}, x_{2i}) + k(z_{2i−1}, z_{2i}) − k(x_{2i−1}, z_{2i}) − k(x_{2i}, z_{2i−1}),
  and MMD²_l = (1/⌊m/2⌋) Σ_i h_i with m = min(n_A, n_B). Each h_i is an unbiased estimate of
  the population MMD². The statistic is defined on pairs (x_i, z_i) of equal-size samples
  (Gretton et al. 2012, §6): for samples of different sizes the extra points of the larger one
  are not used, and the estimate warns (``UserWarning``) with their count; :func:`mmd2_block`
  and the quadratic-time statistics use every point. (An odd m leaves the last point of each
  sample out, as the definition on ⌊m/2⌋ pairs does; no warning.)
- Subsample statistic (``method="subsample"``): the "linear MMD" of Cherfaoui's thesis
  (§4.2): the exact biased MMD² between ⌈√n_A⌉ and ⌈√n_B⌉ points drawn uniformly without
  replacement, Θ(n) kernel evaluations. It is *biased* (a V-statistic on small samples); it is
  kept to reproduce the thesis's curves.
- Block statistic (B-test, Zaremba, Gretton & Blaschko 2013): both samples are split into the
  same number b of consecutive blocks (sizes differ by at most one), the unbiased MMD²_u of
  each block pair is computed and the b values are averaged. Unbiased; Θ(n B) evaluations for
  blocks of B points. Default B = max(2, round(ln n)), the s = log n budget of the thesis's
  experiments (§4.6; at least 2 because a U-statistic needs two points per block).
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

from .._runtime.threads import n_jobs_limit
from .._typing import DataLike, RandomStateLike
from .._validation import check_option, check_random_state, check_scalar
from ..components import resolve
from ..registry import Registry
from ._data import Pooled, take_rows
from .exact import kernel_sums, v_statistic

LINEAR_METHODS = ("paired", "subsample")


def _kernel_pairs(kernel, P, Q) -> np.ndarray:
    """k(P_i, Q_i) for every i (row-wise), through one small Gram per chunk."""
    n = kernel.n_samples(P)
    out = np.empty(n)
    step = 64
    for a in range(0, n, step):
        b = min(n, a + step)
        Kb = np.asarray(kernel(take_rows(kernel, P, a, b), take_rows(kernel, Q, a, b)))
        out[a:b] = np.diagonal(Kb)
    return out


def linear_terms(pool: Pooled, i: int, j: int) -> np.ndarray:
    """The h_i of Gretton's linear statistic between samples i and j of a pool."""
    k, off = pool.kernel, pool.offsets
    m = min(pool.sizes[i], pool.sizes[j]) // 2
    if m < 1:
        raise ValueError(
            "the linear MMD needs at least two points in each sample (one pair); got sizes "
            f"{pool.sizes[i]} and {pool.sizes[j]}"
        )
    if pool.sizes[i] != pool.sizes[j]:
        unused = pool.sizes[i] + pool.sizes[j] - 4 * m
        warnings.warn(
            "the linear MMD pairs the points of samples of equal size (Gretton et al. 2012, "
            f"§6): of samples of {pool.sizes[i]} and {pool.sizes[j]} points it uses {2 * m} "
            f"of each and leaves {unused} points unused; pass samples of equal size, or use "
            "mmd2_block, which uses every point",
            UserWarning,
            stacklevel=3,
        )
    xi, zi = int(off[i]), int(off[j])
    odd_x = k.take(pool.data, xi + 2 * np.arange(m))
    even_x = k.take(pool.data, xi + 2 * np.arange(m) + 1)
    odd_z = k.take(pool.data, zi + 2 * np.arange(m))
    even_z = k.take(pool.data, zi + 2 * np.arange(m) + 1)
    return (
        _kernel_pairs(k, odd_x, even_x)
        + _kernel_pairs(k, odd_z, even_z)
        - _kernel_pairs(k, odd_x, even_z)
        - _kernel_pairs(k, even_x, odd_z)
    )


def subsample_statistic(pool: Pooled, i: int, j: int, rng) -> float:
    """The thesis's linear MMD: exact biased MMD² on ⌈√n⌉-point uniform subsamples."""
    n, m = pool.sizes[i], pool.sizes[j]
    a = int(pool.offsets[i]) + np.sort(rng.choice(n, int(math.ceil(math.sqrt(n))), replace=False))
    b = int(pool.offsets[j]) + np.sort(rng.choice(m, int(math.ceil(math.sqrt(m))), replace=False))
    k = pool.kernel
    sub = Pooled.from_prepared(
        k, k.take(pool.data, np.concatenate([a, b])), (len(a), len(b)), pool.kind
    )
    return v_statistic(kernel_sums(sub, 0, 1), len(a), len(b))


def default_block_size(n: int) -> int:
    return max(2, int(round(math.log(max(int(n), 2)))))


def block_values(pool: Pooled, i: int, j: int, block_size=None) -> np.ndarray:
    """MMD²_u of every block pair of samples i and j (B-test)."""
    n, m = pool.sizes[i], pool.sizes[j]
    if block_size is None:
        B = default_block_size(max(n, m))
    else:
        B = check_scalar(block_size, "block_size", kind=numbers.Integral, low=2, low_inclusive=True)
    b = min(n, m) // B
    if b < 1:
        raise ValueError(
            f"block_size={B} is larger than the smaller sample ({min(n, m)} points); choose "
            f"2 <= block_size <= {min(n, m)}"
        )
    k, data = pool.kernel, pool.data
    xa = np.linspace(0, n, b + 1).round().astype(int) + int(pool.offsets[i])
    za = np.linspace(0, m, b + 1).round().astype(int) + int(pool.offsets[j])
    out = np.empty(b)
    for t in range(b):
        # one Gram of the block pair [X_t; Z_t] gives K_XX, K_ZZ and K_XZ in one kernel call
        rows = np.concatenate([np.arange(xa[t], xa[t + 1]), np.arange(za[t], za[t + 1])])
        p, q = xa[t + 1] - xa[t], za[t + 1] - za[t]
        K = np.asarray(
            k(data[rows] if isinstance(data, np.ndarray) else k.take(data, rows)), dtype=np.float64
        )
        d = np.diagonal(K)
        out[t] = (
            (K[:p, :p].sum() - d[:p].sum()) / (p * (p - 1))
            + (K[p:, p:].sum() - d[p:].sum()) / (q * (q - 1))
            - 2.0 * K[:p, p:].sum() / (p * q)
        )
    return out


def mmd2_linear(
    X: DataLike,
    Y: DataLike,
    kernel: str | object = "rbf",
    *,
    kernel_params: dict[str, Any] | None = None,
    method: str = "paired",
    random_state: RandomStateLike = None,
    n_jobs: int | None = None,
    registry: Registry | None = None,
) -> float:
    """Estimate the MMD² between ``X`` and ``Y`` in linear time.

    Parameters
    ----------
    X, Y : array-like of shape (n, d) and (m, d), or sequences of graphs
        The two samples (sequences of graphs for a graph kernel).
    kernel : str or kernel object, default "rbf"
        A registered kernel name (with ``kernel_params``) or a kernel object. A data-dependent
        bandwidth is resolved on the pooled samples.
    kernel_params : dict, optional
        Parameters of a named kernel (``{"gamma": 0.5}``).
    method : {"paired", "subsample"}, default "paired"
        ``"paired"``: Gretton's unbiased linear statistic (module docstring), defined on
        samples of equal size: of samples of different sizes it uses the first 2⌊m/2⌋ points
        of each (m the smaller size) and warns with the count of those left. ``"subsample"``:
        the exact biased MMD² of ⌈√n⌉-point uniform subsamples (Cherfaoui thesis §4.2).
    random_state : None, int or numpy.random.Generator
        Seeds the subsamples (``"subsample"`` only).
    n_jobs : int, optional
        Threads (default: the library-wide thread setting).
    registry : Registry, optional
        Where a kernel name is resolved (default: the process-wide registry).

    Returns
    -------
    float
        The MMD² estimate.
    """
    method = check_option(method, "method", LINEAR_METHODS)
    kernel = resolve("kernel", kernel, kernel_params, registry=registry)
    pool = Pooled([X, Y], kernel, names=["X", "Y"])
    with n_jobs_limit(n_jobs):
        if method == "paired":
            return float(linear_terms(pool, 0, 1).mean())
        return subsample_statistic(pool, 0, 1, check_random_state(random_state))


def mmd2_block(
    X: DataLike,
    Y: DataLike,
    kernel: str | object = "rbf",
    *,
    kernel_params: dict[str, Any] | None = None,
    block_size: int | None = None,
    n_jobs: int | None = None,
    registry: Registry | None = None,
) -> float:
    """Compute the block MMD² (B-test of Zaremba, Gretton & Blaschko 2013).

    Parameters
    ----------
    X, Y : array-like of shape (n, d) and (m, d), or sequences of graphs
        The two samples (sequences of graphs for a graph kernel).
    kernel : str or kernel object, default "rbf"
        A registered kernel name (with ``kernel_params``) or a kernel object. A data-dependent
        bandwidth is resolved on the pooled samples.
    kernel_params : dict, optional
        Parameters of a named kernel (``{"gamma": 0.5}``).
    block_size : int >= 2, optional
        Points per block of the smaller sample; default max(2, round(ln n)) (module docstring).
    n_jobs : int, optional
        Threads (default: the library-wide thread setting).
    registry : Registry, optional
        Where a kernel name is resolved (default: the process-wide registry).

    Returns
    -------
    float
        The mean of the unbiased MMD² of the blocks.
    """
    kernel = resolve("kernel", kernel, kernel_params, registry=registry)
    pool = Pooled([X, Y], kernel, names=["X", "Y"])
    with n_jobs_limit(n_jobs):
        return float(block_values(pool, 0, 1, block_size).mean())


__all__ = ["mmd2_linear", "mmd2_block"]
