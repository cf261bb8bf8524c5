"""Small random problems shared by the solver tests."""

import numpy as np


def unit_gaussian(rng, n_features, n_atoms, dtype=np.float64):
    D = rng.standard_normal((n_features, n_atoms))
    D /= np.linalg.norm(D, axis=0)
    return D.astype(dtype)


def sparse_problem(rng, n_features, n_atoms, m, n_signals, dtype=np.float64):
    D = unit_gaussian(rng, n_features, n_atoms, dtype)
    X = np.zeros((n_atoms, n_signals), dtype=dtype)
    for j in range(n_signals):
        S = rng.choice(n_atoms, m, replace=False)
        X[S, j] = rng.standard_normal(m) + np.sign(rng.standard_normal(m))
    return D, D @ X, X
