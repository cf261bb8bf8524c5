"""Spectral embeddings: parity with scikit-learn, the Nyström extension's invariants, landmark
training, bad input, and scikit-learn's estimator checks."""

import warnings

import numpy as np
import pytest
from scipy.sparse.csgraph import shortest_path
from sklearn import decomposition as skd, manifold as skm
from sklearn.datasets import make_circles, make_swiss_roll
from sklearn.neighbors import kneighbors_graph
from sklearn.utils.estimator_checks import parametrize_with_checks

import sparsekit
from sparsekit.kernels import RBFKernel
from sparsekit.manifold import (
    MDS,
    Isomap,
    KernelPCA,
    LaplacianEigenmaps,
    LocallyLinearEmbedding,
    SpectralClustering,
    SpectralEmbedding,
)
from sparsekit.manifold._neighbors import Neighbors, geodesics, knn_graph
from sparsekit.manifold.kernels import (
    CentredKernel,
    IsomapGeodesicKernel,
    SpectralNormalizedKernel,
)

from .conftest import assert_equal_up_to_sign


@pytest.fixture(scope="module")
def roll():
    X, _ = make_swiss_roll(300, random_state=0)
    X_new, _ = make_swiss_roll(40, random_state=1)
    return X, X_new


def test_isomap_equals_sklearn_for_fit_and_transform(roll):
    X, X_new = roll
    ours = Isomap(n_components=3, n_neighbors=8).fit(X)
    ref = skm.Isomap(n_components=3, n_neighbors=8, eigen_solver="dense").fit(X)
    assert_equal_up_to_sign(ours.embedding_, ref.embedding_, 1e-10)
    assert_equal_up_to_sign(ours.transform(X_new), ref.transform(X_new), 1e-10)


def test_numba_dijkstra_equals_scipy(roll):
    X, _ = roll
    dist, idx = Neighbors(X).query(X, 6, exclude_self=True)
    graph = knn_graph(dist, idx, X.shape[0])
    ref = kneighbors_graph(X, 6, mode="distance")
    assert abs(graph - ref.maximum(ref.T)).max() == 0
    sources = np.array([0, 7, 299, 150])
    np.testing.assert_allclose(
        geodesics(graph, sources, n_jobs=2),
        shortest_path(graph, directed=False)[sources],
        rtol=1e-12,
    )


def test_kernel_pca_equals_sklearn(roll):
    X, X_new = roll
    ours = KernelPCA(3, kernel="rbf", kernel_params={"gamma": 0.02}).fit(X)
    ref = skd.KernelPCA(3, kernel="rbf", gamma=0.02, eigen_solver="dense").fit(X)
    assert_equal_up_to_sign(ours.embedding_, ref.transform(X), 1e-9)
    assert_equal_up_to_sign(ours.transform(X_new), ref.transform(X_new), 1e-9)


def test_classical_mds_equals_sklearn_and_pca(roll):
    X, X_new = roll
    ours = MDS(2).fit(X)
    assert_equal_up_to_sign(
        ours.embedding_, skm.ClassicalMDS(n_components=2).fit(X).embedding_, 1e-9
    )
    # with Euclidean distances the out-of-sample MDS map is the PCA projection
    assert_equal_up_to_sign(ours.transform(X_new), skd.PCA(2).fit(X).transform(X_new), 1e-9)


def test_lle_equals_sklearn_and_transform_has_the_nystrom_factor(roll):
    X, X_new = roll
    ours = LocallyLinearEmbedding(2, n_neighbors=10).fit(X)
    ref = skm.LocallyLinearEmbedding(n_components=2, n_neighbors=10, eigen_solver="dense").fit(X)
    assert_equal_up_to_sign(ours.embedding_, ref.embedding_, 1e-6)
    # Nyström: y(x) = sum_j w(x, x_j) y_j / l_k; scikit-learn leaves out 1 / l_k
    assert np.all(ours.eigenvalues_ < 1) and np.all(ours.eigenvalues_ > 0.9)
    assert_equal_up_to_sign(ours.transform(X_new) * ours.eigenvalues_, ref.transform(X_new), 1e-6)


def test_lle_gram_has_a_constant_top_eigenvector(roll):
    X, _ = roll
    kernel = sparsekit.get_manifold_kernel("lle", n_neighbors=8).fit(X)
    M = kernel.gram()
    np.testing.assert_allclose(M @ np.ones(len(X)), np.ones(len(X)), atol=1e-10)
    assert np.linalg.eigvalsh(M).max() == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(kernel(X[:5]).sum(axis=1), 1.0)  # barycentric rows


@pytest.mark.parametrize(
    "make",
    [
        lambda: KernelPCA(3, kernel_params={"gamma": 0.02}),
        lambda: MDS(3),
        lambda: Isomap(3, n_neighbors=8),
        lambda: SpectralEmbedding(3, kernel_params={"gamma": 0.05}, zero_diagonal=False),
        lambda: LaplacianEigenmaps(3, kernel_params={"gamma": 0.05}, zero_diagonal=False),
    ],
    ids=["kpca", "mds", "isomap", "spectral", "laplacian"],
)
def test_transform_of_training_points_reproduces_the_embedding(roll, make):
    X, _ = roll
    model = make().fit(X)
    np.testing.assert_allclose(
        model.transform(X), model.embedding_, rtol=0, atol=1e-9 * np.abs(model.embedding_).max()
    )


def test_spectral_zero_diagonal_does_not_reproduce_training_points(roll):
    X, _ = roll
    model = SpectralEmbedding(2, kernel_params={"gamma": 0.05}, zero_diagonal=True).fit(X)
    gap = np.abs(model.transform(X) - model.embedding_).max() / np.abs(model.embedding_).max()
    assert gap > 1e-3  # the self-affinity enters the sums (documented convention)


def test_lle_reproduces_training_points_up_to_the_regularisation(roll):
    X, _ = roll
    model = LocallyLinearEmbedding(2, n_neighbors=10, reg=1e-3).fit(X)
    gap = np.abs(model.transform(X) - model.embedding_).max() / np.abs(model.embedding_).max()
    assert gap < 0.1


@pytest.mark.parametrize(
    "make",
    [
        lambda: KernelPCA(2, kernel_params={"gamma": 0.02}),
        lambda: MDS(2),
        lambda: Isomap(2, n_neighbors=8),
        lambda: LocallyLinearEmbedding(2, n_neighbors=10),
        lambda: SpectralEmbedding(2, kernel_params={"gamma": 0.05}),
        lambda: LaplacianEigenmaps(2, kernel_params={"gamma": 0.05}),
    ],
    ids=["kpca", "mds", "isomap", "lle", "spectral", "laplacian"],
)
def test_new_points_near_training_points_land_near_them(roll, make):
    X, _ = roll
    model = make().fit(X)
    near = X[:30] + np.random.default_rng(0).normal(scale=1e-3, size=(30, 3))
    scale = np.abs(model.embedding_).max()
    ref = model.transform(X[:30])
    assert np.abs(model.transform(near) - ref).max() < 0.02 * scale


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: KernelPCA(2, kernel_params={"gamma": 0.02}, **kw),
        lambda **kw: MDS(2, **kw),
        lambda **kw: Isomap(2, n_neighbors=8, **kw),
        lambda **kw: LocallyLinearEmbedding(2, n_neighbors=10, **kw),
        lambda **kw: SpectralEmbedding(2, kernel_params={"gamma": 0.05}, zero_diagonal=False, **kw),
        lambda **kw: LaplacianEigenmaps(
            2, kernel_params={"gamma": 0.05}, zero_diagonal=False, **kw
        ),
    ],
    ids=["kpca", "mds", "isomap", "lle", "spectral", "laplacian"],
)
def test_all_points_as_landmarks_equals_the_full_fit(roll, make):
    X, _ = roll
    full = make().fit(X)
    landmarked = make(n_landmarks=len(X), random_state=0).fit(X)
    assert landmarked.landmarks_ is not None and len(landmarked.landmarks_) == len(X)
    atol = (1e-1 if isinstance(full, LocallyLinearEmbedding) else 1e-8) * np.abs(
        full.embedding_
    ).max()
    assert_equal_up_to_sign(landmarked.embedding_, full.embedding_, atol)


def test_landmark_isomap_approximates_the_full_one(roll):
    X, _ = roll
    full = Isomap(2, n_neighbors=8).fit(X)
    part = Isomap(2, n_neighbors=8, n_landmarks=150, sampler="uniform", random_state=0).fit(X)
    corr = [abs(np.corrcoef(full.embedding_[:, k], part.embedding_[:, k])[0, 1]) for k in (0, 1)]
    assert min(corr) > 0.99


def test_spectral_clustering_separates_rings_and_labels_new_points():
    X, y = make_circles(400, factor=0.3, noise=0.04, random_state=0)
    X_new, y_new = make_circles(200, factor=0.3, noise=0.04, random_state=1)
    model = SpectralClustering(2, kernel_params={"gamma": 20.0}, random_state=0).fit(X)
    match = max(np.mean(model.labels_ == y), np.mean(model.labels_ != y))
    assert match == 1.0
    pred = model.predict(X_new)
    same_map = (
        np.mean(pred == y_new) if np.mean(model.labels_ == y) == 1 else np.mean(pred != y_new)
    )
    assert same_map > 0.98


def test_isomap_can_join_components_like_sklearn(rng):
    X = np.vstack([rng.normal(size=(30, 2)), rng.normal(size=(30, 2)) + 12.0])
    with pytest.warns(UserWarning, match="2 connected components"):
        ours = Isomap(2, n_neighbors=4, disconnected="connect").fit(X)
    with pytest.warns(UserWarning):
        ref = skm.Isomap(n_components=2, n_neighbors=4, eigen_solver="dense").fit(X)
    assert_equal_up_to_sign(ours.embedding_, ref.embedding_, 1e-8)


def test_bad_input(rng):
    two_blobs = np.vstack([rng.normal(size=(20, 2)), rng.normal(size=(20, 2)) + 100.0])
    with pytest.raises(ValueError, match="connected components.*increase n_neighbors"):
        Isomap(2, n_neighbors=3, disconnected="raise").fit(two_blobs)
    with pytest.raises(ValueError, match="n_neighbors"):
        Isomap(2, n_neighbors=10).fit(two_blobs[:8])
    with pytest.raises(ValueError, match="n_components=10 is larger than n_samples=5"):
        KernelPCA(10).fit(two_blobs[:5])
    from sparsekit.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        Isomap().transform(two_blobs)
    model = MDS(2).fit(two_blobs)
    with pytest.raises(ValueError, match="features"):
        model.transform(two_blobs[:, :1])
    with pytest.raises(sparsekit.UnknownComponentError, match="uniform"):
        MDS(2, n_landmarks=10, sampler="unifrom").fit(two_blobs)
    with pytest.raises(ValueError, match="n_components"):
        MDS(0).fit(two_blobs)
    with pytest.raises(ValueError, match="n_clusters"):
        SpectralClustering(50).fit(two_blobs)
    with pytest.raises(ValueError, match="against its training points"):
        sparsekit.get_manifold_kernel("lle").fit(two_blobs)(two_blobs, two_blobs)


with warnings.catch_warnings():  # sparsekit does not depend on scikit-learn's BaseEstimator
    warnings.filterwarnings("ignore", message=".*does not inherit from")
    _CHECKS = parametrize_with_checks(
        [
            KernelPCA(2),
            MDS(2),
            Isomap(2),
            LocallyLinearEmbedding(2, n_neighbors=5),
            SpectralEmbedding(2),
            LaplacianEigenmaps(2),
            SpectralClustering(2, random_state=0),
        ]
    )


@_CHECKS
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("base", [5, RBFKernel], ids=["not-callable", "a-class"])
@pytest.mark.parametrize("cls", [CentredKernel, SpectralNormalizedKernel])
def test_a_bad_base_kernel_is_refused_naming_base(curve, cls, base):
    with pytest.raises(TypeError, match=r"^base must be a kernel name"):
        cls(base=base).fit(curve)


def test_lle_with_as_many_components_as_samples_names_the_skipped_constant(curve):
    # the constant eigenvector is skipped, so n samples give at most n - 1 components
    X = curve[:12]
    with pytest.raises(ValueError, match=r"asked for 12 components \(\+1 skipped\) of 12"):
        LocallyLinearEmbedding(12, n_neighbors=4).fit(X)
    assert LocallyLinearEmbedding(11, n_neighbors=4).fit(X).embedding_.shape == (12, 11)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_a_bad_transform_neighbors_is_refused_at_fit_naming_it(bad):
    """0 would otherwise fall back to ``n_neighbors`` silently (``k = 0 or n_neighbors``)."""
    X = np.random.default_rng(0).standard_normal((20, 3))
    with pytest.raises(ValueError, match=r"transform_neighbors must be an integer >= 1"):
        IsomapGeodesicKernel(n_neighbors=5, transform_neighbors=bad).fit(X)
