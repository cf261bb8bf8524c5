"""MMD estimators against direct computations and their statistical properties."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import sparsekit
from sparsekit.samplers.base import Landmarks
from sparsekit.stats import (
    NystromMMD,
    mmd2_biased,
    mmd2_block,
    mmd2_linear,
    mmd2_nystrom,
    mmd2_rff,
    mmd2_unbiased,
)

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


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_support_ids_merge_equal_rows_only(rng, dtype):
    from sparsekit.stats._data import support

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
