"""A solver plugin: subclass Solver and supply the mathematics; the base class does the rest."""

import numbers

import numpy as np

from sparsekit.plugins import Codes, Solver
from sparsekit.validation import check_positive, check_scalar


class FISTASolver(Solver):
    """The lasso min_x 1/2 ||y - D x||_2^2 + alpha ||x||_1 by FISTA (Beck & Teboulle 2009,
    Section 4), batched over the columns of ``Y``.

    Step 1/L with L = ||D||_2^2. A signal stops when no coefficient moved by more than
    ``tol * ||x||_inf`` in an iteration, or after ``max_iter`` iterations. The lasso of
    ``D s`` and ``Y t`` with ``alpha s t`` has the codes ``x t / s``: ``_scaled_params`` says
    so, and the base class solves data near the ends of the float range rescaled.
    scikit-learn's ``Lasso(alpha=a, fit_intercept=False)`` solves the same problem with
    ``a = alpha / n_features``.
    """

    name = "fista"

    def __init__(self, alpha=1.0, max_iter=1000, tol=1e-8):
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self._check_params()

    def _check_params(self):  # runs at construction, in set_params and at every solve
        check_positive(self.alpha, "alpha")
        check_scalar(self.max_iter, "max_iter", kind=numbers.Integral, low=1, low_inclusive=True)
        check_positive(self.tol, "tol")

    def _scaled_params(self, d_exp, y_exp):  # the same lasso for D / 2^d_exp and Y / 2^y_exp
        return {"alpha": float(np.ldexp(self.alpha, -d_exp - y_exp))}

    def _solve_residual(self, problem) -> Codes:
        D, Y = problem.D, problem.Yt  # validated; Y holds the signals as rows
        dtype = D.dtype
        step = 1.0 / np.linalg.norm(D, 2) ** 2
        thresh = dtype.type(self.alpha * step)
        n_sig, n_atoms = problem.n_signals, problem.n_atoms
        x = np.zeros((n_sig, n_atoms), dtype=dtype)  # one row of coefficients per signal
        z, t = x.copy(), 1.0
        active = np.ones(n_sig, dtype=bool)
        n_iter = np.zeros(n_sig, dtype=np.int64)
        res = np.full((n_sig, self.max_iter + 1), np.nan, dtype=dtype)
        res[:, 0] = np.sqrt(problem.y_sq)
        for k in range(self.max_iter):
            rows = np.flatnonzero(active)
            if rows.size == 0:
                break
            grad_step = z[rows] - dtype.type(step) * ((z[rows] @ D.T - Y[rows]) @ D)
            x_new = np.sign(grad_step) * np.maximum(np.abs(grad_step) - thresh, 0)
            t_new = (1.0 + np.sqrt(1.0 + 4.0 * t * t)) / 2.0
            z[rows] = x_new + dtype.type((t - 1.0) / t_new) * (x_new - x[rows])
            moved = np.abs(x_new - x[rows]).max(axis=1)
            x[rows], t = x_new, t_new
            n_iter[rows] += 1
            res[rows, k + 1] = np.linalg.norm(Y[rows] - x_new @ D.T, axis=1)
            active[rows[moved <= self.tol * np.abs(x_new).max(axis=1)]] = False
        # support: the non-zero atoms of each signal, largest |coefficient| first, -1 padded
        order = np.argsort(-np.abs(x), axis=1, kind="stable")
        n_nz = (x != 0).sum(axis=1)
        support = np.where(np.arange(n_atoms) < n_nz[:, None], order, -1)
        return Codes(
            coef=x,
            support=support[:, : max(int(n_nz.max()), 1)],
            residual_norms=res[:, : int(n_iter.max()) + 1],
            n_iter=n_iter,
            status=np.where(active, "max_iter", "tol"),
        )
