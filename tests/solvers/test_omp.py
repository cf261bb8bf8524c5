import warnings

import numpy as np
import pytest
from sklearn.linear_model import orthogonal_mp, orthogonal_mp_gram

from sparsekit.solvers.base import PrematureStopWarning
from sparsekit.solvers.coherence import mutual_coherence
from sparsekit.solvers.mp import MatchingPursuit
from sparsekit.solvers.nnomp import NonNegativeOMP
from sparsekit.solvers.omp import OMP

from ._problems import sparse_problem, unit_gaussian


@pytest.fixture
def problem():
    rng = np.random.default_rng(1)
    return unit_gaussian(rng, 40, 90), rng.standard_normal((40, 9))


@pytest.mark.parametrize("precompute", [True, False])
@pytest.mark.parametrize("k", [1, 5, 12])
def test_matches_sklearn_by_count(problem, precompute, k):
    D, Y = problem
    res = OMP(n_nonzero_coefs=k, precompute=precompute).solve(D, Y)
    ref = orthogonal_mp(D, Y, n_nonzero_coefs=k)
    np.testing.assert_allclose(res.coef, ref, rtol=1e-8, atol=1e-12)
    assert (res.n_iter == k).all()
    # the reported residual is the true one
    np.testing.assert_allclose(
        res.residual_norms[k], np.linalg.norm(Y - D @ res.coef, axis=0), rtol=1e-7
    )


@pytest.mark.parametrize("precompute", [True, False])
def test_matches_sklearn_by_tolerance(problem, precompute):
    D, Y = problem
    tol = 0.3 * float(np.min(np.sum(Y**2, axis=0)))
    res = OMP(tol=tol, precompute=precompute).solve(D, Y)
    ref = orthogonal_mp(D, Y, tol=tol)
    np.testing.assert_allclose(res.coef, ref, rtol=1e-8, atol=1e-12)
    r2 = np.sum((Y - D @ res.coef) ** 2, axis=0)
    assert (r2 <= tol * (1 + 1e-10)).all()
    assert (res.stop_reason == "tol").all()
    # one atom fewer would not have met the tolerance
    for j in range(Y.shape[1]):
        k = res.n_iter[j]
        assert res.residual_norms[k - 1, j] ** 2 > tol


def test_precomputed_gram_matches_sklearn_gram(problem):
    D, Y = problem
    G = D.T @ D
    res = OMP(n_nonzero_coefs=7).solve(D, Y, gram=G)
    ref = orthogonal_mp_gram(G, D.T @ Y, n_nonzero_coefs=7)
    np.testing.assert_allclose(res.coef, ref, rtol=1e-8, atol=1e-12)
    tol = 0.5 * float(np.min(np.sum(Y**2, axis=0)))
    res = OMP(tol=tol).solve(D, Y, gram=G)
    ref = orthogonal_mp_gram(G, D.T @ Y, tol=tol, norms_squared=np.sum(Y**2, axis=0))
    np.testing.assert_allclose(res.coef, ref, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("precompute", [True, False])
def test_path_matches_sklearn(problem, precompute):
    D, Y = problem
    res = OMP(n_nonzero_coefs=6, return_path=True, precompute=precompute).solve(D, Y)
    ref = orthogonal_mp(D, Y, n_nonzero_coefs=6, return_path=True)
    np.testing.assert_allclose(res.dense_path(), ref, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(res.dense_path()[:, :, -1], res.coef, rtol=1e-12)


@pytest.mark.parametrize("precompute", [True, False])
def test_never_reselects_and_residual_orthogonal(problem, precompute):
    D, Y = problem
    res = OMP(n_nonzero_coefs=30, precompute=precompute).solve(D, Y)
    for j in range(Y.shape[1]):
        sel = res.support[: res.n_iter[j], j]
        assert len(set(sel.tolist())) == sel.size
        r = Y[:, j] - D @ res.coef[:, j]
        assert np.abs(D[:, sel].T @ r).max() < 1e-10 * np.linalg.norm(Y[:, j])
    assert (np.diff(res.residual_norms, axis=0) <= 1e-12).all()


@pytest.mark.parametrize("precompute", [True, False])
def test_exact_recovery_under_coherence_condition(precompute):
    rng = np.random.default_rng(3)
    D = unit_gaussian(rng, 400, 600)
    mu = mutual_coherence(D)
    m = int(np.ceil(0.5 * (1 / mu + 1))) - 1
    assert 1 <= m < 0.5 * (1 / mu + 1)
    _, _, X = sparse_problem(rng, 400, 600, m, 12)
    Y = D @ X
    res = OMP(n_nonzero_coefs=m, precompute=precompute).solve(D, Y)
    for j in range(Y.shape[1]):
        assert set(res.support[:, j].tolist()) == set(np.flatnonzero(X[:, j]).tolist())
    np.testing.assert_allclose(res.coef, X, atol=1e-10)


@pytest.mark.parametrize("precompute", [True, False])
def test_batched_equals_one_at_a_time(problem, precompute):
    D, Y = problem
    solver = OMP(n_nonzero_coefs=8, precompute=precompute)
    batch = solver.solve(D, Y)
    for j in range(Y.shape[1]):
        one = solver.solve(D, Y[:, j])
        assert one.coef.shape == (D.shape[1],)
        assert isinstance(one.n_iter, int)
        np.testing.assert_allclose(one.coef, batch.coef[:, j], rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(one.support, batch.support[:, j])


@pytest.mark.parametrize("precompute", [True, False])
def test_float32_kept_and_close_to_float64(problem, precompute):
    D, Y = problem
    r64 = OMP(n_nonzero_coefs=5, precompute=precompute).solve(D, Y)
    r32 = OMP(n_nonzero_coefs=5, precompute=precompute).solve(
        D.astype(np.float32), Y.astype(np.float32)
    )
    assert r32.coef.dtype == np.float32 and r32.residual_norms.dtype == np.float32
    np.testing.assert_array_equal(r32.support, r64.support)
    np.testing.assert_allclose(r32.coef, r64.coef, rtol=1e-3, atol=1e-4)
    mixed = OMP(n_nonzero_coefs=5).solve(D.astype(np.float32), Y)
    assert mixed.coef.dtype == np.float64


def test_n_nonzero_above_the_number_of_atoms_raises_as_scikit_learn():
    rng = np.random.default_rng(0)
    D = unit_gaussian(rng, 30, 6)
    y = rng.standard_normal(30)
    with pytest.raises(ValueError):
        orthogonal_mp(D, y, n_nonzero_coefs=7)
    for solver in (OMP(n_nonzero_coefs=7), NonNegativeOMP(n_nonzero_coefs=7)):
        with pytest.raises(
            ValueError,
            match=r"n_nonzero_coefs=7 is larger than the number of "
            r"atoms \(6",
        ):
            solver.solve(D, y)
    assert OMP(n_nonzero_coefs=6).solve(D, y).n_iter == 6  # the bound itself is fine


def _duplicate_column_dictionary(rng):
    """30 x 4 with atom 3 a copy of atom 0: at most 3 independent atoms."""
    D = unit_gaussian(rng, 30, 3)
    return np.concatenate([D, D[:, :1]], axis=1)


@pytest.mark.parametrize("precompute", [True, False])
def test_duplicate_column_stops_prematurely_with_warning(precompute):
    rng = np.random.default_rng(3)
    D = _duplicate_column_dictionary(rng)
    y = rng.standard_normal(30)  # not in the span of D: the residual stays non-zero
    with pytest.warns(RuntimeWarning, match="prematurely"):
        orthogonal_mp(D, y, n_nonzero_coefs=4)  # scikit-learn warns too
    with pytest.warns(PrematureStopWarning, match="1 signal"):
        res = OMP(n_nonzero_coefs=4, precompute=precompute).solve(D, y)
    assert res.n_iter == 3
    np.testing.assert_allclose(
        D @ res.coef, D[:, :3] @ np.linalg.lstsq(D[:, :3], y, rcond=None)[0], atol=1e-10
    )


@pytest.mark.parametrize("precompute", [True, False])
def test_zero_residual_before_the_atom_count_does_not_warn(precompute):
    rng = np.random.default_rng(3)
    D = _duplicate_column_dictionary(rng)
    y = D[:, :3] @ np.array([1.0, -2.0, 0.5])  # exact fit with 3 atoms
    wide = unit_gaussian(rng, 5, 20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = OMP(n_nonzero_coefs=4, precompute=precompute).solve(D, y)
        fit = OMP(n_nonzero_coefs=10, precompute=precompute).solve(wide, wide[:, :5] @ np.ones(5))
    assert res.n_iter == 3 and fit.n_iter == 5
    np.testing.assert_allclose(D @ res.coef, y, atol=1e-12)


def test_more_atoms_than_features_stops_at_exact_fit():
    rng = np.random.default_rng(0)
    D = unit_gaussian(rng, 5, 20)
    y = rng.standard_normal(5)
    res = OMP(n_nonzero_coefs=10).solve(D, y)
    assert res.n_iter == 5
    assert res.stop_reason in ("no_correlation", "linear_dependence")
    np.testing.assert_allclose(D @ res.coef, y, atol=1e-12)


def test_cholesky_update_detects_dependent_atom():
    from sparsekit.solvers import _cpu

    L = np.zeros((3, 3))
    assert _cpu._chol_append(L, 0, np.zeros(0), 1.0, 1e-12)
    assert _cpu._chol_append(L, 1, np.array([0.6]), 1.0, 1e-12)
    np.testing.assert_allclose(L[:2, :2] @ L[:2, :2].T, [[1.0, 0.6], [0.6, 1.0]])
    # an atom equal to the first one: G = [[1, .6, 1], [.6, 1, .6], [1, .6, 1]] is singular
    assert not _cpu._chol_append(L, 2, np.array([1.0, 0.6]), 1.0, 1e-12)


@pytest.mark.parametrize("precompute", [True, False])
def test_nearly_dependent_atom_stops_with_warning(precompute):
    # b = a + 1e-9 e: after a is selected, b is the only atom correlated with the residual e,
    # but G_bb - ||w||^2 ~ 1e-18 < eps: the Cholesky update refuses it, as scikit-learn does
    a = np.array([1.0, 0.0, 0.0])
    e = np.array([0.0, 1.0, 0.0])
    b = (a + 1e-9 * e) / np.linalg.norm(a + 1e-9 * e)
    D = np.stack([a, b, np.array([0.0, 0.0, 1.0])], axis=1)
    y = 2 * a + e
    with pytest.warns(PrematureStopWarning, match="prematurely"):
        res = OMP(n_nonzero_coefs=2, precompute=precompute).solve(D, y)
    assert res.stop_reason == "linear_dependence"
    assert res.n_iter == 1 and res.support[0] in (0, 1)
    np.testing.assert_allclose(D @ res.coef, 2 * a, atol=1e-8)


def test_zero_signal_gets_no_atom():
    rng = np.random.default_rng(0)
    D = unit_gaussian(rng, 10, 20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = OMP(n_nonzero_coefs=3).solve(D, np.zeros(10))
    assert res.n_iter == 0 and not res.coef.any() and res.stop_reason == "no_correlation"


def test_precompute_accepts_numpy_booleans(problem):
    """``precompute=np.True_`` (e.g. read from a NumPy array of settings) is True: the Gram
    form, with scikit-learn's ``orthogonal_mp(precompute=True)`` as the oracle. It was refused
    as "must be True, False or 'auto', got np.True_"."""
    D, Y = problem
    res = OMP(n_nonzero_coefs=5, precompute=np.True_).solve(D, Y)
    ref = orthogonal_mp(D, Y, n_nonzero_coefs=5, precompute=True)
    np.testing.assert_allclose(res.coef, ref, atol=1e-10)
    assert OMP(n_nonzero_coefs=5, precompute=np.False_).precompute is np.False_


def test_precompute_given_a_gram_matrix_says_where_the_gram_goes(problem):
    """A Gram matrix passed as ``precompute`` (as scikit-learn's ``Lasso(precompute=G)``) is
    refused with the call that takes it, ``solve(D, Y, gram=G)``."""
    D, _ = problem
    with pytest.raises(ValueError, match=r"precompute must be .*pass it as solve\(D, Y, gram=G\)"):
        OMP(n_nonzero_coefs=5, precompute=D.T @ D)


@pytest.mark.parametrize(
    "solver, instead",
    [
        (lambda: OMP(n_nonzero_coefs=1, precompute=True), "pass precompute=False"),
        (lambda: MatchingPursuit(max_iter=1, precompute=True), "pass precompute=False"),
        (lambda: NonNegativeOMP(n_nonzero_coefs=1), "use fewer atoms"),
    ],
    ids=["omp", "mp", "nn-omp"],
)
def test_a_gram_matrix_beyond_the_memory_is_refused_with_what_to_pass(monkeypatch, solver, instead):
    """``precompute=True`` with 9,000 atoms needs a 648 MB Gram matrix: with 64 MiB of memory
    available the solve refuses before allocating it (``InsufficientMemoryError``, a
    ``MemoryError``) and names what to pass instead; it ran into NumPy's allocation failure
    (or the out-of-memory killer) with no hint."""
    from sparsekit._runtime import memory as _memory

    monkeypatch.setattr(_memory, "available_memory", lambda **kw: 64 * 2**20)
    rng = np.random.default_rng(0)
    D = rng.standard_normal((2, 9000))
    with pytest.raises(_memory.InsufficientMemoryError, match=instead):
        solver().solve(D, rng.standard_normal((2, 3)))


def test_sparse_coder_precompute_gram_beyond_the_memory_is_refused(monkeypatch):
    """``SparseCoder(precompute_gram=True)`` with 9,000 atoms and 64 MiB available refuses in
    ``fit`` and names ``precompute_gram=False``."""
    from sparsekit._runtime import memory as _memory
    from sparsekit.solvers.coder import SparseCoder

    monkeypatch.setattr(_memory, "available_memory", lambda **kw: 64 * 2**20)
    rng = np.random.default_rng(0)
    coder = SparseCoder(rng.standard_normal((9000, 2)), precompute_gram=True)
    with pytest.raises(_memory.InsufficientMemoryError, match="precompute_gram=False"):
        coder.fit(rng.standard_normal((3, 2)))
    with pytest.raises(ValueError, match=r"precompute_gram must be True, False or 'auto'"):
        SparseCoder(np.eye(2), precompute_gram="yes").fit(np.eye(2))


def test_float32_gram_for_a_float64_problem_keeps_float64_accuracy(problem):
    """A float32 ``D`` with float64 signals is solved in float64; its float32 Gram matrix is
    only checked, the solve uses ``D.T @ D`` in float64.

    Oracle: scikit-learn's ``orthogonal_mp`` on the float64 copy of ``D`` (float32 Gram entries
    would put errors of about 1e-7 in the codes)."""
    D, Y = problem
    D32 = D.astype(np.float32)
    res = OMP(n_nonzero_coefs=5).solve(D32, Y, gram=D32.T @ D32)
    assert res.coef.dtype == np.float64
    ref = orthogonal_mp(D32.astype(np.float64), Y, n_nonzero_coefs=5)
    np.testing.assert_allclose(res.coef, ref, atol=1e-10)


def test_residual_form_in_chunks_uses_each_signal_own_rounding_floor(monkeypatch):
    """Signals solved in chunks (here one per chunk) keep their own rounding floor: a signal of
    norm 1e20 next to one of norm 1 does not stop the small one.

    Oracle: scikit-learn's ``orthogonal_mp`` on each signal alone."""
    from sparsekit.solvers import omp as omp_module

    monkeypatch.setattr(omp_module, "_FACTOR_BYTES", 1)
    rng = np.random.default_rng(5)
    D = unit_gaussian(rng, 20, 30)
    Y = rng.standard_normal((20, 3))
    Y[:, 0] *= 1e20
    res = OMP(n_nonzero_coefs=4, precompute=False).solve(D, Y)
    for j in range(3):
        ref = orthogonal_mp(D, Y[:, j], n_nonzero_coefs=4)
        np.testing.assert_allclose(res.coef[:, j], ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())


def test_return_path_must_be_a_boolean():
    """``return_path`` is True or False; another value is a ``TypeError`` naming it."""
    with pytest.raises(TypeError, match="return_path"):
        OMP(return_path="yes")


def test_a_gram_matrix_whose_diagonal_is_off_by_1e_5_is_refused(problem):
    """A float64 Gram matrix must match ``D``: a diagonal entry off by a relative 1e-5 (ten
    times the ``rtol=1e-8`` given for float64 data, a thousand times float64 rounding) is a
    ``ValueError`` naming the entry. Oracle: ``D.T @ D`` computed with NumPy, then perturbed."""
    D, Y = problem
    G = D.T @ D
    G[3, 3] *= 1 + 1e-5
    with pytest.raises(ValueError, match=r"gram\[3, 3\]"):
        OMP(n_nonzero_coefs=3).solve(D, Y, gram=G)


@pytest.mark.parametrize("precompute", [True, False])
def test_dependence_threshold_scales_with_the_largest_atom(precompute):
    """The next atom is dependent when ``G_ii - ||w||^2 <= eps max_i ||d_i||^2`` (the module
    notes): next to an atom of norm 1e4 a pair of unit atoms with ``1 - <a, b>^2 = 9e-12``
    (below ``eps 1e8 = 2.2e-8``, computed with NumPy) stops after one atom with the warning."""
    e = np.eye(8)
    b = e[1] + 3e-6 * e[2]
    b /= np.linalg.norm(b)
    D = np.column_stack([1e4 * e[0], e[1], b, e[3]])
    assert 1 - (e[1] @ b) ** 2 <= np.finfo(float).eps * 1e8
    with pytest.warns(PrematureStopWarning):
        res = OMP(n_nonzero_coefs=2, precompute=precompute).solve(D, e[1] + 0.5 * e[2])
    assert res.n_iter == 1 and res.stop_reason == "linear_dependence"
