"""A factorizer plugin: subclass Factorizer and return a FactorizationResult."""

import functools
import numbers

import numpy as np

from sparsekit.plugins import FactorizationResult, Factorizer, check_constraints
from sparsekit.validation import check_array, check_random_state, check_scalar


class AlternatingLeastSquares(Factorizer):
    """M ~ lambda S_1 ... S_Q by alternating least squares, each factor projected on its set.

    A sweep sets each free factor, left to right, to the least-squares solution
    S_q = L^+ M R^+ of min ||M - L S_q R||_F (L = S_1 ... S_(q-1), R = S_(q+1) ... S_Q,
    ^+ the Moore-Penrose pseudo-inverse), projected onto its constraint set, then
    lambda = <M, P>_F / ||P||_F^2 for P = S_1 ... S_Q. Without constraints (the "identity"
    projection), two factors of inner dimension r reach the error of the best rank-r
    approximation, the truncated SVD's (Eckart & Young 1936). It stops when the objective
    ||M - lambda P||_F^2 changes by less than tol (relative) or after n_iter sweeps.
    """

    name = "als"

    def __init__(self, n_iter=100, tol=1e-12, random_state=0):
        self.n_iter = n_iter
        self.tol = tol
        self.random_state = random_state

    def factorize(self, M, constraints, *, init_factors=None, init_scale=1.0):
        n_iter = check_scalar(
            self.n_iter, "n_iter", kind=numbers.Integral, low=1, low_inclusive=True
        )
        tol = check_scalar(self.tol, "tol", low=0.0, low_inclusive=True)
        M = check_array(M, "M")
        projs = check_constraints(M.shape, constraints)  # objects or (name, params) pairs
        if init_factors is None:  # random factors in the sets
            rng = check_random_state(self.random_state)
            S = [
                p.initial(M.dtype) if p.is_constant else p(rng.standard_normal(p.shape))
                for p in projs
            ]
        else:
            S = [np.asarray(f, dtype=M.dtype) for f in init_factors]
        chain = functools.partial(functools.reduce, np.matmul)
        lam, objective, stop = float(init_scale), [], "max_iter"
        for _ in range(n_iter):
            for q, proj in enumerate(projs):
                if not proj.is_constant:
                    L = chain(S[:q], np.eye(M.shape[0], dtype=M.dtype))
                    R = chain(S[q + 1 :], np.eye(S[q].shape[1], dtype=M.dtype))
                    S[q] = proj(np.linalg.pinv(L) @ M @ np.linalg.pinv(R)).astype(M.dtype)
            P = chain(S)
            lam = float(np.vdot(M, P) / np.vdot(P, P)) if np.any(P) else lam
            objective.append(float(np.linalg.norm(M - lam * P) ** 2))
            if len(objective) > 1 and abs(objective[-2] - objective[-1]) <= tol * objective[-2]:
                stop = "tol"
                break
        # imported here, not at the top: the registry imports every plugin module when it is built,
        # and SparseFactors brings scipy.sparse.linalg with it
        from sparsekit import SparseFactors

        return FactorizationResult(
            SparseFactors(S, lam, dtype=M.dtype),
            np.asarray(objective),
            len(objective),
            stop_reason=stop,
            target_norm=float(np.linalg.norm(M)),
        )
