"""Value tests of the random-Fourier-feature MMD².

Oracle: the closed form MMD²_k̂ = (1/s) Σ_j |mean_A e^{i w_jᵀx} − mean_B e^{i w_jᵀz}|²
(Zhao & Meng 2015), written with NumPy from the s frequencies w_j of a random Fourier map
fitted on the pooled samples with the same seed.
"""

import math
import warnings

import numpy as np
import pytest

import sparsekit
from sparsekit import RandomFourierFeatures
from sparsekit.exceptions import UnknownComponentError
from sparsekit.registry import Registry
from sparsekit.stats import mmd2_rff, three_sample_test

G = {"gamma": 0.3}


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


def test_kernel_name_is_resolved_in_the_given_registry(rng):
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
