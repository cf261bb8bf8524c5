"""Value tests of the linear, subsample and block MMD² estimators (and their three-sample use).

Oracles: the statistics written out with scikit-learn's ``rbf_kernel`` on the pairs, blocks
and subsamples the definitions name (Gretton et al. 2012 §6; Zaremba et al. 2013), and the
chunk sizes of the row-wise kernel evaluation seen by a recording kernel function.
"""

import math
import warnings

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from sparsekit.exceptions import UnknownComponentError
from sparsekit.registry import Registry
from sparsekit.stats import mmd2_block, mmd2_linear, three_sample_test

G = {"gamma": 0.3}


def k(a, b):
    return rbf_kernel(a, b, gamma=0.3)


def u_stat(A, B):
    KA, KB, KAB = k(A, A), k(B, B), k(A, B)
    n, m = len(A), len(B)
    return (
        (KA.sum() - np.trace(KA)) / (n * (n - 1))
        + (KB.sum() - np.trace(KB)) / (m * (m - 1))
        - 2 * KAB.mean()
    )


def paired(A, B):
    m = min(len(A), len(B)) // 2
    return np.mean(
        [
            k(A[[2 * i]], A[[2 * i + 1]])[0, 0]
            + k(B[[2 * i]], B[[2 * i + 1]])[0, 0]
            - k(A[[2 * i]], B[[2 * i + 1]])[0, 0]
            - k(A[[2 * i + 1]], B[[2 * i]])[0, 0]
            for i in range(m)
        ]
    )


def blocks(A, B, size):
    b = min(len(A), len(B)) // size
    xa = np.linspace(0, len(A), b + 1).round().astype(int)
    za = np.linspace(0, len(B), b + 1).round().astype(int)
    return np.mean([u_stat(A[xa[t] : xa[t + 1]], B[za[t] : za[t + 1]]) for t in range(b)])


def test_linear_needs_one_pair_in_each_sample(rng):
    A, B = rng.normal(size=(2, 2)), rng.normal(size=(3, 2))
    assert mmd2_linear(A, B, kernel_params=G) == pytest.approx(paired(A, B), rel=1e-12)
    with pytest.raises(ValueError, match="at least two points in each sample"):
        mmd2_linear(A[:1], B, kernel_params=G)
    with pytest.raises(ValueError, match="at least two points in each sample"):
        mmd2_linear(B, A[:1], kernel_params=G)


def test_pairs_are_evaluated_in_chunks_of_64(rng):
    A, B = rng.normal(size=(150, 2)), rng.normal(size=(160, 2))
    calls = []

    def rec(a, b):
        calls.append((len(a), len(b)))
        return k(a, b)

    got = mmd2_linear(A, B, rec)
    # 75 pairs: the four row-wise evaluations each take a chunk of 64 rows and one of 11
    assert [c for c in calls if c[0] == c[1] and c[0] in (64, 11)] == [(64, 64), (11, 11)] * 4
    assert got == pytest.approx(paired(A, B), rel=1e-12)


@pytest.mark.parametrize("sizes", [(50, 10), (10, 50), (17, 26)])
def test_subsample_takes_ceil_sqrt_n_points(rng, sizes):
    A, B = rng.normal(size=(sizes[0], 2)), rng.normal(size=(sizes[1], 2))
    r = np.random.default_rng(11)
    sa, sb = math.ceil(math.sqrt(sizes[0])), math.ceil(math.sqrt(sizes[1]))
    ia = np.sort(r.choice(sizes[0], sa, replace=False))
    ib = np.sort(r.choice(sizes[1], sb, replace=False))
    a, b = A[ia], B[ib]
    want = k(a, a).mean() + k(b, b).mean() - 2 * k(a, b).mean()
    got = mmd2_linear(A, B, kernel_params=G, method="subsample", random_state=11)
    assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("n, size", [(20, 3), (100, 5), (30, 3), (160, 5), (5, 2)])
def test_default_block_size_is_rounded_log_n(rng, n, size):
    # round(ln 20) = 3, round(ln 100) = 5, round(ln 30) = 3, round(ln 160) = 5, and at least 2
    A, B = rng.normal(size=(n, 2)), rng.normal(size=(n - 1, 2)) + 0.3
    assert mmd2_block(A, B, kernel_params=G) == pytest.approx(blocks(A, B, size), rel=1e-12)


def test_default_block_size_uses_the_larger_sample(rng):
    # ln 160 -> 5 points per block, even though the smaller sample has 30 (ln 30 -> 3)
    A, B = rng.normal(size=(30, 2)), rng.normal(size=(160, 2))
    assert mmd2_block(A, B, kernel_params=G) == pytest.approx(blocks(A, B, 5), rel=1e-12)
    assert mmd2_block(B, A, kernel_params=G) == pytest.approx(blocks(B, A, 5), rel=1e-12)


@pytest.mark.parametrize(
    "method, options, oracle",
    [("block", {"block_size": 3}, lambda a, b: blocks(a, b, 3)), ("linear", {}, paired)],
)
def test_three_sample_pairs_use_the_right_rows_of_the_pool(rng, method, options, oracle):
    X, Z, W = (rng.normal(size=(13, 2)), rng.normal(size=(11, 2)) + 0.5, rng.normal(size=(12, 2)))
    res = three_sample_test(X, Z, W, method, kernel_params=G, **options)
    assert res.mmd2_xw == pytest.approx(oracle(X, W), rel=1e-12)
    assert res.mmd2_zw == pytest.approx(oracle(Z, W), rel=1e-12)


@pytest.mark.parametrize("f", [mmd2_linear, mmd2_block])
def test_kernel_name_is_resolved_in_the_given_registry(rng, f):
    A, B = rng.normal(size=(8, 2)), rng.normal(size=(8, 2))
    with pytest.raises(UnknownComponentError):
        f(A, B, "rbf", registry=Registry(builtins=False, entry_points=False))
    got = f(A, B, "rbf", kernel_params=G, registry=Registry(entry_points=False))
    want = paired(A, B) if f is mmd2_linear else blocks(A, B, 2)
    assert got == pytest.approx(want, rel=1e-12)


def test_block_statistic_on_graphs_equals_the_direct_gram(rng):
    from sparsekit import get_kernel

    from .conftest import random_graphs

    A, B = random_graphs(rng, 9, 0.3), random_graphs(rng, 8, 0.6)
    K = get_kernel("shortest-path")(A + B)
    xa, za = np.linspace(0, 9, 5).round().astype(int), np.linspace(0, 8, 5).round().astype(int)
    want = []
    for t in range(4):  # 8 // 2 = 4 blocks
        ia, ib = np.arange(xa[t], xa[t + 1]), 9 + np.arange(za[t], za[t + 1])
        KA, KB, KAB = K[np.ix_(ia, ia)], K[np.ix_(ib, ib)], K[np.ix_(ia, ib)]
        p, q = len(ia), len(ib)
        want.append(
            (KA.sum() - np.trace(KA)) / (p * (p - 1))
            + (KB.sum() - np.trace(KB)) / (q * (q - 1))
            - 2 * KAB.mean()
        )
    got = mmd2_block(A, B, "shortest-path", block_size=2)
    assert got == pytest.approx(np.mean(want), rel=1e-12)


@pytest.mark.parametrize(("n", "m"), [(10, 7), (7, 10), (9, 12), (12, 12), (11, 11)])
def test_linear_warns_with_the_count_of_points_left_out_of_unequal_samples(rng, n, m):
    """Oracle: Gretton et al. 2012 §6 define the linear statistic on the pairs of equal-size
    samples; the value is the statistic written out on the first 2⌊min/2⌋ points of each, and
    the points left out are counted by hand. Equal sizes (even or odd) give no warning."""
    A, B = rng.normal(size=(n, 2)), rng.normal(size=(m, 2)) + 0.3
    used = 2 * (min(n, m) // 2)
    if n == m:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            value = mmd2_linear(A, B, kernel_params=G)
    else:
        with pytest.warns(UserWarning, match=f"uses {used} of each and leaves {n + m - 2 * used} "):
            value = mmd2_linear(A, B, kernel_params=G)
    assert value == pytest.approx(paired(A[:used], B[:used]), rel=1e-12)
