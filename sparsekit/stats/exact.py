"""Exact empirical MMD², computed in row blocks (memory O(block), never an (n_A + n_B)² matrix).

With samples A = {x_1..x_n} and B = {z_1..z_m} and the kernel sums S_AA = Σ_ij k(x_i, x_j),
S_BB = Σ_ij k(z_i, z_j), S_AB = Σ_ij k(x_i, z_j):

- biased V-statistic (Gretton et al. 2012, Eq. 5; Cherfaoui thesis §4.2, Eq. 4.2)::

      MMD²_b = S_AA / n² + S_BB / m² − 2 S_AB / (n m)

- unbiased U-statistic (Gretton et al. 2012, Eq. 3), the diagonals left out::

      MMD²_u = (S_AA − tr K_AA) / (n (n − 1)) + (S_BB − tr K_BB) / (m (m − 1)) − 2 S_AB / (n m)

The symmetric sums are taken over the upper block triangle (each off-diagonal block counted
twice), so the kernel is evaluated on n²/2 + m²/2 + n m pairs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._typing import DataLike
from ..components import resolve
from ..registry import Registry
from ._data import Pooled, take_rows, threads

#: Bytes of one Gram block (its rows times all the columns it is computed against).
DEFAULT_BLOCK_BYTES = 32 * 2**20


def _block_step(n_cols: int, max_memory) -> int:
    budget = DEFAULT_BLOCK_BYTES if max_memory is None else int(max_memory)
    return int(max(1, budget // max(1, 8 * n_cols)))


def sym_sum(kernel, data, r0: int, r1: int, max_memory=None) -> float:
    """Σ_ij k(x_i, x_j) over rows r0:r1 of prepared ``data`` (upper block triangle)."""
    n = r1 - r0
    step = _block_step(n, max_memory)
    total = 0.0
    for a in range(r0, r1, step):
        b = min(r1, a + step)
        Kb = np.asarray(kernel(take_rows(kernel, data, a, b), take_rows(kernel, data, a, r1)))
        diag_block = float(Kb[:, : b - a].sum(dtype=np.float64))
        rest = float(Kb[:, b - a :].sum(dtype=np.float64))
        total += diag_block + 2.0 * rest
    return total


def cross_sum(kernel, data, a0, a1, b0, b1, max_memory=None) -> float:
    """Σ_ij k(x_i, z_j) with x the rows a0:a1 and z the rows b0:b1 of ``data``."""
    step = _block_step(b1 - b0, max_memory)
    cols = take_rows(kernel, data, b0, b1)
    total = 0.0
    for a in range(a0, a1, step):
        b = min(a1, a + step)
        total += float(
            np.asarray(kernel(take_rows(kernel, data, a, b), cols)).sum(dtype=np.float64)
        )
    return total


def kernel_sums(pool: Pooled, i: int, j: int, max_memory=None):
    """(S_AA, S_BB, S_AB, tr K_AA, tr K_BB) of samples i and j of a pool."""
    k, data, off = pool.kernel, pool.data, pool.offsets
    a0, a1, b0, b1 = int(off[i]), int(off[i + 1]), int(off[j]), int(off[j + 1])
    s_aa = sym_sum(k, data, a0, a1, max_memory)
    s_bb = sym_sum(k, data, b0, b1, max_memory)
    s_ab = cross_sum(k, data, a0, a1, b0, b1, max_memory)
    tr_a = float(np.sum(k.diag(take_rows(k, data, a0, a1)), dtype=np.float64))
    tr_b = float(np.sum(k.diag(take_rows(k, data, b0, b1)), dtype=np.float64))
    return s_aa, s_bb, s_ab, tr_a, tr_b


def v_statistic(sums, n, m) -> float:
    s_aa, s_bb, s_ab, _, _ = sums
    return s_aa / (n * n) + s_bb / (m * m) - 2.0 * s_ab / (n * m)


def u_statistic(sums, n, m) -> float:
    s_aa, s_bb, s_ab, tr_a, tr_b = sums
    return (s_aa - tr_a) / (n * (n - 1)) + (s_bb - tr_b) / (m * (m - 1)) - 2.0 * s_ab / (n * m)


def _run(X, Y, kernel, kernel_params, max_memory, n_jobs, unbiased, registry):
    k = resolve("kernel", kernel, kernel_params, registry=registry)
    pool = Pooled([X, Y], k, names=["X", "Y"])
    n, m = pool.sizes
    if unbiased and min(n, m) < 2:
        raise ValueError(
            f"the unbiased MMD² needs at least two points per sample (got {n} and {m}); "
            "use mmd2_biased for single points"
        )
    with threads(n_jobs):
        sums = kernel_sums(pool, 0, 1, max_memory)
    return u_statistic(sums, n, m) if unbiased else v_statistic(sums, n, m)


def mmd2_biased(
    X: DataLike,
    Y: DataLike,
    kernel: str | object = "rbf",
    *,
    kernel_params: dict[str, Any] | None = None,
    max_memory: int | None = None,
    n_jobs: int | None = None,
    registry: Registry | None = None,
) -> float:
    """Exact biased MMD² (V-statistic) between the samples ``X`` and ``Y``.

    MMD²_b = (1/n²) Σ k(x_i, x_j) + (1/m²) Σ k(z_i, z_j) − (2/(n m)) Σ k(x_i, z_j)
    (Gretton et al. 2012, Eq. 5; Cherfaoui thesis Eq. 4.2). It is the squared RKHS distance
    between the empirical mean embeddings, hence ≥ 0 for a PSD kernel.

    Parameters
    ----------
    X, Y : array-like of shape (n, d) and (m, d), or sequences of graphs
        The two samples (sequences of graphs for a graph kernel).
    kernel : str, kernel object or function, default "rbf"
        A registered kernel name (with ``kernel_params``), a kernel object (copied) or a
        function ``k(X, Y) -> Gram``. A data-dependent bandwidth is resolved on the pooled
        samples.
    kernel_params : dict, optional
        Parameters of a named kernel (``{"gamma": 0.5}``).
    max_memory : int, optional
        Bytes of one Gram block (default 32 MiB); the memory used is O(block), the time
        O((n + m)²) kernel evaluations.
    n_jobs : int, optional
        Threads (default: the library-wide thread setting).
    registry : Registry, optional
        Where a kernel name is resolved (default: the process-wide registry).

    Returns
    -------
    float
        MMD²_b (≥ 0 for a PSD kernel).
    """
    return _run(X, Y, kernel, kernel_params, max_memory, n_jobs, False, registry)


def mmd2_unbiased(
    X: DataLike,
    Y: DataLike,
    kernel: str | object = "rbf",
    *,
    kernel_params: dict[str, Any] | None = None,
    max_memory: int | None = None,
    n_jobs: int | None = None,
    registry: Registry | None = None,
) -> float:
    """Compute the exact unbiased MMD² (U-statistic) between ``X`` and ``Y``.

    MMD²_u = Σ_{i≠j} k(x_i, x_j) / (n(n−1)) + Σ_{i≠j} k(z_i, z_j) / (m(m−1))
    − 2 Σ_ij k(x_i, z_j) / (n m) (Gretton et al. 2012, Eq. 3). Its expectation is the
    population MMD²; it can be negative. Parameters as :func:`mmd2_biased`.

    Parameters
    ----------
    X, Y : array-like of shape (n, d) and (m, d), or sequences of graphs
        The two samples, at least 2 points each.
    kernel : str or kernel object, default "rbf"
        A registered kernel name (with ``kernel_params``) or a kernel object. A data-dependent
        bandwidth is resolved on the pooled samples.
    kernel_params : dict, optional
        Parameters of a named kernel (``{"gamma": 0.5}``).
    max_memory : int, optional
        Bytes of one Gram block (default 32 MiB).
    n_jobs : int, optional
        Threads (default: the library-wide thread setting).
    registry : Registry, optional
        Where a kernel name is resolved (default: the process-wide registry).

    Returns
    -------
    float
        MMD²_u (may be negative).
    """
    return _run(X, Y, kernel, kernel_params, max_memory, n_jobs, True, registry)


__all__ = ["mmd2_biased", "mmd2_unbiased"]
