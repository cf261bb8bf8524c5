"""A solver plugin: subclass Solver and return a SparseResult."""
import numbers

import numpy as np

from sparsekit.plugins import (
    Solver,
    SparseResult,
    check_dictionary,
    check_positive,
    check_scalar,
    check_signals,
)


class FISTASolver(Solver):
    """The lasso min_x 1/2 ||y - D x||_2^2 + alpha ||x||_1 by FISTA (Beck & Teboulle 2009,
    Section 4), batched over the columns of ``Y``.

    Step 1/L with L = ||D||_2^2. A signal stops when no coefficient moved by more than
    ``tol * max(1, ||x||_inf)`` in an iteration, or after ``max_iter`` iterations.
    scikit-learn's ``Lasso(alpha=a, fit_intercept=False)`` solves the same problem with
    ``a = alpha / n_features``.
    """

    name = "fista"

    def __init__(self, alpha=1.0, max_iter=1000, tol=1e-8):
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self._check_params()

    def _check_params(self):
        check_positive(self.alpha, "alpha")
        check_scalar(self.max_iter, "max_iter", kind=numbers.Integral, low=1, low_inclusive=True)
        check_positive(self.tol, "tol")

    def solve(self, D, Y, *, gram=None) -> SparseResult:
        self._check_params()
        D, _ = check_dictionary(D)                    # (n_features, n_atoms), atoms are columns
        D, Yt, one_d = check_signals(Y, D)            # Yt: (n_signals, n_features)
        Y = Yt.T
        dtype = D.dtype
        step = 1.0 / np.linalg.norm(D, 2) ** 2
        thresh = dtype.type(self.alpha * step)
        n_atoms, n_sig = D.shape[1], Y.shape[1]
        x = np.zeros((n_atoms, n_sig), dtype=dtype)
        z, t = x.copy(), 1.0
        active = np.ones(n_sig, dtype=bool)
        n_iter = np.zeros(n_sig, dtype=np.int64)
        res = np.full((self.max_iter + 1, n_sig), np.nan, dtype=dtype)
        res[0] = np.linalg.norm(Y, axis=0)
        for k in range(self.max_iter):
            cols = np.flatnonzero(active)
            if cols.size == 0:
                break
            grad_step = z[:, cols] - dtype.type(step) * (D.T @ (D @ z[:, cols] - Y[:, cols]))
            x_new = np.sign(grad_step) * np.maximum(np.abs(grad_step) - thresh, 0)
            t_new = (1.0 + np.sqrt(1.0 + 4.0 * t * t)) / 2.0
            z[:, cols] = x_new + dtype.type((t - 1.0) / t_new) * (x_new - x[:, cols])
            moved = np.abs(x_new - x[:, cols]).max(axis=0)
            x[:, cols], t = x_new, t_new
            n_iter[cols] += 1
            res[k + 1, cols] = np.linalg.norm(Y[:, cols] - D @ x_new, axis=0)
            active[cols[moved <= self.tol * np.maximum(1.0, np.abs(x_new).max(axis=0))]] = False
        stop = np.where(active, "max_iter", "tol").astype(object)
        res = res[: int(n_iter.max()) + 1]
        # support: the non-zero atoms of each signal, largest |coefficient| first, -1 padded
        order = np.argsort(-np.abs(x), axis=0, kind="stable")
        n_nz = (x != 0).sum(axis=0)
        support = np.where(np.arange(n_atoms)[:, None] < n_nz, order, -1)[: max(int(n_nz.max()), 1)]
        if one_d:
            return SparseResult(x[:, 0], support[:, 0], res[:, 0], int(n_iter[0]), stop[0])
        return SparseResult(x, support, res, n_iter, stop)
