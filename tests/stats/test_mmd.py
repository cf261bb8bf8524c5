"""MMD estimators against direct computations and their statistical properties.

Oracles: the linear, subsample and block statistics written out with scikit-learn's
``rbf_kernel`` on the pairs, blocks and subsamples the definitions name (Gretton et al. 2012 §6;
Zaremba et al. 2013), and the chunk sizes of the row-wise kernel evaluation seen by a recording
kernel function; the Nyström MMD (Cherfaoui thesis Lemma 5) as the quadratic form
vᵀ(K_{F,S} K_S⁺ K_{S,F} + λ I)v built densely with ``rbf_kernel`` and ``numpy.linalg.pinv`` on
the distinct points F (weights of repeated points merged) and the fitted landmarks S, with a λ
large enough to be seen, the Nyström map's own ``transform`` for graphs and the row blocks of
K(x, S) fixed by ``SUM_BLOCK_BYTES``; the random-feature MMD² as the closed form
(1/s) Σ_j |mean_A e^{i w_jᵀx} − mean_B e^{i w_jᵀz}|² (Zhao & Meng 2015), written with NumPy
from the s frequencies w_j of a random Fourier map fitted on the pooled samples with the same
seed; the point identities of the pooled samples against a row-by-row comparison.
"""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

import sparsekit
from sparsekit import RandomFourierFeatures, get_kernel
from sparsekit.exceptions import NotFittedError, UnknownComponentError
from sparsekit.kernels.graph.shortest_path import ShortestPathKernel
from sparsekit.kernels.linear import LinearKernel
from sparsekit.registry import Registry
from sparsekit.samplers.base import Landmarks
from sparsekit.stats import (
    NystromMMD,
    mmd2_biased,
    mmd2_block,
    mmd2_linear,
    mmd2_nystrom,
    mmd2_rff,
    mmd2_unbiased,
    three_sample_test,
)
from sparsekit.stats._data import support, support_ids

from .conftest import gaussian_mmd2, random_graphs

G = {"gamma": 0.3}


def direct(KA, KB, KAB, unbiased):
    n, m = len(KA), len(KB)
    if unbiased:
        return (
            (KA.sum() - np.trace(KA)) / (n * (n - 1))
            + (KB.sum() - np.trace(KB)) / (m * (m - 1))
            - 2 * KAB.mean()
        )
    return KA.mean() + KB.mean() - 2 * KAB.mean()


@pytest.mark.parametrize("unbiased", [False, True])
@pytest.mark.parametrize("max_memory", [None, 3000])
def test_exact_equals_direct_computation(rng, unbiased, max_memory):
    A = rng.normal(size=(137, 4))
    B = rng.normal(size=(91, 4)) + 0.2
    want = direct(
        rbf_kernel(A, gamma=0.3), rbf_kernel(B, gamma=0.3), rbf_kernel(A, B, gamma=0.3), unbiased
    )
    f = mmd2_unbiased if unbiased else mmd2_biased
    got = f(A, B, "rbf", kernel_params=G, max_memory=max_memory)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-14)


def test_exact_float32_and_kernel_object(rng):
    A = rng.normal(size=(60, 3)).astype(np.float32)
    B = rng.normal(size=(70, 3)).astype(np.float32)
    want = direct(
        rbf_kernel(A.astype(float), gamma=0.3),
        rbf_kernel(B.astype(float), gamma=0.3),
        rbf_kernel(A.astype(float), B.astype(float), gamma=0.3),
        False,
    )
    got = mmd2_biased(A, B, sparsekit.get_kernel("rbf", gamma=0.3))
    assert got == pytest.approx(want, rel=1e-5)


def test_exact_on_graphs_equals_direct_gram(rng):
    A = random_graphs(rng, 15, 0.3)
    B = random_graphs(rng, 12, 0.6)
    k = sparsekit.get_kernel("shortest-path")
    K = k(A + B)
    want = direct(K[:15, :15], K[15:, 15:], K[:15, 15:], True)
    assert mmd2_unbiased(A, B, "shortest-path", max_memory=200) == pytest.approx(want, rel=1e-12)


def explicit_quadratic_form(est, A, B, lam):
    """vᵀ(K̂ + λI)v on the distinct points of A ∪ B, built densely."""
    pool = np.concatenate([A, B])
    support, inverse = np.unique(pool, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    v = np.zeros(len(support))
    np.add.at(v, inverse[: len(A)], 1.0 / len(A))
    np.add.at(v, inverse[len(A) :], -1.0 / len(B))
    Phi = est.nystroem_.transform(support)
    return v @ (Phi @ Phi.T + lam * np.eye(len(support))) @ v


@pytest.mark.parametrize("sampler", ["uniform", "greedy-trace", "dac-rls"])
def test_nystrom_equals_explicit_quadratic_form_with_repeated_points(rng, sampler):
    base = rng.normal(size=(40, 3))
    A = base[rng.integers(0, 40, 70)]  # repeats inside A ...
    B = np.concatenate([base[rng.integers(0, 40, 30)], rng.normal(size=(25, 3))])  # ... and across
    lam = 0.05
    params = {"lam": 0.1} if sampler == "dac-rls" else None
    est = NystromMMD(
        "rbf",
        sampler=sampler,
        sampler_params=params,
        n_landmarks=8,
        lam=lam,
        kernel_params=G,
        random_state=1,
    ).fit(A, B)
    assert est.mmd2() == pytest.approx(explicit_quadratic_form(est, A, B, lam), rel=1e-10)
    # merged weights: ‖v‖² over the distinct points, not 1/n_A + 1/n_B
    assert abs(est.sq_norm_v(0, 1) - (1 / 70 + 1 / 55)) > 1e-3


def test_nystrom_with_all_points_as_landmarks_tends_to_exact(rng):
    A = rng.normal(size=(50, 2))
    B = rng.normal(size=(45, 2)) * 1.5
    exact = mmd2_biased(A, B, kernel_params=G)
    for lam, tol in [(1e-3, 2e-3), (1e-9, 1e-8)]:
        got = mmd2_nystrom(A, B, kernel_params=G, n_landmarks=95, lam=lam, random_state=0)
        assert abs(got - exact) <= tol * max(exact, 1e-3) + lam * (1 / 50 + 1 / 45) * 1.001
    assert mmd2_nystrom(A, B, kernel_params=G, n_landmarks=95, lam=1e-9) == pytest.approx(
        exact, rel=1e-6
    )


class FixedSampler:
    """Returns the given indices of the pool as landmarks."""

    accepts = ("vectors", "graphs")

    def __init__(self, idx):
        self.idx = np.asarray(idx)

    def sample(self, X, kernel, n_landmarks, random_state=None):
        return Landmarks(self.idx, kernel.take(X, self.idx), np.ones(len(self.idx)))


def test_lemma4_positive_on_a_common_support_where_the_nystrom_part_vanishes():
    # P = (2/3, 1/3) and Q = (1/3, 2/3) on {-1, +1}; the single landmark 0 is equidistant from
    # both points, so phi(-1) = phi(+1) and the plain Nyström MMD is 0: only λ‖v‖² separates them
    a1, a2, z = [[-1.0]], [[1.0]], [[0.0]]
    A = np.array(a1 + a1 + a2)
    B = np.array(a1 + a2 + a2)
    lam = 1e-3
    est = NystromMMD(
        "rbf", sampler=FixedSampler([6]), n_landmarks=1, lam=lam, kernel_params={"gamma": 1.0}
    ).fit(A, B, np.array(z))
    assert abs(float(np.ptp(est.features_[0]))) < 1e-15
    assert est.mmd2(0, 1) == pytest.approx(lam * 2 / 9, rel=1e-9)
    assert est.mmd2(0, 1) > 0
    assert est.mmd2(0, 0) == 0.0


def test_nystrom_on_graphs_with_all_landmarks_equals_exact(rng):
    A = random_graphs(rng, 14, 0.3)
    B = random_graphs(rng, 11, 0.7)
    exact = mmd2_biased(A, B, "shortest-path", kernel_params={"normalize": True})
    got = mmd2_nystrom(
        A,
        B,
        "shortest-path",
        kernel_params={"normalize": True},
        n_landmarks=25,
        lam=1e-12,
        random_state=0,
    )
    assert got == pytest.approx(exact, rel=1e-6)


def test_default_number_of_landmarks_is_rounded_log_n(rng):
    A, B = rng.normal(size=(1100, 2)), rng.normal(size=(300, 2))
    est = NystromMMD(kernel_params=G).fit(A, B)
    assert est.n_landmarks_ == round(np.log(1100)) == 7
    assert est.nystroem_.n_components_ == 7
    assert NystromMMD(kernel_params=G).fit(A[:1], A[1:2]).n_landmarks_ == 1


def test_rff_converges_to_exact(rng):
    A = rng.normal(size=(200, 3))
    B = rng.normal(size=(200, 3)) + 0.5
    exact = mmd2_biased(A, B, kernel_params=G)
    got = np.mean(
        [mmd2_rff(A, B, kernel_params=G, n_frequencies=4000, random_state=s) for s in range(3)]
    )
    assert got == pytest.approx(exact, rel=0.05)


@pytest.mark.parametrize("estimator", ["unbiased", "linear", "block"])
def test_linear_block_and_u_statistics_are_unbiased(estimator):
    gamma, vp, vq, n = 0.5, 1.0, 2.0, 60
    truth = gaussian_mmd2(gamma, vp, vq)
    rng = np.random.default_rng(3)
    f = {
        "unbiased": mmd2_unbiased,
        "linear": mmd2_linear,
        "block": lambda a, b, **kw: mmd2_block(a, b, block_size=6, **kw),
    }[estimator]
    vals = np.array(
        [
            f(
                rng.normal(0, np.sqrt(vp), (n, 1)),
                rng.normal(0, np.sqrt(vq), (n, 1)),
                kernel="rbf",
                kernel_params={"gamma": gamma},
            )
            for _ in range(400)
        ]
    )
    se = vals.std(ddof=1) / np.sqrt(len(vals))
    assert abs(vals.mean() - truth) < 3 * se
    # and the biased V-statistic is detectably biased at this size (the test has power)
    if estimator == "unbiased":
        rng = np.random.default_rng(3)
        v = np.array(
            [
                mmd2_biased(
                    rng.normal(0, 1, (n, 1)),
                    rng.normal(0, np.sqrt(2), (n, 1)),
                    kernel_params={"gamma": gamma},
                )
                for _ in range(400)
            ]
        )
        assert v.mean() - truth > 3 * v.std(ddof=1) / 20


def test_linear_paired_statistic_value(rng):
    A, B = rng.normal(size=(7, 2)), rng.normal(size=(9, 2))
    k = lambda a, b: float(rbf_kernel(a[None], b[None], gamma=0.3)[0, 0])  # noqa: E731
    h = [
        k(A[2 * i], A[2 * i + 1])
        + k(B[2 * i], B[2 * i + 1])
        - k(A[2 * i], B[2 * i + 1])
        - k(A[2 * i + 1], B[2 * i])
        for i in range(3)
    ]
    assert mmd2_linear(A, B, kernel_params=G) == pytest.approx(np.mean(h), rel=1e-12)


def test_block_statistic_value(rng):
    A, B = rng.normal(size=(9, 2)), rng.normal(size=(8, 2))
    got = mmd2_block(A, B, kernel_params=G, block_size=2)
    xa = np.linspace(0, 9, 5).round().astype(int)
    za = np.linspace(0, 8, 5).round().astype(int)
    want = np.mean(
        [
            direct(
                rbf_kernel(A[xa[t] : xa[t + 1]], gamma=0.3),
                rbf_kernel(B[za[t] : za[t + 1]], gamma=0.3),
                rbf_kernel(A[xa[t] : xa[t + 1]], B[za[t] : za[t + 1]], gamma=0.3),
                True,
            )
            for t in range(4)
        ]
    )
    assert got == pytest.approx(want, rel=1e-12)  # 8 // 2 = 4 blocks, sizes (2|3, 2)


def test_subsample_linear_mmd_uses_sqrt_n_points(rng):
    A, B = rng.normal(size=(100, 2)), rng.normal(size=(49, 2))
    r = np.random.default_rng(5)
    ia, ib = np.sort(r.choice(100, 10, replace=False)), np.sort(r.choice(49, 7, replace=False))
    want = mmd2_biased(A[ia], B[ib], kernel_params=G)
    got = mmd2_linear(A, B, kernel_params=G, method="subsample", random_state=5)
    assert got == pytest.approx(want, rel=1e-12)


def test_bandwidth_rule_is_resolved_on_the_pooled_samples(rng):
    A, B = rng.normal(size=(80, 2)), rng.normal(size=(60, 2)) * 2
    pooled = np.concatenate([A, B])
    mean = pooled.mean(0)
    sigma2 = 2 * ((pooled**2).sum(1).mean() - mean @ mean)
    gamma = 1 / (2 * sigma2)
    want = mmd2_biased(A, B, kernel_params={"gamma": gamma})
    assert mmd2_biased(A, B, kernel_params={"bandwidth": "mean-sq-dist"}) == pytest.approx(want)


def unique_row_ids(P):
    """Index of the first row equal to each row (np.unique on values: -0.0 == 0.0)."""
    _, first, inverse = np.unique(P + 0.0, axis=0, return_index=True, return_inverse=True)
    return first[inverse.ravel()]


def test_support_ids_merge_equal_rows_only(rng, dtype):
    # small integers: the rows' low mantissa bits are all zero, so the table must not rely on them
    P = rng.integers(-2, 3, size=(3000, 3)).astype(dtype)
    P[rng.random(P.shape) < 0.5] *= -1  # -0.0 and 0.0 are the same point
    ids, distinct = support(sparsekit.get_kernel("rbf"), P)
    assert np.array_equal(ids, unique_row_ids(P)) and not distinct
    Q = rng.normal(size=(500, 4)).astype(dtype)
    Q[1] = np.nextafter(Q[0], np.inf)  # one ulp apart: different points
    ids, distinct = support(sparsekit.get_kernel("rbf"), Q)
    assert np.array_equal(ids, np.arange(500)) and distinct


def test_features_and_embeddings_of_the_fitted_samples(rng):
    A, B, W = rng.normal(size=(40, 3)), rng.normal(size=(30, 3)) + 0.3, rng.normal(size=(25, 3))
    est = NystromMMD("rbf", n_landmarks=9, kernel_params=G, random_state=2).fit(A, B, W)
    for sample, phi, mu in zip((A, B, W), est.features_, est.embeddings_):
        assert np.allclose(phi, est.nystroem_.transform(sample), rtol=1e-12, atol=1e-14)
        assert np.allclose(mu, phi.mean(axis=0), rtol=1e-12, atol=1e-14)
    diff = est.features_[0].mean(0) - est.features_[2].mean(0)
    assert est.mmd2(0, 2) == pytest.approx(diff @ diff + 1e-6 * (1 / 40 + 1 / 25), rel=1e-10)


def test_nystrom_handles_entries_whose_squared_distances_overflow(rng):
    A, B = rng.normal(size=(50, 3)), rng.normal(size=(40, 3)) * 1.3
    want = mmd2_nystrom(A, B, kernel_params=G, n_landmarks=10, random_state=0)
    c = 2.0**510  # ‖c a - c b‖² overflows float64; gamma / c² gives the same kernel values
    got = mmd2_nystrom(
        A * c, B * c, kernel_params={"gamma": 0.3 / c**2}, n_landmarks=10, random_state=0
    )
    assert np.isfinite(got) and got == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nystrom_names_the_sample_with_non_finite_values(rng, bad):
    A, B = rng.normal(size=(20, 3)), rng.normal(size=(25, 3))
    B[3, 1] = bad
    with pytest.raises(ValueError, match=f"Y contains {'NaN' if bad != np.inf else 'inf'}"):
        mmd2_nystrom(A, B)


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
def test_linear_and_block_kernel_name_is_resolved_in_the_given_registry(rng, f):
    A, B = rng.normal(size=(8, 2)), rng.normal(size=(8, 2))
    with pytest.raises(UnknownComponentError):
        f(A, B, "rbf", registry=Registry(builtins=False, entry_points=False))
    got = f(A, B, "rbf", kernel_params=G, registry=Registry(entry_points=False))
    want = paired(A, B) if f is mmd2_linear else blocks(A, B, 2)
    assert got == pytest.approx(want, rel=1e-12)


def test_block_statistic_on_graphs_equals_the_direct_gram(rng):
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


def quadratic_form(S, P, Q, lam):
    """vᵀ(K_FS K_S⁺ K_SF + λI)v, v = p − q on the distinct rows F of P ∪ Q."""
    F, inverse = np.unique(np.concatenate([P, Q]), axis=0, return_inverse=True)
    inverse = inverse.ravel()
    v = np.zeros(len(F))
    np.add.at(v, inverse[: len(P)], 1.0 / len(P))
    np.add.at(v, inverse[len(P) :], -1.0 / len(Q))
    KFS = rbf_kernel(F, S, gamma=0.3)
    K = KFS @ np.linalg.pinv(rbf_kernel(S, gamma=0.3)) @ KFS.T
    return float(v @ (K + lam * np.eye(len(F))) @ v)


@pytest.mark.parametrize("repeats", [False, True])
def test_every_pair_of_three_samples_is_the_quadratic_form(rng, repeats):
    base = rng.normal(size=(12, 2))
    if repeats:  # points repeated inside a sample and across samples
        X, Z, W = (
            base[rng.integers(0, 12, 15)],
            base[rng.integers(0, 12, 9)] + 0.0,
            np.concatenate([base[rng.integers(0, 12, 6)], rng.normal(size=(5, 2))]),
        )
    else:
        X, Z, W = rng.normal(size=(15, 2)), rng.normal(size=(9, 2)) + 0.7, rng.normal(size=(11, 2))
    est = NystromMMD(kernel_params=G, n_landmarks=6, lam=0.5, random_state=0).fit(X, Z, W)
    S = est.nystroem_.components_
    np.testing.assert_allclose(est.kernel_(S, S), rbf_kernel(S, gamma=0.3), rtol=1e-12)
    samples = [X, Z, W]
    for i, j in [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)]:
        assert est.mmd2(i, j) == pytest.approx(
            quadratic_form(S, samples[i], samples[j], 0.5), rel=1e-9
        )
        assert est.mmd(i, j) == pytest.approx(np.sqrt(est.mmd2(i, j)), rel=1e-15)
    assert est.mmd2() == est.mmd2(0, 1)
    assert est.mmd2(1, 1) == pytest.approx(0.0, abs=1e-15)


def test_default_lambda_is_1e_minus_6(rng):
    X, Y = rng.normal(size=(5, 2)), rng.normal(size=(4, 2)) + 0.5
    assert NystromMMD().get_params()["lam"] == 1e-6
    est = NystromMMD(kernel_params=G, n_landmarks=3, random_state=1).fit(X, Y)
    want = quadratic_form(est.nystroem_.components_, X, Y, 1e-6)
    assert est.mmd2() == pytest.approx(want, rel=1e-9)
    assert mmd2_nystrom(X, Y, kernel_params=G, n_landmarks=3, random_state=1) == pytest.approx(
        want, rel=1e-9
    )


def test_graph_pool_is_summed_in_row_blocks_of_sum_block_bytes():
    calls = []

    class Recording(ShortestPathKernel):
        def __call__(self, X, Y=None, *args, **kwargs):
            calls.append((len(X), None if Y is None else len(Y)))
            return super().__call__(X, Y, *args, **kwargs)

    rng = np.random.default_rng(0)
    A = random_graphs(rng, 330, 0.3, n_nodes=(4, 6))
    B = random_graphs(rng, 270, 0.5, n_nodes=(4, 6))
    est = NystromMMD(Recording(), n_landmarks=64, lam=1e-12, random_state=0).fit(A, B)
    # 600 graphs x 64 landmarks: the lower bound 2**18 bytes gives 2**18 // (8 * 64) = 512 rows
    assert [c for c in calls if c[1] == 64] == [(512, 64), (88, 64)]
    ny = est.nystroem_
    d = ny.transform(A).mean(axis=0) - ny.transform(B).mean(axis=0)
    assert est.mmd2() == pytest.approx(float(d @ d), rel=1e-9)


def test_fit_needs_no_feature_matrix(rng, monkeypatch):
    from sparsekit.features.nystrom import Nystroem

    X, Y = rng.normal(size=(30, 2)), rng.normal(size=(20, 2)) + 0.5
    est = NystromMMD(kernel_params=G, n_landmarks=5, lam=0.5, random_state=0).fit(X, Y)
    want = est.mmd2()

    def refuse(self, X):
        raise AssertionError("fit formed the n x s feature matrix")

    monkeypatch.setattr(Nystroem, "_features", refuse)
    est = NystromMMD(kernel_params=G, n_landmarks=5, lam=0.5, random_state=0).fit(X, Y)
    assert est.mmd2() == want


def test_one_sample_is_enough_and_none_is_refused(rng):
    X = rng.normal(size=(6, 2))
    est = NystromMMD(kernel_params=G, n_landmarks=2, random_state=0).fit(X)
    assert est.mmd2(0, 0) == 0.0
    assert est.embeddings_.shape == (1, 2)
    with pytest.raises(TypeError, match="at least one sample"):
        NystromMMD().fit()


@pytest.mark.parametrize("count, name", [(2, "Y"), (3, r"samples\[2\]")])
def test_bad_sample_is_named(rng, count, name):
    samples = [rng.normal(size=(5, 2)) for _ in range(count)]
    samples[-1][1, 0] = np.nan
    with pytest.raises(ValueError, match=name):
        NystromMMD(kernel_params=G).fit(*samples)


def test_indices_and_fitted_state_are_checked(rng):
    with pytest.raises(NotFittedError):
        _ = NystromMMD().features_
    with pytest.raises(NotFittedError):
        NystromMMD().mmd2()
    est = NystromMMD(kernel_params=G, n_landmarks=2, random_state=0).fit(
        rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    )
    with pytest.raises(TypeError, match="i"):
        est.mmd2(1.0, 0)
    for i, j in [(2, 0), (0, 2), (-1, 0)]:
        with pytest.raises(ValueError, match="is not a fitted sample"):
            est.mmd2(i, j)


def test_three_sample_landmarks_follow_the_given_seed(rng):
    X, Z, W = rng.normal(size=(20, 2)), rng.normal(size=(20, 2)) + 1.0, rng.normal(size=(20, 2))
    res = three_sample_test(
        X, Z, W, "nystrom", kernel_params=G, random_state=3, n_landmarks=4, lam=0.5
    )
    est = NystromMMD(
        kernel_params=G, n_landmarks=4, lam=0.5, random_state=np.random.default_rng(3)
    ).fit(X, Z, W)
    assert res.mmd2_xw == pytest.approx(est.mmd2(0, 2), rel=1e-12)
    assert res.mmd2_zw == pytest.approx(est.mmd2(1, 2), rel=1e-12)


def test_sampler_params_and_registry_are_passed_on(rng):
    X, Y = rng.normal(size=(8, 2)), rng.normal(size=(8, 2))
    with pytest.raises(TypeError):
        mmd2_nystrom(X, Y, kernel_params=G, sampler_params={"no_such_parameter": 1})
    with pytest.raises(UnknownComponentError):
        mmd2_nystrom(X, Y, registry=Registry(builtins=False, entry_points=False))
    got = mmd2_nystrom(
        X,
        Y,
        kernel_params=G,
        n_landmarks=3,
        lam=0.5,
        random_state=0,
        registry=Registry(entry_points=False),
    )
    est = NystromMMD(kernel_params=G, n_landmarks=3, lam=0.5, random_state=0).fit(X, Y)
    assert got == pytest.approx(quadratic_form(est.nystroem_.components_, X, Y, 0.5), rel=1e-9)
    assert sparsekit.stats.NystromMMD is NystromMMD


def closed_form(A, B, s, seed, kernel="rbf", params=G):
    P = np.concatenate([A, B])
    rff = RandomFourierFeatures(
        kernel=sparsekit.get_kernel(kernel, **params),
        n_components=2 * s,
        random_state=np.random.default_rng(seed),
    ).fit(P)
    W = np.asarray(rff.random_weights_, dtype=np.float64)
    assert W.shape[1] == s

    def mean_exp(X):
        return np.exp(1j * (np.asarray(X, dtype=np.float64) @ W)).mean(axis=0)

    return float(np.sum(np.abs(mean_exp(A) - mean_exp(B)) ** 2) / s)


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
@pytest.mark.parametrize("s", [1, 3, 8])
def test_value_is_the_closed_form_of_the_s_frequencies(rng, kernel, s):
    A, B = rng.normal(size=(20, 2)), rng.normal(size=(15, 2)) + 0.5
    got = mmd2_rff(A, B, kernel, kernel_params=G, n_frequencies=s, random_state=4)
    assert got == pytest.approx(closed_form(A, B, s, 4, kernel), rel=1e-10)


@pytest.mark.parametrize("sizes", [(60, 9), (9, 60), (3, 2)])
def test_default_number_of_frequencies_is_rounded_log_of_the_larger_sample(rng, sizes):
    A, B = rng.normal(size=(sizes[0], 2)), rng.normal(size=(sizes[1], 2)) + 0.5
    s = max(1, round(math.log(max(sizes))))  # ln 60 -> 4, ln 3 -> 1
    got = mmd2_rff(A, B, kernel_params=G, random_state=2)
    assert got == pytest.approx(closed_form(A, B, s, 2), rel=1e-10)


def test_float32_features_are_averaged_in_float64(rng):
    A = (rng.normal(size=(3000, 2)) * 3).astype(np.float32)
    B = (rng.normal(size=(2000, 2)) * 3 + 1.0).astype(np.float32)
    s = 5
    rff = RandomFourierFeatures(
        kernel=sparsekit.get_kernel("rbf", **G),
        n_components=2 * s,
        random_state=np.random.default_rng(1),
    )
    Psi = np.asarray(rff.fit_transform(np.concatenate([A, B])), dtype=np.float64)
    d = Psi[:3000].mean(axis=0) - Psi[3000:].mean(axis=0)
    got = mmd2_rff(A, B, kernel_params=G, n_frequencies=s, random_state=1)
    assert got == pytest.approx(float(d @ d), rel=1e-12)


def test_number_of_frequencies_is_checked(rng):
    A, B = rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    for bad in (0, -1):
        with pytest.raises(ValueError, match="n_frequencies"):
            mmd2_rff(A, B, kernel_params=G, n_frequencies=bad)
    with pytest.raises(TypeError, match="n_frequencies"):
        mmd2_rff(A, B, kernel_params=G, n_frequencies=2.5)


def test_kernel_without_fourier_features_is_refused_before_the_data_is_read():
    bad = np.array([[np.nan, 1.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="no random Fourier features"):
        mmd2_rff(bad, bad, "polynomial")
    X = np.zeros((6, 2))
    with pytest.raises(ValueError, match="no random Fourier features"):
        three_sample_test(X, X + 1, X, "rff", "polynomial")


def test_projections_beyond_the_float32_range_are_finite():
    # frequencies ~ sqrt(2 gamma) are fine, but w.x with |x| = 3e38 overflows float32: such a
    # block is projected again in float64 (the features are cosines of finite phases), so the
    # statistic is finite and comes without floating-point warnings; it was NaN before the
    # projections were guarded, then refused
    sparsekit.get_kernel("rbf")  # plugins loaded before warnings become errors
    X = np.full((6, 4), 3e38, dtype=np.float32)
    X[::2] *= -1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stat = mmd2_rff(
            X, X[::-1].copy(), kernel_params={"gamma": 1.0}, n_frequencies=3, random_state=0
        )
    # Y is X with its rows reversed: the same multiset of points, so the biased statistic on
    # the same features is exactly a mean-embedding difference of 0 up to rounding
    assert np.isfinite(stat)
    assert abs(stat) < 1e-6


def test_rff_kernel_name_is_resolved_in_the_given_registry(rng):
    A, B = rng.normal(size=(8, 2)), rng.normal(size=(8, 2))
    with pytest.raises(UnknownComponentError):
        mmd2_rff(A, B, "rbf", registry=Registry(builtins=False, entry_points=False))
    got = mmd2_rff(
        A,
        B,
        "rbf",
        kernel_params=G,
        n_frequencies=2,
        random_state=0,
        registry=Registry(entry_points=False),
    )
    assert got == pytest.approx(closed_form(A, B, 2, 0), rel=1e-10)


def _first_equal_brute_force(rows):
    """Index of the first row equal (entry by entry, ``==``) to every row."""
    return np.array(
        [
            next(j for j in range(len(rows)) if np.array_equal(rows[j], rows[i]))
            for i in range(len(rows))
        ]
    )


def test_support_ids_are_the_first_index_of_each_distinct_row(dtype, rng):
    base = rng.integers(-2, 3, size=(6, 3)).astype(dtype)
    rows = base[rng.integers(0, 6, size=40)]
    rows[rows == 0] = -0.0 * rng.integers(0, 2, size=(rows == 0).sum())  # mixed signed zeros
    expected = _first_equal_brute_force(rows)
    ids, distinct = support(None, rows)
    np.testing.assert_array_equal(support_ids(None, rows), expected)
    np.testing.assert_array_equal(ids, expected)
    assert distinct == (len(np.unique(expected)) == len(rows)) and not distinct
    ids, distinct = support(None, base[:1] + np.arange(5, dtype=dtype)[:, None])
    np.testing.assert_array_equal(ids, np.arange(5))
    assert distinct


class _CountsKernel:
    """A graph kernel's prepared data reduced to what ``support`` reads: sparse counts."""

    def n_samples(self, data):
        return data.counts.shape[0]


class _Counts:
    def __init__(self, counts):
        self.counts = counts


def test_support_of_feature_counts_does_not_depend_on_the_stored_index_order():
    # rows 0 and 2 hold the same counts, stored in another column order; row 1 differs
    counts = sp.csr_matrix(
        (
            np.array([5.0, 1.0, 1.0, 5.0, 1.0, 5.0]),
            np.array([2, 0, 0, 3, 0, 2]),
            np.array([0, 2, 4, 6]),
        ),
        shape=(3, 4),
    )
    dense = counts.toarray()
    ids, distinct = support(_CountsKernel(), _Counts(counts))
    np.testing.assert_array_equal(ids, _first_equal_brute_force(dense))
    np.testing.assert_array_equal(ids, [0, 1, 0])
    assert not distinct


class _UnitRowsLinear(LinearKernel):
    """The linear kernel of the rows scaled to unit norm: a vector kernel with its own prepare."""

    def prepare(self, X):
        A = super().prepare(X)
        return A / np.linalg.norm(A, axis=1, keepdims=True)


def test_pooled_samples_go_through_a_vector_kernels_own_prepare():
    rng = np.random.default_rng(7)
    X, Y = rng.normal(size=(20, 3)) + 1.0, rng.normal(size=(15, 3))
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    Yn = Y / np.linalg.norm(Y, axis=1, keepdims=True)
    expected = float(np.sum((Xn.mean(0) - Yn.mean(0)) ** 2))  # V-statistic of a linear kernel
    assert mmd2_biased(X, Y, _UnitRowsLinear()) == pytest.approx(expected, rel=1e-10)
