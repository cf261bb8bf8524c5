"""Values of the permutation test (null distribution, p-value, the ridge term without repeated
points) and of the 3S-eval harness (error, error_se, delta, time), against brute force from
scikit-learn's RBF Gram matrix with the same random stream."""

import time

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from sparsekit.stats import permutation_test, three_sample_error

G = {"gamma": 0.5}


def biased_mmd2(A, B):
    return (
        rbf_kernel(A, A, **G).mean()
        + rbf_kernel(B, B, **G).mean()
        - 2 * rbf_kernel(A, B, **G).mean()
    )


@pytest.mark.parametrize("rows", [None, 4, 1, 0])
def test_exact_null_distribution_and_p_value_by_brute_force(monkeypatch, rows):
    import sparsekit.stats.permutation as perm

    rng = np.random.default_rng(5)
    X, Y = rng.normal(size=(12, 2)), rng.normal(size=(9, 2)) + 0.3
    n, P = 21, 40
    if rows is not None:  # batches of `rows` weight rows of 8 n bytes each (at least one)
        monkeypatch.setattr(perm, "_BATCH_BYTES", 8 * n * rows)
        rows = max(rows, 1)
    r = permutation_test(X, Y, "exact", kernel_params=G, n_permutations=P, random_state=0)
    # replay the stream: one integer for the features, then the relabellings batch by batch,
    # the observed labelling taking the first row of the first batch
    gen = np.random.default_rng(0)
    gen.integers(2**63)
    Z = np.vstack([X, Y])
    base = np.r_[np.full(12, 1 / 12), np.full(9, -1 / 9)]
    size = P + 1 if rows is None else rows
    Ws, left = [], P + 1
    while left:
        b = min(size, left)
        Ws.append(gen.permuted(np.broadcast_to(base, (b, n)), axis=1))
        left -= b
    Wt = np.vstack(Ws)[1:]
    null = [biased_mmd2(Z[w > 0], Z[w < 0]) for w in Wt]
    np.testing.assert_allclose(r.null_distribution, null, rtol=1e-10, atol=1e-14)
    assert r.statistic == pytest.approx(biased_mmd2(X, Y), rel=1e-10)
    assert r.p_value == (1 + sum(v >= r.statistic for v in null)) / (1 + P)
    assert 1 / (1 + P) < r.p_value < 1


@pytest.mark.parametrize("method", ["nystrom", "rff", "exact"])
def test_batches_of_permutations_do_not_change_the_values(monkeypatch, method):
    import sparsekit.stats.permutation as perm

    rng = np.random.default_rng(6)
    X, Y = rng.normal(size=(15, 2)), rng.normal(size=(11, 2))
    kw = dict(kernel_params=G, n_permutations=30, random_state=1)
    whole = permutation_test(X, Y, method, **kw)
    monkeypatch.setattr(perm, "_BATCH_BYTES", 8 * 26 * 4)  # batches of 4 rows
    split = permutation_test(X, Y, method, **kw)
    assert split.statistic == pytest.approx(whole.statistic, rel=1e-12)
    assert split.null_distribution.shape == (30,)
    # the same stream relabels in batches: the draws differ, the law does not; the observed
    # labelling stays first
    assert (
        split.p_value
        == (1 + np.sum(split.null_distribution >= split.statistic - 1e-12 * split.statistic)) / 31
    )


def test_nystrom_ridge_term_without_repeated_points():
    # distinct points: every relabelling has ‖w‖² = 1/n_A + 1/n_B, so λ shifts the observed
    # value and the whole null distribution by λ (1/n_A + 1/n_B)
    rng = np.random.default_rng(7)
    X, Y = rng.normal(size=(14, 2)), rng.normal(size=(10, 2))
    kw = dict(kernel_params=G, n_landmarks=6, n_permutations=25, random_state=2)
    with_lam = permutation_test(X, Y, "nystrom", lam=0.4, **kw)
    without = permutation_test(X, Y, "nystrom", lam=0.1, **kw)
    shift = 0.3 * (1 / 14 + 1 / 10)
    assert with_lam.statistic == pytest.approx(without.statistic + shift, rel=1e-10)
    np.testing.assert_allclose(
        with_lam.null_distribution, without.null_distribution + shift, rtol=1e-10
    )


def normal(scale):
    return lambda n, rng: rng.normal(0.0, scale, (n, 1))


def test_three_sample_error_values_by_brute_force():
    n, reps = 8, 25
    t0 = time.perf_counter()
    (row,) = three_sample_error(
        normal(1.0),
        normal(1.4),
        [n],
        methods=["exact"],
        n_repetitions=reps,
        kernel="rbf",
        kernel_params=G,
        random_state=4,
    )
    wall = time.perf_counter() - t0
    rng = np.random.default_rng(4)  # the exact method draws nothing besides the samples
    errors = []
    for _ in range(reps):
        W, X, Z = normal(1.0)(n, rng), normal(1.0)(n, rng), normal(1.4)(n, rng)
        errors.append(biased_mmd2(X, W) > biased_mmd2(Z, W))
    err = np.mean(errors)
    assert 0 < err < 1  # a case where the standard error is not 0
    assert row["error"] == pytest.approx(err)
    assert row["error_se"] == pytest.approx(np.sqrt(err * (1 - err) / reps), rel=1e-12)
    assert row["delta"] == pytest.approx(0.0, abs=1e-7)  # the exact estimate against itself
    assert row["n"] == n and row["n_repetitions"] == reps and row["method"] == "exact"
    assert 0 < row["time"] < wall / reps


def test_three_sample_error_delta_of_an_approximate_method():
    n, reps = 10, 6
    (row,) = three_sample_error(
        normal(1.0),
        normal(2.0),
        [n],
        methods=["linear"],
        n_repetitions=reps,
        kernel="rbf",
        kernel_params=G,
        random_state=3,
    )
    rng = np.random.default_rng(3)
    deltas = []
    for _ in range(reps):
        _w, X, Z = normal(1.0)(n, rng), normal(1.0)(n, rng), normal(2.0)(n, rng)  # W first
        h = (
            rbf_kernel(X[::2], X[1::2], **G).diagonal()
            + rbf_kernel(Z[::2], Z[1::2], **G).diagonal()
            - rbf_kernel(X[::2], Z[1::2], **G).diagonal()
            - rbf_kernel(X[1::2], Z[::2], **G).diagonal()
        )
        deltas.append(abs(np.sqrt(max(h.mean(), 0)) - np.sqrt(max(biased_mmd2(X, Z), 0))))
    assert row["delta"] == pytest.approx(np.mean(deltas), rel=1e-8)


def test_three_sample_error_boundaries_and_defaults():
    # the smallest sample size and a single repetition are accepted
    (row,) = three_sample_error(
        normal(1.0),
        normal(3.0),
        [2],
        methods=["exact"],
        n_repetitions=1,
        kernel_params=G,
        random_state=0,
    )
    assert row["n"] == 2 and row["n_repetitions"] == 1 and row["error_se"] == 0.0
    with pytest.raises(ValueError, match="n_repetitions"):
        three_sample_error(
            normal(1.0), normal(3.0), [4], methods=["exact"], n_repetitions=0, kernel_params=G
        )
    with pytest.raises(ValueError, match="n"):
        three_sample_error(
            normal(1.0), normal(3.0), [1], methods=["exact"], n_repetitions=1, kernel_params=G
        )
    (row,) = three_sample_error(
        normal(1.0), normal(3.0), [4], methods=["linear"], kernel_params=G, random_state=0
    )
    assert row["n_repetitions"] == 100  # the documented default


def test_three_sample_test_refuses_an_option_of_another_method():
    from sparsekit.stats import three_sample_test

    rng = np.random.default_rng(0)
    X, Z, W = rng.normal(size=(3, 10, 1))
    with pytest.raises(TypeError, match="block_size"):
        three_sample_test(X, Z, W, "linear", kernel_params=G, block_size=2)


def test_rff_permutation_statistic_has_no_ridge_term():
    from sparsekit.stats import mmd2_rff

    rng = np.random.default_rng(8)
    X, Y = rng.normal(size=(14, 2)), rng.normal(size=(10, 2)) + 0.5
    r = permutation_test(
        X, Y, "rff", kernel_params=G, n_frequencies=30, n_permutations=5, random_state=0
    )
    # same seed stream as the test: one integer for the frequencies
    seed = int(np.random.default_rng(0).integers(2**63))
    ref = mmd2_rff(X, Y, kernel_params=G, n_frequencies=30, random_state=seed)
    assert r.statistic == pytest.approx(ref, rel=1e-10)


def test_n_permutations_must_be_an_integer(rng):
    with pytest.raises(TypeError, match="n_permutations"):
        permutation_test(rng.normal(size=(5, 1)), rng.normal(size=(5, 1)), n_permutations=2.5)


def test_n_permutations_boundaries(rng):
    X, Y = rng.normal(size=(6, 1)), rng.normal(size=(5, 1))
    r = permutation_test(X, Y, "exact", kernel_params=G, n_permutations=1, random_state=0)
    assert r.n_permutations == 1 and r.p_value in (0.5, 1.0)
    with pytest.raises(ValueError, match="n_permutations"):
        permutation_test(X, Y, "exact", kernel_params=G, n_permutations=0)
