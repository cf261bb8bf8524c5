"""Orthogonal Matching Pursuit.

Cherfaoui 2022, PhD thesis, §2.2, Alg. 1; Giffon 2020, PhD thesis, Ch. 4, Alg. 4.

Per iteration ``k``: select ``i_k = argmax_i |<d_i, r_k>|``, add it to the support ``S``, solve
the least squares ``x_S = argmin ||y - D_S x||_2`` and set ``r_{k+1} = y - D_S x_S``. The residual
is orthogonal to every selected atom, so no atom is selected twice.

The least squares use a Cholesky factor ``L`` of ``G_SS = D_S^T D_S`` grown by one row per step
(``L w = G_S,i``, ``l_kk = sqrt(G_ii - ||w||^2)``), then ``L L^T x_S = D_S^T y``: O(k^2) per step.

Decisions:

- Selection uses the raw correlations ``|<d_i, r>|`` as scikit-learn's ``orthogonal_mp`` does
  (atoms are meant to be unit-norm, Cherfaoui 2022, PhD thesis, §2.2).
- ``tol`` is the squared residual norm, as in scikit-learn. scikit-learn ignores
  ``n_nonzero_coefs`` when ``tol`` is given; here both stop the solve (whichever comes first),
  and with ``tol`` alone the cap is ``min(n_atoms, n_features)``, the most atoms that can be
  linearly independent. The tolerance is checked before every selection, so a signal with
  ``||y||^2 <= tol`` gets no atom (scikit-learn always selects one).
- ``n_nonzero_coefs`` above the number of atoms is a ``ValueError`` (as in scikit-learn).
- A signal that stops before ``n_nonzero_coefs`` atoms with a residual that is not zero warns
  with :class:`~sparsekit.solvers.base.PrematureStopWarning`, as scikit-learn's "ended
  prematurely" warning: the next atom is linearly dependent on the support
  (``G_ii - ||w||^2 <= eps max_i ||d_i||^2``), or every atom left is orthogonal to the
  residual (duplicate or dependent columns, a residual outside the span of ``D``). A residual
  that is zero (``||r||^2 <= 16 eps ||y||^2``, the accuracy of the Gram form's
  ``||y||^2 - x_S . D_S^T y``) is an exact fit: no warning.
- The Gram form (Batch-OMP: correlations ``c = D^T y - G_{:,S} x_S`` and
  ``||r||^2 = ||y||^2 - x_S . D_S^T y``) is used when ``gram`` is given, or ``precompute`` is
  True, or (``"auto"``) when building ``D^T D`` is cheaper than the residual form
  (``n_atoms < n_signals * n_steps``); its residual norms come from the normal equations and are
  accurate to about ``eps ||y||``. The residual form recomputes ``r = y - D_S x_S`` explicitly.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from .._runtime.pools import run_row_ranges
from . import _cpu
from ._driver import run_correlation_blocks
from .base import Codes, Solver, floor_of, ldexp_param, row_sq_norms, scatter_into

#: the residual form keeps one Cholesky factor per signal; signals are processed in chunks so
#: that these factors stay within this many bytes
_FACTOR_BYTES = 64 * 2**20


class OMP(Solver):
    """Orthogonal Matching Pursuit, batched over the columns of ``Y``.

    Parameters
    ----------
    n_nonzero_coefs : int > 0, optional
        Atoms per signal, at most the number of atoms (a larger value is a ``ValueError``, as in
        scikit-learn). Default: 10% of the atoms (at least 1), as scikit-learn.
    tol : float >= 0, optional
        Stop once ``||y - D x||_2^2 <= tol`` (squared, as scikit-learn).
    precompute : {"auto", True, False}
        Build the Gram matrix ``D^T D`` (see the module notes). True with a Gram matrix
        beyond the available memory raises ``InsufficientMemoryError`` (pass False); a
        precomputed Gram matrix goes to ``solve(D, Y, gram=G)``.
    return_path : bool
        Also return the solutions for every number of atoms ``k <= K`` (``result.path``,
        ``result.dense_path()``).

    Examples
    --------
    >>> from sparsekit.solvers.dictionaries import make_sparse_coding_problem
    >>> D, Y, X = make_sparse_coding_problem(32, 64, 3, n_signals=10, random_state=0)
    >>> res = OMP(n_nonzero_coefs=3).solve(D, Y)
    >>> res.coef.shape                                     # (n_atoms, n_signals)
    (64, 10)
    """

    name = "omp"
    premature_stops = (_cpu.STOP_DEPENDENT, _cpu.STOP_RESELECTED, _cpu.STOP_NO_CORRELATION)

    def __init__(
        self,
        n_nonzero_coefs: int | None = None,
        tol: float | None = None,
        precompute: bool | Literal["auto"] = "auto",
        return_path: bool = False,
    ) -> None:
        self.n_nonzero_coefs = n_nonzero_coefs
        self.tol = tol
        self.precompute = precompute
        self.return_path = return_path
        self._check_params()

    def _check_params(self):  # returns problem.params: tol for the compute layer (-1: none)
        tol = super()._check_params()
        if not isinstance(self.return_path, (bool, np.bool_)):
            raise TypeError(f"return_path must be True or False, got {self.return_path!r}")
        return tol

    def _scaled_params(self, d_exp, y_exp):  # tol bounds ||y - D x||^2 (see Solver)
        return {"tol": ldexp_param(self.tol, -2 * y_exp)}

    def _start(self, p, floor=True):
        """The codes, the path (a dummy when not asked for), the two rounding levels (the
        correlation floor None when not ``floor``)."""
        n_max = p.n_steps
        out = Codes.empty(p, n_max, by_support=True)
        want_path = bool(self.return_path)
        path = np.zeros((p.n_signals, n_max, n_max) if want_path else (1, 1, 1), dtype=p.dtype)
        if want_path:
            out.arrays["path"] = path
        chol_eps = float(np.finfo(p.dtype).eps * p.norms_sq.max())
        floor = p.corr_floor * np.sqrt(float(p.norms_sq.max())) if floor else None
        return out, path, want_path, chol_eps, floor

    def _solve_gram(self, p, G):
        """Batch-OMP block by block: each thread takes a block of signals, computes their
        correlations, squared norms and floors, solves them and scatters their coefficients
        into the public layout, so that nothing but the result's bookkeeping runs on one
        thread (the values are those of one pass over all the signals)."""
        out, path, want_path, chol_eps, _ = self._start(p, floor=False)
        n_max, tol, dt = p.n_steps, p.params, G.dtype
        atom_scale = np.sqrt(float(p.norms_sq.max()))
        y_sq = np.empty(p.n_signals, dtype=np.float64)
        coef = np.zeros((p.n_atoms, p.n_signals), dtype=dt)

        def scratch():
            return (
                np.empty((n_max, n_max), dtype=dt),
                np.empty((3, n_max), dtype=dt),
                np.zeros(p.n_atoms, dtype=np.bool_),
                np.empty(p.n_atoms, dtype=dt),
            )

        def solve_block(rows, S, C, L, V, in_support, c):
            y_sq[rows] = row_sq_norms(S)
            floor = floor_of(y_sq[rows], dt) * atom_scale
            support, values = out.support[rows], out.values[rows]
            _cpu.omp_gram(
                0,
                C.shape[0],
                G,
                C,
                y_sq[rows],
                n_max,
                tol,
                floor,
                chol_eps,
                support,
                values,
                out.residual_norms[rows],
                out.n_iter[rows],
                out.status[rows],
                path[rows] if want_path else path,
                want_path,
                L,
                V,
                in_support,
                c,
            )
            scatter_into(coef, support, values, rows.start)

        run_correlation_blocks(solve_block, p.signal_rows, p.D, scratch=scratch, signals=True)
        p.y_sq = y_sq
        out.coef = coef.T
        return out

    def _solve_residual(self, p):
        out, path, want_path, chol_eps, corr_floor = self._start(p)
        n_sig, n_max, tol = p.n_signals, p.n_steps, p.params
        chunk = max(1, _FACTOR_BYTES // max(1, n_max * n_max * p.dtype.itemsize))
        Dt = p.Dt
        for a in range(0, n_sig, chunk):
            b = min(n_sig, a + chunk)
            sl = slice(a, b)
            Yt = p.Yt[sl]
            L = np.zeros((b - a, n_max, n_max), dtype=p.dtype)
            cs = np.zeros((b - a, n_max), dtype=p.dtype)
            idx_c, vals_c, res_c, it_c, st = (
                out.support[sl],
                out.values[sl],
                out.residual_norms[sl],
                out.n_iter[sl],
                out.status[sl],
            )
            path_c = path[sl] if want_path else path
            floor = corr_floor[sl]

            def step(k, rows, C, R, active):
                run_row_ranges(
                    _cpu.omp_step,
                    rows.size,
                    k,
                    rows,
                    C,
                    Dt,
                    Yt,
                    R,
                    p.norms_sq,
                    n_max,
                    tol,
                    floor,
                    chol_eps,
                    L,
                    cs,
                    idx_c,
                    vals_c,
                    res_c,
                    it_c,
                    st,
                    active,
                    path_c,
                    want_path,
                    min_rows=_cpu.STEP_PARALLEL_MIN_ROWS,
                    scratch=lambda: (np.empty(n_max, dtype=p.dtype),),
                )

            self._iterate_residual(p, out, tol, step, rows=sl)
        return out


__all__ = ["OMP"]
