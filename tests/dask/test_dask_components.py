"""The Dask entry points resolve through sparsekit.components (copy rule, registry=), a plugin
sampler's sample_chunked capability runs chunk by chunk, and any fitted transformer maps chunk
by chunk."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import sparsekit  # noqa: E402
import sparsekit.dask as skd  # noqa: E402
from sparsekit import Registry, UnknownComponentError  # noqa: E402
from sparsekit.kernels.linear import LinearKernel  # noqa: E402
from sparsekit.plugins import Registration, hookimpl  # noqa: E402
from sparsekit.samplers.base import Sampler  # noqa: E402
from sparsekit.solvers.omp import OMP  # noqa: E402


def _row_sq_norms(chunk, index):
    return np.einsum("ij,ij->i", chunk, chunk), index, chunk.shape[0]


class TopNormSampler(Sampler):
    """A plugin sampler: the n_landmarks rows of largest norm. In memory by ``sample``; on
    chunked data by ``sample_chunked``, which reads each chunk where it is."""

    name = "top-norm"

    def __init__(self):
        self.seen = None

    def sample(self, X, kernel, n_landmarks, random_state=None):
        raise AssertionError("the Dask path must use sample_chunked, not sample")

    def sample_chunked(self, data, kernel, n_landmarks, random_state=None):
        parts = data.map_chunks(_row_sq_norms)
        self.seen = [(index, size) for _, index, size in parts]
        norms = np.concatenate([p[0] for p in parts])
        idx = np.sort(np.argsort(-norms, kind="stable")[:n_landmarks])
        return idx, np.full(n_landmarks, 3.0)


class _PrivateLinear(LinearKernel):
    pass


class _Plugin:
    @hookimpl
    def sparsekit_kernels(self):
        yield Registration("private-linear", _PrivateLinear)

    @hookimpl
    def sparsekit_samplers(self):
        yield Registration("top-norm", TopNormSampler)

    @hookimpl
    def sparsekit_solvers(self):
        yield Registration("private-omp", OMP)


@pytest.fixture(scope="module")
def private():
    return Registry(entry_points=False, plugins=[_Plugin()])


@pytest.fixture(scope="module")
def data():
    X = np.random.default_rng(3).standard_normal((120, 4))
    return X, da.from_array(X, chunks=(35, -1))


def test_a_plugin_sampler_with_sample_chunked_runs_chunk_by_chunk(data, private):
    X, Xd = data
    sampler = TopNormSampler()
    ny = skd.nystroem_fit(Xd, "private-linear", sampler, 6, registry=private)
    expected = np.sort(np.argsort(-np.linalg.norm(X, axis=1))[:6])  # brute force
    np.testing.assert_array_equal(ny.component_indices_, expected)
    np.testing.assert_array_equal(ny.landmark_weights_, 3.0)
    np.testing.assert_allclose(ny.components_, X[expected])
    assert sampler.seen is None  # the caller's object is not the one that sampled
    # the map: K(x, S) K_S^+ K(S, x) of the linear kernel, by NumPy
    S = X[expected]
    Z = skd.nystroem_transform(ny, Xd).compute()
    np.testing.assert_allclose(Z @ Z.T, X @ S.T @ np.linalg.pinv(S @ S.T) @ S @ X.T, atol=1e-9)
    # by name, through the private registry: the chunks it saw are Xd's
    ny = skd.nystroem_fit(Xd, "private-linear", "top-norm", 6, registry=private)
    np.testing.assert_array_equal(ny.component_indices_, expected)
    assert isinstance(ny.kernel_, _PrivateLinear)


def test_every_entry_point_resolves_in_the_given_registry(data, private):
    X, Xd = data
    np.testing.assert_allclose(
        skd.gram("private-linear", Xd[:20], registry=private).compute(),
        X[:20] @ X[:20].T,
        rtol=1e-12,
    )
    scores = skd.dac_rls_scores(Xd, "private-linear", lam=0.5, registry=private).compute()
    assert scores.shape == (120,) and np.all((scores > 0) & (scores <= 1))
    D = np.linalg.qr(np.random.default_rng(0).standard_normal((8, 8)))[0]
    Y = D[:, :2] @ np.array([[1.0, 0.5], [2.0, -1.0]])
    coef = skd.solve(
        "private-omp", D, da.from_array(Y, chunks=(-1, 1)), registry=private, n_nonzero_coefs=2
    ).compute()
    np.testing.assert_allclose(D @ coef, Y, atol=1e-12)
    Yd = da.from_array(X[:50] + 1.0, chunks=(25, -1))
    est = skd.nystrom_mmd_fit(
        Xd, Yd, kernel="private-linear", sampler="top-norm", n_landmarks=4, registry=private
    )
    assert isinstance(est.kernel_, _PrivateLinear)
    km = skd.kernel_kmeans_fit(
        Xd,
        2,
        kernel="private-linear",
        sampler="top-norm",
        n_landmarks=4,
        n_init=1,
        registry=private,
        random_state=0,
    )
    assert km.cluster_centers_.shape == (2, 4)
    for call in (
        lambda: skd.gram("private-linear", Xd),
        lambda: skd.nystroem_fit(Xd, "rbf", "top-norm", 3),
        lambda: skd.solve("private-omp", D, da.from_array(Y, chunks=(-1, 1))),
        lambda: skd.nystrom_mmd_fit(Xd, kernel="private-linear"),
        lambda: skd.kernel_kmeans_fit(Xd, 2, kernel="private-linear"),
    ):
        with pytest.raises(UnknownComponentError):
            call()


def test_dask_entry_points_do_not_change_the_callers_kernel(data):
    X, Xd = data
    kernel = sparsekit.get_kernel("rbf")  # gamma = 1 / n_features, set by fit
    skd.gram(kernel, Xd[:10]).compute()
    skd.nystroem_fit(Xd, kernel, "uniform", 5, random_state=0)
    assert kernel.gamma_ is None


def test_misspelt_names_get_the_closest_one(data):
    _, Xd = data
    with pytest.raises(UnknownComponentError, match=r"Did you mean 'rbf'\?"):
        skd.gram("rbff", Xd)
    with pytest.raises(UnknownComponentError, match=r"Did you mean 'uniform'\?"):
        skd.nystroem_fit(Xd, "rbf", "unifrom", 5)
    with pytest.raises(UnknownComponentError, match=r"Did you mean 'omp'\?"):
        skd.solve("ompp", np.eye(3), da.ones((3, 2)))


def test_transform_maps_any_fitted_transformer_chunk_by_chunk(data):
    from sklearn.decomposition import PCA

    X, Xd = data
    pca = PCA(3).fit(X)
    Z = skd.transform(pca, Xd)
    assert Z.shape == (120, 3) and Z.chunks[0] == Xd.chunks[0]
    np.testing.assert_allclose(Z.compute(), pca.transform(X), rtol=1e-12, atol=1e-12)
    rff = sparsekit.RandomFourierFeatures(n_components=16, random_state=0).fit(X)
    np.testing.assert_allclose(skd.transform(rff, Xd).compute(), rff.transform(X), rtol=1e-12)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        skd.transform(sparsekit.Nystroem(), Xd)
    with pytest.raises(TypeError, match="fitted transformer"):
        skd.transform(object(), Xd)


def test_nystrom_mmd_uses_the_given_sampler_on_the_pooled_samples(data, private):
    """Oracle: brute force. ``top-norm`` picks the rows of largest norm of the pooled samples
    (X then Y), so the landmarks are those rows of ``np.concatenate([X, Y])``."""
    X, Xd = data
    Y = X[:50] * 1.5
    pool = np.concatenate([X, Y])
    est = skd.nystrom_mmd_fit(
        Xd,
        da.from_array(Y, chunks=(20, -1)),
        kernel="private-linear",
        sampler="top-norm",
        n_landmarks=5,
        registry=private,
    )
    expected = np.sort(np.argsort(-np.linalg.norm(pool, axis=1))[:5])
    np.testing.assert_array_equal(est.nystroem_.component_indices_, expected)
    np.testing.assert_allclose(est.nystroem_.components_, pool[expected])
