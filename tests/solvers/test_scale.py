"""The solvers at any scale of the atoms and of the signals.

Oracles: scale invariance (``D s`` and ``Y t`` give the codes ``x t / s``) against the solve at
scale 1, scikit-learn's ``orthogonal_mp``, and SciPy's ``nnls`` on the support NN-OMP selected.
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import nnls
from sklearn.linear_model import orthogonal_mp

from sparsekit.solvers.nnomp import NonNegativeOMP

from ._problems import unit_gaussian


def nonneg_problem(seed=0, n_features=64, n_atoms=48, m=3, n_signals=12):
    """Atoms of norms 0.5 .. 2 (not unit), non-negative 3-sparse codes."""
    rng = np.random.default_rng(seed)
    D = unit_gaussian(rng, n_features, n_atoms) * rng.uniform(0.5, 2.0, n_atoms)
    X = np.zeros((n_atoms, n_signals))
    for j in range(n_signals):
        X[rng.choice(n_atoms, m, replace=False), j] = rng.uniform(0.5, 2.0, m)
    return D, D @ X, X


def solve_quietly(solver, D, Y, **kw):
    """The solve, with every warning an error (a Numba typing or performance warning included)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return solver.solve(D, Y, **kw)


SCALES = np.logspace(-8, 8, 17)


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("what", ["atoms", "signals"])
def test_nnomp_is_scale_invariant(scale, what):
    """NN-OMP on ``D s`` gives the codes ``x / s``, on ``Y s`` the codes ``x s``, for s from 1e-8
    to 1e8 (oracle: scale invariance against the solve at scale 1, which recovers the true
    non-negative codes). The NNLS entry threshold grew as ``||d||^4`` while the gradient grows
    as ``||d||^2``: from atom norms of 1e8 every code was 0."""
    D, Y, X = nonneg_problem()
    ref = NonNegativeOMP(n_nonzero_coefs=3).solve(D, Y)
    np.testing.assert_allclose(ref.coef, X, atol=1e-10)
    if what == "atoms":
        res, factor = solve_quietly(NonNegativeOMP(n_nonzero_coefs=3), D * scale, Y), 1 / scale
    else:
        res, factor = solve_quietly(NonNegativeOMP(n_nonzero_coefs=3), D, Y * scale), scale
    np.testing.assert_array_equal(res.support, ref.support)
    np.testing.assert_allclose(res.coef, ref.coef * factor, rtol=1e-9, atol=1e-12 * factor)
    assert list(res.stop_reason) == list(ref.stop_reason)


@pytest.mark.parametrize("atom_norm", [1.0, 1e5, 1e8, 1e12])
def test_nnomp_values_are_scipy_nnls_on_the_selected_support(atom_norm):
    """Every NN-OMP code is the non-negative least squares on the atoms it selected (oracle:
    SciPy's ``nnls`` on that support), with atoms of norm ``atom_norm``; and the support is the
    true one (the problem is in NN-OMP's recovery regime at unit norm)."""
    D, Y, X = nonneg_problem(seed=1)
    D = D * atom_norm
    res = solve_quietly(NonNegativeOMP(n_nonzero_coefs=3), D, Y)
    for j in range(Y.shape[1]):
        S = res.support[: res.n_iter[j], j]
        x_ref, _ = nnls(D[:, S], Y[:, j])
        np.testing.assert_allclose(
            res.coef[S, j], x_ref, rtol=1e-8, atol=1e-10 * np.abs(x_ref).max()
        )
        assert set(S.tolist()) == set(np.flatnonzero(X[:, j]).tolist())


def test_nnomp_recovers_16bit_patch_codes_like_omp():
    """Dense 16-bit patches as atoms (integers 0..65535, norms about 6e5) and signals that are
    non-negative 3-sparse combinations of them: OMP (scikit-learn's ``orthogonal_mp``, the
    oracle) recovers every code, and NN-OMP must too (it recovered 5 of 30)."""
    rng = np.random.default_rng(0)
    n_features, n_atoms, m, n_signals = 256, 64, 3, 30
    D = rng.integers(0, 65536, size=(n_features, n_atoms)).astype(np.float64)
    X = np.zeros((n_atoms, n_signals))
    for j in range(n_signals):
        X[rng.choice(n_atoms, m, replace=False), j] = rng.integers(1, 5, size=m) / 4
    Y = D @ X
    omp = orthogonal_mp(D, Y, n_nonzero_coefs=m)
    np.testing.assert_allclose(omp, X, atol=1e-8)
    res = solve_quietly(NonNegativeOMP(n_nonzero_coefs=m), D, Y)
    np.testing.assert_array_equal(res.coef > 0, X > 0)
    np.testing.assert_allclose(res.coef, X, atol=1e-8)
