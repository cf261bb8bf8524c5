"""Non-negative Orthogonal Matching Pursuit.

Cherfaoui 2022, PhD thesis, Ch. 6, Alg. 7; Giffon 2020, PhD thesis, Ch. 4.

Bruckstein, Elad & Zibulevsky (2008). Per iteration: select the atom most *positively* correlated
with the residual among those not yet selected, ``i_k = argmax_{i not in S} <d_i, r_k>``; stop when
``<d_{i_k}, r_k> <= 0`` (no atom correlates positively: the natural stop); otherwise add it and
solve the non-negative least squares ``x_S = argmin_{x >= 0} ||y - D_S x||_2`` (Lawson–Hanson
active set on the normal equations ``D_S^T D_S``, warm-started from the previous solution);
then ``r_{k+1} = y - D_S x_S``.

Decisions (on Cherfaoui 2022, PhD thesis, Ch. 6, Alg. 7):

- The residual uses the new solution ``x_{k+1}`` (the thesis prints ``x_k``, a typo).
- The stop is ``max_i <d_i, r> <= 0`` as in the project code (the thesis prints ``< 0``), with
  "0" meaning ``<= 16 eps ||y|| ||d_i||``.
- Atoms already selected are excluded from the selection: after NNLS their correlation is
  ``<= 0`` up to rounding, so rounding could otherwise pick one again. An atom can keep weight
  0 after NNLS; it stays in ``support``.
- NN-OMP always works on the Gram matrix ``D^T D`` (given or built once per call).
- Every threshold scales with the data: the selection floor and the NNLS gradient threshold
  are relative to the correlations (``||d|| ||y||``), the linear-dependence test to
  ``||d||^2``; so ``D s`` and ``Y t`` give the codes ``x t / s`` (atoms need not be unit-norm).
"""

from __future__ import annotations

import numpy as np

from .._runtime.pools import run_row_ranges
from . import _cpu
from .base import Codes, Solver, ldexp_param

#: an atom enters the NNLS passive set when its gradient exceeds this many ``eps max|c0_S|``
#: (the rounding level of the gradient, relative to the correlations of the support)
NNLS_GRAD_EPS = 1e3


class NonNegativeOMP(Solver):
    """Non-negative OMP: coefficients ``>= 0``, stops by itself.

    Parameters
    ----------
    n_nonzero_coefs : int > 0, optional
        Most atoms per signal, at most the number of atoms (a larger value is a ``ValueError``).
        Default: 10% of the atoms (at least 1).
    tol : float >= 0, optional
        Stop once ``||y - D x||_2^2 <= tol`` (squared norm).
    """

    name = "nn-omp"
    premature_stops = (_cpu.STOP_DEPENDENT,)

    def __init__(self, n_nonzero_coefs: int | None = None, tol: float | None = None) -> None:
        self.n_nonzero_coefs = n_nonzero_coefs
        self.tol = tol
        self._check_params()

    def _scaled_params(self, d_exp, y_exp):  # tol bounds ||y - D x||^2 (see Solver)
        return {"tol": ldexp_param(self.tol, -2 * y_exp)}

    # p.n_steps and p.params (tol, -1.0 for none) come from Solver._n_steps/_check_params
    def _solve_gram(self, p, G):
        n_max, tol, dt = p.n_steps, p.params, G.dtype
        out = Codes.empty(p, n_max, by_support=True)
        chol_eps = float(np.finfo(p.dtype).eps * p.norms_sq.max())
        floor = p.corr_floor * np.sqrt(float(p.norms_sq.max()))

        def scratch():
            m = n_max + 1  # one more row and column: the right-hand side of the NNLS
            return (
                np.empty((m, m), dtype=dt),
                np.empty((m, m), dtype=dt),
                np.empty((2, m), dtype=dt),
                np.zeros(m, dtype=np.bool_),
                np.zeros(p.n_atoms, dtype=np.bool_),
                np.empty(p.n_atoms, dtype=dt),
            )

        run_row_ranges(
            _cpu.nnomp_gram,
            p.n_signals,
            G,
            p.correlations(),
            p.y_sq,
            n_max,
            tol,
            floor,
            chol_eps,
            NNLS_GRAD_EPS * float(np.finfo(dt).eps),
            3 * n_max + 10,
            out.support,
            out.values,
            out.residual_norms,
            out.n_iter,
            out.status,
            scratch=scratch,
        )
        return out


__all__ = ["NonNegativeOMP"]
