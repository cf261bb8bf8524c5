"""Two-sample permutation tests of H0: P = Q with an MMD² statistic.

The pooled samples are relabelled at random ``n_permutations`` times; the p-value is
(1 + #{b : T_b ≥ T_obs}) / (1 + n_permutations) (Phipson & Smyth 2010), which is valid (never
below the nominal level under H0) for any number of permutations.

- ``method="nystrom"`` / ``"rff"``: the features Φ (n × s) of the pooled points are computed
  once; a permutation b with signed weights w_b (1/n_A on the relabelled A, −1/n_B on B) has
  T_b = ‖Φᵀw_b‖² (+ λ‖w_b‖² merged over equal points for Nyström), so each permutation costs
  O(n s) — batches of permutations are one GEMM W Φ. Landmarks / frequencies are drawn once,
  on the pool, before relabelling (they do not depend on the labels, so exchangeability holds).
- ``method="exact"``: T_b = w_bᵀ K w_b, the biased MMD², with the Gram matrix streamed in row
  blocks once per batch of permutations (memory O(block + n · batch)).

The permutations are drawn from ``random_state`` after one draw reserved for the features, so
two methods given the same seed use the same permutations.

Ties: T_b counts as ≥ T_obs when it is below it by at most ``1e-12 abs(T)`` (the larger of the
two) plus ``64 eps max_i abs(k(x_i, x_i))``. Each statistic is a signed sum of kernel values
(the absolute weights sum to 2), so its rounding error scales with the kernel's size, not
with T: when every labelling gives the same MMD² (identical points, MMD² = 0) the computed
values differ by rounding alone, and a tolerance relative to T only would rank that noise and
give p-values spread over (0, 1] instead of 1.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._runtime.small_blas import is_skinny, one_blas_thread
from .._runtime.threads import n_jobs_limit
from .._typing import DataLike, RandomStateLike
from .._validation import check_option, check_random_state, check_scalar
from ..components import resolve
from ..registry import Registry
from ._data import Pooled, take_rows
from .exact import _block_step
from .nystrom import NystromMMD
from .rff import check_rff_kernel, rff_features

PERMUTATION_METHODS = ("nystrom", "rff", "exact")
#: Bytes of the weight matrix of one batch of permutations.
_BATCH_BYTES = 32 * 2**20


@dataclass(frozen=True)
class PermutationTestResult:
    """Outcome of a permutation test.

    Parameters
    ----------
    statistic : float
        MMD² of the observed labelling.
    p_value : float
        Fraction of the relabellings (the observed one included) whose MMD² is at least the
        observed one.
    null_distribution : ndarray of shape (n_permutations,)
        MMD² of the relabelled samples.
    method : str
        The estimator used.

    Attributes
    ----------
    statistic : float
        MMD² of the observed labelling.
    p_value : float
        The p-value of the test.
    null_distribution : ndarray (n_permutations,)
        MMD² of the relabelled samples.
    method : str
        The estimator used.

    The repr summarizes ``null_distribution`` (count, mean, std, min, max) instead of
    printing every value.
    """

    statistic: float
    p_value: float
    null_distribution: np.ndarray
    method: str

    @property
    def n_permutations(self) -> int:
        """Relabellings drawn (the size of ``null_distribution``)."""
        return int(np.size(self.null_distribution))

    def __repr__(self):
        null = np.asarray(self.null_distribution, dtype=np.float64).ravel()
        summary = (
            f"mean={null.mean():.4g}, std={null.std():.4g}, min={null.min():.4g}, "
            f"max={null.max():.4g}"
            if null.size
            else "empty"
        )
        return (
            f"{type(self).__name__}(statistic={self.statistic:.6g}, "
            f"p_value={self.p_value:.6g}, method={self.method!r}, "
            f"n_permutations={null.size}, null_distribution=<{summary}>)"
        )


def _label_batches(rng, n_a, n, n_permutations):
    """Yield signed weight matrices (batch, n): the observed labelling first, then permutations."""
    n_b = n - n_a
    base = np.concatenate([np.full(n_a, 1.0 / n_a), np.full(n_b, -1.0 / n_b)])
    batch = int(max(1, min(n_permutations + 1, _BATCH_BYTES // (8 * n))))
    done = -1  # the observed labelling counts as the first row
    while done < n_permutations:
        b = min(batch, n_permutations - done)
        W = rng.permuted(np.broadcast_to(base, (b, n)), axis=1)
        if done < 0:
            W[0] = base
        done += b
        yield W


def _duplicate_matrix(ids):
    """Sparse (n × U) indicator of the distinct points, or None when all points differ."""
    uniq, inverse = np.unique(ids, return_inverse=True)
    if len(uniq) == len(ids):
        return None
    from scipy import sparse

    n = len(ids)
    return sparse.csr_matrix((np.ones(n), (np.arange(n), inverse.ravel())), shape=(n, len(uniq)))


def _feature_statistics(Phi, W, lam=0.0, dup=None):
    with one_blas_thread(is_skinny(W.shape[0], Phi.shape[1])):
        S = W @ Phi
    T = np.einsum("ij,ij->i", S, S)
    if lam:
        if dup is None:
            T += lam * np.einsum("ij,ij->i", W, W)
        else:
            V = np.asarray((dup.T @ W.T).T)
            T += lam * np.einsum("ij,ij->i", V, V)
    return T


def _exact_statistics(pool, W, max_memory):
    k, n = pool.kernel, pool.n
    step = _block_step(n, max_memory)
    T = np.zeros(W.shape[0])
    skinny = is_skinny(W.shape[0])
    for a in range(0, n, step):
        b = min(n, a + step)
        Kb = np.asarray(k(take_rows(k, pool.data, a, b), pool.data), dtype=np.float64)
        with one_blas_thread(skinny):  # only the product: the kernel runs its own threads
            KW = Kb @ W.T
        T += np.einsum("br,rb->b", W[:, a:b], KW)
    return T


def permutation_test(
    X: DataLike,
    Y: DataLike,
    method: str = "nystrom",
    kernel: str | object = "rbf",
    *,
    kernel_params: dict[str, Any] | None = None,
    n_permutations: int = 500,
    n_landmarks: int | None = None,
    sampler: str | object = "uniform",
    sampler_params: dict[str, Any] | None = None,
    lam: float = 1e-6,
    n_frequencies: int | None = None,
    max_memory: int | None = None,
    random_state: RandomStateLike = None,
    n_jobs: int | None = None,
    registry: Registry | None = None,
) -> PermutationTestResult:
    """Two-sample permutation test of P = Q with an MMD² statistic (module docstring).

    Parameters
    ----------
    X, Y : array-like of shape (n, d) and (m, d), or sequences of graphs
        The two samples (sequences of graphs for a graph kernel).
    method : {"nystrom", "rff", "exact"}, default "nystrom"
        The MMD² estimator.
    kernel : str or kernel object, default "rbf"
        A registered kernel name (with ``kernel_params``) or a kernel object. A data-dependent
        bandwidth is resolved on the pooled samples.
    kernel_params : dict, optional
        Parameters of a named kernel (``{"gamma": 0.5}``).
    n_permutations : int, default 500
        Random relabellings of the pooled sample.
    n_landmarks : int, optional
        Nyström option (see :class:`sparsekit.stats.NystromMMD`).
    sampler : str or sampler object, default "uniform"
        Nyström option.
    sampler_params : dict, optional
        Nyström option.
    lam : float, default 1e-6
        Nyström option.
    n_frequencies : int, optional
        Random-feature option (see :func:`sparsekit.stats.mmd2_rff`).
    max_memory : int, optional
        Bytes of one Gram block (exact method).
    random_state : None, int or numpy.random.Generator
        Seeds the relabellings and the estimator.
    n_jobs : int, optional
        Threads (default: the library-wide thread setting).
    registry : Registry, optional
        Where kernel and sampler names are resolved (default: the process-wide registry).

    Returns
    -------
    PermutationTestResult
        The statistic, p-value and null distribution.
    """
    method = check_option(method, "method", PERMUTATION_METHODS)
    P = check_scalar(
        n_permutations, "n_permutations", kind=numbers.Integral, low=1, low_inclusive=True
    )
    kernel = resolve("kernel", kernel, kernel_params, registry=registry)
    if method == "rff":
        check_rff_kernel(kernel)
    pool = Pooled([X, Y], kernel, names=["X", "Y"])
    rng = check_random_state(random_state)
    feature_seed = int(rng.integers(2**63))
    n_a, n = pool.sizes[0], pool.n
    if min(pool.sizes) < 1:
        raise ValueError("both samples need at least one point")
    with n_jobs_limit(n_jobs):
        if method == "nystrom":
            est = NystromMMD(
                kernel=pool.kernel,
                sampler=sampler,
                sampler_params=sampler_params,
                n_landmarks=n_landmarks,
                lam=lam,
                registry=registry,
            )
            est._fit_pool(pool, feature_seed, features=True)
            Phi = est._feature_matrix()
            dup = None if est._distinct else _duplicate_matrix(est.support_ids_)

            def stats(W):
                return _feature_statistics(Phi, W, est.lam_, dup)
        elif method == "rff":
            Phi, _ = rff_features(pool, n_frequencies, feature_seed)

            def stats(W):
                return _feature_statistics(Phi, W)
        else:

            def stats(W):
                return _exact_statistics(pool, W, max_memory)

        values = np.concatenate([stats(W) for W in _label_batches(rng, n_a, n, P)])
    observed, null = float(values[0]), values[1:]
    k_max = float(np.max(np.abs(pool.kernel.diag(take_rows(pool.kernel, pool.data, 0, n)))))
    tol = 1e-12 * max(abs(observed), np.abs(null).max(initial=0.0))
    tol += 64 * np.finfo(np.float64).eps * k_max
    p_value = (1.0 + np.count_nonzero(null >= observed - tol)) / (1.0 + P)
    return PermutationTestResult(observed, float(p_value), null, method)


__all__ = ["permutation_test", "PermutationTestResult"]
