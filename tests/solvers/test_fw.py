import numpy as np
import pytest

from sparsekit.solvers.coherence import (
    babel,
    exact_recovery_condition,
    mutual_coherence,
    theorem5_rate,
    theorem6_factor,
)
from sparsekit.solvers.fw import FrankWolfe

from ._problems import sparse_problem, unit_gaussian


@pytest.fixture(scope="module")
def recovery_problem():
    """Gaussian dictionary with m < (1/mu + 1)/2 and exactly m-sparse signals."""
    rng = np.random.default_rng(11)
    D = unit_gaussian(rng, 300, 400)
    mu = mutual_coherence(D)
    m = int(np.ceil(0.5 * (1 / mu + 1))) - 1
    assert m >= 2 and m < 0.5 * (1 / mu + 1)
    X = np.zeros((400, 6))
    for j in range(6):
        X[rng.choice(400, m, replace=False), j] = rng.standard_normal(m)
    return D, D @ X, X, m


def objective(D, y, x):
    return 0.5 * np.sum((y - D @ x) ** 2)


def test_line_search_step_is_the_clipped_closed_form():
    rng = np.random.default_rng(0)
    D = unit_gaussian(rng, 20, 35)
    y = 3.0 * rng.standard_normal(20)
    # radius below max |<d_i, y>|: the unconstrained step exceeds 1 at k = 0 and gets clipped
    beta = 0.9 * np.abs(D.T @ y).max()
    clipped = 0
    for k in range(12):
        prev = FrankWolfe(beta=beta, max_iter=k).solve(D, y) if k else None
        x = prev.coef if k else np.zeros(35)
        cur = FrankWolfe(beta=beta, max_iter=k + 1).solve(D, y)
        r = y - D @ x
        c = D.T @ r
        i = int(np.argmax(np.abs(c)))
        s = np.zeros(35)
        s[i] = np.sign(c[i]) * beta
        u = D @ (s - x)
        gamma_star = (u @ r) / (u @ u)
        gamma = min(max(gamma_star, 0.0), 1.0)
        clipped += gamma_star > 1.0
        assert cur.support[k] == i
        np.testing.assert_allclose(cur.steps[k], gamma, rtol=1e-10, atol=1e-12)
        assert 0.0 < gamma
        np.testing.assert_allclose(cur.gaps[k], u @ r, rtol=1e-10)
        np.testing.assert_allclose(cur.coef, x + gamma * (s - x), rtol=1e-10, atol=1e-13)
        # exact line search: no step on a grid of [0, 1] does better
        grid = np.linspace(0, 1, 201)
        best = min(objective(D, y, x + g * (s - x)) for g in grid)
        assert objective(D, y, cur.coef) <= best + 1e-12
    assert clipped >= 1


def test_two_over_k_plus_two_rule():
    rng = np.random.default_rng(1)
    D = unit_gaussian(rng, 15, 25)
    y = rng.standard_normal(15)
    res = FrankWolfe(beta=2.0, step="2/(k+2)", max_iter=30).solve(D, y)
    np.testing.assert_allclose(res.steps, 2.0 / (np.arange(30) + 2.0))
    assert np.abs(res.coef).sum() <= 2.0 + 1e-12
    np.testing.assert_allclose(res.residual_norms[-1], np.linalg.norm(y - D @ res.coef), rtol=1e-9)


def test_theorem4_selects_only_true_support_atoms(recovery_problem):
    D, Y, X, m = recovery_problem
    beta = 8 * np.abs(X).sum(axis=0).max()
    # stop before the residual reaches rounding level, where the theorem no longer applies
    res = FrankWolfe(beta=beta, max_iter=2000, tol=1e-20).solve(D, Y)
    assert (res.stop_reason == "tol").all()
    for j in range(Y.shape[1]):
        sel = res.support[: res.n_iter[j], j]
        assert set(sel.tolist()) <= set(np.flatnonzero(X[:, j]).tolist())
        assert np.abs(res.coef[:, j]).sum() <= beta * (1 + 1e-12)


def test_theorem5_bound_and_monotone_residual(recovery_problem):
    D, Y, X, m = recovery_problem
    mu1 = babel(D, m - 1)
    for j in range(3):
        y, a1 = Y[:, j], np.abs(X[:, j]).sum()
        beta = 8 * a1
        res = FrankWolfe(beta=beta, max_iter=200).solve(D, y)
        theta = theorem5_rate(m, mu1, a1, beta)
        bound = np.linalg.norm(y) * (1 - theta) ** (np.arange(res.n_iter + 1) / 2)
        norms = res.residual_norms[: res.n_iter + 1]
        assert (norms <= bound * (1 + 1e-12)).all()
        assert (np.diff(norms) <= 1e-12).all()  # line search never increases f
        assert norms[-1] < 1e-3 * norms[0]


def test_theorem6_contraction_from_the_first_iteration(recovery_problem):
    D, Y, X, m = recovery_problem
    mu1 = babel(D, m - 1)
    y = Y[:, 0]
    beta = 2.5 * 2 * np.linalg.norm(y) * np.sqrt(m / (1 - mu1))
    factor = theorem6_factor(m, mu1, np.linalg.norm(y), beta)
    res = FrankWolfe(beta=beta, max_iter=200, tol=1e-20).solve(D, y)
    assert res.stop_reason == "tol"
    r2 = res.residual_norms[: res.n_iter + 1] ** 2
    assert (r2[1:] <= factor * r2[:-1] * (1 + 1e-10)).all()
    assert ((res.steps[: res.n_iter] > 0) & (res.steps[: res.n_iter] < 1)).all()


def test_stopping_rules():
    rng = np.random.default_rng(2)
    D, Y, X = sparse_problem(rng, 60, 80, 2, 3)
    big = FrankWolfe(beta=10 * np.abs(X).sum(0).max(), max_iter=5000)
    by_tol = big.set_params(tol=1e-8).solve(D, Y)
    assert (by_tol.stop_reason == "tol").all()
    assert (np.sum((Y - D @ by_tol.coef) ** 2, axis=0) <= 1e-8).all()
    by_gap = big.set_params(tol=None, gap_tol=1e-6).solve(D, Y)
    assert (by_gap.stop_reason == "gap").all()
    for j in range(3):
        assert by_gap.gaps[by_gap.n_iter[j], j] <= 1e-6
        assert (by_gap.gaps[: by_gap.n_iter[j], j] > 1e-6).all()
    zero = FrankWolfe(beta=1.0).solve(D, np.zeros(60))
    assert (
        zero.stop_reason == "tol" and zero.n_iter == 0 and not zero.coef.any()
    )  # y = 0: at the floor
    capped = FrankWolfe(beta=3.0, max_iter=7).solve(D, rng.standard_normal((60, 3)))
    assert (capped.n_iter == 7).all() and (capped.stop_reason == "max_iter").all()
    assert capped.residual_norms.shape == (8, 3) and capped.steps.shape == (7, 3)


def test_gap_bounds_suboptimality():
    rng = np.random.default_rng(3)
    D = unit_gaussian(rng, 25, 40)
    y = rng.standard_normal(25)
    res = FrankWolfe(beta=1.0, max_iter=400).solve(D, y)
    long = FrankWolfe(beta=1.0, max_iter=4000).solve(D, y)
    f_star = objective(D, y, long.coef)
    n = res.n_iter
    assert n > 20
    for k in (1, n // 4, n // 2, n - 1):
        xk = FrankWolfe(beta=1.0, max_iter=k).solve(D, y).coef
        assert objective(D, y, xk) - f_star <= res.gaps[k] + 1e-12


def test_batch_equals_single_and_float32():
    rng = np.random.default_rng(4)
    D = unit_gaussian(rng, 30, 50)
    Y = rng.standard_normal((30, 5))
    solver = FrankWolfe(beta=3.0, max_iter=80, gap_tol=1e-3)
    batch = solver.solve(D, Y)
    for j in range(5):
        one = solver.solve(D, Y[:, j])
        np.testing.assert_allclose(one.coef, batch.coef[:, j], rtol=1e-12, atol=1e-14)
        assert one.n_iter == batch.n_iter[j]
    r32 = FrankWolfe(beta=3.0, max_iter=20).solve(D.astype(np.float32), Y.astype(np.float32))
    r64 = FrankWolfe(beta=3.0, max_iter=20).solve(D, Y)
    assert r32.coef.dtype == np.float32 and r32.steps.dtype == np.float32
    np.testing.assert_allclose(r32.residual_norms, r64.residual_norms, rtol=1e-4)


def test_beta_per_signal():
    rng = np.random.default_rng(5)
    D = unit_gaussian(rng, 20, 30)
    Y = rng.standard_normal((20, 3))
    betas = np.array([0.5, 2.0, 4.0])
    batch = FrankWolfe(beta=betas, max_iter=40).solve(D, Y)
    for j in range(3):
        one = FrankWolfe(beta=float(betas[j]), max_iter=40).solve(D, Y[:, j])
        np.testing.assert_allclose(batch.coef[:, j], one.coef, rtol=1e-12, atol=1e-14)
    assert (np.abs(batch.coef).sum(axis=0) <= betas * (1 + 1e-12)).all()
    with pytest.raises(ValueError, match="beta has 2 values but Y has 3 signals"):
        FrankWolfe(beta=betas[:2]).solve(D, Y)
    with pytest.raises(ValueError, match="beta must be > 0 for every signal"):
        FrankWolfe(beta=np.array([1.0, -1.0, 1.0]))


def _issue_case(rng, n_features, n_atoms, m):
    D = unit_gaussian(rng, n_features, n_atoms)
    support = np.sort(rng.choice(n_atoms, m, replace=False))
    x = np.zeros(n_atoms)
    x[support] = rng.standard_normal(m) + np.sign(rng.standard_normal(m))
    return D, D @ x, x, support


@pytest.mark.parametrize("step", ["line-search", "2/(k+2)"])
@pytest.mark.parametrize(
    "shape, m, condition",
    [
        ((1000, 2000), 3, "erc"),  # 3-sparse on a 1000 x 2000 Gaussian dictionary
        ((400, 800), 2, "coherence"),  # m < (1/mu + 1)/2 checked on the whole dictionary
    ],
)
def test_support_stays_inside_the_true_support(step, shape, m, condition):
    """Theorem 4 (Cherfaoui thesis §5.3; Tropp 2004, Thm 3.1): under the exact recovery
    condition, or m < (1/mu + 1)/2, every selected atom is in the support of y, for any step
    rule. In floating point this holds until the residual reaches rounding level; the round-off
    stop keeps the returned support inside the true one (no weights of size eps elsewhere)."""
    rng = np.random.default_rng(17)
    D, y, x, support = _issue_case(rng, *shape, m)
    if condition == "coherence":
        assert m < 0.5 * (1 / mutual_coherence(D) + 1)
    else:
        assert exact_recovery_condition(D, support) < 1
    res = FrankWolfe(beta=8 * np.abs(x).sum(), step=step, max_iter=200).solve(D, y)
    found = np.flatnonzero(res.coef)
    assert set(found) <= set(support), sorted(set(found) - set(support))
    assert set(res.support[: res.n_iter]) <= set(support)
    if step == "line-search":  # exponential convergence (Theorem 5): round-off before 200 it
        assert res.stop_reason in ("tol", "gap") and res.n_iter < 200
        assert res.residual_norms[res.n_iter] <= 16 * np.finfo(float).eps * np.linalg.norm(y)
        np.testing.assert_allclose(res.coef, x, atol=1e-12)
        assert set(found) == set(support)
    else:
        assert res.n_iter == 200 and res.stop_reason == "max_iter"


def test_coefficients_at_rounding_level_are_dropped():
    from sparsekit.solvers.fw import prune_roundoff

    coef = np.array([[1.0, -2.0, 1e-17, 0.0, -3e-16], [1e-3, 0.0, 0.0, 0.0, 0.0]])
    norms = np.array([1.0, 1.0, 1.0, 1.0, 2.0])
    dropped = prune_roundoff(coef, norms, 16 * np.finfo(float).eps)
    # 3e-16 * 2 = 6e-16 <= 16 eps * (1 + 2 + 6e-16) ~ 1.07e-14: noise; 1e-3 alone is the signal
    np.testing.assert_array_equal(dropped, [2, 0])
    np.testing.assert_array_equal(coef, [[1.0, -2.0, 0.0, 0.0, 0.0], [1e-3, 0, 0, 0, 0]])


@pytest.mark.parametrize("beta", [0.0, np.array([1.0, 0.0, 2.0])])
def test_a_zero_radius_is_refused_as_a_scalar_and_per_signal(beta):
    """The l1 ball of radius 0 is the point ``x = 0`` (no sparse approximation): ``beta > 0``
    is required for a scalar and for every signal's radius alike (the boundary value 0)."""
    with pytest.raises(ValueError, match="beta"):
        FrankWolfe(beta=beta)
