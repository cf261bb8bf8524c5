"""The three-sample test, its 3S-eval harness and the permutation tests."""

import numpy as np
import pytest
from scipy import stats as sps

from sparsekit.stats import (
    METHODS,
    mmd2_biased,
    permutation_test,
    three_sample_error,
    three_sample_test,
)

from .conftest import random_graphs

G = {"gamma": 0.5}


def normal(var):
    return lambda n, rng: rng.normal(0.0, np.sqrt(var), (n, 1))


def test_three_sample_error_is_zero_for_n_ge_500_with_nystrom():
    rows = three_sample_error(
        normal(1.0),
        normal(4.0),
        [500],
        methods=["nystrom"],
        n_repetitions=20,
        kernel_params={"gamma": 1.0},
        random_state=0,
    )
    (row,) = rows
    assert row["method"] == "nystrom" and row["n"] == 500 and row["n_repetitions"] == 20
    assert row["error"] == 0.0
    assert row["delta"] >= 0 and np.isfinite(row["delta"]) and row["time"] > 0


def test_three_sample_error_rates_and_deltas():
    methods = ["exact", "unbiased", "linear", "block", "rff", "nystrom"]
    rows = three_sample_error(
        normal(1.0),
        normal(1.2),
        [40],
        methods=methods,
        n_repetitions=30,
        kernel_params=G,
        random_state=1,
        method_options={"nystrom": {"n_landmarks": 120, "lam": 1e-12}},
    )
    by = {r["method"]: r for r in rows}
    assert by["exact"]["delta"] == 0.0
    # with every pooled point a landmark and λ -> 0 the Nyström MMD is the exact one: same errors
    assert by["nystrom"]["delta"] < 1e-6
    assert by["nystrom"]["error"] == by["exact"]["error"]
    for r in rows:
        assert 0.0 <= r["error"] <= 1.0
    # beyond exact_max_n the exact methods are skipped and Δ is NaN
    rows = three_sample_error(
        normal(1.0),
        normal(4.0),
        [50],
        methods=["exact", "linear"],
        n_repetitions=2,
        kernel_params=G,
        exact_max_n=10,
    )
    assert [r["method"] for r in rows] == ["linear"] and np.isnan(rows[0]["delta"])


def test_three_sample_test_decides_both_ways(rng):
    X, Z = rng.normal(size=(300, 2)), rng.normal(size=(300, 2)) * 2
    for method in METHODS:
        opts = {"block_size": 10} if method == "block" else {}
        r1 = three_sample_test(
            X, Z, rng.normal(size=(300, 2)), method, kernel_params=G, random_state=0, **opts
        )
        r2 = three_sample_test(
            X, Z, rng.normal(size=(300, 2)) * 2, method, kernel_params=G, random_state=0, **opts
        )
        if method in ("linear", "linear-subsample"):
            continue  # too noisy at this size to assert
        assert r1.w_from_x and not r2.w_from_x, method
    r = three_sample_test(X, Z, X[:50], "exact", kernel_params=G)
    assert r.mmd2_xw == pytest.approx(mmd2_biased(X, X[:50], kernel_params=G))


def test_three_sample_test_on_graphs(rng):
    sparse_g = lambda n, r: random_graphs(r, n, 0.2)  # noqa: E731
    dense_g = lambda n, r: random_graphs(r, n, 0.6)  # noqa: E731
    rows = three_sample_error(
        sparse_g,
        dense_g,
        [30],
        methods=["exact", "nystrom", "block"],
        n_repetitions=5,
        kernel="shortest-path",
        kernel_params={"normalize": True},
        random_state=rng,
    )
    by = {r["method"]: r for r in rows}
    assert by["exact"]["error"] == 0.0 and by["nystrom"]["error"] == 0.0


def test_permutation_p_values_are_uniform_under_the_null(rng):
    p = [
        permutation_test(
            rng.normal(size=(25, 2)),
            rng.normal(size=(20, 2)),
            "nystrom",
            kernel_params=G,
            n_landmarks=10,
            n_permutations=99,
            random_state=rng,
        ).p_value
        for _ in range(200)
    ]
    assert sps.kstest(p, "uniform").pvalue > 0.01
    assert min(p) >= 1 / 100


@pytest.mark.parametrize("method", ["nystrom", "rff", "exact"])
def test_permutation_p_value_small_under_a_clear_alternative(rng, method):
    X, Y = rng.normal(size=(60, 2)), rng.normal(size=(50, 2)) + 1.0
    r = permutation_test(X, Y, method, kernel_params=G, n_permutations=199, random_state=0)
    assert r.p_value == 1 / 200
    assert r.null_distribution.shape == (199,) and r.statistic > r.null_distribution.max()


def test_exact_permutation_statistic_is_the_biased_mmd(rng):
    X, Y = rng.normal(size=(30, 2)), rng.normal(size=(20, 2))
    r = permutation_test(
        X, Y, "exact", kernel_params=G, n_permutations=5, max_memory=2000, random_state=0
    )
    assert r.statistic == pytest.approx(mmd2_biased(X, Y, kernel_params=G), rel=1e-12)


def test_nystrom_and_rff_permutation_decisions_match_the_exact_test():
    rng = np.random.default_rng(7)
    agree = 0
    cases = []
    for shift in [0.0, 0.0, 0.0, 1.5, 1.5, 1.5]:
        X, Y = rng.normal(size=(40, 2)), rng.normal(size=(40, 2)) + shift
        cases.append(shift > 0)
        ex = permutation_test(X, Y, "exact", kernel_params=G, n_permutations=199, random_state=3)
        # all points as landmarks: the same statistics, permutations and p-value as exact
        full = permutation_test(
            X,
            Y,
            "nystrom",
            kernel_params=G,
            n_landmarks=80,
            lam=1e-12,
            n_permutations=199,
            random_state=3,
        )
        assert full.p_value == pytest.approx(ex.p_value)
        np.testing.assert_allclose(
            full.null_distribution, ex.null_distribution, rtol=1e-6, atol=1e-10
        )
        ny = permutation_test(
            X, Y, "nystrom", kernel_params=G, n_landmarks=20, n_permutations=199, random_state=3
        )
        rf = permutation_test(
            X, Y, "rff", kernel_params=G, n_frequencies=100, n_permutations=199, random_state=3
        )
        agree += (ny.p_value < 0.05) == (ex.p_value < 0.05) == (rf.p_value < 0.05)
        assert (ex.p_value < 0.05) == (shift > 0)
    assert agree == len(cases)


def test_permutation_with_repeated_points_uses_merged_weights(rng):
    base = rng.normal(size=(10, 2))
    X, Y = base[rng.integers(0, 10, 30)], base[rng.integers(0, 10, 25)]
    lam = 0.5
    r = permutation_test(
        X, Y, "nystrom", kernel_params=G, n_landmarks=5, lam=lam, n_permutations=20, random_state=0
    )
    from sparsekit.stats import NystromMMD

    # same seed stream as the test: one integer for the landmarks, then the permutations
    seed = int(np.random.default_rng(0).integers(2**63))
    est = NystromMMD(kernel_params=G, n_landmarks=5, lam=lam, random_state=seed).fit(X, Y)
    assert r.statistic == pytest.approx(est.mmd2(), rel=1e-10)


def test_permutation_result_repr_summarizes_the_null_distribution(rng):
    X, Y = rng.normal(size=(40, 2)), rng.normal(size=(30, 2))
    r = permutation_test(X, Y, "nystrom", kernel_params=G, n_permutations=2000, random_state=0)
    text = repr(r)
    null = r.null_distribution
    assert r.n_permutations == 2000
    assert len(text) < 300 and text.count("e-") + text.count(".") < 30  # no 2000 values
    for part in (
        f"statistic={r.statistic:.6g}",
        f"p_value={r.p_value:.6g}",
        "method='nystrom'",
        "n_permutations=2000",
        f"mean={np.mean(null):.4g}",
        f"std={np.std(null):.4g}",
        f"min={np.min(null):.4g}",
        f"max={np.max(null):.4g}",
    ):
        assert part in text, (part, text)


def test_permutation_p_value_counts_ties_with_the_observed_statistic():
    """p = (1 + #{null ≥ observed}) / (1 + P) (Phipson & Smyth 2010; the observed labelling is
    one of the permutations). Oracle, a closed form: when every point is the same, every
    labelling gives MMD² = 0 up to rounding, a tie with the observed value, so p = 1 exactly."""
    X = np.ones((6, 2))
    for seed in range(5):
        res = permutation_test(X, X[:4], method="exact", n_permutations=49, random_state=seed)
        assert abs(res.statistic) < 1e-12
        assert res.p_value == 1.0
