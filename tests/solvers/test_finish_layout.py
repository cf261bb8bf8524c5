"""OMP and NNOMP results in the public layout: coefficients scattered straight into a
C-contiguous (n_atoms, n_signals) array that ``finish`` returns without a transposing copy."""

import numpy as np
import pytest
from scipy.optimize import nnls
from sklearn.linear_model import orthogonal_mp

from sparsekit.solvers.base import finish, scatter
from sparsekit.solvers.nnomp import NonNegativeOMP
from sparsekit.solvers.omp import OMP


def problem(dtype, order, n_signals=30):
    rng = np.random.default_rng(0)
    D = rng.standard_normal((20, 50))
    D /= np.linalg.norm(D, axis=0)
    Y = rng.standard_normal((20, n_signals))
    return D.astype(dtype), np.asarray(Y, dtype=dtype, order=order)


def test_finish_returns_the_scattered_coefficients_without_a_copy():
    idx = np.array([[3, 0, -1], [1, -1, -1]])
    vals = np.array([[0.5, -2.0, 0.0], [4.0, 0.0, 0.0]])
    rows = scatter(idx, vals, 5)
    out = finish(rows, idx, np.zeros((2, 4)), np.array([2, 1]), np.zeros(2, np.int64), False)
    assert np.shares_memory(out.coef, rows) and out.coef.flags.c_contiguous
    expected = np.zeros((5, 2))
    expected[3, 0], expected[0, 0], expected[1, 1] = 0.5, -2.0, 4.0
    np.testing.assert_array_equal(out.coef, expected)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("precompute", [True, False])
def test_omp_layout_and_values(dtype, order, precompute):
    D, Y = problem(dtype, order)
    res = OMP(n_nonzero_coefs=4, precompute=precompute).solve(D, Y)
    assert res.coef.shape == (50, 30) and res.coef.dtype == dtype and res.coef.flags.c_contiguous
    assert res.support.shape == (4, 30) and res.support.flags.c_contiguous
    ref = orthogonal_mp(D.astype(np.float64), np.asarray(Y, dtype=np.float64), n_nonzero_coefs=4)
    tol = 1e-10 if dtype == np.float64 else 1e-3
    np.testing.assert_allclose(res.coef, ref, rtol=tol, atol=tol)
    one = OMP(n_nonzero_coefs=4, precompute=precompute).solve(D, Y[:, 3])
    assert one.coef.shape == (50,) and one.coef.flags.c_contiguous and one.coef.dtype == dtype
    np.testing.assert_allclose(one.coef, res.coef[:, 3], rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_nnomp_layout_and_values(dtype, order):
    D, Y = problem(dtype, order, n_signals=6)
    res = NonNegativeOMP(n_nonzero_coefs=3).solve(D, Y)
    assert res.coef.shape == (50, 6) and res.coef.dtype == dtype and res.coef.flags.c_contiguous
    assert np.all(res.coef >= 0)
    for j in range(6):  # the coefficients on the selected atoms solve the NNLS on them
        sel = np.flatnonzero(res.coef[:, j])
        x, _ = nnls(D[:, sel].astype(np.float64), Y[:, j].astype(np.float64))
        tol = 1e-8 if dtype == np.float64 else 1e-3
        np.testing.assert_allclose(res.coef[sel, j], x, rtol=tol, atol=tol)
