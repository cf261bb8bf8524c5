"""Bad input gets a clear error naming the argument (never a Numba typing error)."""

import numpy as np
import pytest

from sparsekit.solvers.fw import FrankWolfe
from sparsekit.solvers.mp import MatchingPursuit
from sparsekit.solvers.nnomp import NonNegativeOMP
from sparsekit.solvers.omp import OMP

from ._problems import unit_gaussian

SOLVERS = [
    lambda: OMP(n_nonzero_coefs=2),
    lambda: OMP(n_nonzero_coefs=2, precompute=False),
    lambda: MatchingPursuit(max_iter=3),
    lambda: NonNegativeOMP(n_nonzero_coefs=2),
    lambda: FrankWolfe(beta=1.0, max_iter=3),
]


@pytest.fixture
def D():
    return unit_gaussian(np.random.default_rng(0), 8, 12)


@pytest.mark.parametrize("make", SOLVERS)
def test_shape_mismatch(make, D):
    with pytest.raises(ValueError, match=r"D has 8 rows .* Y has 5"):
        make().solve(D, np.ones((5, 2)))
    with pytest.raises(ValueError, match="Y must be 1-D .* or 2-D"):
        make().solve(D, np.ones((8, 2, 2)))


@pytest.mark.parametrize("make", SOLVERS)
def test_zero_column_is_named(make, D):
    bad = D.copy()
    bad[:, 7] = 0.0
    with pytest.raises(ValueError, match=r"zero column\(s\) \(atom index 7\)"):
        make().solve(bad, np.ones(8))


@pytest.mark.parametrize("make", SOLVERS)
@pytest.mark.parametrize("value,word", [(np.nan, "NaN"), (np.inf, "inf")])
def test_non_finite(make, D, value, word):
    bad = D.copy()
    bad[2, 3] = value
    with pytest.raises(ValueError, match=f"D contains {word}"):
        make().solve(bad, np.ones(8))
    y = np.ones(8)
    y[1] = value
    with pytest.raises(ValueError, match=f"Y contains {word}"):
        make().solve(D, y)


@pytest.mark.parametrize("make", SOLVERS)
def test_wrong_types_and_empty(make, D):
    with pytest.raises(TypeError, match="Y has dtype"):
        make().solve(D, np.array(["a"] * 8))
    with pytest.raises(TypeError, match="D has complex dtype"):
        make().solve(D.astype(complex), np.ones(8))
    with pytest.raises(ValueError, match="Y is empty"):
        make().solve(D, np.ones((8, 0)))


@pytest.mark.parametrize("cls", [OMP, NonNegativeOMP])
@pytest.mark.parametrize("value", [0, -3])
def test_n_nonzero_coefs_must_be_positive(cls, value, D):
    with pytest.raises(ValueError, match="n_nonzero_coefs must be > 0"):
        cls(n_nonzero_coefs=value)
    solver = cls()
    solver.n_nonzero_coefs = value  # set_params path: checked again at solve
    with pytest.raises(ValueError, match="n_nonzero_coefs must be > 0"):
        solver.solve(D, np.ones(8))
    with pytest.raises(TypeError, match="n_nonzero_coefs must be an integer"):
        cls(n_nonzero_coefs=2.5)


def test_n_nonzero_coefs_above_the_atoms_raises(D):
    for solver in (OMP(n_nonzero_coefs=40), NonNegativeOMP(n_nonzero_coefs=40)):
        with pytest.raises(ValueError, match="n_nonzero_coefs=40 is larger than the number of"):
            solver.solve(D, np.random.default_rng(1).standard_normal(8))


@pytest.mark.parametrize("beta", [0, -1.0, np.inf, np.nan])
def test_beta_must_be_positive(beta):
    with pytest.raises(ValueError, match="beta must be"):
        FrankWolfe(beta=beta)


def test_unknown_step_rule():
    with pytest.raises(ValueError, match=r"unknown step 'linesearch'.*Did you mean 'line-search'"):
        FrankWolfe(beta=1.0, step="linesearch")
    with pytest.raises(ValueError, match="unknown step"):
        FrankWolfe(beta=1.0).set_params(step="armijo").solve(np.eye(3), np.ones(3))


def test_other_parameters(D):
    with pytest.raises(ValueError, match="tol must be >= 0"):
        OMP(tol=-1.0)
    with pytest.raises(ValueError, match="precompute must be"):
        OMP(precompute="yes")
    with pytest.raises(ValueError, match="max_iter must be > 0"):
        MatchingPursuit(max_iter=0)
    with pytest.raises(ValueError, match="gap_tol must be >= 0"):
        FrankWolfe(beta=1.0, gap_tol=-1e-3)
    with pytest.raises(ValueError, match="does not use a Gram"):
        FrankWolfe(beta=1.0).solve(D, np.ones(8), gram=D.T @ D)


def test_bad_gram(D):
    with pytest.raises(ValueError, match=r"gram must be D.T @ D of shape \(12, 12\)"):
        OMP(n_nonzero_coefs=2).solve(D, np.ones(8), gram=np.eye(8))
    with pytest.raises(ValueError, match="gram does not match D"):
        OMP(n_nonzero_coefs=2).solve(D, np.ones(8), gram=2 * D.T @ D)
    G = D.T @ D
    G[0, 1] = np.nan
    with pytest.raises(ValueError, match="gram contains NaN"):
        MatchingPursuit().solve(D, np.ones(8), gram=G)
