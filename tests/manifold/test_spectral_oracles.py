"""Spectral embedding, Laplacian eigenmaps and spectral clustering against oracles from outside
the code under test: scikit-learn's ``SpectralEmbedding`` / ``spectral_embedding`` /
``SpectralClustering`` / ``KMeans``, SciPy's dense eigensolver, and the Nyström formula
computed by brute force."""

import numpy as np
import pytest
import scipy.linalg
from sklearn.cluster import KMeans, SpectralClustering as SkSpectralClustering
from sklearn.datasets import make_blobs
from sklearn.decomposition import KernelPCA as SkKernelPCA
from sklearn.manifold import SpectralEmbedding as SkSpectralEmbedding, spectral_embedding
from sklearn.metrics import adjusted_rand_score
from sklearn.metrics.pairwise import rbf_kernel

from sparsekit.manifold import KernelPCA, LaplacianEigenmaps, SpectralClustering, SpectralEmbedding
from sparsekit.registry import default_registry

GAMMA = 0.5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(80, 3)), rng.normal(scale=1.5, size=(30, 3))


def _affinity(X, zero_diagonal):
    K = rbf_kernel(X, gamma=GAMMA)
    if zero_diagonal:
        np.fill_diagonal(K, 0.0)
    return K


def _top_normalised_eigenpairs(K, k, skip=0):
    """Top eigenpairs of ``S^-1/2 K S^-1/2`` by SciPy's dense solver, decreasing."""
    inv = 1.0 / np.sqrt(K.sum(1))
    w, V = scipy.linalg.eigh(inv[:, None] * K * inv[None, :])
    order = np.argsort(w)[::-1][skip : skip + k]
    return w[order], V[:, order]


def _assert_equal_up_to_sign(A, B, atol):
    assert A.shape == B.shape
    signs = np.sign((A * B).sum(0))
    np.testing.assert_allclose(A, B * signs, atol=atol)


@pytest.mark.parametrize("d", [1, 3])
def test_laplacian_eigenmaps_equals_sklearn_spectral_embedding(data, d):
    # scikit-learn's graph Laplacian ignores the affinity's diagonal: zero_diagonal=True is the
    # same training affinity; both return D^-1/2 v after the constant eigenvector
    X, _ = data
    ours = LaplacianEigenmaps(d, kernel_params={"gamma": GAMMA}, zero_diagonal=True).fit(X)
    sk = SkSpectralEmbedding(d, affinity="precomputed", random_state=0).fit_transform(
        rbf_kernel(X, gamma=GAMMA)
    )
    _assert_equal_up_to_sign(ours.embedding_, sk, atol=1e-8)


def test_spectral_embedding_equals_sklearn_eigenvectors(data):
    # scikit-learn's spectral_embedding (drop_first=False) returns D^-1/2 v; the NJW embedding
    # is the unit eigenvector v itself
    X, _ = data
    ours = SpectralEmbedding(3, kernel_params={"gamma": GAMMA}, zero_diagonal=True).fit(X)
    degrees = _affinity(X, True).sum(1)
    sk = (
        spectral_embedding(
            rbf_kernel(X, gamma=GAMMA), n_components=3, drop_first=False, random_state=0
        )
        * np.sqrt(degrees)[:, None]
    )
    _assert_equal_up_to_sign(ours.embedding_, sk, atol=1e-8)
    np.testing.assert_allclose(np.linalg.norm(ours.embedding_, axis=0), 1.0, atol=1e-12)


@pytest.mark.parametrize("zero_diagonal", [False, True])
def test_spectral_and_laplacian_training_embedding_against_scipy(data, zero_diagonal):
    X, _ = data
    K = _affinity(X, zero_diagonal)
    se = SpectralEmbedding(3, kernel_params={"gamma": GAMMA}, zero_diagonal=zero_diagonal).fit(X)
    w, V = _top_normalised_eigenpairs(K, 3)
    np.testing.assert_allclose(se.eigenvalues_, w, atol=1e-12)
    _assert_equal_up_to_sign(se.embedding_, V, atol=1e-10)
    le = LaplacianEigenmaps(2, kernel_params={"gamma": GAMMA}, zero_diagonal=zero_diagonal).fit(X)
    w, V = _top_normalised_eigenpairs(K, 2, skip=1)
    np.testing.assert_allclose(le.eigenvalues_, w, atol=1e-12)
    _assert_equal_up_to_sign(le.embedding_, V / np.sqrt(K.sum(1))[:, None], atol=1e-10)


def _nystrom_brute_force(X_train, X_new, K_train, values, vectors, laplacian):
    """The Nyström formula of Paiement 2003 (eq. 5.2) / Bengio et al. 2003, one point at a
    time; ``vectors`` are the unit eigenvectors of the normalised training affinity."""
    S_train = K_train.sum(1)
    out = np.zeros((X_new.shape[0], values.size))
    for p, x in enumerate(X_new):
        k = np.exp(-GAMMA * ((X_train - x) ** 2).sum(1))
        S = k.sum()
        for c in range(values.size):
            if laplacian:
                y = vectors[:, c] / np.sqrt(S_train)
                out[p, c] = (k * y).sum() / S / values[c]
            else:
                out[p, c] = (vectors[:, c] * k / np.sqrt(S * S_train)).sum() / values[c]
    return out


@pytest.mark.parametrize("zero_diagonal", [False, True])
@pytest.mark.parametrize("cls", [SpectralEmbedding, LaplacianEigenmaps])
def test_transform_of_new_points_is_the_nystrom_formula(data, cls, zero_diagonal):
    X, X_new = data
    est = cls(3, kernel_params={"gamma": GAMMA}, zero_diagonal=zero_diagonal).fit(X)
    K = _affinity(X, zero_diagonal)
    w, V = _top_normalised_eigenpairs(K, 3, skip=int(cls is LaplacianEigenmaps))
    signs = np.sign((est.eigenvectors_ * V).sum(0))
    expected = _nystrom_brute_force(X, X_new, K, w, V * signs, cls is LaplacianEigenmaps)
    np.testing.assert_allclose(est.transform(X_new), expected, rtol=1e-9, atol=1e-12)


def test_transform_of_more_rows_than_one_block(data):
    # the kernel block is computed 4096 rows at a time: every block must be filled
    X, _ = data
    X_new = np.random.default_rng(3).normal(size=(4100, 3))
    for cls in (SpectralEmbedding, LaplacianEigenmaps):
        est = cls(2, kernel_params={"gamma": GAMMA}).fit(X)
        out = est.transform(X_new)
        rows = [0, 4095, 4096, 4099]
        np.testing.assert_allclose(out[rows], est.transform(X_new[rows]), rtol=1e-12)


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(150, centers=3, cluster_std=0.4, random_state=0)
    X_new = np.random.default_rng(5).uniform(X.min(0) - 1.0, X.max(0) + 1.0, size=(200, 2))
    return X, y, X_new


def _unit_rows(Y):
    return Y / np.linalg.norm(Y, axis=1, keepdims=True)


@pytest.mark.parametrize("zero_diagonal", [False, True])
def test_spectral_clustering_labels_equal_sklearn(blobs, zero_diagonal):
    X, y, _ = blobs
    ours = SpectralClustering(
        3, kernel_params={"gamma": GAMMA}, zero_diagonal=zero_diagonal, random_state=0
    ).fit(X)
    sk = SkSpectralClustering(3, affinity="precomputed", random_state=0).fit(
        rbf_kernel(X, gamma=GAMMA)
    )
    assert adjusted_rand_score(ours.labels_, sk.labels_) == 1.0
    assert adjusted_rand_score(ours.labels_, y) == 1.0
    np.testing.assert_array_equal(ours.fit_predict(X), ours.labels_)


def _kmeans_fixed_point(Z, labels, centres):
    """Lloyd's k-means has converged: each centre is the mean of its points, each point is
    labelled with its nearest centre."""
    k = centres.shape[0]
    for j in range(k):
        np.testing.assert_allclose(centres[j], Z[labels == j].mean(0), atol=1e-12)
    dist = ((Z[:, None, :] - centres[None]) ** 2).sum(2)
    np.testing.assert_array_equal(labels, dist.argmin(1))


def _inertia(Z, labels):
    return sum(((Z[labels == j] - Z[labels == j].mean(0)) ** 2).sum() for j in np.unique(labels))


def test_spectral_clustering_runs_kmeans_on_unit_rows(blobs):
    # the rows of the embedding are normalised to unit length before k-means (Ng, Jordan &
    # Weiss): the centres are the means of the unit rows, not of the raw embedding
    X, _, _ = blobs
    sc = SpectralClustering(3, kernel_params={"gamma": GAMMA}, random_state=0).fit(X)
    emb = SpectralEmbedding(3, kernel_params={"gamma": GAMMA}).fit(X).embedding_
    np.testing.assert_allclose(sc.embedding_, emb, atol=1e-12)
    _kmeans_fixed_point(_unit_rows(emb), sc.labels_, sc.cluster_centers_)


@pytest.mark.parametrize("zero_diagonal", [False, True])
def test_predict_is_the_nearest_centre_of_the_normalised_nystrom_embedding(blobs, zero_diagonal):
    X, _, X_new = blobs
    sc = SpectralClustering(
        3, kernel_params={"gamma": GAMMA}, zero_diagonal=zero_diagonal, random_state=0
    ).fit(X)
    K = _affinity(X, zero_diagonal)
    w, V = _top_normalised_eigenpairs(K, 3)
    V = V * np.sign((sc.eigenvectors_ * V).sum(0))
    Y = _unit_rows(_nystrom_brute_force(X, X_new, K, w, V, laplacian=False))
    dist = ((Y[:, None, :] - sc.cluster_centers_[None]) ** 2).sum(2)
    np.testing.assert_array_equal(sc.predict(X_new), dist.argmin(1))
    if not zero_diagonal:
        np.testing.assert_array_equal(sc.predict(X), sc.labels_)


def test_predict_of_a_point_with_no_affinity_goes_to_the_centre_nearest_the_origin(blobs):
    # its degree is 0, its embedding the zero vector, left unnormalised
    X, _, _ = blobs
    sc = SpectralClustering(3, kernel_params={"gamma": GAMMA}, random_state=0).fit(X)
    far = np.full((1, 2), 1e6)
    assert sc.predict(far)[0] == np.linalg.norm(sc.cluster_centers_, axis=1).argmin()


def test_n_init_keeps_the_best_kmeans_run():
    # uniform data: k-means on the embedding has many local minima. One generator is drawn in
    # order, so the runs of n_init=m are the first m runs of n_init=M > m: the inertia kept
    # can only go down with n_init, and it must go down on this data
    X = np.random.default_rng(1).uniform(size=(120, 2))
    inertias = []
    for n_init in (1, 2, 5, 10, 20):
        sc = SpectralClustering(6, kernel_params={"gamma": 2.0}, n_init=n_init, random_state=1).fit(
            X
        )
        Z = _unit_rows(sc.embedding_)
        _kmeans_fixed_point(Z, sc.labels_, sc.cluster_centers_)
        inertias.append(_inertia(Z, sc.labels_))
    assert all(b <= a for a, b in zip(inertias, inertias[1:]))
    assert inertias[-1] < inertias[0] - 0.5
    best = KMeans(6, n_init=100, random_state=0).fit(Z).inertia_
    assert inertias[-1] <= 1.01 * best


def test_n_components_may_equal_n_samples():
    X = np.random.default_rng(2).normal(size=(6, 2))
    se = SpectralEmbedding(6, kernel_params={"gamma": GAMMA}).fit(X)
    w, V = _top_normalised_eigenpairs(_affinity(X, False), 6)
    np.testing.assert_allclose(se.eigenvalues_, w, atol=1e-12)
    _assert_equal_up_to_sign(se.embedding_, V, atol=1e-10)


def test_feature_names_out_follow_sklearn(data):
    X, _ = data
    sk = SkKernelPCA(3, kernel="rbf", gamma=GAMMA).fit(X).get_feature_names_out()
    ours = KernelPCA(3, kernel_params={"gamma": GAMMA}).fit(X).get_feature_names_out()
    np.testing.assert_array_equal(ours, sk)
    names = SpectralEmbedding(3, kernel_params={"gamma": GAMMA}).fit(X).get_feature_names_out()
    np.testing.assert_array_equal(names, [f"spectralembedding{i}" for i in range(3)])


def test_named_kernel_params_are_used_with_a_registry(data):
    # a named kernel resolved in a given registry gets its kernel_params too
    X, X_new = data
    registry = default_registry()
    kpca = KernelPCA(2, kernel_params={"gamma": GAMMA}, registry=registry).fit(X)
    sk = SkKernelPCA(2, kernel="rbf", gamma=GAMMA).fit(X)
    _assert_equal_up_to_sign(kpca.transform(X_new), sk.transform(X_new), atol=1e-8)
    se = SpectralEmbedding(2, kernel_params={"gamma": GAMMA}, registry=registry).fit(X)
    w, V = _top_normalised_eigenpairs(_affinity(X, False), 2)
    _assert_equal_up_to_sign(se.embedding_, V, atol=1e-10)


@pytest.mark.parametrize("scale", [1.0, 0.01])
def test_kmeans_plus_plus_seeds_one_centre_per_distinct_point(scale):
    # k-means++ draws each new seed with probability proportional to the squared distance to
    # the nearest seed so far: with k distinct points (each repeated), a point already covered
    # has probability 0, so the k seeds are the k points and one assignment step leaves no
    # error (up to rounding), whatever the scale of the data
    from sparsekit.manifold.embedding import _kmeans

    points = scale * np.random.default_rng(0).normal(size=(6, 3))
    Y = np.repeat(points, 5, axis=0)
    for seed in range(20):
        inertia, centres, _ = _kmeans(Y, 6, np.random.default_rng(seed), 1, max_iter=1)
        assert inertia <= 1e-20 * scale**2, seed
        np.testing.assert_allclose(np.sort(centres, axis=0), np.sort(points, axis=0), rtol=1e-12)


def test_spectral_clustering_defaults_and_type_follow_sklearn(blobs):
    from sklearn.base import is_clusterer

    assert is_clusterer(SpectralClustering())
    assert SpectralClustering().n_init == SkSpectralClustering().n_init == 10
    X, _, _ = blobs
    with pytest.raises(ValueError, match="n_init"):
        SpectralClustering(3, n_init=0).fit(X)


def test_spectral_embedding_default_dimension_follows_sklearn(data):
    X, _ = data
    assert SpectralEmbedding().fit(X).embedding_.shape[1] == SkSpectralEmbedding().n_components


def test_two_samples_are_enough():
    X = np.array([[0.0, 0.0], [1.0, 0.5]])
    se = SpectralEmbedding(2, kernel_params={"gamma": GAMMA}).fit(X)
    w, V = _top_normalised_eigenpairs(_affinity(X, False), 2)
    np.testing.assert_allclose(se.eigenvalues_, w, atol=1e-12)
    _assert_equal_up_to_sign(se.embedding_, V, atol=1e-12)


def test_one_landmark_gives_the_nystrom_formula_of_one_point(data):
    # one landmark l: M = [1], v = [1], so y(x) = k(x, l) / sqrt(S(x) S(l)) = sqrt(k(x, l))
    X, _ = data
    se = SpectralEmbedding(1, kernel_params={"gamma": GAMMA}, n_landmarks=1, random_state=0).fit(X)
    landmark = X[se.landmarks_[0]]
    expected = np.sqrt(np.exp(-GAMMA * ((X - landmark) ** 2).sum(1)))
    np.testing.assert_allclose(se.embedding_[:, 0], expected, rtol=1e-12)


@pytest.mark.parametrize("n_landmarks", [0, -3, 1.5, "10"])
def test_bad_n_landmarks_is_rejected(data, n_landmarks):
    X, _ = data
    with pytest.raises(ValueError, match="n_landmarks"):
        SpectralEmbedding(n_landmarks=n_landmarks).fit(X)
