"""The Gram form of OMP computes its correlations block by block in the pool's threads
(``solvers._driver.run_correlation_blocks``): the blocks cover every signal once, hold the
product ``Yt @ D``, do not depend on the thread count, and OMP's result equals scikit-learn's."""

import numpy as np
import pytest
from sklearn.linear_model import orthogonal_mp_gram

from sparsekit._runtime.threads import thread_limit
from sparsekit.solvers import _driver
from sparsekit.solvers.mp import MatchingPursuit
from sparsekit.solvers.omp import OMP


def blocks_of(Yt, D):
    """Run the driver, recording each block's rows and copying its correlations."""
    seen = []
    out = np.full((Yt.shape[0], D.shape[1]), np.nan, dtype=D.dtype)

    def solve_block(rows, C):
        seen.append((rows.start, rows.stop))
        out[rows] = C

    _driver.run_correlation_blocks(solve_block, Yt, D)
    return sorted(seen), out


@pytest.mark.parametrize("n_sig", [1, 2, 3, 17, 33, 250, 1001])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_blocks_cover_the_signals_and_hold_the_product(n_sig, dtype, monkeypatch):
    monkeypatch.setattr(_driver, "CORRELATION_BLOCK_BYTES", 40 * 37 * 8)  # small blocks
    rng = np.random.default_rng(n_sig)
    D = rng.standard_normal((9, 37)).astype(dtype)
    Yt = rng.standard_normal((n_sig, 9)).astype(dtype)
    with thread_limit(2):
        seen, out = blocks_of(Yt, D)
    starts = [a for a, _ in seen]
    assert starts[0] == 0 and [b for _, b in seen][-1] == n_sig
    assert all(b == a2 for (_, b), (a2, _) in zip(seen[:-1], seen[1:]))  # no gap, no overlap
    assert all(a % _driver.BLOCK_ALIGN == 0 for a in starts)
    assert n_sig == 1 or all(b - a >= 2 for a, b in seen)  # never a one-row product
    if n_sig >= 2 * _driver.MIN_BLOCKS * _driver.BLOCK_ALIGN:
        assert len(seen) >= _driver.MIN_BLOCKS
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(
        out, Yt.astype(np.float64) @ D.astype(np.float64), rtol=tol, atol=tol
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_blocks_and_results_do_not_depend_on_the_thread_count(dtype, monkeypatch):
    monkeypatch.setattr(_driver, "CORRELATION_BLOCK_BYTES", 48 * 64 * 8)
    rng = np.random.default_rng(3)
    D = rng.standard_normal((20, 64))
    D /= np.linalg.norm(D, axis=0)
    Y = rng.standard_normal((20, 1003))
    D, Y = D.astype(dtype), Y.astype(dtype)
    results = []
    for n in (1, 2):
        with thread_limit(n):
            results.append(
                (
                    blocks_of(np.ascontiguousarray(Y.T), D),
                    OMP(n_nonzero_coefs=6, precompute=True).solve(D, Y),
                )
            )
    (seen1, c1), res1 = results[0]
    (seen2, c2), res2 = results[1]
    assert seen1 == seen2 and len(seen1) > 1
    np.testing.assert_array_equal(c1, c2)
    np.testing.assert_array_equal(res1.coef, res2.coef)
    np.testing.assert_array_equal(res1.support, res2.support)
    np.testing.assert_array_equal(res1.residual_norms, res2.residual_norms)
    if dtype == np.float64:
        G = D.T @ D
        ref = orthogonal_mp_gram(G, D.T @ Y, n_nonzero_coefs=6)
        np.testing.assert_allclose(res1.coef, ref, rtol=1e-9, atol=1e-12)


def test_a_small_gram_is_built_on_one_blas_thread(monkeypatch):
    """Threaded BLAS would leave its threads spinning while the solver's pool runs."""
    from contextlib import contextmanager

    from sparsekit._runtime.threads import blas_threads
    from sparsekit.solvers import base

    asked = []
    real = base.one_blas_thread

    @contextmanager
    def spy(when=True):
        with real(when):
            asked.append((when, blas_threads()))
            yield

    monkeypatch.setattr(base, "one_blas_thread", spy)
    rng = np.random.default_rng(0)
    D = rng.standard_normal((16, 40))
    problem = base.prepare(D, rng.standard_normal((16, 5)))
    with thread_limit(2):
        G = problem.gram()
    np.testing.assert_allclose(G, D.T @ D, rtol=1e-12, atol=1e-12)
    assert asked == [(True, 1)]
    monkeypatch.setattr(base, "GRAM_ONE_THREAD_MAX_MADDS", 16 * 40 * 40 - 1)
    asked.clear()
    with thread_limit(2):
        problem.gram()
    assert asked and asked[0][0] is False


def expected_block_rows(n_sig, n_atoms, itemsize):
    """The documented layout: at most CORRELATION_BLOCK_BYTES of correlations per block, at
    least MIN_BLOCKS blocks while they are few, rounded up to BLOCK_ALIGN rows."""
    budget = max(_driver.CORRELATION_BLOCK_BYTES // (n_atoms * itemsize), 1)
    rows = min(budget, -(-n_sig // _driver.MIN_BLOCKS))
    return _driver.BLOCK_ALIGN * max(1, -(-rows // _driver.BLOCK_ALIGN))


@pytest.mark.parametrize(
    "n_sig, block_bytes",
    [(1000, 32 * 37 * 8), (1000, 2**20), (5000, 2**20), (5000, 100 * 37 * 8)],
)
def test_blocks_have_the_documented_number_of_rows(n_sig, block_bytes, monkeypatch):
    # 9 features, 37 atoms: a budget counted in features, or a block count that ignores
    # MIN_BLOCKS, gives other widths
    monkeypatch.setattr(_driver, "CORRELATION_BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(0)
    D, Yt = rng.standard_normal((9, 37)), rng.standard_normal((n_sig, 9))
    seen, _ = blocks_of(Yt, D)
    width = expected_block_rows(n_sig, 37, 8)
    assert [b - a for a, b in seen[:-1]] == [width] * (len(seen) - 1)
    assert seen[-1][1] == n_sig and 0 < seen[-1][1] - seen[-1][0] <= width + 1


def test_residual_steps_with_as_many_active_signals_as_features_equal_one_signal_at_a_time():
    # 4 features, 8 signals: the 4 exactly 1-sparse ones meet tol at the first step, leaving 4
    # active signals (as many as features, fewer than all): each step must correlate those 4
    rng = np.random.default_rng(1)
    D = rng.standard_normal((4, 6))
    D /= np.linalg.norm(D, axis=0)
    Y = np.hstack([2.0 * D[:, :4], rng.standard_normal((4, 4))])
    solver = MatchingPursuit(max_iter=5, tol=1e-20, precompute=False)
    batch = solver.solve(D, Y)
    for j in range(Y.shape[1]):
        alone = solver.solve(D, Y[:, j : j + 1])
        np.testing.assert_allclose(batch.coef[:, j], alone.coef[:, 0], rtol=1e-12, atol=1e-14)
    assert (batch.n_iter[:4] == 1).all() and (batch.n_iter[4:] == 5).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_transposed_view_gives_the_blocks_and_bits_of_the_contiguous_rows(dtype, monkeypatch):
    # Y.T of a C-contiguous Y is copied block by block by the thread that solves the block:
    # the same blocks, signals and correlations, bit for bit, as from one contiguous copy
    monkeypatch.setattr(_driver, "CORRELATION_BLOCK_BYTES", 48 * 64 * 8)
    rng = np.random.default_rng(5)
    D = rng.standard_normal((20, 64)).astype(dtype)
    Y = rng.standard_normal((20, 777)).astype(dtype)
    runs = []
    for Yt in (np.ascontiguousarray(Y.T), Y.T):
        seen, S_all = [], np.full((777, 20), np.nan, dtype=dtype)
        C_all = np.full((777, 64), np.nan, dtype=dtype)

        def solve_block(rows, S, C, seen=seen, S_all=S_all, C_all=C_all):
            assert S.flags.c_contiguous and S.shape == (rows.stop - rows.start, 20)
            seen.append((rows.start, rows.stop))
            S_all[rows], C_all[rows] = S, C

        with thread_limit(2):
            _driver.run_correlation_blocks(solve_block, Yt, D, signals=True)
        runs.append((sorted(seen), S_all, C_all))
    (seen_c, S_c, C_c), (seen_t, S_t, C_t) = runs
    assert seen_c == seen_t and len(seen_c) > 1
    np.testing.assert_array_equal(S_t, Y.T)
    np.testing.assert_array_equal(C_t, C_c)
    tol = 1e-12 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(C_t, Y.T.astype(np.float64) @ D, rtol=tol, atol=tol)


def test_scatter_into_a_block_of_columns_matches_a_loop():
    from sparsekit.solvers.base import scatter_into

    rng = np.random.default_rng(2)
    idx = rng.integers(-1, 9, size=(5, 3))
    vals = rng.standard_normal((5, 3))
    coef = np.zeros((9, 12))
    scatter_into(coef, idx, vals, 4)
    expected = np.zeros((9, 12))
    for j in range(5):
        for s in range(3):
            if idx[j, s] >= 0:
                expected[idx[j, s], 4 + j] = vals[j, s]
    np.testing.assert_array_equal(coef, expected)


@pytest.mark.parametrize("order", ["C", "F"])
def test_omp_gram_form_fills_the_norms_without_copying_the_signals(order, monkeypatch):
    # OMP's Gram form computes the squared norms block by block (the same bits as one pass
    # over C-contiguous rows) and never builds the transposed copy of all the signals
    from sparsekit.solvers import base

    monkeypatch.setattr(_driver, "CORRELATION_BLOCK_BYTES", 48 * 64 * 8)
    rng = np.random.default_rng(8)
    D = rng.standard_normal((20, 64))
    D /= np.linalg.norm(D, axis=0)
    Y = np.asarray(rng.standard_normal((20, 501)), order=order)
    solver = OMP(n_nonzero_coefs=5, precompute=True)
    problem = base.prepare(D, Y)
    problem.params, problem.n_steps = solver._check_params(), 5
    codes = solver._solve_gram(problem, problem.gram())
    assert problem._Yt is None  # no copy of all the signals as rows
    Yt = np.ascontiguousarray(Y.T)
    np.testing.assert_array_equal(problem.y_sq, np.einsum("ij,ij->i", Yt, Yt))
    np.testing.assert_allclose(problem.y_sq, np.linalg.norm(Y, axis=0) ** 2, rtol=1e-13)
    np.testing.assert_array_equal(problem.corr_floor, base.correlation_floor(Yt, problem.norms_sq))
    assert codes.coef.T.flags.c_contiguous
    ref = orthogonal_mp_gram(D.T @ D, D.T @ Y, n_nonzero_coefs=5)
    np.testing.assert_allclose(codes.coef.T, ref, rtol=1e-9, atol=1e-12)
    result = solver.solve(D, Y)
    np.testing.assert_array_equal(result.coef, codes.coef.T)
    np.testing.assert_allclose(result.residual_norms[0], np.linalg.norm(Y, axis=0), rtol=1e-13)


def test_a_problem_builds_the_signal_rows_once_and_only_when_read():
    from sparsekit.solvers import base

    rng = np.random.default_rng(4)
    D, Y = rng.standard_normal((6, 10)), rng.standard_normal((6, 7))
    problem = base.prepare(D, Y)
    assert problem._Yt is None and np.shares_memory(problem.signal_rows, problem.Y)
    Yt = problem.Yt
    assert Yt.flags.c_contiguous and problem.Yt is Yt and problem.signal_rows is Yt
    np.testing.assert_array_equal(Yt, Y.T)
    np.testing.assert_allclose(problem.y_sq, (Y**2).sum(axis=0), rtol=1e-14)
    one = base.prepare(D, Y[:, 2])
    assert one.n_signals == 1 and one.Yt.shape == (1, 6)
