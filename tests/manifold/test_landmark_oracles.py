"""Landmark training and the out-of-sample extension against outside oracles: the sampler called
on its own, SciPy's shortest paths and LAPACK on small data, scikit-learn, and the byte counts of
the memory check."""

import numpy as np
import pytest
import scipy.linalg
from scipy.sparse.csgraph import shortest_path
from sklearn import decomposition as skd, manifold as skm
from sklearn.datasets import make_swiss_roll
from sklearn.neighbors import NearestNeighbors, kneighbors_graph

from sparsekit import default_registry
from sparsekit._runtime import memory as _memory
from sparsekit.manifold import (
    MDS,
    Isomap,
    KernelPCA,
    LaplacianEigenmaps,
    LocallyLinearEmbedding,
    SpectralClustering,
    SpectralEmbedding,
    _memory_check,
)

from .conftest import assert_equal_up_to_sign


@pytest.fixture(scope="module")
def roll():
    X, _ = make_swiss_roll(240, random_state=3)
    X_new, _ = make_swiss_roll(25, random_state=4)
    return X, X_new


def centred_gram(K):
    """``H K H`` with ``H = I - 11^T / n`` (double centring, written out)."""
    n = K.shape[0]
    H = np.eye(n) - np.full((n, n), 1.0 / n)
    return H @ K @ H


def graph_geodesics(X, k):
    """Geodesics of the symmetric k-NN graph, by scikit-learn's graph and SciPy's Dijkstra."""
    A = kneighbors_graph(X, k, mode="distance")
    return shortest_path(A.maximum(A.T), method="D", directed=False)


# -- the landmarks are the named sampler's draw with the given seed ----------------------------
@pytest.mark.parametrize("sampler", ["uniform", "greedy-trace", "kmeans-pp"])
def test_landmarks_are_the_named_samplers_draw_with_random_state(roll, sampler):
    """Oracle: the registered sampler called on its own (RBF kernel, median bandwidth, as the
    docstring says) with the same seed; two seeds give two different uniform draws."""
    X, _ = roll
    registry = default_registry()
    kernel = registry.get("kernel", "rbf", bandwidth="median")
    expected = registry.get("sampler", sampler).sample(X, kernel, 30, random_state=5).indices
    model = MDS(2, n_landmarks=30, sampler=sampler, random_state=5).fit(X)
    np.testing.assert_array_equal(model.landmarks_, np.sort(expected))


def test_random_state_seeds_the_landmarks(roll):
    """Oracle: determinism — the same seed gives the same landmarks and embedding, two seeds
    give two draws (of C(240, 30) possible ones)."""
    X, _ = roll
    a = KernelPCA(2, kernel_params={"gamma": 0.02}, n_landmarks=30, random_state=1).fit(X)
    b = KernelPCA(2, kernel_params={"gamma": 0.02}, n_landmarks=30, random_state=1).fit(X)
    c = KernelPCA(2, kernel_params={"gamma": 0.02}, n_landmarks=30, random_state=2).fit(X)
    np.testing.assert_array_equal(a.landmarks_, b.landmarks_)
    np.testing.assert_allclose(a.embedding_, b.embedding_, rtol=0, atol=1e-12)
    assert not np.array_equal(a.landmarks_, c.landmarks_)


@pytest.mark.parametrize("extra", [1, 100])
def test_more_landmarks_than_samples_is_the_full_fit(roll, extra):
    """Oracle: the documented clip — n_landmarks above n_samples takes every point, the full
    fit (scikit-learn's KernelPCA up to signs)."""
    X, _ = roll
    n = len(X)
    model = KernelPCA(2, kernel_params={"gamma": 0.02}, n_landmarks=n + extra).fit(X)
    ref = skd.KernelPCA(2, kernel="rbf", gamma=0.02, eigen_solver="dense").fit(X)
    np.testing.assert_array_equal(model.landmarks_, np.arange(n))
    assert_equal_up_to_sign(model.embedding_, ref.transform(X), 1e-8)


# -- landmark Isomap against SciPy's shortest paths --------------------------------------------
def test_landmark_isomap_is_mds_of_the_landmark_geodesics(roll):
    """Oracle: SciPy's Dijkstra on scikit-learn's k-NN graph, the m x m block of the landmarks
    double-centred and eigendecomposed by LAPACK (landmark Isomap, de Silva & Tenenbaum 2003)."""
    X, _ = roll
    model = Isomap(2, n_neighbors=8, n_landmarks=40, random_state=0).fit(X)
    L = model.landmarks_
    D = graph_geodesics(X, 8)
    M = centred_gram(-0.5 * D[np.ix_(L, L)] ** 2)
    w, V = scipy.linalg.eigh(M)
    np.testing.assert_allclose(model.eigenvalues_, w[::-1][:2], rtol=1e-9)
    # every point (landmark or not) is embedded by the Nyström formula of its geodesics
    K = -0.5 * D[:, L] ** 2
    K = K - K.mean(axis=1, keepdims=True) - (-0.5 * D[np.ix_(L, L)] ** 2).mean(axis=0)
    K += (-0.5 * D[np.ix_(L, L)] ** 2).mean()
    ref = K @ V[:, ::-1][:, :2] / np.sqrt(w[::-1][:2])
    assert_equal_up_to_sign(model.embedding_, ref, 1e-8)


@pytest.mark.parametrize("t", [3, 12])
def test_isomap_transform_neighbors_is_the_number_of_neighbours_of_a_new_point(roll, t):
    """Oracle: brute force — ``d(x, x_i) = min over the t nearest z of |x - z| + d_G(z, x_i)``
    with SciPy's geodesics, centred with the training means, projected on LAPACK's eigenvectors
    (Paiement 2003, §5.1.3)."""
    X, X_new = roll
    model = Isomap(2, n_neighbors=8, transform_neighbors=t).fit(X)
    D = graph_geodesics(X, 8)
    dist, idx = NearestNeighbors(n_neighbors=t).fit(X).kneighbors(X_new)
    D_new = (dist[:, :, None] + D[idx]).min(axis=1)
    K_train = -0.5 * D**2
    K_new = -0.5 * D_new**2
    K_new = K_new - K_new.mean(axis=1, keepdims=True) - K_train.mean(axis=0) + K_train.mean()
    w, V = scipy.linalg.eigh(centred_gram(K_train))
    ref = K_new @ V[:, ::-1][:, :2] / np.sqrt(w[::-1][:2])
    assert_equal_up_to_sign(model.transform(X_new), ref, 1e-8)


# -- conventions of the eigensolver ------------------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda: KernelPCA(3, kernel_params={"gamma": 0.02}),
        lambda: MDS(3),
        lambda: SpectralEmbedding(3, kernel_params={"gamma": 0.05}),
    ],
)
def test_each_component_has_its_largest_entry_positive(roll, make):
    """Oracle: the documented sign rule (largest-magnitude entry positive), which makes the
    signs reproducible; checked on the eigenvectors LAPACK returns for the Gram on its own."""
    X, _ = roll
    model = make().fit(X)
    V = model.eigenvectors_
    top = V[np.argmax(np.abs(V), axis=0), np.arange(V.shape[1])]
    assert np.all(top > 0)
    # the same vectors as LAPACK's, up to sign
    w, ref = scipy.linalg.eigh(model.kernel_.gram())
    assert_equal_up_to_sign(V, ref[:, ::-1][:, : V.shape[1]], 1e-8)


@pytest.mark.parametrize("d", [1, 2, 4])
def test_laplacian_eigenmaps_on_arpack_skip_the_top_eigenpair(d):
    """Oracle: LAPACK's dense eigendecomposition. More than 200 points with few components take
    ARPACK; the pairs kept are the 2nd .. (d+1)th largest, as on the dense path."""
    X = np.random.default_rng(0).normal(size=(260, 3))
    model = LaplacianEigenmaps(d, kernel_params={"gamma": 0.5}).fit(X)
    w, V = scipy.linalg.eigh(model.kernel_.gram())
    np.testing.assert_allclose(model.eigenvalues_, w[::-1][1 : d + 1], rtol=1e-8)
    assert_equal_up_to_sign(model.eigenvectors_, V[:, ::-1][:, 1 : d + 1], 1e-6)


# -- parameters that reach the computation -----------------------------------------------------
def test_lle_transform_uses_reg(roll):
    """Oracle: scikit-learn's LocallyLinearEmbedding with the same (large) ``reg``, whose
    ``transform`` leaves out the Nyström factor ``1 / l_k``."""
    X, X_new = roll
    ours = LocallyLinearEmbedding(2, n_neighbors=10, reg=0.5).fit(X)
    ref = skm.LocallyLinearEmbedding(
        n_components=2, n_neighbors=10, reg=0.5, eigen_solver="dense"
    ).fit(X)
    assert_equal_up_to_sign(ours.embedding_, ref.embedding_, 1e-6)
    assert_equal_up_to_sign(ours.transform(X_new) * ours.eigenvalues_, ref.transform(X_new), 1e-6)


@pytest.mark.parametrize("gamma", [0.005, 0.2])
def test_kernel_pca_kernel_params_without_a_registry(roll, gamma):
    """Oracle: scikit-learn's KernelPCA with the same ``gamma`` (fit and transform)."""
    X, X_new = roll
    ours = KernelPCA(2, kernel="rbf", kernel_params={"gamma": gamma}).fit(X)
    ref = skd.KernelPCA(2, kernel="rbf", gamma=gamma, eigen_solver="dense").fit(X)
    assert_equal_up_to_sign(ours.embedding_, ref.transform(X), 1e-8)
    assert_equal_up_to_sign(ours.transform(X_new), ref.transform(X_new), 1e-8)


# -- the memory check counts the matrices of the landmark fit ----------------------------------
@pytest.mark.parametrize(
    "make, need",
    [
        (lambda m: KernelPCA(2, n_landmarks=m), lambda n, m: 8 * 2 * m * m),
        (lambda m: MDS(2, n_landmarks=m), lambda n, m: 8 * 2 * m * m),
        (lambda m: Isomap(2, n_neighbors=8, n_landmarks=m), lambda n, m: 8 * (2 * m * n + m * m)),
        (lambda m: SpectralEmbedding(2, n_landmarks=m), lambda n, m: 8 * 3 * m * m),
    ],
)
def test_memory_check_counts_the_landmark_matrices(monkeypatch, roll, make, need):
    """Oracle: the byte counts of the dense matrices, in closed form (``m x m`` Grams; Isomap's
    ``m x n`` geodesics kept twice), and a landmark fit goes ahead where the full one would be
    refused."""
    X, _ = roll
    n, m = len(X), 20
    seen = []
    real = _memory_check.check_allocation
    monkeypatch.setattr(
        _memory_check, "check_allocation", lambda nbytes, *a, **k: seen.append(nbytes)
    )
    make(m).fit(X)
    assert seen == [need(n, m)]
    # with room for the landmark fit only, it runs and the full fit is refused
    monkeypatch.setattr(_memory_check, "check_allocation", real)
    monkeypatch.setattr("sparsekit._runtime.memory.available_memory", lambda: 2 * need(n, m) + 1)
    make(m).fit(X)
    with pytest.raises(MemoryError, match="n_landmarks"):
        make(None).fit(X)


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: SpectralEmbedding(2, n_landmarks=True), "n_landmarks"),
        (lambda: Isomap(2, n_landmarks=False), "n_landmarks"),
        (lambda: SpectralClustering(2, n_init=True), "n_init"),
    ],
)
def test_a_bool_is_not_a_count(roll, make, name):
    """Oracle: the rule the other counts follow (``n_components``, ``n_neighbors``): ``True``
    is not the integer 1 — it is refused by name instead of fitting one landmark or one
    k-means run."""
    X, _ = roll
    with pytest.raises(ValueError, match=name):
        make().fit(X)


def test_lle_is_not_memory_checked_but_isomap_is(monkeypatch, curve):
    # LLE forms sparse weights and solves a sparse eigenproblem: no dense n x n matrix to refuse
    monkeypatch.setattr(_memory, "available_memory", lambda: 0)
    LocallyLinearEmbedding(2, n_neighbors=5).fit(curve)
    with pytest.raises(_memory.InsufficientMemoryError):
        Isomap(2, n_neighbors=5).fit(curve)
