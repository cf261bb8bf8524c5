"""Threaded row ranges (many signals, several threads) agree with one signal on one thread."""

import numpy as np
import pytest

from sparsekit.solvers import _cpu
from sparsekit.solvers.fw import FrankWolfe
from sparsekit.solvers.mp import MatchingPursuit
from sparsekit.solvers.nnomp import NonNegativeOMP
from sparsekit.solvers.omp import OMP

from ._problems import unit_gaussian

N_SIG = _cpu.STEP_PARALLEL_MIN_ROWS + 6


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(9)
    return unit_gaussian(rng, 12, 20), rng.standard_normal((12, N_SIG))


@pytest.mark.parametrize(
    "make",
    [
        lambda: OMP(n_nonzero_coefs=4, precompute=False, return_path=True),
        lambda: OMP(n_nonzero_coefs=4, precompute=True, return_path=True),
        lambda: MatchingPursuit(max_iter=6, precompute=False),
        lambda: MatchingPursuit(max_iter=6, precompute=True),
        lambda: NonNegativeOMP(n_nonzero_coefs=4),
        lambda: FrankWolfe(beta=5.0, max_iter=8),
    ],
)
def test_parallel_batch_equals_serial_single(problem, make):
    D, Y = problem
    batch = make().solve(D, Y)
    for j in (0, 1, N_SIG - 1):
        one = make().solve(D, Y[:, j])
        np.testing.assert_allclose(batch.coef[:, j], one.coef, rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(batch.support[:, j], one.support)
        np.testing.assert_allclose(
            batch.residual_norms[:, j], one.residual_norms, rtol=1e-10, atol=1e-14
        )
        if batch.path is not None:
            np.testing.assert_allclose(batch.path[..., j], one.path, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    "make",
    [
        lambda: OMP(n_nonzero_coefs=4, precompute=False),
        lambda: OMP(n_nonzero_coefs=4, precompute=True),
        lambda: NonNegativeOMP(n_nonzero_coefs=4),
        lambda: FrankWolfe(beta=5.0, max_iter=8),
    ],
)
def test_thread_count_does_not_change_the_result(problem, make, monkeypatch):
    """Every signal is solved by one thread, so 1 or 2 threads give identical bits; the
    2-thread run really splits the signals over ranges (counted through the kernel calls)."""
    from sparsekit._runtime import pools as _pools
    from sparsekit._runtime.threads import thread_limit

    D, Y = problem
    with thread_limit(1):
        one = make().solve(D, Y)
    submitted = []
    real_pool = _pools._pool

    def pool(n):
        p = real_pool(n)
        submitted.append(n)
        return p

    monkeypatch.setattr(_pools, "_pool", pool)
    with thread_limit(2):
        two = make().solve(D, Y)
    assert submitted and submitted[0] == 2
    np.testing.assert_array_equal(one.coef, two.coef)
    np.testing.assert_array_equal(one.support, two.support)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_row_range_pool_works_in_a_forked_child(problem):
    """The pool's threads do not survive a fork: the child starts its own pool (no hang)."""
    import multiprocessing as mp

    from sparsekit._runtime.threads import thread_limit

    D, Y = problem
    with thread_limit(2):
        want = OMP(n_nonzero_coefs=4).solve(D, Y).coef  # the parent's pool now exists
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        got = pool.apply_async(_solve_in_child, (D, Y)).get(timeout=120)
    np.testing.assert_array_equal(got, want)


def _solve_in_child(D, Y):
    from sparsekit._runtime.threads import thread_limit

    with thread_limit(2):
        return OMP(n_nonzero_coefs=4).solve(D, Y).coef
