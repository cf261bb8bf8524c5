"""Matching Pursuit (Cherfaoui 2022, PhD thesis, §2.2, Alg. 1 with the MP update).

Per iteration: ``i_k = argmax_i |<d_i, r_k>| / ||d_i||``, ``x[i_k] += <d_i, r_k> / ||d_i||^2``,
``r_{k+1} = r_k - (<d_i, r_k> / ||d_i||^2) d_i``. For unit-norm atoms (the thesis' setting) this is
exactly Alg. 1; for other norms it is the step that decreases ``||r||^2`` the most
(by ``<d_i, r>^2 / ||d_i||^2``), so the residual norm never increases. MP projects on the last atom
only, so it may select an atom again.

Stops after ``max_iter`` iterations, when ``||r||^2 <= tol``, or when every correlation is zero
to rounding (``|<d_i, r>| / ||d_i|| <= 16 eps ||y||``).

With the Gram matrix (``precompute``), the correlations are updated as ``c -= a G[i, :]`` and
``||r||^2 -= <d_i, r>^2 / ||d_i||^2`` (accurate to about ``eps ||y||^2``); without it, each
iteration computes ``R D`` with one GEMM and updates the residuals explicitly.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from .._runtime.pools import run_row_ranges
from . import _cpu
from .base import Codes, Solver, ldexp_param


class MatchingPursuit(Solver):
    """Matching Pursuit, batched over the columns of ``Y``.

    Parameters
    ----------
    max_iter : int > 0, optional
        Iterations per signal (an atom may be selected more than once). Default: 10% of the
        atoms, at least 1.
    tol : float >= 0, optional
        Stop once ``||y - D x||_2^2 <= tol`` (squared norm).
    precompute : {"auto", True, False}
        Use the Gram matrix ``D^T D`` (``"auto"``: when cheaper than the residual form).
        True with a Gram matrix beyond the available memory raises
        ``InsufficientMemoryError`` (pass False).
    """

    name = "mp"

    def __init__(
        self,
        max_iter: int | None = None,
        tol: float | None = None,
        precompute: bool | Literal["auto"] = "auto",
    ) -> None:
        self.max_iter = max_iter
        self.tol = tol
        self.precompute = precompute
        self._check_params()

    def _scaled_params(self, d_exp, y_exp):  # tol bounds ||y - D x||^2 (see Solver)
        return {"tol": ldexp_param(self.tol, -2 * y_exp)}

    # p.params: tol for the compute layer (-1.0: none), from Solver._check_params
    def _solve_gram(self, p, G):
        out, tol = Codes.empty(p, p.n_steps), p.params
        run_row_ranges(
            _cpu.mp_gram,
            p.n_signals,
            G,
            p.correlations(),
            p.y_sq,
            p.norms_sq,
            1.0 / np.sqrt(p.norms_sq),
            p.n_steps,
            tol,
            p.corr_floor,
            out.coef,
            out.support,
            out.residual_norms,
            out.n_iter,
            out.status,
            scratch=lambda: (np.empty(p.n_atoms, dtype=G.dtype),),
        )
        return out

    def _solve_residual(self, p):
        out, tol = Codes.empty(p, p.n_steps), p.params
        inv_norms = 1.0 / np.sqrt(p.norms_sq)
        Dt = p.Dt

        def step(k, rows, C, R, active):
            run_row_ranges(
                _cpu.mp_step,
                rows.size,
                k,
                rows,
                C,
                Dt,
                R,
                p.norms_sq,
                inv_norms,
                p.n_steps,
                tol,
                p.corr_floor,
                out.coef,
                out.support,
                out.residual_norms,
                out.n_iter,
                out.status,
                active,
                min_rows=_cpu.STEP_PARALLEL_MIN_ROWS,
            )

        self._iterate_residual(p, out, tol, step)
        return out


__all__ = ["MatchingPursuit"]
