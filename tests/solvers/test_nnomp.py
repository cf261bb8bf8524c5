import warnings

import numpy as np
import pytest
from scipy.optimize import nnls

from sparsekit.solvers.nnomp import NonNegativeOMP

from ._problems import unit_gaussian


def reference_nnomp(D, y, k_max):
    """Alg. 7 of Cherfaoui 2022, PhD thesis, Ch. 6, with scipy's NNLS."""
    S = []
    x = np.zeros(0)
    r = y.copy()
    while len(S) < k_max:
        c = D.T @ r
        c[S] = -np.inf
        i = int(np.argmax(c))
        if c[i] <= 1e-12:
            break
        S.append(i)
        x, _ = nnls(D[:, S], y)
        r = y - D[:, S] @ x
    out = np.zeros(D.shape[1])
    out[S] = x
    return out, S


@pytest.fixture
def problem():
    rng = np.random.default_rng(4)
    return unit_gaussian(rng, 40, 60), rng.standard_normal((40, 8))


def test_matches_reference_nnls(problem):
    D, Y = problem
    res = NonNegativeOMP(n_nonzero_coefs=25).solve(D, Y)
    assert (res.coef >= 0).all()
    for j in range(Y.shape[1]):
        x, S = reference_nnomp(D, Y[:, j], 25)
        assert res.support[: res.n_iter[j], j].tolist() == S
        np.testing.assert_allclose(res.coef[:, j], x, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(
            res.residual_norms[res.n_iter[j], j],
            np.linalg.norm(Y[:, j] - D @ res.coef[:, j]),
            rtol=1e-6,
        )


def test_stops_when_no_atom_correlates_positively(problem):
    D, Y = problem
    res = NonNegativeOMP(n_nonzero_coefs=60).solve(D, Y)
    for j in range(Y.shape[1]):
        assert res.stop_reason[j] == "no_correlation"
        assert res.n_iter[j] < 40
        r = Y[:, j] - D @ res.coef[:, j]
        assert (D.T @ r).max() <= 1e-9
    # a signal anti-correlated with every atom gets no atom at all
    D_pos = np.abs(D)
    D_pos /= np.linalg.norm(D_pos, axis=0)
    res = NonNegativeOMP(n_nonzero_coefs=5).solve(D_pos, -np.abs(Y[:, 0]))
    assert res.n_iter == 0 and res.stop_reason == "no_correlation" and not res.coef.any()


def test_recovers_nonnegative_sparse_signal():
    rng = np.random.default_rng(7)
    D = unit_gaussian(rng, 200, 300)
    x = np.zeros(300)
    S = rng.choice(300, 4, replace=False)
    x[S] = rng.uniform(1.0, 2.0, 4)
    res = NonNegativeOMP(n_nonzero_coefs=10).solve(D, D @ x)
    assert set(res.support[: res.n_iter].tolist()) == set(S.tolist())
    np.testing.assert_allclose(res.coef, x, atol=1e-9)


def test_batch_equals_single_and_float32(problem):
    D, Y = problem
    solver = NonNegativeOMP(n_nonzero_coefs=10)
    batch = solver.solve(D, Y)
    for j in range(3):
        np.testing.assert_allclose(
            solver.solve(D, Y[:, j]).coef, batch.coef[:, j], rtol=1e-12, atol=1e-14
        )
    r32 = solver.solve(D.astype(np.float32), Y.astype(np.float32))
    assert r32.coef.dtype == np.float32 and (r32.coef >= 0).all()
    np.testing.assert_allclose(r32.coef, batch.coef, atol=2e-3)


@pytest.mark.parametrize("seed", [1, 5])
def test_nnls_step_drops_atoms_and_matches_scipy(seed):
    """Supports where the Lawson-Hanson NNLS moves atoms back to 0 (the constraint is active):
    the coefficients on the support equal scipy's NNLS on the same columns. With seed 1 the
    blocking atom of one step rounds to 5e-209 instead of 0; it must still leave the passive
    set (it once stayed, and the NNLS stopped at a point that is not its minimiser)."""
    rng = np.random.default_rng(seed)
    D = unit_gaussian(rng, 12, 20)
    Y = rng.standard_normal((12, 6))
    res = NonNegativeOMP(n_nonzero_coefs=12).solve(D, Y)
    dropped = 0
    for j in range(Y.shape[1]):
        S = res.support[: res.n_iter[j], j]
        ref, _ = nnls(D[:, S], Y[:, j])
        np.testing.assert_allclose(res.coef[S, j], ref, rtol=1e-10, atol=1e-12)
        dropped += int((res.coef[S, j] == 0).sum())
    assert dropped >= 5  # atoms of the support moved back to 0: the constraint was active


def test_tiny_atoms_give_the_scaled_codes(problem):
    """Atoms scaled by ``s = 2^-60`` give the codes times ``2^60`` (every threshold is relative
    to ``||d|| ||y||``): the selection floor must not stop the solve. Oracle: the scale
    invariance ``D s, y -> x / s``, exact in binary for a power of two."""
    D, Y = problem
    ref = NonNegativeOMP(n_nonzero_coefs=5).solve(D, Y)
    s = 2.0**-60
    res = NonNegativeOMP(n_nonzero_coefs=5).solve(D * s, Y)
    assert (ref.n_iter > 0).all()
    np.testing.assert_array_equal(res.n_iter, ref.n_iter)
    np.testing.assert_allclose(res.coef * s, ref.coef, rtol=1e-9, atol=1e-12)


def test_the_natural_stop_does_not_warn(problem):
    """Stopping because no atom correlates positively is NN-OMP's own stop (Bruckstein, Elad &
    Zibulevsky 2008), not a premature one: no warning, although the residual is not zero.
    Oracle: the KKT condition ``max_i <d_i, r> <= 0`` checked with NumPy."""
    D, Y = problem
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = NonNegativeOMP(n_nonzero_coefs=60).solve(D, Y[:, :2])
    assert list(res.stop_reason) == ["no_correlation"] * 2
    R = Y[:, :2] - D @ res.coef
    assert (np.linalg.norm(R, axis=0) > 0.1).all() and (D.T @ R).max() <= 1e-9
