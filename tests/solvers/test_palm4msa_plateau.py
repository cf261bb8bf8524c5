"""A flat Palm4MSA fit that stops by ``tol`` on a plateau, far from its target, says so."""

import warnings

import numpy as np
import pytest
from scipy.linalg import hadamard

import sparsekit
from sparsekit.factorizers.palm4msa import PlateauWarning


def _butterfly_constraints(n=32, n_factors=5, k=2):
    return [sparsekit.get_projection("splincol", shape=(n, n), k=k) for _ in range(n_factors)]


def test_flat_hadamard_32_stopping_by_tol_on_a_plateau_warns():
    H = hadamard(32).astype(float)
    with pytest.warns(
        PlateauWarning,
        match=r"stopped by tol=1e-06 after 3 of n_iter=200 "
        r"iterations with relative error 0\.968",
    ):
        palm = sparsekit.get_factorizer("palm4msa", n_iter=200)
        res = palm.factorize(H, _butterfly_constraints())
    assert res.stop_reason == "tol" and res.n_iter == 3
    # the tol rule is not what holds the fit back: all 200 iterations end at the same error ...
    full = sparsekit.get_factorizer("palm4msa", n_iter=200, tol=0).factorize(
        H, _butterfly_constraints()
    )
    assert full.stop_reason == "max_iter"
    assert full.relative_error == pytest.approx(res.relative_error, abs=1e-5)
    # ... while an exact factorization with these constraints exists (hierarchical finds it)
    hier = sparsekit.get_factorizer("hierarchical-palm4msa", n_iter=50).factorize(H, 2, n_factors=5)
    assert hier.relative_error < 1e-8


def test_no_plateau_warning_for_a_good_fit_a_long_run_or_a_warm_start():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((32, 32)) * (rng.random((32, 32)) < 0.1)
    B = rng.standard_normal((32, 32)) * (rng.random((32, 32)) < 0.1)
    cons = [sparsekit.get_projection("support", mask=F != 0) for F in (A, B)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", PlateauWarning)
        # stops by tol quickly with a small error
        good = sparsekit.get_factorizer("palm4msa", n_iter=200).factorize(A @ B, cons)
        assert good.relative_error < 0.5
        # a warm start near a poor point is the caller's choice (QuicK-means refits)
        H = hadamard(32).astype(float)
        cold = sparsekit.get_factorizer("palm4msa", n_iter=200, tol=0).factorize(
            H, _butterfly_constraints()
        )
        warm = sparsekit.get_factorizer("palm4msa", n_iter=200).factorize(
            H,
            _butterfly_constraints(),
            init_factors=[f.toarray() for f in cold.factors.factors],
            init_scale=cold.factors.scale,
        )
        assert warm.stop_reason == "tol" and warm.relative_error > 0.5
