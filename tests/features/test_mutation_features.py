"""Rules of the feature maps that the value tests elsewhere leave open: defaults shared with
scikit-learn, the precomputed Gram matrix, the eigenvalue floor, error messages and warning
locations, the dtype of fitted factors, the row blocks of ``transform`` and the choice between
the host and the device path."""

import sys
import types
import warnings

import numpy as np
import pytest
from numba import config
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.metrics.pairwise import rbf_kernel

from sparsekit import Fastfood, Nystroem, RandomFourierFeatures
from sparsekit.features import _nystrom_cuda
from sparsekit.kernels.base import Kernel
from sparsekit.samplers.base import Landmarks

from .test_nystrom_cuda import SimOps


@pytest.fixture
def X():
    return np.random.default_rng(0).normal(size=(150, 3))


def test_default_n_components_is_scikit_learns(X):
    ours = Nystroem(random_state=0).fit(X)
    theirs = SkNystroem(random_state=0).fit(X)
    assert ours.n_components_ == theirs.components_.shape[0] == 100


def test_transform_evaluates_the_gram_block_once_when_it_fits_64_mib(X):
    k = 8
    blocks = []

    def rbf(A, B):
        if len(B) == k:
            blocks.append(len(A))
        return rbf_kernel(A, B, gamma=0.5)

    ny = Nystroem(rbf, n_components=k, random_state=0).fit(X)
    blocks.clear()
    Z = ny.transform(X)
    assert 64 * 2**20 // (8 * k) >= len(X)  # the 150 x 8 block is far below 64 MiB
    assert blocks == [len(X)]
    S = ny.component_indices_
    K_XS = rbf_kernel(X, X[S], gamma=0.5)
    expected = K_XS @ np.linalg.pinv(K_XS[S], hermitian=True) @ K_XS.T
    np.testing.assert_allclose(Z @ Z.T, expected, atol=1e-8)


def test_transform_row_blocks_are_sized_by_the_number_of_landmarks(X, monkeypatch):
    from sparsekit.features import nystrom

    k, rank = 12, 3
    blocks = []

    def rbf(A, B):
        if len(B) == k:
            blocks.append(len(A))
        return rbf_kernel(A, B, gamma=0.5)

    ny = Nystroem(rbf, n_components=k, rank=rank, random_state=0).fit(X)
    # K(x, S) has k columns (not the rank): 10 of its float64 rows per block
    monkeypatch.setattr(nystrom, "BLOCK_BYTES", 10 * 8 * k)
    blocks.clear()
    Z = ny.transform(X)
    assert blocks == [10] * 15
    monkeypatch.undo()
    np.testing.assert_allclose(Z, ny.transform(X), rtol=1e-12)


class _OutOfRangeSampler:
    name = "out-of-range"
    accepts = ("vectors", "graphs")

    def sample(self, X, kernel, n_landmarks, random_state=None):
        idx = np.arange(n_landmarks) + kernel.n_samples(X)  # past the last sample
        return Landmarks(idx, X[:n_landmarks], np.ones(n_landmarks))


def test_bad_landmark_indices_name_the_sampler_that_returned_them(X):
    with pytest.raises(ValueError, match=r"sampler _OutOfRangeSampler returned invalid landmark"):
        Nystroem(sampler=_OutOfRangeSampler(), n_components=5).fit(X)


def test_precomputed_gram_gives_the_pseudo_inverse_formula(X):
    K = rbf_kernel(X, gamma=0.4)
    ny = Nystroem("precomputed", n_components=12, random_state=0).fit(K)
    S = ny.component_indices_
    assert len(S) == 12
    Z = ny.transform(K)
    expected = K[:, S] @ np.linalg.pinv(K[np.ix_(S, S)], hermitian=True) @ K[S]
    np.testing.assert_allclose(Z @ Z.T, expected, atol=1e-8)
    # new samples: their kernel with the training samples
    Y = np.random.default_rng(1).normal(size=(7, 3))
    K_new = rbf_kernel(Y, X, gamma=0.4)
    np.testing.assert_allclose(
        ny.transform(K_new) @ Z.T,
        K_new[:, S] @ np.linalg.pinv(K[np.ix_(S, S)], hermitian=True) @ K[S],
        atol=1e-8,
    )
    with pytest.raises(ValueError, match="square Gram matrix"):
        Nystroem("precomputed", n_components=3).fit(K[:, :20])


def test_too_many_components_warns_at_the_callers_line(X):
    for call in (Nystroem(n_components=500).fit, Nystroem(n_components=500).fit_transform):
        with pytest.warns(UserWarning, match="larger than the number of samples") as record:
            call(X)
        assert record[0].filename == __file__


def test_eigen_floor_below_one_drops_exactly_the_eigenvalues_at_or_below_it(X):
    S = np.arange(0, 150, 10)  # 15 landmarks
    K_XS = rbf_kernel(X, X[S], gamma=0.2)
    evals, U = np.linalg.eigh(K_XS[S])
    below_one = np.flatnonzero((evals > 1e-3) & (evals < 1.0))
    assert below_one.size >= 2
    floor = float(np.sqrt(evals[below_one[0]] * evals[below_one[1]]))  # between the two, < 1
    keep = evals > floor
    expected = (K_XS @ U[:, keep]) / evals[keep] @ (U[:, keep].T @ K_XS.T)
    for eigen_floor, kept in ((floor, keep), (0.0, evals > 0.0)):
        ny = Nystroem(kernel_params={"gamma": 0.2}, eigen_floor=eigen_floor)
        ny.fit_landmarks(Landmarks(S, X[S], np.ones(len(S))))
        Z = ny.transform(X)
        assert np.linalg.matrix_rank(ny.normalization_) == kept.sum()
        if eigen_floor > 0:
            np.testing.assert_allclose(Z @ Z.T, expected, atol=1e-8)
    with pytest.raises(ValueError, match="eigen_floor"):
        Nystroem(eigen_floor=-0.5).fit(X)


def test_fitted_random_factors_are_in_the_dtype_of_the_data(X):
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


@pytest.fixture
def sim_ops(monkeypatch):
    if not config.ENABLE_CUDASIM:
        pytest.skip("counts the simulator's stand-in for the device operations")
    sim = SimOps()
    monkeypatch.setattr(_nystrom_cuda, "device_ops", lambda: sim)
    return sim


class _HostOnlyRBF(Kernel):
    """A third-party kernel with a ``backend`` parameter and no CUDA implementation."""

    name = "host-only-rbf"

    def __init__(self, backend="cuda"):
        self.backend = backend

    def __call__(self, X, Y=None):
        return rbf_kernel(X, X if Y is None else Y, gamma=0.5)

    def diag(self, X):
        return np.ones(len(X))


def test_a_kernel_without_a_cuda_implementation_stays_on_the_host(sim_ops, X):
    ny = Nystroem(_HostOnlyRBF(), n_components=10, random_state=0).fit(X)
    Z = ny.transform(X)
    assert sim_ops.products == [] and sim_ops.eighs == 0
    S = ny.component_indices_
    K_XS = rbf_kernel(X, X[S], gamma=0.5)
    expected = K_XS @ np.linalg.pinv(K_XS[S], hermitian=True) @ K_XS.T
    np.testing.assert_allclose(Z @ Z.T, expected, atol=1e-8)


def test_device_path_refuses_kernel_parameters_made_invalid_after_fit(sim_ops, X):
    kw = {"n_components": 6, "random_state": 0}
    gpu = Nystroem("rbf", kernel_params={"gamma": 0.2, "backend": "cuda"}, **kw).fit(X)
    host = Nystroem("rbf", kernel_params={"gamma": 0.2, "backend": "cpu"}, **kw).fit(X)
    for ny in (host, gpu):
        ny.kernel_.gamma = -1.0
        with pytest.raises(ValueError, match="gamma"):
            ny.transform(X)
    assert sim_ops.products == []


class _Array(np.ndarray):
    """A host array with CuPy's ``get``."""

    def get(self):
        return np.asarray(self)


class _Stream:
    ptr = 0

    def __init__(self, non_blocking=False):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _host_cupy():
    """A CuPy stand-in that computes on the host: what ``_load_cupy_ops`` calls."""
    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(Stream=_Stream)
    cupy.empty = lambda shape, dtype: np.empty(shape, dtype=dtype).view(_Array)
    cupy.asarray = lambda a: np.asarray(a).view(_Array)
    cupy.matmul = np.matmul
    cupy.linalg = types.SimpleNamespace(
        eigh=lambda A: tuple(a.view(_Array) for a in np.linalg.eigh(np.asarray(A)))
    )
    return cupy


def test_a_working_cupy_passes_the_load_check_without_a_warning(monkeypatch):
    from numba import cuda

    monkeypatch.setitem(sys.modules, "cupy", _host_cupy())
    monkeypatch.setattr(config, "ENABLE_CUDASIM", False)
    monkeypatch.setattr(cuda, "external_stream", lambda ptr: ("stream", ptr), raising=False)
    monkeypatch.setattr(cuda, "as_cuda_array", lambda a: a, raising=False)
    monkeypatch.setattr(_nystrom_cuda, "_state", {"ops": None, "checked": False})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ops = _nystrom_cuda.device_ops()
    assert isinstance(ops, _nystrom_cuda.CupyOps)
    w, V = ops.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
    np.testing.assert_allclose(w, [1.0, 3.0])
