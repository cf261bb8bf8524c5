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

import numbers

import numpy as np

from .._row_ranges import run_row_ranges
from .._validation import check_scalar
from . import _cpu
from ._driver import prepare, run_correlation_steps
from .base import Solver, check_precompute, check_tol, finish, gram_pays, nan_rows


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
    """

    name = "mp"
    accepts_gram = True

    def __init__(self, max_iter=None, tol=None, precompute="auto"):
        self.max_iter = max_iter
        self.tol = tol
        self.precompute = precompute
        self._check_params()

    def _check_params(self):
        if self.max_iter is not None:
            check_scalar(self.max_iter, "max_iter", kind=numbers.Integral, low=0)
        return check_tol(self.tol), check_precompute(self.precompute)

    def solve(self, D, Y, *, gram=None):
        """Compute the MP codes of the columns of ``Y``.

        Parameters
        ----------
        D : array-like of shape (n_features, n_atoms)
            The dictionary: atoms are columns.
        Y : array-like of shape (n_features, n_signals) or (n_features,)
            The signals: columns (the signal-processing layout).
        gram : array-like of shape (n_atoms, n_atoms), optional
            Precomputed ``D.T @ D``.

        Returns
        -------
        SparseResult
            The codes, supports, residual norms and stop reasons
            (:class:`~sparsekit.solvers.base.SparseResult`).
        """
        tol, precompute = self._check_params()
        p = prepare(D, Y)
        n_max = self.max_iter if self.max_iter is not None else max(int(0.1 * p.n_atoms), 1)
        n_max = int(n_max)
        n_sig = p.n_signals
        coef = np.zeros((n_sig, p.n_atoms), dtype=p.dtype)
        support = np.full((n_sig, n_max), -1, dtype=np.int64)
        res = nan_rows(n_sig, n_max + 1, p.dtype)
        n_iter = np.zeros(n_sig, dtype=np.int64)
        status = np.zeros(n_sig, dtype=np.int64)
        inv_norms = 1.0 / np.sqrt(p.norms_sq)
        if gram is not None or gram_pays(p.n_atoms, n_sig, n_max, p.dtype.itemsize, precompute):
            G = p.gram(gram)
            run_row_ranges(_cpu.mp_gram, n_sig, G, p.correlations(), p.y_sq, p.norms_sq,
                           inv_norms, n_max, tol, p.corr_floor, coef, support, res, n_iter, status,
                           scratch=lambda: (np.empty(p.n_atoms, dtype=G.dtype),))
        else:
            R = p.Yt.copy()
            active = np.ones(n_sig, dtype=np.bool_)
            status[:] = _cpu.STOP_MAX_ITER
            res[:, 0] = np.sqrt(p.y_sq)
            if tol >= 0:
                done = p.y_sq <= tol
                status[done] = _cpu.STOP_TOL
                active[done] = False
            Dt = p.Dt

            def step(k, rows, C):
                run_row_ranges(_cpu.mp_step, rows.size, k, rows, C, Dt, R, p.norms_sq, inv_norms,
                               n_max, tol,
                               p.corr_floor, coef, support, res, n_iter, status, active,
                               min_rows=_cpu.STEP_PARALLEL_MIN_ROWS)

            run_correlation_steps(R, p.D, active, n_max, step)
        return finish(coef, support, res, n_iter, status, p.one_d)

__all__ = ["MatchingPursuit"]
