"""Palm4MSA's keep_best option: the returned factors are the best iterate, the last one is kept."""

import numpy as np
import pytest

import sparsekit


def problem(seed=2):
    M = np.random.default_rng(seed).standard_normal((32, 32))
    cons = [sparsekit.get_projection("splincol", shape=(32, 32), k=2) for _ in range(3)]
    return M, cons


def test_keep_best_returns_the_lowest_iterate_and_the_last_one_in_extra():
    M, cons = problem()
    plain = sparsekit.get_factorizer("palm4msa", n_iter=40, tol=0).factorize(M, cons)
    h = plain.objective
    assert h.argmin() < h.size - 1  # the objective went up after its minimum (splincol)
    best = sparsekit.get_factorizer("palm4msa", n_iter=40, tol=0, keep_best=True).factorize(M, cons)
    # the same iterations, then the returned iterate's objective
    np.testing.assert_allclose(best.objective[: h.size], h, rtol=1e-12)
    err = float(np.sum((M - best.factors.toarray()) ** 2))
    assert err == pytest.approx(h.min(), rel=1e-9)
    assert best.objective[-1] == pytest.approx(h.min(), rel=1e-12)
    np.testing.assert_allclose(best.extra["last"].toarray(), plain.factors.toarray(), atol=1e-12)
    assert "last" not in plain.extra


def test_keep_best_includes_the_warm_start():
    M, cons = problem(9)
    start = sparsekit.get_factorizer("palm4msa", n_iter=30, tol=0).factorize(M, cons).factors
    f0 = float(np.sum((M - start.toarray()) ** 2))
    init = [S.toarray() for S in start.factors]
    plain = sparsekit.get_factorizer("palm4msa", n_iter=5, tol=0).factorize(
        M, cons, init_factors=init, init_scale=start.scale
    )
    assert plain.objective.min() > f0  # every iteration from this start is worse
    res = sparsekit.get_factorizer("palm4msa", n_iter=5, tol=0, keep_best=True).factorize(
        M, cons, init_factors=init, init_scale=start.scale
    )
    np.testing.assert_allclose(res.factors.toarray(), start.toarray(), atol=1e-12)
    assert res.objective[-1] == pytest.approx(f0, rel=1e-12)
    np.testing.assert_allclose(res.extra["last"].toarray(), plain.factors.toarray(), atol=1e-12)
