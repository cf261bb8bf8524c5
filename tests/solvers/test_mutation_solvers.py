"""Value tests for solver rules that the other solver tests leave open (issue 20's mutation run).

Oracles: a NumPy Matching Pursuit on the residual, SciPy's NNLS, scikit-learn's OMP, and
small problems in exact (dyadic) arithmetic whose answers are known in closed form.
"""

import numpy as np
import pytest
from scipy.optimize import nnls
from sklearn.linear_model import orthogonal_mp

from sparsekit.solvers import base
from sparsekit.solvers.base import gram_pays
from sparsekit.solvers.coherence import (
    residual_bound,
    satisfies_coherence_condition,
    theorem6_factor,
)
from sparsekit.solvers.dictionaries import gaussian_dictionary, sparse_signals
from sparsekit.solvers.fw import FrankWolfe
from sparsekit.solvers.mp import MatchingPursuit
from sparsekit.solvers.nnomp import NonNegativeOMP
from sparsekit.solvers.omp import OMP

from ._problems import sparse_problem, unit_gaussian


def reference_mp_norms(D, y, n_iter):
    """||r_k|| of Matching Pursuit on the residual (unit-norm atoms), k = 0..n_iter."""
    r = y.copy()
    norms = [np.linalg.norm(r)]
    for _ in range(n_iter):
        c = D.T @ r
        i = np.argmax(np.abs(c))
        r = r - c[i] * D[:, i]
        norms.append(np.linalg.norm(r))
    return np.array(norms)


@pytest.mark.parametrize("precompute", [True, False])
def test_mp_stops_at_the_first_iteration_that_meets_tol(precompute):
    rng = np.random.default_rng(3)
    D = unit_gaussian(rng, 20, 35)
    Y = rng.standard_normal((20, 4))
    tol = 0.3 * float(np.min(np.sum(Y**2, axis=0)))
    res = MatchingPursuit(max_iter=200, tol=tol, precompute=precompute).solve(D, Y)
    for j in range(Y.shape[1]):
        norms = reference_mp_norms(D, Y[:, j], 200)
        first = int(np.flatnonzero(norms**2 <= tol)[0])
        assert res.n_iter[j] == first
        assert res.stop_reason[j] == "tol"
        np.testing.assert_allclose(res.residual_norms[: first + 1, j], norms[: first + 1])
        assert np.isnan(res.residual_norms[first + 1 :, j]).all()
        assert (res.support[first:, j] == -1).all()


def test_nnomp_keeps_the_entering_atom_when_the_old_one_drops_to_exactly_zero():
    """In exact arithmetic: y = d2 and d1 correlates more with y, so NN-OMP picks d1 first
    (x1 = 1/4) and then d2, where the least squares on {d1, d2} put d1 at exactly 0 and d2 at 1.
    The Lawson-Hanson step then has a zero (not negative) entry and no blocking atom."""
    D = np.array([[2.0, 1.0], [2.0, 1.0], [2.0, 0.0], [2.0, 0.0]])
    y = D[:, 1].copy()
    ref, rnorm = nnls(D, y)
    np.testing.assert_array_equal(ref, [0.0, 1.0])
    res = NonNegativeOMP(n_nonzero_coefs=2).solve(D, y)
    assert res.support.tolist() == [0, 1]
    np.testing.assert_allclose(res.coef, ref, rtol=1e-15, atol=1e-15)
    assert rnorm <= 1e-15 and res.residual_norms[2] <= 1e-15


def test_nnomp_reports_a_zero_residual_for_exact_non_negative_fits():
    """y = D x with x >= 0 on a few atoms of an incoherent dictionary: NN-OMP recovers x and the
    reported residual norm (from the normal equations, clipped at 0) is the true one, ~0."""
    rng = np.random.default_rng(11)
    D = unit_gaussian(rng, 60, 80)
    X = np.zeros((80, 24))
    for j in range(X.shape[1]):
        X[rng.choice(80, 3, replace=False), j] = rng.uniform(1.0, 2.0, 3)
    Y = D @ X
    res = NonNegativeOMP(n_nonzero_coefs=3).solve(D, Y)
    np.testing.assert_allclose(res.coef, X, atol=1e-10)
    last = res.residual_norms[res.n_iter, np.arange(Y.shape[1])]
    true = np.linalg.norm(Y - D @ res.coef, axis=0)
    np.testing.assert_allclose(last, true, atol=1e-7)


@pytest.mark.parametrize(
    "solve",
    [
        lambda D, y: MatchingPursuit(max_iter=2, tol=0.0, precompute=True).solve(D, y),
        lambda D, y: MatchingPursuit(max_iter=2, tol=0.0, precompute=False).solve(D, y),
        lambda D, y: NonNegativeOMP(n_nonzero_coefs=2, tol=0.0).solve(D, y),
    ],
    ids=["mp-gram", "mp-residual", "nn-omp"],
)
def test_tol_met_at_the_last_allowed_step_is_reported_as_tol(solve):
    """On the standard basis, y = 3 e0 + 2 e1 is fitted exactly (in exact arithmetic) by its two
    atoms, so ||r||^2 = 0 <= tol = 0 at the last step allowed: the stop reason is "tol"."""
    D = np.eye(4)
    y = np.array([3.0, 2.0, 0.0, 0.0])
    res = solve(D, y)
    assert res.n_iter == 2
    assert res.residual_norms[2] == 0.0
    assert res.stop_reason == "tol"
    np.testing.assert_array_equal(res.coef, y)


def test_frank_wolfe_zero_step_stops_the_signal():
    """After the gap test, a line-search step ``g / ||u||^2`` is 0 only by underflow: here
    ``g = beta <d, y> = 1e-17`` and ``||u||^2 = beta^2 = 1e308``, so gamma = 1e-325 rounds to 0.
    The signal then stops with "zero_step" and no later step or gap is computed (NaN).
    ``solve`` divides such tiny signals by a power of two first (``test_scale.py``), so the
    rule is checked on the data as given, through ``_solve_residual``."""
    D = np.array([[1.0], [0.0]])
    y = np.array([1e-171, 1e-161])
    solver = FrankWolfe(beta=1e154, max_iter=5)
    problem = base.prepare(D, y)
    problem.params, problem.n_steps = solver._check_params(), solver._n_steps(problem)
    res = base.result_of(solver._solve_residual(problem), problem)
    assert res.stop_reason == "zero_step"
    assert res.n_iter == 0 and not res.coef.any()
    np.testing.assert_allclose(res.gaps[0], 1e154 * 1e-171)
    assert res.steps[0] == 0.0
    assert np.isnan(res.steps[1:]).all() and np.isnan(res.gaps[1:]).all()


def test_frank_wolfe_prunes_rounding_level_coefficients_in_the_solve():
    """With the 2/(k+2) rule an atom picked with both signs can keep a coefficient of about
    1e-18 (6 of these 60 seeds give one such signal here; the exact count depends on the
    platform's rounding, so many seeds are tried); the solve zeroes it (``extra["pruned"]``
    counts it), so that every coefficient left passes the rule
    |x_i| ||d_i|| > 16 eps sum_j |x_j| ||d_j||, checked here by brute force."""
    total = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        D, Y, X = sparse_problem(rng, 10, 15, 2, 8)
        beta = 8.0 * np.abs(X).sum(axis=0)
        res = FrankWolfe(beta=beta, step="2/(k+2)", max_iter=2000).solve(D, Y)
        pruned = res.extra["pruned"]
        assert pruned.dtype == np.int64 and pruned.shape == (8,)
        total += int(pruned.sum())
        weight = np.abs(res.coef) * np.linalg.norm(D, axis=0)[:, None]
        floor = 16 * np.finfo(float).eps * weight.sum(axis=0)
        kept = res.coef != 0
        assert (weight > floor)[kept].all()
        # zeroing rounding-level weights leaves the fit as reported
        last = res.residual_norms[res.n_iter, np.arange(8)]
        np.testing.assert_allclose(np.linalg.norm(Y - D @ res.coef, axis=0), last, rtol=1e-9)
    assert total >= 1


@pytest.mark.parametrize(
    "n_atoms, itemsize, expected",
    [(8192, 8, True), (8193, 8, False), (11585, 4, True), (11586, 4, False)],
)
def test_auto_gram_only_within_its_memory_budget(n_atoms, itemsize, expected):
    """``precompute="auto"`` builds D^T D only when its n_atoms^2 itemsize bytes fit 512 MiB
    (8192^2 * 8 = 2^29 bytes exactly; 11585^2 * 4 < 2^29 < 11586^2 * 4)."""
    assert gram_pays(n_atoms, 10**6, 10, itemsize, "auto") is expected
    # and only when it is cheaper than the residual form: n_atoms < n_signals * n_steps
    assert gram_pays(100, 10, 10, itemsize, "auto") is False
    assert gram_pays(99, 10, 10, itemsize, "auto") is True


def test_omp_auto_skips_the_gram_above_the_memory_budget(monkeypatch):
    rng = np.random.default_rng(0)
    D = unit_gaussian(rng, 20, 30)
    Y = rng.standard_normal((20, 40))
    ref = orthogonal_mp(D, Y, n_nonzero_coefs=4)

    def no_gram(self, gram=None):
        raise AssertionError("the Gram matrix was built")

    monkeypatch.setattr(base, "GRAM_AUTO_MAX_BYTES", 30 * 30 * 8 - 1)
    monkeypatch.setattr(base.Problem, "gram", no_gram)
    res = OMP(n_nonzero_coefs=4).solve(D, Y)
    np.testing.assert_allclose(res.coef, ref, rtol=1e-8, atol=1e-12)


def test_coherence_condition_and_bounds_at_their_smallest_arguments():
    # Tropp's condition m < (1/mu + 1) / 2 at m = 1: (1/0.5 + 1) / 2 = 1.5
    assert satisfies_coherence_condition(1, 0.5) is True
    assert satisfies_coherence_condition(2, 0.5) is False
    # Theorem 6 with ||y|| below 1: tau = (2 * 0.5 / 10) sqrt(2 / 0.9)
    tau = 0.1 * np.sqrt(2 / 0.9)
    np.testing.assert_allclose(
        theorem6_factor(2, 0.1, 0.5, 10.0), 1 - (0.9 / 8) * (1 - tau) ** 2, rtol=1e-15
    )
    # a zero signal: the bound is 0 at every k
    np.testing.assert_array_equal(residual_bound(0.0, 0.3, 4), np.zeros(5))
    np.testing.assert_allclose(residual_bound(2.0, 0.75, 2), [2.0, 1.0, 0.5], rtol=1e-15)


def test_sparse_signals_with_one_nonzero_per_signal():
    D = gaussian_dictionary(6, 9, random_state=0)
    Y, X = sparse_signals(D, 1, n_signals=5, random_state=1)
    assert ((X != 0).sum(axis=0) == 1).all()
    np.testing.assert_allclose(Y, D @ X, rtol=1e-15)
