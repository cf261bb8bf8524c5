"""Greedy minimization of the residual trace tr(K − K̃) (column selection for Nyström).

Source: the poster ``004_f485d991a0373726`` (greedy approximate residual-trace minimization for
kernel k-means). With S the selected set, P_S the orthogonal projector onto span{φ(x_i), i ∈ S}
and K̃ = Φ*P_SΦ (the Nyström approximation of K on S), the poster's lemma gives the greedy step

    argmin_s tr(K − K̃_{S∪{s}}) = argmax_s ‖Φ*P_S^⊥ φ(x_s)‖² / ‖P_S^⊥ φ(x_s)‖²
                               = argmax_s ‖R e_s‖² / R_ss,        R = K − K̃_S,

over the points with R_ss > 0. R = K − CᵀC is kept through the rows c_k of a pivoted Cholesky
factor: c_k = R e_j / √R_jj for the chosen j, and R ← R − c_k c_kᵀ.

- **Exact form** (``approximate=False``): ‖R e_i‖² is updated as
  ‖R e_i‖² − 2 c_i (R c)_i + c_i² ‖c‖², which needs K c (one pass over K in row blocks per step):
  Θ(n² l) kernel evaluations, O(n l) memory (``cache_gram=True`` keeps K, n² floats, instead).
  Touches the data only through the kernel, so it works with graph kernels.
- **Approximate form** (``approximate=True``, the poster's algorithm): the kernel feature map is
  replaced by f random Fourier features Ψ (n × f) and the numerator by its sketch
  ‖Ξᵀ (ΨΨᵀ − CᵀC) e_i‖² with Ξ ∈ ℝ^{n×ξ}, Ξ_ij ~ N(0, 1/ξ). D = (ΨΨᵀ − CᵀC)Ξ is kept (poster: M − N)
  and each step costs Θ(n (f + l + ξ)): time Θ(n l (f + l + ξ)), memory Θ(n (l + f + ξ)). Needs
  the raw vectors and a shift-invariant kernel (rbf or laplacian).

Decisions: a point is selectable while its residual diagonal exceeds 1e-12 max_i K_ii. The
poster's test is "P > 10ε"; we make it relative to the kernel's scale, and larger, because P is
updated by subtraction (P_i − Σ_k c_k[i]²) and carries a cancellation error of a few ε·K_ii per
step, which 10ε would mistake for a residual; ties of the criterion (within 1e-12 relative)
are broken uniformly at random as in the poster. When no point is selectable any more (the
residual trace is numerically 0) the selection stops early with a warning. Landmarks are
returned in selection order, so every prefix is the greedy solution of its size.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np

from .._random_features import random_fourier_map
from .._runtime.memory import check_allocation, dense_gram_bytes
from .._runtime.pools import run_blocks
from .._runtime.progress import iterate
from .._runtime.small_blas import one_blas_thread
from .._runtime.threads import effective_n_jobs
from .._typing import RandomStateLike
from .._validation import check_random_state, check_scalar
from ._greedy_cpu import exact_step, sketch_step
from .base import Landmarks, Sampler, check_n_landmarks
from .rls import _gram64, _row_step

_TIE_RTOL = 1e-12
#: the exact form warns above this many kernel evaluations (n² per landmark): about 30 s at the
#: 3 ns per RBF evaluation measured on 20,000 rows (61 s for 50 landmarks, 250 s for 100)
WARN_EVALUATIONS = 10**10
#: a residual diagonal below this fraction of max_i K_ii counts as zero
SELECTABLE_RTOL = 1e-12


def _pick(crit: np.ndarray, rng: np.random.Generator) -> int:
    """Index of the maximal criterion, ties broken at random; −1 when nothing is selectable."""
    best = crit.max()
    if not np.isfinite(best):
        return -1
    cand = np.flatnonzero(crit >= best - _TIE_RTOL * abs(best))
    return int(cand[0]) if cand.size == 1 else int(rng.choice(cand))


def greedy_sketch_select(
    Psi: np.ndarray, Xi: np.ndarray, n_select: int, rng: np.random.Generator
) -> np.ndarray:
    """The poster's greedy selection on explicit features ``Psi`` (n, f) with sketch ``Xi`` (n, ξ).

    Returns the selected row indices (int64, selection order; fewer than ``n_select`` when the
    residual vanishes first).
    """
    Psi = np.ascontiguousarray(Psi, dtype=np.float64)
    Xi = np.ascontiguousarray(Xi, dtype=np.float64)
    n = Psi.shape[0]
    P = np.einsum("ij,ij->i", Psi, Psi)
    thr = SELECTABLE_RTOL * max(float(P.max()), np.finfo(np.float64).tiny)
    D = Psi @ (Psi.T @ Xi)  # M = ΨΨᵀΞ, O(n f ξ)
    crit = np.where(P > thr, np.einsum("ij,ij->i", D, D) / np.where(P > thr, P, 1.0), -np.inf)
    C = np.zeros((n_select, n))
    chosen = []
    n_jobs = effective_n_jobs()
    with one_blas_thread():  # a step's products are matrix-vector products
        for k in range(n_select):
            j = _pick(crit, rng)
            if j < 0:
                break
            c = Psi @ Psi[j]
            if k:
                c -= C[:k].T @ C[:k, j]
            c /= np.sqrt(P[j])
            c[~(P > thr)] = 0.0
            u = Xi.T @ c
            sketch_step(D, P, c, u, thr, crit, n_jobs)
            P[j] = -np.inf
            crit[j] = -np.inf
            C[k] = c
            chosen.append(j)
    return np.asarray(chosen, dtype=np.int64)


def check_positive_diagonal(P, kernel):
    """A ``ValueError`` when no k(x_i, x_i) is positive: the residual trace tr(K) is then 0 from
    the start, and the greedy criterion ‖R e_s‖² / R_ss has no selectable point."""
    if not (P.size and P.max() > 0):
        name = getattr(kernel, "name", type(kernel).__name__)
        raise ValueError(
            f"greedy-trace cannot select landmarks: the kernel diagonal k(x_i, x_i) is zero for "
            f"every point (kernel {name!r}, max {float(P.max(initial=0.0)):g}), so the residual "
            "trace tr(K - K~) is 0 before any selection. This happens with the linear kernel "
            "on all-zero data and always with 'additive-chi2' (k(x, x) = 0); use a kernel with "
            "a positive diagonal, or another sampler such as 'uniform'"
        )


def greedy_exact_select(
    Xp, kernel, n_select: int, rng: np.random.Generator, cache_gram: bool = False, n_jobs: int = 1
) -> np.ndarray:
    """Exact greedy residual-trace selection through the kernel (indices in selection order).

    Without ``cache_gram`` every step streams K in row blocks, ``n_jobs`` blocks at a time.
    """
    n = kernel.n_samples(Xp)
    if cache_gram:
        check_allocation(
            dense_gram_bytes(n),
            f"greedy-trace with cache_gram=True on {n} samples",
            "use cache_gram=False, which streams the Gram matrix in row blocks",
        )
    K = _gram64(kernel, Xp) if cache_gram else None
    step = _row_step(n)

    starts = range(0, n, step)

    def block(r0):
        rows = np.arange(r0, min(n, r0 + step))
        return rows, _gram64(kernel, kernel.take(Xp, rows), Xp)

    def matvec(v):
        if K is not None:
            return K @ v
        out = np.empty(n)

        def work(r0):
            rows, Kb = block(r0)
            out[rows] = Kb @ v

        run_blocks(lambda i: work(starts[i]), len(starts), n_jobs=n_jobs, numba_regions=True)
        return out

    P = np.array(kernel.diag(Xp), dtype=np.float64)
    check_positive_diagonal(P, kernel)
    thr = SELECTABLE_RTOL * max(float(P.max()), np.finfo(np.float64).tiny)
    if K is not None:
        num = np.einsum("ij,ij->i", K, K)
    else:
        num = np.empty(n)

        def sq_norms(r0):
            rows, Kb = block(r0)
            num[rows] = np.einsum("ij,ij->i", Kb, Kb)

        run_blocks(lambda i: sq_norms(starts[i]), len(starts), n_jobs=n_jobs, numba_regions=True)
    crit = np.where(P > thr, num / np.where(P > thr, P, 1.0), -np.inf)
    C = np.zeros((n_select, n))
    chosen = []
    # a step's products are matrix-vector products and a one-column Gram block (``matvec``'s
    # row blocks run on ``n_jobs`` threads, resolved before)
    with one_blas_thread():
        for k in iterate(range(n_select), "greedy-trace landmarks", unit="landmark"):
            j = _pick(crit, rng)
            if j < 0:
                break
            col = (
                K[:, j].copy()
                if K is not None
                else _gram64(kernel, Xp, kernel.take(Xp, np.array([j])))[:, 0]
            )
            c = col - C[:k].T @ C[:k, j] if k else col
            c /= np.sqrt(P[j])
            c[~(P > thr)] = 0.0
            Rc = matvec(c)
            if k:
                Rc -= C[:k].T @ (C[:k] @ c)
            exact_step(num, P, c, Rc, float(c @ c), thr, crit, n_jobs)
            P[j] = -np.inf
            crit[j] = -np.inf
            C[k] = c
            chosen.append(j)
    return np.asarray(chosen, dtype=np.int64)


class _Accepts:
    """``accepts`` of the class (what the sampler can take with some parameters) or instance."""

    def __get__(self, obj, cls):
        if obj is None or not obj.approximate:
            return ("vectors", "graphs")
        return ("vectors",)


class GreedyTraceSampler(Sampler):
    """Landmarks by greedy minimization of the residual trace tr(K − K̃).

    Parameters
    ----------
    approximate : bool, default False
        Use the poster's random-feature and sketch approximation (vectors, rbf/laplacian only).
    n_features : int, default 64
        The number f of random Fourier features (even: cos/sin pairs) of the approximate form.
    sketch_size : int, default 64
        The number ξ of columns of the Gaussian sketch Ξ of the approximate form.
    cache_gram : bool, default False
        Exact form only: keep the n×n Gram matrix in memory instead of re-evaluating it in row
        blocks at every step (faster for small n, n² floats of memory).

    Notes
    -----
    Exact: Θ(n² l) kernel evaluations for l landmarks (the Gram matrix, streamed once per
    landmark), with a ``UserWarning`` naming the cheaper choices when n² l exceeds
    ``WARN_EVALUATIONS`` (10¹⁰, about half a minute); the steps report through
    :func:`sparsekit.show_progress`. Approximate: Θ(n l (f + l + ξ)) (see the module docstring).
    Deterministic up to ties, except for the random features and sketch of the approximate form.
    """

    name = "greedy-trace"
    accepts = _Accepts()

    def __init__(
        self,
        approximate: bool = False,
        n_features: int = 64,
        sketch_size: int = 64,
        cache_gram: bool = False,
    ):
        self.approximate: bool = approximate
        self.n_features: int = n_features
        self.sketch_size: int = sketch_size
        self.cache_gram: bool = cache_gram
        self._check_params()

    def _check_params(self):
        for flag in ("approximate", "cache_gram"):
            if not isinstance(getattr(self, flag), (bool, np.bool_)):
                raise TypeError(f"{flag} must be True or False, got {getattr(self, flag)!r}")
        f = check_scalar(
            self.n_features, "n_features", kind=numbers.Integral, low=2, low_inclusive=True
        )
        if f % 2:
            raise ValueError(f"n_features must be even (cos/sin pairs), got {f}; use {f + 1}")
        check_scalar(
            self.sketch_size, "sketch_size", kind=numbers.Integral, low=1, low_inclusive=True
        )

    def _warn_cost(self, n: int, s: int) -> None:
        """Warn when the exact form's n² s kernel evaluations exceed ``WARN_EVALUATIONS``."""
        if n * n * s <= WARN_EVALUATIONS:
            return
        warnings.warn(
            f"greedy-trace (exact) on {n} samples evaluates the kernel about n^2 * s = "
            f"{float(n) * n * s:.1e} times for s={s} landmarks (the Gram matrix, streamed once "
            "per landmark: minutes at this size); approximate=True (the random-feature sketch, "
            "O(n s (n_features + s + sketch_size))) or the 'recursive-rls' sampler (O(n s^2)) "
            "costs far less. sparsekit.show_progress() shows its progress, also outside a "
            "terminal",
            UserWarning,
            stacklevel=3,
        )

    def _graph_hint(self) -> str:
        return "approximate=True reads the raw vectors; use approximate=False with graph kernels"

    def sample(
        self, X: Any, kernel: Any, n_landmarks: int, random_state: RandomStateLike = None
    ) -> Landmarks:
        self._check_params()
        Xp = self.prepare_input(X, kernel)  # refuses graphs first when approximate=True
        if self.approximate and getattr(kernel, "name", None) not in ("rbf", "laplacian"):
            raise ValueError(
                "greedy-trace with approximate=True needs random Fourier features, i.e. a "
                "shift-invariant 'rbf' or 'laplacian' kernel object, got "
                f"{getattr(kernel, 'name', type(kernel).__name__)!r}; use approximate=False"
            )
        n = kernel.n_samples(Xp)
        s = check_n_landmarks(n_landmarks, n)
        rng = check_random_state(random_state)
        if self.approximate:
            Psi = random_fourier_map(kernel, Xp, int(self.n_features), rng)
            Xi = rng.standard_normal((n, int(self.sketch_size))) / np.sqrt(self.sketch_size)
            idx = greedy_sketch_select(Psi, Xi, s, rng)
        else:
            self._warn_cost(n, s)
            idx = greedy_exact_select(
                Xp, kernel, s, rng, cache_gram=bool(self.cache_gram), n_jobs=effective_n_jobs(None)
            )
        if idx.size < s:
            warnings.warn(
                f"greedy-trace stopped after {idx.size} of {s} landmarks: the residual trace is "
                "numerically zero (the selected points span the data in feature space)",
                UserWarning,
                stacklevel=2,
            )
        return self.make_landmarks(Xp, kernel, idx, np.ones(idx.size))


__all__ = ["GreedyTraceSampler"]
