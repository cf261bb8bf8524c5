"""KernelKMeans: exact and Nyström Lloyd against references, rings, residual trace, bad input."""

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs, make_circles
from sklearn.metrics import adjusted_mutual_info_score as ami
from sklearn.metrics.pairwise import rbf_kernel

from sparsekit import KernelKMeans, UnknownComponentError


def objective(K, labels):
    """Σ_i ‖φ(x_i) − c_{l_i}‖² from the Gram matrix."""
    total = 0.0
    for j in np.unique(labels):
        m = labels == j
        total += np.trace(K[np.ix_(m, m)]) - K[np.ix_(m, m)].sum() / m.sum()
    return total


@pytest.fixture
def rings():
    return make_circles(400, factor=0.3, noise=0.04, random_state=0)


def test_exact_with_linear_kernel_equals_kmeans_from_the_same_init():
    X, _ = make_blobs(300, centers=4, cluster_std=2.5, random_state=1)
    seeds = np.array([3, 50, 120, 200])
    km = KernelKMeans(4, kernel="linear", method="exact", init=seeds, max_iter=100, tol=0).fit(X)
    ref = KMeans(4, init=X[seeds], n_init=1, algorithm="lloyd", tol=0, max_iter=100).fit(X)
    np.testing.assert_array_equal(km.labels_, ref.labels_)
    assert km.inertia_ == pytest.approx(ref.inertia_, rel=1e-9)
    np.testing.assert_allclose(
        km.transform(X) ** 2,
        ((X[:, None, :] - ref.cluster_centers_[None]) ** 2).sum(-1),
        rtol=1e-8,
        atol=1e-8,
    )


@pytest.mark.parametrize(
    "method,sampler", [("exact", "uniform"), ("nystrom", "uniform"), ("nystrom", "greedy-trace")]
)
def test_rbf_kernel_kmeans_separates_two_rings(rings, method, sampler):
    X, y = rings
    km = KernelKMeans(
        2,
        kernel_params={"gamma": 5.0},
        method=method,
        sampler=sampler,
        n_landmarks=60,
        random_state=0,
    ).fit(X)
    assert ami(y, km.labels_) > 0.95
    assert ami(y, KMeans(2, n_init=3, random_state=0).fit_predict(X)) < 0.1


def test_inertia_and_residual_trace_in_feature_space(rings):
    X, _ = rings
    K = rbf_kernel(X, gamma=5.0)
    exact = KernelKMeans(2, kernel_params={"gamma": 5.0}, method="exact", random_state=0).fit(X)
    assert exact.residual_trace_ == 0.0
    assert exact.inertia_ == pytest.approx(objective(K, exact.labels_), rel=1e-10)
    ny = KernelKMeans(
        2, kernel_params={"gamma": 5.0}, method="nystrom", n_landmarks=15, random_state=0
    ).fit(X)
    Z = ny.nystroem_.transform(X)
    assert ny.residual_trace_ == pytest.approx(np.trace(K) - np.trace(Z @ Z.T), rel=1e-9)
    # inertia_ counts the distances in the kernel feature space: Nyström part + residual
    C = ny.cluster_centers_
    within = ((Z - C[ny.labels_]) ** 2).sum()
    assert ny.inertia_ == pytest.approx(within + ny.residual_trace_, rel=1e-10)
    D2 = ny.transform(X) ** 2
    assert D2[np.arange(len(X)), ny.labels_].sum() == pytest.approx(ny.inertia_, rel=1e-9)


def test_greedy_trace_has_smaller_residual_than_uniform(rings):
    X, _ = rings
    kw = dict(kernel_params={"gamma": 5.0}, method="nystrom", n_landmarks=20, random_state=0)
    g = KernelKMeans(2, sampler="greedy-trace", **kw).fit(X)
    u = KernelKMeans(2, sampler="uniform", **kw).fit(X)
    assert g.residual_trace_ < u.residual_trace_


def test_exact_transform_and_predict_on_new_points(rings):
    X, _ = rings
    km = KernelKMeans(2, kernel_params={"gamma": 5.0}, method="exact", random_state=0).fit(X)
    Xn = X[:7] + 0.01
    H = np.zeros((len(X), 2))
    for j in range(2):
        H[km.labels_ == j, j] = 1 / np.sum(km.labels_ == j)
    K = rbf_kernel(X, gamma=5.0)
    Kn = rbf_kernel(Xn, X, gamma=5.0)
    want = 1.0 - 2 * Kn @ H + np.einsum("ij,ij->j", H, K @ H)
    np.testing.assert_allclose(km.transform(Xn) ** 2, want, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(km.predict(Xn), np.argmin(want, axis=1))
    np.testing.assert_array_equal(km.predict(X), km.labels_)


def test_float32_output_dtype(rings):
    X = rings[0].astype(np.float32)
    for method in ("exact", "nystrom"):
        km = KernelKMeans(
            2, kernel_params={"gamma": 5.0}, method=method, n_landmarks=20, random_state=0
        ).fit(X)
        assert km.transform(X).dtype == np.float32


def test_empty_clusters_are_reseeded():
    # two seeds on the same point: the second cluster is empty after the first assignment
    X = np.concatenate([np.zeros((5, 2)), np.ones((5, 2)) * 3, np.ones((5, 2)) * [6, 0]])
    X = X + np.random.default_rng(0).normal(scale=0.01, size=X.shape)
    X[1] = X[0]
    km = KernelKMeans(3, kernel="linear", method="exact", init=np.array([0, 1, 5])).fit(X)
    assert np.bincount(km.labels_, minlength=3).min() >= 1
    assert ami(np.repeat([0, 1, 2], 5), km.labels_) == pytest.approx(1.0)


def test_n_init_keeps_the_best_seeding(rings):
    X, _ = rings
    # the first of n_init seedings is the single seeding of the same random_state
    for seed in range(3):
        one = KernelKMeans(6, kernel_params={"gamma": 5.0}, n_init=1, random_state=seed).fit(X)
        six = KernelKMeans(6, kernel_params={"gamma": 5.0}, n_init=6, random_state=seed).fit(X)
        assert six.inertia_ < one.inertia_ - 0.1  # these seeds' first run is not the best


def test_graphs_with_the_shortest_path_kernel():
    rng = np.random.default_rng(0)
    from tests.stats.conftest import random_graphs

    graphs = random_graphs(rng, 20, 0.35, (10, 10)) + random_graphs(rng, 20, 0.9, (10, 10))
    y = np.repeat([0, 1], 20)
    for method in ("exact", "nystrom"):
        km = KernelKMeans(
            2,
            kernel="shortest-path",
            kernel_params={"normalize": True},
            method=method,
            n_landmarks=10,
            random_state=0,
        ).fit(graphs)
        assert ami(y, km.labels_) == pytest.approx(1.0)
        np.testing.assert_array_equal(
            km.predict(graphs[:3] + graphs[-3:]), km.labels_[[0, 1, 2, -3, -2, -1]]
        )


def test_bad_input(rings):
    X, _ = rings
    with pytest.raises(ValueError, match="n_samples=5 should be >= n_clusters=6"):
        KernelKMeans(6).fit(X[:5])
    with pytest.raises(ValueError, match="not fitted"):
        KernelKMeans(2).predict(X)
    with pytest.raises(ValueError, match="not fitted"):
        KernelKMeans(2).transform(X)
    with pytest.raises(UnknownComponentError, match="rbf"):
        KernelKMeans(2, kernel="rbff").fit(X)
    with pytest.raises(UnknownComponentError, match="greedy-trace"):
        KernelKMeans(2, method="nystrom", sampler="greedy-trac").fit(X)
    with pytest.raises(TypeError, match="takes graphs"):
        KernelKMeans(2, kernel="shortest-path").fit(X)
    from tests.stats.conftest import random_graphs

    with pytest.raises(TypeError, match="takes vectors"):
        KernelKMeans(2).fit(random_graphs(np.random.default_rng(0), 4, 0.5))
    with pytest.raises(ValueError, match="n_landmarks=500 is larger than n_samples=400"):
        KernelKMeans(2, method="nystrom", n_landmarks=500).fit(X)
    with pytest.raises(ValueError, match="init indices"):
        KernelKMeans(2, init=np.array([0, 0])).fit(X)
    with pytest.raises(ValueError, match="unknown method"):
        KernelKMeans(2, method="nystr").fit(X)
    km = KernelKMeans(2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="X has 3 features, but KernelKMeans is expecting 2"):
        km.predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match="contains NaN"):
        KernelKMeans(2).fit(np.full((5, 2), np.nan))


def test_auto_exact_path_warns_that_landmark_parameters_are_ignored(rings):
    X, _ = rings
    kw = dict(kernel_params={"gamma": 5.0}, random_state=0)
    with pytest.warns(
        UserWarning,
        match=r"sampler='greedy-trace', n_landmarks=20 are ignored"
        r".*method=\"nystrom\"",
    ):
        km = KernelKMeans(2, sampler="greedy-trace", n_landmarks=20, **kw).fit(X)
    # they were indeed ignored: the fit is the plain exact one
    assert km.method_ == "exact" and km.nystroem_ is None
    exact = KernelKMeans(2, method="exact", **kw).fit(X)
    np.testing.assert_array_equal(km.labels_, exact.labels_)
    with pytest.warns(UserWarning, match=r"sampler_params=\{'replace': True\} is ignored"):
        KernelKMeans(2, sampler_params={"replace": True}, **kw).fit(X)


def test_no_landmark_warning_for_defaults_or_an_explicit_method(rings, recwarn):
    from sparsekit.samplers.uniform import UniformSampler

    X, _ = rings
    kw = dict(kernel_params={"gamma": 5.0}, random_state=0)
    KernelKMeans(2, **kw).fit(X)
    KernelKMeans(2, sampler=UniformSampler(), **kw).fit(X)
    KernelKMeans(2, sampler="greedy-trace", n_landmarks=20, method="nystrom", **kw).fit(X)
    KernelKMeans(2, sampler="greedy-trace", n_landmarks=20, method="exact", **kw).fit(X)
    assert not [w for w in recwarn if "ignored" in str(w.message)]


@pytest.mark.parametrize("method", ["exact", "nystrom"])
def test_changing_X_after_fit_leaves_the_model_unchanged(rings, method):
    X = np.ascontiguousarray(rings[0])  # already in the kernel's form: nothing copies it on input
    km = KernelKMeans(
        2, kernel_params={"gamma": 5.0}, method=method, n_landmarks=40, random_state=0
    ).fit(X)
    Xn = rings[0][:9] + 0.01
    before_d, before_l = km.transform(Xn), km.predict(Xn)
    X[:] = 0.0
    np.testing.assert_array_equal(km.transform(Xn), before_d)
    np.testing.assert_array_equal(km.predict(Xn), before_l)


@pytest.mark.parametrize("method", ["exact", "nystrom"])
def test_kernel_and_sampler_names_are_looked_up_in_the_given_registry(rings, method):
    from sparsekit import Registry
    from sparsekit.kernels.linear import LinearKernel
    from sparsekit.plugins import Registration, hookimpl
    from sparsekit.samplers.uniform import UniformSampler

    class Plugin:
        @hookimpl
        def sparsekit_kernels(self):
            yield Registration("my-linear", LinearKernel)

        @hookimpl
        def sparsekit_samplers(self):
            yield Registration("my-uniform", UniformSampler)

    X, _ = rings
    registry = Registry(builtins=False, entry_points=False, plugins=[Plugin()])
    kw = dict(method=method, n_landmarks=2, init=np.array([0, 1]), random_state=0)
    ours = KernelKMeans(2, kernel="my-linear", sampler="my-uniform", registry=registry, **kw).fit(X)
    ref = KernelKMeans(2, kernel="linear", sampler="uniform", **kw).fit(X)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    assert ours.inertia_ == pytest.approx(ref.inertia_, rel=1e-12)
    assert ours.get_params()["registry"] is registry
    with pytest.raises(UnknownComponentError, match="my-linear"):
        KernelKMeans(2, kernel="my-linear", **kw).fit(X)  # not in the default registry
    with pytest.raises(UnknownComponentError, match="rbf"):
        KernelKMeans(2, registry=registry, **kw).fit(X)  # the default kernel is not in it
