"""Random Fourier features: unbiasedness (the sqrt(2/s) misprint), spectral laws, dtypes, errors."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

from sparsekit import Fastfood, RandomFourierFeatures, get_kernel
from sparsekit.exceptions import NotFittedError

GAMMA = 0.4


@pytest.fixture
def X4():
    # four points whose kernel values lie well inside (0, 1) for both kernels
    return np.array([[0.0, 0.0, 0.0], [0.5, 0.2, -0.3], [-0.4, 0.6, 0.1], [1.0, -0.5, 0.4]])


def mean_gram(kernel, X, n_seeds=40, n_components=2000):
    acc = np.zeros((len(X), len(X)))
    for seed in range(n_seeds):
        Z = RandomFourierFeatures(
            kernel, gamma=GAMMA, n_components=n_components, random_state=seed
        ).fit_transform(X)
        acc += Z @ Z.T
    return acc / n_seeds


@pytest.mark.parametrize("kernel, exact", [("rbf", rbf_kernel), ("laplacian", laplacian_kernel)])
def test_unbiased_expectation_matches_kernel_not_twice_it(X4, kernel, exact):
    """E[phi(x)ᵀ phi(z)] = k(x, z): the thesis' sqrt(2/s) factor would give 2k (a misprint)."""
    K = exact(X4, gamma=GAMMA)
    est = mean_gram(kernel, X4)
    # 40 x 1000 frequencies per entry: each cos term has variance <= 1/2 -> std <= 0.0036
    np.testing.assert_allclose(est, K, atol=0.02)
    off = ~np.eye(4, dtype=bool)
    assert np.all(np.abs(est[off] - 2 * K[off]) > 0.1)


def test_rows_have_unit_norm_like_k_xx(X4):
    Z = RandomFourierFeatures("rbf", gamma=GAMMA, n_components=10, random_state=0).fit_transform(X4)
    np.testing.assert_allclose((Z * Z).sum(axis=1), 1.0, rtol=1e-12)


def test_gaussian_frequencies_have_variance_two_gamma():
    X = np.zeros((2, 50))
    rff = RandomFourierFeatures("gaussian", gamma=GAMMA, n_components=4000, random_state=0).fit(X)
    W = rff.random_weights_
    assert W.shape == (50, 2000)
    assert abs(W.var() - 2 * GAMMA) < 0.02 * 2 * GAMMA


def test_laplacian_frequencies_are_cauchy_with_scale_gamma():
    X = np.zeros((2, 50))
    W = (
        RandomFourierFeatures("laplace", gamma=GAMMA, n_components=4000, random_state=0)
        .fit(X)
        .random_weights_
    )
    # the median of |w| for Cauchy(0, gamma) is gamma
    assert abs(np.median(np.abs(W)) - GAMMA) < 0.02 * GAMMA


def test_sigma_and_default_gamma(X4):
    a = RandomFourierFeatures("rbf", sigma=2.0, n_components=20, random_state=3).fit(X4)
    b = RandomFourierFeatures("rbf", gamma=1 / 8, n_components=20, random_state=3).fit(X4)
    np.testing.assert_array_equal(a.transform(X4), b.transform(X4))
    c = RandomFourierFeatures("laplacian", sigma=2.0, n_components=20, random_state=3).fit(X4)
    assert c.gamma_ == 0.5
    d = RandomFourierFeatures(n_components=20).fit(X4)
    assert d.gamma_ == pytest.approx(1 / 3)


def test_kernel_object_brings_its_gamma(X4):
    a = RandomFourierFeatures(get_kernel("rbf", gamma=0.7), n_components=20, random_state=1)
    b = RandomFourierFeatures("rbf", gamma=0.7, n_components=20, random_state=1)
    np.testing.assert_array_equal(a.fit_transform(X4), b.fit_transform(X4))
    lap = RandomFourierFeatures(get_kernel("laplacian", gamma=0.3), n_components=20).fit(X4)
    assert lap.kernel_ == "laplacian" and lap.gamma_ == 0.3
    bw = RandomFourierFeatures(get_kernel("rbf", bandwidth="mean-sq-dist"), n_components=20).fit(X4)
    assert bw.gamma_ == pytest.approx(get_kernel("rbf", bandwidth="mean-sq-dist").fit(X4).gamma_)


def test_dtype_kept_and_reproducible(X4, dtype):
    X = X4.astype(dtype)
    Z1 = RandomFourierFeatures(n_components=30, random_state=5).fit_transform(X)
    Z2 = RandomFourierFeatures(n_components=30, random_state=5).fit_transform(X)
    assert Z1.dtype == dtype and Z1.shape == (4, 30)
    np.testing.assert_array_equal(Z1, Z2)
    # float32 features approximate the float64 ones
    Z64 = RandomFourierFeatures(n_components=30, random_state=5).fit_transform(X4)
    np.testing.assert_allclose(Z1, Z64, atol=1e-5 if dtype == np.float32 else 0)


def test_transform_in_blocks_equals_direct_formula(monkeypatch):
    from sparsekit import _random_features

    monkeypatch.setattr(_random_features, "BLOCK_BYTES", 64)  # forces many row blocks
    X = np.random.default_rng(0).normal(size=(23, 4))
    rff = RandomFourierFeatures(n_components=8, random_state=0).fit(X)
    P = X @ rff.random_weights_
    expected = np.hstack([np.cos(P), np.sin(P)]) / 2.0
    np.testing.assert_allclose(rff.transform(X), expected, rtol=1e-12, atol=1e-14)


def test_params_roundtrip():
    rff = RandomFourierFeatures(n_components=10)
    assert rff.get_params()["n_components"] == 10
    rff.set_params(kernel="laplacian", gamma=0.1)
    assert rff.kernel == "laplacian" and rff.gamma == 0.1


def test_errors(X4):
    rff = RandomFourierFeatures(n_components=10)
    with pytest.raises(NotFittedError, match="fit"):
        rff.transform(X4)
    rff.fit(X4)
    with pytest.raises(ValueError, match="3 features"):
        rff.transform(np.ones((2, 5)))
    bad = X4.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        rff.transform(bad)
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="inf"):
        RandomFourierFeatures().fit(bad)
    with pytest.raises(ValueError, match="n_components"):
        RandomFourierFeatures(n_components=0).fit(X4)
    with pytest.raises(TypeError, match="n_components"):
        RandomFourierFeatures(n_components=2.5).fit(X4)
    with pytest.raises(ValueError, match="Did you mean 'laplacian'"):
        RandomFourierFeatures("laplacien").fit(X4)
    with pytest.raises(ValueError, match="gamma"):
        RandomFourierFeatures(gamma=-1.0).fit(X4)
    with pytest.raises(ValueError, match="only one"):
        RandomFourierFeatures(gamma=1.0, sigma=1.0).fit(X4)
    with pytest.raises(ValueError, match="not both"):
        RandomFourierFeatures(get_kernel("rbf"), gamma=1.0).fit(X4)
    with pytest.raises(TypeError, match="kernel must be one of"):
        RandomFourierFeatures(get_kernel("linear")).fit(X4)
    with pytest.raises(ValueError, match="2-D"):
        RandomFourierFeatures().fit(np.ones(5))
    with pytest.raises(ValueError, match="empty"):
        RandomFourierFeatures().fit(np.ones((0, 3)))


def test_float32_data_whose_frequencies_overflow_is_refused_naming_the_scale():
    """Data at 1e-39: the median rule's gamma is ~1e78, frequencies ~1e39 exceed float32."""
    X = (np.random.default_rng(0).random((50, 3)) * 1e-39).astype(np.float32)
    rff = RandomFourierFeatures(
        get_kernel("rbf", bandwidth="median"), n_components=20, random_state=0
    )
    with pytest.raises(
        ValueError, match=r"features of float32 data at scale 9.97e-40 .*rescale the data"
    ):
        rff.fit(X)
    Z = RandomFourierFeatures(
        get_kernel("rbf", bandwidth="median"), n_components=20, random_state=0
    ).fit_transform(X.astype(np.float64))
    assert np.isfinite(Z).all()


@pytest.mark.parametrize("cls", [RandomFourierFeatures, Fastfood])
@pytest.mark.parametrize("scale", [3e38, 1e37])
def test_features_at_the_top_of_the_float_range_equal_those_of_the_rescaled_problem(cls, scale):
    """Scale equivariance: the map of s X with gamma / s^2 equals the map of X with gamma
    (frequencies scale by 1 / s, projections are unchanged). For float32 data at 3e38 (and
    at 1e37 for Fastfood's Hadamard sums over d' = 512) the sums inside the projection
    overflowed and the features were NaN, although every projection is of order one."""
    dtype = np.float32
    rng = np.random.default_rng(0)
    X1 = rng.uniform(-1, 1, size=(20, 300)).astype(dtype)
    X = (X1.astype(np.float64) * scale).astype(dtype)
    gamma = 0.5 / 300
    ref = cls(gamma=gamma, n_components=41, random_state=0).fit_transform(X1.astype(np.float64))
    Z = cls(gamma=gamma / scale / scale, n_components=41, random_state=0).fit_transform(X)
    assert Z.dtype == dtype
    np.testing.assert_allclose(Z, ref, atol=1e-4)


@pytest.mark.parametrize("cls", [RandomFourierFeatures, Fastfood])
def test_features_whose_projections_exceed_float32_are_finite_phases(cls):
    """float32 data at 3e38 with the default gamma = 1 / d: the projections themselves
    (~1e38) exceed the float32 range. The features are then computed from the float64
    projections: finite, every row of unit norm (cos^2 + sin^2 = 1, the oracle k(x, x) = 1)
    and off the diagonal the Monte Carlo estimate of k(x, z) = exp(-||x - z||^2 / d) = 0 (far
    below its standard deviation 1 / sqrt(n_components) times a few)."""
    X = (np.random.default_rng(1).uniform(-1, 1, size=(15, 6)) * 3e38).astype(np.float32)
    Z = cls(n_components=800, random_state=0).fit_transform(X)
    assert Z.dtype == np.float32 and np.isfinite(Z).all()
    G = Z.astype(np.float64) @ Z.T.astype(np.float64)
    np.testing.assert_allclose(np.diag(G), 1.0, rtol=1e-5)
    assert np.abs(G - np.diag(np.diag(G))).max() < 0.2


def test_features_whose_projections_exceed_float64_are_refused():
    """float64 data at 1.5e308 with gamma = 1 / d: projections beyond the float64 range have
    no cosine the data defines; a clear ValueError instead of NaN features."""
    X = np.random.default_rng(1).uniform(0.5, 1, size=(5, 4)) * 1.5e308
    with pytest.raises(ValueError, match=r"exceed the float64 range.*rescale the data"):
        RandomFourierFeatures(n_components=200, random_state=0).fit_transform(X)


@pytest.mark.parametrize("cls", [RandomFourierFeatures, Fastfood])
def test_single_offset_cosine_is_scikit_learns_rbf_sampler_feature(X4, cls):
    """A width of 1 is the offset cosine alone, which is scikit-learn's ``RBFSampler`` feature
    sqrt(2/D) cos(xᵀw + b) with D = 1: oracle, ``RBFSampler.transform`` given the same w and b
    (Rahimi & Recht 2008). The offsets follow its law too, b ~ U[0, 2 pi) (Kolmogorov-Smirnov
    test over fixed seeds, loose level)."""
    from scipy import stats
    from sklearn.kernel_approximation import RBFSampler

    ours = cls(gamma=GAMMA, n_components=1, random_state=3).fit(X4)
    w = ours.project(np.eye(3)) if cls is Fastfood else ours.random_weights_
    sk = RBFSampler(gamma=GAMMA, n_components=1, random_state=0).fit(X4)
    sk.random_weights_ = np.asarray(w, dtype=np.float64).reshape(3, 1)
    sk.random_offset_ = np.array([ours.random_offset_])
    np.testing.assert_allclose(ours.transform(X4), sk.transform(X4), rtol=1e-10, atol=1e-12)
    offsets = [cls(n_components=3, random_state=s).fit(X4).random_offset_ for s in range(300)]
    assert stats.kstest(offsets, stats.uniform(0.0, 2.0 * np.pi).cdf).pvalue > 1e-4
