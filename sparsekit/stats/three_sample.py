"""The three-sample test and its evaluation harness (Cherfaoui thesis, Ch. 4, §4.6).

Given X ~ P_X, Z ~ P_Z (P_X ≠ P_Z) and W drawn from one of them, decide W ~ P_X iff
D(X, W) ≤ D(Z, W), D an MMD estimate (no threshold, no permutations). Algorithm 3S-eval
estimates the error of that decision: at each repetition draw W, X ~ P_X and Z ~ P_Z (all of
size n), count an error when D(X, W) > D(Z, W); report the error rate, the distance to the
exact MMD ``Δ = |D̂(X, Z) − MMD_k(X, Z)|`` (on MMD, i.e. √MMD², where the exact MMD is
affordable) and the time.

Estimators (``method``): ``"exact"`` (biased V-statistic), ``"unbiased"`` (U-statistic),
``"linear"`` (Gretton's paired statistic), ``"linear-subsample"`` (the thesis's √n-subsample
"linear MMD"), ``"block"`` (B-test), ``"rff"`` (random Fourier features, one draw shared by
both distances) and ``"nystrom"`` (landmarks drawn once on X ∪ Z ∪ W and shared).
The decision compares MMD² values, which orders like MMD where both are ≥ 0 and stays defined
for the unbiased estimators' negative values.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._runtime.threads import n_jobs_limit
from .._typing import DataLike, RandomStateLike
from .._validation import check_option, check_random_state, check_scalar
from ..components import resolve
from ..registry import Registry
from ._data import Pooled
from .exact import kernel_sums, u_statistic, v_statistic
from .linear import block_values, linear_terms, subsample_statistic
from .nystrom import NystromMMD
from .rff import check_rff_kernel, rff_features

METHODS = ("exact", "unbiased", "linear", "linear-subsample", "block", "rff", "nystrom")
#: options each method accepts (passed as keyword arguments)
METHOD_OPTIONS = {
    "exact": ("max_memory",),
    "unbiased": ("max_memory",),
    "linear": (),
    "linear-subsample": (),
    "block": ("block_size",),
    "rff": ("n_frequencies",),
    "nystrom": ("sampler", "sampler_params", "n_landmarks", "lam"),
}


def check_method(method) -> str:
    return check_option(method, "method", METHODS)


def _check_options(method, options):
    unknown = sorted(set(options) - set(METHOD_OPTIONS[method]))
    if unknown:
        raise TypeError(
            f"method {method!r} takes no option(s) {unknown}; its options are "
            f"{list(METHOD_OPTIONS[method])}"
        )


class PairStatistic:
    """An MMD² estimator bound to a pool: ``fit(rng)`` draws what the pairs share, then
    ``value(i, j)`` estimates MMD² between samples i and j of the pool."""

    def __init__(self, method, pool: Pooled, options, registry=None):
        self.method = check_method(method)
        self.registry = registry
        _check_options(self.method, options)
        self.pool = pool
        self.options = dict(options)
        if self.method == "rff":
            check_rff_kernel(pool.kernel)

    def fit(self, rng):
        self.rng = rng
        if self.method == "nystrom":
            est = NystromMMD(kernel=self.pool.kernel, registry=self.registry, **self.options)
            self.nystrom = est._fit_pool(self.pool, random_state=rng)
        elif self.method == "rff":
            Psi, _ = rff_features(self.pool, self.options.get("n_frequencies"), rng)
            off = self.pool.offsets
            self.means = [
                Psi[off[i] : off[i + 1]].mean(axis=0) for i in range(len(self.pool.sizes))
            ]
        return self

    def value(self, i, j) -> float:
        m, pool = self.method, self.pool
        n_i, n_j = pool.sizes[i], pool.sizes[j]
        if m == "nystrom":
            return self.nystrom.mmd2(i, j)
        if m == "rff":
            d = self.means[i] - self.means[j]
            return float(d @ d)
        if m in ("exact", "unbiased"):
            sums = kernel_sums(pool, i, j, self.options.get("max_memory"))
            return v_statistic(sums, n_i, n_j) if m == "exact" else u_statistic(sums, n_i, n_j)
        if m == "linear":
            return float(linear_terms(pool, i, j).mean())
        if m == "linear-subsample":
            return subsample_statistic(pool, i, j, self.rng)
        return float(block_values(pool, i, j, self.options.get("block_size")).mean())


@dataclass(frozen=True)
class ThreeSampleResult:
    """Decision of the three-sample test.

    Parameters
    ----------
    w_from_x : bool
        True when W is assigned to P_X (D(X, W) ≤ D(Z, W)).
    mmd2_xw, mmd2_zw : float
        The two MMD² estimates compared.
    method : str
        The estimator used.

    Attributes
    ----------
    w_from_x : bool
        True when W is assigned to P_X (D(X, W) ≤ D(Z, W)).
    mmd2_xw, mmd2_zw : float
        The two MMD² estimates compared.
    method : str
        The estimator used.
    """

    w_from_x: bool
    mmd2_xw: float
    mmd2_zw: float
    method: str


def three_sample_test(
    X: DataLike,
    Z: DataLike,
    W: DataLike,
    method: str = "nystrom",
    kernel: str | object = "rbf",
    *,
    kernel_params: dict[str, Any] | None = None,
    random_state: RandomStateLike = None,
    n_jobs: int | None = None,
    registry: Registry | None = None,
    **options: Any,
) -> ThreeSampleResult:
    """Decide whether W comes from the distribution of X or of Z.

    W ~ P_X iff D(X, W) ≤ D(Z, W), with D the MMD estimate of ``method``.

    Parameters
    ----------
    X, Z, W : array-like of shape (n, d), or sequences of graphs
        The reference samples X and Z, and the sample W to assign.
    method : str, default "nystrom"
        One of ``METHODS`` (module docstring).
    kernel : str or kernel object, default "rbf"
        A data-dependent bandwidth is resolved once on X ∪ Z ∪ W.
    kernel_params : dict, optional
        Parameters of a named kernel.
    random_state : None, int or numpy.random.Generator
        Seeds the estimator.
    n_jobs : int, optional
        Threads (default: the library-wide thread setting).
    registry : Registry, optional
        Where kernel and sampler names are resolved (default: the process-wide registry).
    **options
        The method's options: ``n_landmarks``, ``sampler``, ``sampler_params``, ``lam``
        (nystrom), ``n_frequencies`` (rff), ``block_size`` (block), ``max_memory`` (exact).

    Returns
    -------
    ThreeSampleResult
        The decision and the two estimates.
    """
    method = check_method(method)
    pool = Pooled(
        [X, Z, W],
        resolve("kernel", kernel, kernel_params, registry=registry),
        names=["X", "Z", "W"],
    )
    with n_jobs_limit(n_jobs):
        stat = PairStatistic(method, pool, options, registry).fit(check_random_state(random_state))
        d_x, d_z = stat.value(0, 2), stat.value(1, 2)
    return ThreeSampleResult(bool(d_x <= d_z), d_x, d_z, method)


def _sqrt0(v):
    return float(np.sqrt(max(v, 0.0)))


def three_sample_error(
    sample_x: Callable[[int, np.random.Generator], Any],
    sample_z: Callable[[int, np.random.Generator], Any],
    sizes: Iterable[int],
    methods: Iterable[str] = ("exact", "linear", "block", "rff", "nystrom"),
    *,
    n_repetitions: int = 100,
    kernel: str | object = "rbf",
    kernel_params: dict[str, Any] | None = None,
    method_options: Mapping[str, Mapping[str, Any]] | None = None,
    exact_max_n: int = 5000,
    random_state: RandomStateLike = None,
    n_jobs: int | None = None,
    registry: Registry | None = None,
) -> list[dict]:
    """Algorithm 3S-eval: error rate, Δ to the exact MMD and time of three-sample tests.

    Parameters
    ----------
    sample_x, sample_z : callables ``(n, rng) -> sample``
        Draw n points (an array, or a list of graphs) from P_X and from P_Z.
    sizes : iterable of int
        Sample sizes n (X, Z and W all have n points).
    methods : iterable of str
        Estimators to evaluate (``METHODS``); each sees the same draws.
    n_repetitions : int, default 100
        Independent draws of X, Z and W per sample size.
    kernel : str or kernel object, default "rbf"
        A data-dependent bandwidth is resolved on X ∪ Z ∪ W at every repetition and shared by
        all methods.
    kernel_params : dict, optional
        Parameters of a named kernel.
    method_options : dict, optional
        ``{method: {option: value}}``, e.g. ``{"nystrom": {"sampler": "dac-rls"}}``.
    exact_max_n : int, default 5000
        The exact MMD (for Δ, and the ``"exact"``/``"unbiased"`` methods) is computed only
        for n ≤ exact_max_n; beyond, those methods are skipped and Δ is NaN.
    random_state : None, int or numpy.random.Generator
        Seeds the draws and the estimators.
    n_jobs : int, optional
        Threads (default: the library-wide thread setting).
    registry : Registry, optional
        Where kernel and sampler names are resolved (default: the process-wide registry).

    Returns
    -------
    list of dict
        One row per (method, n): ``method``, ``n``, ``error`` (fraction of repetitions where
        D(X, W) > D(Z, W)), ``error_se`` (its standard error), ``delta`` (mean Δ, NaN without
        the exact MMD), ``time`` (mean seconds to compute the two distances),
        ``n_repetitions``.
    """
    methods = [check_method(m) for m in methods]
    method_options = dict(method_options or {})
    for m, opts in method_options.items():
        _check_options(check_method(m), opts)
    reps = check_scalar(
        n_repetitions, "n_repetitions", kind=numbers.Integral, low=1, low_inclusive=True
    )
    rng = check_random_state(random_state)
    base_kernel = resolve("kernel", kernel, kernel_params, registry=registry)
    rows = []
    for n in sizes:
        n = check_scalar(n, "n", kind=numbers.Integral, low=2, low_inclusive=True)
        with_exact = n <= exact_max_n
        active = [m for m in methods if with_exact or m not in ("exact", "unbiased")]
        errors = {m: [] for m in active}
        deltas = {m: [] for m in active}
        times = {m: [] for m in active}
        for _ in range(reps):
            W, X, Z = sample_x(n, rng), sample_x(n, rng), sample_z(n, rng)
            pool = Pooled([X, Z, W], resolve("kernel", base_kernel), names=["X", "Z", "W"])
            with n_jobs_limit(n_jobs):
                exact_xz = (
                    _sqrt0(v_statistic(kernel_sums(pool, 0, 1), n, n)) if with_exact else np.nan
                )
                for m in active:
                    stat = PairStatistic(m, pool, method_options.get(m, {}), registry)
                    t0 = time.perf_counter()
                    stat.fit(rng)
                    d_x, d_z = stat.value(0, 2), stat.value(1, 2)
                    times[m].append(time.perf_counter() - t0)
                    errors[m].append(d_x > d_z)
                    if with_exact:
                        deltas[m].append(abs(_sqrt0(stat.value(0, 1)) - exact_xz))
        for m in active:
            err = float(np.mean(errors[m]))
            rows.append(
                {
                    "method": m,
                    "n": n,
                    "error": err,
                    "error_se": float(np.sqrt(err * (1 - err) / reps)),
                    "delta": float(np.mean(deltas[m])) if deltas[m] else float("nan"),
                    "time": float(np.mean(times[m])),
                    "n_repetitions": reps,
                }
            )
    return rows


__all__ = ["three_sample_test", "three_sample_error", "ThreeSampleResult", "METHODS"]
