"""Fastfood: the Numba FWHT, the structured projection against its dense form, unbiasedness."""

import numpy as np
import pytest
from scipy import stats
from scipy.linalg import hadamard
from sklearn.metrics.pairwise import rbf_kernel

from sparsekit import Fastfood, RandomFourierFeatures
from sparsekit.exceptions import NotFittedError
from sparsekit.features import _cpu


@pytest.mark.parametrize("size", [1, 2, 8, 64])
def test_fwht_equals_hadamard_matrix(size, dtype):
    A = np.random.default_rng(size).normal(size=(5, size)).astype(dtype)
    expected = A.astype(np.float64) @ hadamard(size).T
    B = A.copy()
    _cpu.fwht_inplace(B)
    assert B.dtype == dtype
    np.testing.assert_allclose(
        B,
        expected,
        rtol=1e-5 if dtype == np.float32 else 1e-12,
        atol=1e-5 if dtype == np.float32 else 1e-12,
    )


def dense_frequencies(ff):
    """V = stack_b diag(scales_b) H diag(G_b) Π_b H diag(B_b), first n_frequencies_ rows."""
    d_pad = ff.padded_dim_
    H = hadamard(d_pad)
    blocks = []
    for b in range(ff.signs_.shape[0]):
        P = np.eye(d_pad)[ff.permutations_[b]]  # (P y)_k = y[perm[k]]
        blocks.append(
            np.diag(ff.scales_[b]) @ H @ np.diag(ff.gaussians_[b]) @ P @ H @ np.diag(ff.signs_[b])
        )
    return np.vstack(blocks)[: ff.n_frequencies_, : ff.n_features_in_]


@pytest.mark.parametrize("d, n_components", [(5, 40), (8, 16), (3, 2), (13, 70)])
def test_projection_equals_dense_structured_matrix(d, n_components):
    X = np.random.default_rng(d).normal(size=(7, d))
    ff = Fastfood(gamma=0.3, n_components=n_components, random_state=1).fit(X)
    V = dense_frequencies(ff)
    np.testing.assert_allclose(ff.project(X), X @ V.T, rtol=1e-12, atol=1e-12)
    P = X @ V.T
    expected = np.hstack([np.cos(P), np.sin(P)]) / np.sqrt(n_components // 2)
    np.testing.assert_allclose(ff.transform(X), expected, rtol=1e-12, atol=1e-12)


def full_frequencies(ff):
    """All d' columns of every block of V (no truncation to n_features or n_frequencies)."""
    d_pad = ff.padded_dim_
    H = hadamard(d_pad)
    return np.vstack(
        [
            np.diag(ff.scales_[b])
            @ H
            @ np.diag(ff.gaussians_[b])
            @ np.eye(d_pad)[ff.permutations_[b]]
            @ H
            @ np.diag(ff.signs_[b])
            for b in range(ff.signs_.shape[0])
        ]
    )


@pytest.mark.parametrize("d", [16, 10])
def test_row_norms_follow_the_scaled_chi_law(d):
    # Le, Sarlos & Smola (2013), section 3: S_jj = s_j / ||G||_F with s_j ~ chi(d'), so every
    # row of V = S H G Pi H B / (sigma sqrt(d')) has norm s_j / sigma = sqrt(2 gamma) chi(d'),
    # the law of the norm of a dense N(0, 2 gamma I_d') row
    gamma = 0.35
    ff = Fastfood(gamma=gamma, n_components=2 * 16 * 64, random_state=0).fit(np.zeros((1, d)))
    assert ff.padded_dim_ == 16 and ff.signs_.shape[0] == 64
    if d == 16:  # the projection itself: V.T = project(I)
        norms = np.linalg.norm(ff.project(np.eye(d)), axis=0)
    else:
        norms = np.linalg.norm(full_frequencies(ff), axis=1)
    assert norms.size == 1024
    law = stats.chi(df=16, scale=np.sqrt(2 * gamma))
    assert stats.kstest(norms, law.cdf).pvalue > 0.01
    # the test separates close laws: one degree of freedom less, or a 5% larger scale
    for wrong in (
        stats.chi(df=15, scale=np.sqrt(2 * gamma)),
        stats.chi(df=16, scale=1.05 * np.sqrt(2 * gamma)),
    ):
        assert stats.kstest(norms, wrong.cdf).pvalue < 1e-4
    assert np.mean(norms**2) == pytest.approx(2 * gamma * 16, rel=0.05)


def test_projections_of_a_point_are_gaussian_with_variance_2_gamma_norm2():
    # [V x]_j ~ N(0, 2 gamma ||x||^2), as for the dense Gaussian frequencies of random features
    gamma = 0.2
    x = np.random.default_rng(3).normal(size=(1, 12))
    ff = Fastfood(gamma=gamma, n_components=4000, random_state=1).fit(x)
    proj = ff.project(x).ravel()
    scale = np.sqrt(2 * gamma) * np.linalg.norm(x)
    assert stats.kstest(proj, stats.norm(scale=scale).cdf).pvalue > 0.01
    assert stats.kstest(proj, stats.norm(scale=1.2 * scale).cdf).pvalue < 1e-3


def test_sigma_is_the_bandwidth_of_the_gaussian_kernel():
    # sigma gives gamma = 1 / (2 sigma^2): the same draws, and the kernel
    # exp(-|x-z|^2 / (2 sigma^2))
    X = np.random.default_rng(4).normal(size=(5, 6))
    sigma = 1.7
    by_sigma = Fastfood(sigma=sigma, n_components=64, random_state=5).fit(X)
    by_gamma = Fastfood(gamma=1 / (2 * sigma**2), n_components=64, random_state=5).fit(X)
    assert by_sigma.gamma_ == pytest.approx(1 / (2 * sigma**2), rel=1e-15)
    np.testing.assert_allclose(by_sigma.transform(X), by_gamma.transform(X), rtol=1e-13, atol=1e-15)
    acc = np.zeros((5, 5))
    for seed in range(20):
        Z = Fastfood(sigma=sigma, n_components=2000, random_state=seed).fit_transform(X)
        acc += Z @ Z.T
    want = np.exp(-np.sum((X[:, None] - X[None]) ** 2, axis=-1) / (2 * sigma**2))
    np.testing.assert_allclose(acc / 20, want, atol=0.03)
    with pytest.raises(ValueError, match="sigma"):
        Fastfood(sigma=1.0, gamma=0.5).fit(X)


def test_unbiased_for_the_gaussian_kernel():
    X = np.array([[0.0, 0.0, 0.0], [0.5, 0.2, -0.3], [-0.4, 0.6, 0.1], [1.0, -0.5, 0.4]])
    K = rbf_kernel(X, gamma=0.4)
    acc = np.zeros_like(K)
    n_seeds = 40
    for seed in range(n_seeds):
        Z = Fastfood(gamma=0.4, n_components=2000, random_state=seed).fit_transform(X)
        acc += Z @ Z.T
    np.testing.assert_allclose(acc / n_seeds, K, atol=0.02)


def test_dtype_kept_and_close_to_float64(dtype):
    X = np.random.default_rng(0).normal(size=(9, 6))
    Z = Fastfood(n_components=20, random_state=2).fit_transform(X.astype(dtype))
    assert Z.dtype == dtype and Z.shape == (9, 20)
    Z64 = Fastfood(n_components=20, random_state=2).fit_transform(X)
    np.testing.assert_allclose(Z, Z64, atol=1e-5)


def test_many_row_blocks(monkeypatch):
    from sparsekit import _random_features

    X = np.random.default_rng(0).normal(size=(31, 4))
    expected = Fastfood(n_components=12, random_state=0).fit_transform(X)
    monkeypatch.setattr(_random_features, "BLOCK_BYTES", 64)
    np.testing.assert_array_equal(
        Fastfood(n_components=12, random_state=0).fit_transform(X), expected
    )


def test_errors():
    X = np.ones((3, 4))
    with pytest.raises(NotFittedError, match="fit"):
        Fastfood().transform(X)
    ff = Fastfood(n_components=8).fit(X)
    with pytest.raises(ValueError, match="4 features"):
        ff.transform(np.ones((3, 5)))
    with pytest.raises(ValueError, match="NaN"):
        ff.transform(np.full((1, 4), np.nan))
    with pytest.raises(ValueError, match="sigma"):
        Fastfood(sigma=0.0).fit(X)


def test_float32_scales_that_overflow_are_refused_naming_the_scale():
    """gamma = 1e80 on float32 data: the diagonal S / (sigma sqrt(d')) ~ sqrt(2 gamma) ~ 1e40
    exceeds float32 (the features were NaN); a ValueError names the dtype and the way out,
    and the same map in float64 is finite."""
    X = np.random.default_rng(0).random((10, 3)).astype(np.float32)
    with pytest.raises(ValueError, match=r"exceed the float32 range; fit on float64"):
        Fastfood(gamma=1e80, n_components=8, random_state=0).fit(X)
    Z = Fastfood(gamma=1e80, n_components=8, random_state=0).fit_transform(X.astype(np.float64))
    assert np.isfinite(Z).all()


def test_fitted_random_factors_are_in_the_dtype_of_the_data():
    X = np.random.default_rng(0).normal(size=(150, 3))
    X32 = X.astype(np.float32)
    ff = Fastfood(n_components=20, random_state=0).fit(X32)
    assert ff.signs_.dtype == ff.gaussians_.dtype == ff.scales_.dtype == np.float32
    assert ff.permutations_.dtype == np.int64
    # the float32 factors hold the float64 draws rounded once
    ff64 = Fastfood(n_components=20, random_state=0).fit(X)
    np.testing.assert_array_equal(ff.signs_, ff64.signs_.astype(np.float32))
    np.testing.assert_array_equal(ff.scales_, ff64.scales_.astype(np.float32))
    rff = RandomFourierFeatures(n_components=20, random_state=0).fit(X32)
    assert rff.random_weights_.dtype == np.float32
