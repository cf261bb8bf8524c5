"""OMP and NN-OMP paths that other tests leave out: many signals on the parallel kernels and in
several chunks, both stopping rules at once, NN-OMP's tolerance."""

import numpy as np
import pytest
from sklearn.linear_model import orthogonal_mp

from sparsekit.solvers import _cpu, omp as omp_module
from sparsekit.solvers.nnomp import NonNegativeOMP
from sparsekit.solvers.omp import OMP

from ._problems import unit_gaussian
from .test_nnomp import reference_nnomp

N_SIG = 3 * _cpu.STEP_PARALLEL_MIN_ROWS + 17  # several chunks of >= 64 signals below


def mixed_sparsity_signals(rng, D, n_signals, noise=0.02):
    """Signals of 1 to 12 atoms (coefficients 1 <= |x_i| <= 2) plus a little noise: a tolerance
    stops them after different numbers of atoms."""
    n_features, n_atoms = D.shape
    Y = np.empty((n_features, n_signals))
    for j in range(n_signals):
        S = rng.choice(n_atoms, 1 + j % 12, replace=False)
        Y[:, j] = D[:, S] @ (np.sign(rng.standard_normal(S.size)) * rng.uniform(1, 2, S.size))
    return Y + noise * rng.standard_normal(Y.shape)


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(11)
    D = unit_gaussian(rng, 30, 70)
    return D, mixed_sparsity_signals(rng, D, N_SIG)


def sklearn_by_count(D, Y, counts):
    """scikit-learn's OMP codes with a per-signal number of atoms."""
    return np.column_stack(
        [
            orthogonal_mp(D, Y[:, j], n_nonzero_coefs=int(k)) if k else np.zeros(D.shape[1])
            for j, k in enumerate(counts)
        ]
    )


@pytest.mark.parametrize("precompute, factor_signals", [(True, None), (False, None), (False, 70)])
def test_many_signals_with_tolerance_equal_scikit_learn(
    monkeypatch, problem, precompute, factor_signals
):
    # tol lets signals finish at different iterations, so the parallel step kernels run on
    # subsets of the rows; factor_signals cuts the residual form into chunks of 70 signals
    D, Y = problem
    tol = 0.5
    n_max = min(D.shape)
    if factor_signals is not None:
        monkeypatch.setattr(omp_module, "_FACTOR_BYTES", factor_signals * n_max * n_max * 8)
    res = OMP(tol=tol, precompute=precompute).solve(D, Y)
    ref = orthogonal_mp(D, Y, tol=tol)
    np.testing.assert_allclose(res.coef, ref, rtol=1e-8, atol=1e-10)
    assert len(set(res.n_iter.tolist())) > 5  # stops at many iterations
    r2 = np.sum((Y - D @ res.coef) ** 2, axis=0)
    assert (r2 <= tol * (1 + 1e-10)).all() and (res.stop_reason == "tol").all()


@pytest.mark.parametrize("precompute", [True, False])
def test_tolerance_and_count_together_stop_at_whichever_comes_first(problem, precompute):
    D, Y = problem
    tol, k_max = 0.5, 6
    res = OMP(n_nonzero_coefs=k_max, tol=tol, precompute=precompute).solve(D, Y)
    by_tol = np.count_nonzero(orthogonal_mp(D, Y, tol=tol), axis=0)
    counts = np.minimum(by_tol, k_max)
    assert (by_tol < k_max).any() and (by_tol > k_max).any()  # both rules decide somewhere
    np.testing.assert_array_equal(res.n_iter, counts)
    np.testing.assert_allclose(res.coef, sklearn_by_count(D, Y, counts), rtol=1e-8, atol=1e-10)
    stopped_by_tol = by_tol <= k_max
    assert (res.stop_reason[stopped_by_tol] == "tol").all()
    assert (res.stop_reason[~stopped_by_tol] == "max_iter").all()
    r2 = np.sum((Y - D @ res.coef) ** 2, axis=0)
    assert (r2[~stopped_by_tol] > tol).all()


def reference_nnomp_tol(D, y, tol, k_max):
    """NN-OMP with its steps nested: the first k with ||r||^2 <= tol (checked before a step)."""
    for k in range(k_max + 1):
        x, S = reference_nnomp(D, y, k)
        if np.sum((y - D @ x) ** 2) <= tol or len(S) < k:
            return x, S
    return x, S


def test_nnomp_tolerance_on_many_signals_equals_the_reference():
    rng = np.random.default_rng(12)
    D = np.abs(unit_gaussian(rng, 30, 70))
    D /= np.linalg.norm(D, axis=0)
    n_signals = _cpu.STEP_PARALLEL_MIN_ROWS + 6
    X = np.zeros((70, n_signals))
    for j in range(n_signals):
        X[rng.choice(70, 1 + j % 8, replace=False), j] = rng.uniform(0.5, 2.0, size=1 + j % 8)
    Y = D @ X + 0.01 * rng.standard_normal((30, n_signals))
    tol = 0.05
    res = NonNegativeOMP(tol=tol).solve(D, Y)
    n_tol = 0
    for j in range(n_signals):
        x, S = reference_nnomp_tol(D, Y[:, j], tol, 30)
        assert res.support[: res.n_iter[j], j].tolist() == S
        np.testing.assert_allclose(res.coef[:, j], x, rtol=1e-8, atol=1e-10)
        if res.stop_reason[j] == "tol":
            n_tol += 1
            assert np.sum((Y[:, j] - D @ res.coef[:, j]) ** 2) <= tol * (1 + 1e-10)
    assert n_tol > n_signals // 2
    assert len(set(res.n_iter.tolist())) > 4
    # a count below what the tolerance needs wins where it comes first
    capped = NonNegativeOMP(tol=tol, n_nonzero_coefs=3).solve(D, Y)
    np.testing.assert_array_equal(capped.n_iter, np.minimum(res.n_iter, 3))
