"""scikit-learn conventions beyond the estimator checks: pandas in and out, sparse input equal to
scikit-learn's values, kernel functions, odd random-feature widths, bandwidth rules under threads,
overflow."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.metrics import pairwise as skp

import sparsekit
from sparsekit import Fastfood, Nystroem, RandomFourierFeatures
from sparsekit.kernels import RBFKernel
from sparsekit.kernels.bandwidth import gamma_from_rule


@pytest.fixture
def X(rng):
    return rng.normal(size=(60, 5))


@pytest.fixture
def Xs(rng):
    A = rng.uniform(size=(50, 40))
    A[A < 0.8] = 0.0  # about 20 % non-zeros
    return sp.csr_matrix(A)


# ---------------------------------------------------------------- pandas, feature names
@pytest.mark.parametrize(
    "make",
    [
        lambda: Nystroem(n_components=7, random_state=0),
        lambda: RandomFourierFeatures(n_components=7, random_state=0),
        lambda: Fastfood(n_components=7, random_state=0),
    ],
)
def test_pandas_in_pandas_out(X, make):
    df = pd.DataFrame(X, columns=list("abcde"), index=np.arange(100, 160))
    est = make().set_output(transform="pandas")
    out = est.fit_transform(df)
    assert isinstance(out, pd.DataFrame)
    prefix = type(est).__name__.lower()
    assert list(out.columns) == [f"{prefix}{i}" for i in range(7)]
    assert (out.index == df.index).all()
    assert list(est.feature_names_in_) == list("abcde") and est.n_features_in_ == 5
    np.testing.assert_allclose(out.to_numpy(), make().fit(X).transform(X), rtol=1e-12)
    assert list(est.get_feature_names_out()) == list(out.columns)
    with pytest.raises(ValueError, match="Feature names must be in the same order"):
        est.transform(df[list("edcba")])
    assert isinstance(est.set_output(transform="default").transform(df), np.ndarray)


# ---------------------------------------------------------------- n_components
def test_nystroem_clips_n_components_like_sklearn(X):
    with pytest.warns(UserWarning, match="n_components=80 is larger than the number of samples"):
        ny = Nystroem(n_components=80, random_state=0).fit(X)
    assert ny.n_components_ == 60 and ny.normalization_.shape == (60, 60)
    # all samples as landmarks: the map reproduces the kernel matrix
    Z = ny.transform(X)
    np.testing.assert_allclose(Z @ Z.T, skp.rbf_kernel(X, gamma=1 / 5), atol=1e-8)


@pytest.mark.parametrize("cls", [RandomFourierFeatures, Fastfood])
@pytest.mark.parametrize("n_components", [1, 7])
def test_odd_widths_are_unbiased(cls, n_components, rng):
    """The offset cosine keeps E[phi(x)·phi(z)] = exp(-gamma ||x - z||^2) for odd widths."""
    X = rng.normal(size=(6, 4)) * 0.5
    want = skp.rbf_kernel(X, gamma=0.25)
    mean = np.zeros_like(want)
    n_seeds = 600
    for seed in range(n_seeds):
        Z = cls(gamma=0.25, n_components=n_components, random_state=seed).fit_transform(X)
        assert Z.shape == (6, n_components)
        mean += Z @ Z.T
    mean /= n_seeds
    # standard error of a mean of n_seeds products bounded by 1: 2 / sqrt(n_seeds) ~ 0.08
    assert np.abs(mean - want).max() < 0.1
    # the diagonal: [cos, sin] pairs give exactly 1; an offset cosine 2 cos^2 has mean 1
    if n_components == 1:
        assert np.abs(np.diag(mean) - 1).max() < 0.1


def test_odd_width_layout(X):
    rff = RandomFourierFeatures(gamma=0.5, n_components=5, random_state=0).fit(X)
    W, b = rff.random_weights_, rff.random_offset_
    P = X @ W
    want = np.hstack(
        [np.cos(P[:, :2]), np.sin(P[:, :2]), np.sqrt(2) * np.cos(P[:, 2:] + b)]
    ) / np.sqrt(3)
    np.testing.assert_allclose(rff.transform(X), want, rtol=1e-12, atol=1e-14)
    assert RandomFourierFeatures(n_components=6).fit(X).random_offset_ is None


# ---------------------------------------------------------------- sparse input
SPARSE_KERNELS = [
    ("linear", {}, lambda A, B: skp.linear_kernel(A, B)),
    (
        "polynomial",
        {"degree": 2, "gamma": 0.3},
        lambda A, B: skp.polynomial_kernel(A, B, degree=2, gamma=0.3),
    ),
    ("rbf", {"gamma": 0.2}, lambda A, B: skp.rbf_kernel(A, B, gamma=0.2)),
    ("laplacian", {"gamma": 0.1}, lambda A, B: skp.laplacian_kernel(A, B, gamma=0.1)),
    ("chi2", {"gamma": 0.5}, lambda A, B: skp.chi2_kernel(A.toarray(), B.toarray(), gamma=0.5)),
]


@pytest.mark.parametrize(
    "name,params,reference", SPARSE_KERNELS, ids=[k[0] for k in SPARSE_KERNELS]
)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_kernels_equal_sklearn(Xs, name, params, reference, fmt):
    A = Xs.asformat(fmt)
    B = Xs[:17].asformat(fmt)
    k = sparsekit.get_kernel(name, **params)
    np.testing.assert_allclose(k(A), reference(A, A), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(k(A, B), reference(A, B), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(k(A, B.toarray()), reference(A, B), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(k.diag(A), np.diag(reference(A, A)), rtol=1e-10, atol=1e-12)
    k32 = k(A.astype(np.float32))
    assert k32.dtype == np.float32
    np.testing.assert_allclose(k32, reference(A, A), rtol=1e-4, atol=1e-5)


def test_sparse_input_is_never_densified_whole(Xs, monkeypatch):
    """The chi2 kernels densify row tiles of at most SPARSE_TILE_BYTES; the Laplacian kernel
    densifies nothing (it merges the non-zeros of each pair of rows)."""
    from sparsekit.kernels import base

    monkeypatch.setattr(base, "SPARSE_TILE_BYTES", 7 * 40 * 8)  # tiles of 7 rows
    seen = []
    original = sp.csr_matrix.toarray

    def spy(self, *args, **kwargs):
        seen.append(self.shape)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(sp.csr_matrix, "toarray", spy)
    K = sparsekit.get_kernel("chi2", gamma=0.5)(Xs)
    tiles = list(seen)
    seen.clear()
    L = sparsekit.get_kernel("laplacian", gamma=0.1)(Xs)
    monkeypatch.setattr(sp.csr_matrix, "toarray", original)
    assert tiles and max(rows for rows, _ in tiles) <= 7
    assert seen == []
    np.testing.assert_allclose(K, skp.chi2_kernel(Xs.toarray(), gamma=0.5), rtol=1e-10)
    np.testing.assert_allclose(L, skp.laplacian_kernel(Xs, gamma=0.1), rtol=1e-10)


def test_sparse_nystroem_and_rff_equal_sklearn_and_dense(Xs):
    ny = Nystroem("rbf", n_components=20, kernel_params={"gamma": 0.2}, random_state=0).fit(Xs)
    assert sp.issparse(ny.components_)
    dense = Nystroem("rbf", n_components=20, kernel_params={"gamma": 0.2}, random_state=0)
    np.testing.assert_allclose(
        ny.transform(Xs), dense.fit(Xs.toarray()).transform(Xs.toarray()), rtol=1e-8, atol=1e-10
    )
    sk = SkNystroem(kernel="rbf", gamma=0.2, n_components=20).fit(Xs)
    sk.components_ = ny.components_  # same landmarks: same features
    sk.component_indices_ = ny.component_indices_
    K_S = skp.rbf_kernel(ny.components_, gamma=0.2)
    U, S, V = np.linalg.svd(K_S)
    sk.normalization_ = np.dot(U / np.sqrt(np.maximum(S, 1e-12)), V)
    np.testing.assert_allclose(ny.transform(Xs), sk.transform(Xs), rtol=1e-6, atol=1e-8)
    rff = RandomFourierFeatures(gamma=0.2, n_components=30, random_state=0)
    np.testing.assert_allclose(rff.fit_transform(Xs), rff.fit_transform(Xs.toarray()), rtol=1e-10)
    with pytest.raises(TypeError, match="sparse"):
        Fastfood().fit(Xs)


# ---------------------------------------------------------------- kernel objects and functions
def test_function_kernel_in_nystroem_and_get_kernel(X):
    def poly(A, B, degree=2):
        return (A @ B.T + 1.0) ** degree

    k = sparsekit.get_kernel(poly)
    np.testing.assert_allclose(k(X[:5], X), poly(X[:5], X), rtol=1e-12)
    np.testing.assert_allclose(k.diag(X), np.diag(poly(X, X)), rtol=1e-12)
    ny = Nystroem(poly, n_components=60, kernel_params={"degree": 3}, random_state=0).fit(X)
    Z = ny.transform(X)
    np.testing.assert_allclose(Z @ Z.T, poly(X, X, degree=3), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="must return the Gram block of shape"):
        sparsekit.get_kernel(lambda A, B: A @ A.T)(X[:3], X)


@pytest.mark.parametrize(
    "bad,message",
    [
        (None, "got None"),
        (123, "got 123"),
        (RBFKernel, "pass an instance"),
    ],
)
def test_wrong_kernel_objects_raise_type_error(X, bad, message):
    with pytest.raises(TypeError, match=message):
        sparsekit.get_kernel(bad)
    with pytest.raises(TypeError, match=message):
        Nystroem(bad, n_components=5).fit(X)
    with pytest.raises(TypeError, match="kernel must be one of"):
        RandomFourierFeatures(bad).fit(X)


def test_wrong_sampler_and_solver_objects_raise_type_error():
    with pytest.raises(TypeError, match="got None"):
        sparsekit.get_sampler(None)
    with pytest.raises(TypeError, match="solve"):
        sparsekit.get_solver(123)


# ---------------------------------------------------------------- data-dependent bandwidth
def test_median_bandwidth_is_deterministic_under_threads(rng):
    datasets = [rng.normal(size=(40, 3)) * (1 + i) for i in range(6)]
    kernel = RBFKernel(bandwidth="median")
    want = [skp.rbf_kernel(D, gamma=gamma_from_rule(D, "median")) for D in datasets]
    with ThreadPoolExecutor(max_workers=6) as pool:
        for _ in range(3):
            got = list(pool.map(kernel, datasets * 3))
            for i, K in enumerate(got):
                np.testing.assert_allclose(K, want[i % 6], rtol=1e-10)
    assert kernel.gamma_ is None  # calls store nothing
    fitted = RBFKernel(bandwidth="median").fit(datasets[0])
    with ThreadPoolExecutor(max_workers=6) as pool:
        gammas = set()
        for K, D in zip(pool.map(fitted, datasets), datasets):
            np.testing.assert_allclose(K, skp.rbf_kernel(D, gamma=fitted.gamma_), rtol=1e-10)
            gammas.add(fitted.gamma_)
    assert gammas == {gamma_from_rule(datasets[0], "median")}


def test_unfitted_bandwidth_uses_the_reference_points(X):
    k = RBFKernel(bandwidth="median")
    np.testing.assert_allclose(k(X[:1], X), k(X)[:1], rtol=1e-12)
    np.testing.assert_allclose(
        k(X[:1], X), RBFKernel(bandwidth="median").fit(X)(X[:1], X), rtol=1e-12
    )
    with pytest.raises(ValueError, match="at least two points.*call kernel.fit"):
        k(X[:1])
    # estimators fit the kernel on the training data, leaving the given object unchanged
    rff = RandomFourierFeatures(k, n_components=4, random_state=0).fit(X)
    assert rff.gamma_ == pytest.approx(gamma_from_rule(X, "median")) and k.gamma_ is None


# ---------------------------------------------------------------- overflow
@pytest.mark.parametrize(
    "dtype,scale,huge", [(np.float64, 2.0**510, 1e200), (np.float32, 1e30, 1e30)]
)
def test_rbf_overflowing_distances_are_handled(rng, dtype, scale, huge):
    X = rng.normal(size=(30, 4)).astype(dtype)
    k = sparsekit.get_kernel("rbf", gamma=0.3)
    # gamma scaled down with the data (squared distances ~ 1e307 overflow in the GEMM form):
    # the same kernel values
    K = sparsekit.get_kernel("rbf", gamma=0.3 / scale / scale)(X * dtype(scale))
    assert np.isfinite(K).all() and K.dtype == dtype
    np.testing.assert_allclose(K, k(X), rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-6)
    # default gamma: all distinct points are infinitely far apart, each point is at 0 of itself
    K = k(X * dtype(huge))
    np.testing.assert_array_equal(K, np.eye(30, dtype=dtype))
    Ks = sparsekit.get_kernel("rbf", gamma=0.3 / scale / scale)(sp.csr_matrix(X * dtype(scale)))
    np.testing.assert_allclose(Ks, k(X), rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-6)


# ---------------------------------------------------------------- precomputed kernel
def test_precomputed_nystroem_matches_sklearn_and_the_vector_kernel(X, rng):
    K = skp.polynomial_kernel(X, degree=2, coef0=0.1)
    full = Nystroem(kernel="precomputed", n_components=X.shape[0], random_state=0)
    Z = full.fit_transform(K)
    np.testing.assert_allclose(Z @ Z.T, K, atol=1e-8)  # scikit-learn's test of the same option
    sk = SkNystroem(kernel="precomputed", n_components=X.shape[0], random_state=0).fit(K)
    np.testing.assert_allclose(Z @ Z.T, sk.transform(K) @ sk.transform(K).T, atol=1e-8)
    X_new = rng.normal(size=(7, 5))
    for sampler in ("uniform", "rls"):
        pre = Nystroem(kernel="precomputed", sampler=sampler, n_components=15, random_state=3)
        vec = Nystroem(
            kernel="rbf",
            sampler=sampler,
            n_components=15,
            kernel_params={"gamma": 0.2},
            random_state=3,
        )
        K = skp.rbf_kernel(X, gamma=0.2)
        pre.fit(K)
        vec.fit(X)
        np.testing.assert_array_equal(pre.component_indices_, vec.component_indices_)
        np.testing.assert_allclose(
            pre.transform(skp.rbf_kernel(X_new, X, gamma=0.2)),
            vec.transform(X_new),
            rtol=1e-8,
            atol=1e-10,
        )
        assert pre.approximation_error(K) == pytest.approx(vec.approximation_error(X), rel=1e-8)
    with pytest.raises(ValueError, match="square Gram matrix"):
        Nystroem(kernel="precomputed", n_components=3).fit(K[:10])
    with pytest.raises(ValueError, match="expecting 60 features"):
        pre.transform(K[:, :10])


@pytest.mark.parametrize("rule", ["median", "mean-sq-dist", "scale"])
def test_bandwidth_rules_on_sparse_input_equal_dense(Xs, rule):
    assert gamma_from_rule(Xs, rule) == pytest.approx(
        gamma_from_rule(Xs.toarray(), rule), rel=1e-10
    )


def test_sparse_blocks_and_every_sampler(Xs):
    k = sparsekit.get_kernel("laplacian", gamma=0.1)
    K = np.vstack([block for _, block in k.blocks(Xs, Xs[:9], max_memory=9 * 8 * 5)])
    np.testing.assert_allclose(K, skp.laplacian_kernel(Xs, Xs[:9], gamma=0.1), rtol=1e-10)
    dense = Xs.toarray()
    required = {"bless": {"lam": 1.0}}  # samplers without a default λ
    for info in sparsekit.list_components("sampler"):
        kw = dict(sampler=info.name, sampler_params=required.get(info.name), random_state=0)
        a = Nystroem("rbf", n_components=8, **kw).fit_transform(Xs)
        b = Nystroem("rbf", n_components=8, **kw).fit_transform(dense)
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10, err_msg=info.name)


def test_sparse_l1_merge_edge_cases():
    """Empty rows, disjoint and shared supports, unsorted input indices, float32."""
    A = sp.csr_matrix(np.array([[0, 0, 0, 0], [1.5, 0, -2, 0], [0, 3, 0, 0.5], [1, 0, -2, 4]]))
    B = sp.csr_matrix(
        (np.array([4.0, 1.0, -1.0]), np.array([3, 0, 2]), np.array([0, 0, 3])), shape=(2, 4)
    )  # second row stored with unsorted indices
    for dt in (np.float64, np.float32):
        got = sparsekit.get_kernel("laplacian", gamma=0.3)(A.astype(dt), B.astype(dt))
        want = skp.laplacian_kernel(A.toarray(), B.toarray(), gamma=0.3)
        assert got.dtype == dt
        np.testing.assert_allclose(got, want, rtol=1e-6 if dt == np.float32 else 1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda: sparsekit.KernelKMeans(3, kernel="rbf", random_state=0),
        lambda: sparsekit.QuicKMeans(3, random_state=0),
        lambda: sparsekit.SpectralClustering(3, random_state=0),
    ],
    ids=["KernelKMeans", "QuicKMeans", "SpectralClustering"],
)
def test_clusterers_fit_predict_is_fit_then_labels(make, rng):
    """Oracle: scikit-learn's ClusterMixin contract (``fit_predict(X)`` equals
    ``fit(X).labels_`` of a fresh estimator with the same seed) and
    ``sklearn.base.is_clusterer``."""
    from sklearn.base import is_clusterer

    X = np.vstack([rng.normal(c, 0.3, size=(30, 2)) for c in (0.0, 4.0, 8.0)])
    labels = make().fit_predict(X)
    np.testing.assert_array_equal(labels, make().fit(X).labels_)
    assert is_clusterer(make())
