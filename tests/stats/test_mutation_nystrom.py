"""Value tests of the Nyström MMD (Cherfaoui thesis Lemma 5) and of its estimator's checks.

Oracles: the quadratic form vᵀ(K_{F,S} K_S⁺ K_{S,F} + λ I)v built densely with scikit-learn's
``rbf_kernel`` and ``numpy.linalg.pinv`` on the distinct points F (weights of repeated points
merged) and the fitted landmarks S, with a λ large enough to be seen; the Nyström map's own
``transform`` for graphs; the row blocks of K(x, S) fixed by ``SUM_BLOCK_BYTES``.
"""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import sparsekit
from sparsekit.exceptions import NotFittedError, UnknownComponentError
from sparsekit.kernels.graph.shortest_path import ShortestPathKernel
from sparsekit.registry import Registry
from sparsekit.stats import NystromMMD, mmd2_nystrom, three_sample_test

from .conftest import random_graphs

G = {"gamma": 0.3}


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
