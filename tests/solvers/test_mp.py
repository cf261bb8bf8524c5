import numpy as np
import pytest

from sparsekit.solvers.mp import MatchingPursuit

from ._problems import unit_gaussian


def reference_mp(D, y, n_iter):
    """Alg. 1 of Cherfaoui 2022, PhD thesis, §2.2, written on the residual (unit-norm atoms)."""
    x = np.zeros(D.shape[1])
    r = y.copy()
    norms = [np.linalg.norm(r)]
    for _ in range(n_iter):
        c = D.T @ r
        i = np.argmax(np.abs(c))
        x[i] += c[i]
        r = r - c[i] * D[:, i]
        norms.append(np.linalg.norm(r))
    return x, np.array(norms)


@pytest.fixture
def problem():
    rng = np.random.default_rng(2)
    return unit_gaussian(rng, 30, 70), rng.standard_normal((30, 6))


@pytest.mark.parametrize("precompute", [True, False])
def test_matches_reference_and_never_increases(problem, precompute):
    D, Y = problem
    res = MatchingPursuit(max_iter=40, precompute=precompute).solve(D, Y)
    for j in range(Y.shape[1]):
        x, norms = reference_mp(D, Y[:, j], 40)
        np.testing.assert_allclose(res.coef[:, j], x, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(res.residual_norms[:, j], norms, rtol=1e-7, atol=1e-12)
    assert (np.diff(res.residual_norms, axis=0) <= 1e-12).all()
    np.testing.assert_allclose(
        res.residual_norms[-1], np.linalg.norm(Y - D @ res.coef, axis=0), rtol=1e-7
    )
    # MP may select an atom again (OMP never does)
    assert any(len(set(res.support[:, j])) < 40 for j in range(Y.shape[1]))


def test_non_unit_atoms_use_normalised_selection(problem):
    D, Y = problem
    scale = np.linspace(0.5, 3.0, D.shape[1])
    scaled = MatchingPursuit(max_iter=15).solve(D * scale, Y)
    unit = MatchingPursuit(max_iter=15).solve(D, Y)
    np.testing.assert_array_equal(scaled.support, unit.support)
    np.testing.assert_allclose(scaled.coef * scale[:, None], unit.coef, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("precompute", [True, False])
def test_tolerance_and_batch_equals_single(problem, precompute):
    D, Y = problem
    tol = 0.2 * float(np.min(np.sum(Y**2, axis=0)))
    solver = MatchingPursuit(max_iter=500, tol=tol, precompute=precompute)
    batch = solver.solve(D, Y)
    assert (batch.stop_reason == "tol").all()
    assert (np.sum((Y - D @ batch.coef) ** 2, axis=0) <= tol * (1 + 1e-8)).all()
    for j in range(Y.shape[1]):
        one = solver.solve(D, Y[:, j])
        np.testing.assert_allclose(one.coef, batch.coef[:, j], rtol=1e-12, atol=1e-14)
        assert one.n_iter == batch.n_iter[j]


def test_orthonormal_basis_exact_in_m_steps():
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((20, 20)))
    x = np.zeros(20)
    x[[2, 7, 11]] = [1.5, -2.0, 0.7]
    res = MatchingPursuit(max_iter=10).solve(Q, Q @ x)
    assert res.n_iter == 3 and res.stop_reason == "no_correlation"
    np.testing.assert_allclose(res.coef, x, atol=1e-12)


def test_float32(problem):
    D, Y = problem
    r32 = MatchingPursuit(max_iter=10).solve(D.astype(np.float32), Y.astype(np.float32))
    r64 = MatchingPursuit(max_iter=10).solve(D, Y)
    assert r32.coef.dtype == np.float32
    np.testing.assert_allclose(r32.coef, r64.coef, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("precompute", [True, False])
def test_default_iterations_are_ten_percent_of_the_atoms(precompute):
    """``max_iter=None`` runs ``max(int(0.1 n_atoms), 1)`` iterations, the default scikit-learn
    gives ``orthogonal_mp``'s ``n_nonzero_coefs`` (the atoms are the columns of its ``X``); a
    generic signal in 10 dimensions is not fitted exactly by 5 MP steps."""
    rng = np.random.default_rng(6)
    D = unit_gaussian(rng, 10, 50)
    res = MatchingPursuit(precompute=precompute).solve(D, rng.standard_normal(10))
    assert res.n_iter == 5 and res.stop_reason == "max_iter"
