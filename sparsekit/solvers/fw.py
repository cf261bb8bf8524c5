"""Frank–Wolfe for sparse approximation on the l1 ball (Cherfaoui 2022, PhD thesis, Alg. 4–5).

Problem (5.2): ``min_x 1/2 ||y - D x||_2^2`` subject to ``||x||_1 <= beta``. From ``x_0 = 0``, with
``r_k = y - D x_k``:

- linear oracle: ``i_k = argmax_i |<d_i, r_k>|``, ``s_k = sign(<d_i, r_k>) beta e_{i_k}``;
- duality gap ``g_k = <D(s_k - x_k), r_k>`` (the standard Frank–Wolfe gap, Jaggi 2013; not in the
  thesis; >= 0, and 0 only at the optimum);
- step ``"2/(k+2)"`` (variant 1) or ``"line-search"`` (variant 2, Lemma 7 closed form):
  ``gamma_k = clip(g_k / ||D(s_k - x_k)||_2^2, 0, 1)``;
- ``x_{k+1} = x_k + gamma_k (s_k - x_k)``.

``D x_k`` and ``r_k`` are kept, so ``D(s_k - x_k) = +-beta d_i - D x_k`` costs O(n_features); an
iteration costs one correlation ``R D`` (one BLAS GEMM over the active signals) plus
O(n_features + n_atoms) per signal.

Stopping (Algorithm 5 of the thesis repeats without a stopping rule): ``max_iter``;
``||r_k||_2^2 <= tol`` (squared, like every ``tol`` in :mod:`sparsekit.solvers`; the thesis's
``||r_k||_2 <= t`` is ``tol = t**2``); ``g_k <= gap_tol``; or a zero step ``gamma_k == 0``
(with line search this means ``g_k <= 0``, i.e. ``x_k`` is optimal; the proof of Theorem 5 shows
``r_k = 0`` then for an m-sparse ``y``).

Round-off (always on, whatever ``tol`` and ``gap_tol``): once the residual is at the rounding
level of ``y``, the correlations ``<d_i, r_k>`` are rounding noise and the linear oracle picks
arbitrary atoms. With an exactly sparse ``y`` and line search this happens after a few dozen
iterations (then every further step spreads weights of size ``eps`` over atoms outside the
support, against Theorem 4, which holds in exact arithmetic). So the iteration also stops when

- ``||r_k||_2 <= 16 eps ||y||_2`` (stop reason ``"tol"``), or
- ``g_k <= 16 eps ||y||_2 ||D(s_k - x_k)||_2`` (stop reason ``"gap"``: by Cauchy–Schwarz the gap of
  a residual at the rounding level ``16 eps ||y||`` is at most that),

and, on return, a coefficient whose contribution cannot be told from rounding,
``|x_i| ||d_i|| <= 16 eps sum_j |x_j| ||d_j||``, is set to 0 (``result.extra["pruned"]`` counts
them per signal). ``eps`` is the machine epsilon of the dtype.

``result.residual_norms`` is the history ``||r_k||_2``, ``result.steps`` the ``gamma_k`` and
``result.gaps`` the ``g_k``; ``result.support[k]`` is ``i_k`` (atoms may be selected again).
"""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike

from .._runtime.pools import run_row_ranges
from .._validation import check_array, check_option, check_positive, check_scalar
from . import _cpu
from .base import Codes, Solver, check_tol, ldexp_param, nan_rows

#: the round-off level, in units of the dtype's machine epsilon (see the module notes)
ROUNDOFF_EPS = 16.0

STEP_RULES = ("line-search", "2/(k+2)")


class FrankWolfe(Solver):
    """Frank–Wolfe on ``{x : ||x||_1 <= beta}``, batched over the columns of ``Y``.

    Parameters
    ----------
    beta : float > 0, or array of shape (n_signals,)
        Radius of the l1 ball (one per signal when an array). Theorems 4–5 need
        ``beta > ||x*||_1``; the Chapter 5 experiments use ``beta = 8 ||x*||_1``;
        :func:`sparsekit.solvers.coherence.theorem6_factor` needs
        ``beta > 2 ||y|| sqrt(m / (1 - mu_1(m-1)))``.
    step : {"line-search", "2/(k+2)"}, default "line-search"
        Step rule (variant 2, exact line search clipped to [0, 1]; or variant 1).
    max_iter : int > 0, default 1000
        The most iterations.
    tol : float >= 0, optional
        Stop once ``||r_k||_2^2 <= tol``.
    gap_tol : float >= 0, optional
        Stop once the duality gap ``g_k <= gap_tol``. Whatever ``tol`` and ``gap_tol``, the
        iteration stops once the residual or the duality gap is at the rounding level of
        ``y``, and coefficients that cannot be told from rounding are set to 0 (see the module
        notes; ``result.extra["pruned"]`` counts them).
    """

    name = "frank-wolfe"

    def __init__(
        self,
        beta: float | ArrayLike,
        step: str = "line-search",
        max_iter: int = 1000,
        tol: float | None = None,
        gap_tol: float | None = None,
    ) -> None:
        self.beta = beta
        self.step = step
        self.max_iter = max_iter
        self.tol = tol
        self.gap_tol = gap_tol
        self._check_params()

    def _check_params(self):
        beta = self._check_beta()
        step = check_option(self.step, "step", STEP_RULES)
        max_iter = check_scalar(self.max_iter, "max_iter", kind=numbers.Integral, low=0)
        return beta, step, max_iter, check_tol(self.tol), check_tol(self.gap_tol, "gap_tol")

    def _scaled_params(self, d_exp, y_exp):  # beta bounds the codes; tol, gap_tol ~ ||y||^2
        return {
            "beta": ldexp_param(self.beta, d_exp - y_exp),
            "tol": ldexp_param(self.tol, -2 * y_exp),
            "gap_tol": ldexp_param(self.gap_tol, -2 * y_exp),
        }

    def _check_beta(self):
        if np.ndim(self.beta) == 0:
            return check_positive(self.beta, "beta")
        beta = check_array(self.beta, "beta", ndim=1, dtype=np.float64)
        if (beta <= 0).any():
            raise ValueError(f"beta must be > 0 for every signal, got min {beta.min():g}")
        return beta

    def _solve_residual(self, p):
        """Frank–Wolfe on explicit residuals (each iteration needs ``R D`` anyway, so there is
        no Gram form, and ``solve(D, Y, gram=...)`` is a ``ValueError``)."""
        beta, step, max_iter, tol, gap_tol = p.params
        n_sig = p.n_signals
        if np.ndim(beta) == 0:
            beta = np.full(n_sig, beta)
        elif beta.shape[0] != n_sig:
            raise ValueError(
                f"beta has {beta.shape[0]} values but Y has {n_sig} signals; give one radius "
                "or one per signal"
            )
        out = Codes.empty(p, max_iter)
        steps = out.arrays["steps"] = nan_rows(n_sig, max_iter, p.dtype)
        gaps = out.arrays["gaps"] = nan_rows(n_sig, max_iter, p.dtype)
        Yk = np.zeros_like(p.Yt)
        Dt = p.Dt
        line_search = step == "line-search"
        rho = ROUNDOFF_EPS * float(np.finfo(p.dtype).eps)
        gap_floor = rho * np.sqrt(p.y_sq)
        res_floor = gap_floor * gap_floor

        def one_step(k, rows, C, R, active):
            run_row_ranges(
                _cpu.fw_step,
                rows.size,
                k,
                rows,
                C,
                Dt,
                R,
                Yk,
                beta,
                line_search,
                max_iter,
                tol,
                gap_tol,
                res_floor,
                gap_floor,
                out.coef,
                out.support,
                out.residual_norms,
                steps,
                gaps,
                out.n_iter,
                out.status,
                active,
                min_rows=_cpu.STEP_PARALLEL_MIN_ROWS,
                scratch=lambda: (np.empty(p.n_features, dtype=p.dtype),),
            )

        # y = 0 (to rounding): x = 0 is the answer
        self._iterate_residual(p, out, tol, one_step, done=p.y_sq <= res_floor)
        out.extra["pruned"] = prune_roundoff(out.coef, np.sqrt(p.norms_sq), rho)
        return out


def prune_roundoff(coef, atom_norms, rho):
    """Zero the entries of every row of ``coef`` with ``|x_i| ||d_i|| <= rho sum_j |x_j| ||d_j||``
    (in place); returns how many were zeroed per row."""
    weight = np.abs(coef) * atom_norms
    noise = (weight <= rho * weight.sum(axis=1, keepdims=True)) & (coef != 0)
    coef[noise] = 0
    return noise.sum(axis=1).astype(np.int64)


__all__ = ["FrankWolfe"]
