"""Nyström features computed on the device (K(X, S) and its product with M never on the host).

Numba's simulator runs the Gram kernels and the chunked transfers; CuPy (cuBLAS) is not
available on it, so the GEMM and the eigensolver are stood in for by host computations on the
simulator's device arrays. On a GPU with CuPy the same tests run with cuBLAS (``gpu_checks.sh``).
"""

import sys
import types
import warnings

import numpy as np
import pytest
from numba import config, cuda
from sklearn.metrics.pairwise import rbf_kernel

import sparsekit
from sparsekit import Nystroem
from sparsekit.features import _nystrom_cuda
from sparsekit.kernels import _cuda
from sparsekit.kernels.base import Kernel


class SimOps:
    """The interface of ``_nystrom_cuda.CupyOps`` on the simulator's device arrays."""

    def __init__(self):
        self.stream = cuda.stream()
        self.products = []
        self.eighs = 0

    def empty(self, shape, dtype):
        a = cuda.device_array(shape, dtype=dtype)
        return a, a

    def matmul(self, a, b, out):
        self.products.append(a.shape)
        out.copy_to_device(a.copy_to_host() @ b.copy_to_host(), stream=self.stream)

    def eigh(self, A):
        self.eighs += 1
        return np.linalg.eigh(A)


@pytest.fixture
def ops(monkeypatch):
    if config.ENABLE_CUDASIM:
        sim = SimOps()
        monkeypatch.setattr(_nystrom_cuda, "device_ops", lambda: sim)
        return sim
    real = _nystrom_cuda.device_ops()
    if real is None:
        pytest.skip("a GPU without CuPy: the device transform is not used")
    return None


def _nystroem(backend, m, dtype=np.float64, **kw):
    return sparsekit.Nystroem(
        "rbf",
        sampler="uniform",
        n_components=m,
        random_state=0,
        kernel_params={"gamma": 0.2, "backend": backend},
        **kw,
    )


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-10), (np.float32, 2e-4)])
def test_device_features_equal_host_and_sklearn_over_many_chunks(
    ops, dtype, rtol, monkeypatch, rng
):
    from sklearn.kernel_approximation import Nystroem as SkNystroem

    n, m, d = 75, 23, 5
    X = rng.standard_normal((n, d)).astype(dtype)
    # 7 rows of the 23 Gram columns per chunk: 11 chunks, the last of 5 rows
    monkeypatch.setattr(_cuda, "STAGING_BYTES", 7 * m * np.dtype(dtype).itemsize)
    host = _nystroem("cpu", m).fit(X)
    gpu = _nystroem("cuda", m).fit(X)
    Z = gpu.transform(X)
    assert Z.dtype == dtype
    if ops is not None:
        assert ops.products == [(7, m)] * 10 + [(5, m)]
        assert ops.eighs == 1
    np.testing.assert_array_equal(gpu.component_indices_, host.component_indices_)
    np.testing.assert_allclose(Z, host.transform(X), rtol=rtol, atol=rtol)
    # scikit-learn's own fit on the same landmarks: it permutes them (component_indices_),
    # which permutes the columns of the symmetric-root features
    S = X[host.component_indices_].astype(np.float64)
    sk = SkNystroem(kernel="rbf", gamma=0.2, n_components=m, random_state=0).fit(S)
    want = sk.transform(X.astype(np.float64))
    np.testing.assert_allclose(Z[:, sk.component_indices_], want, rtol=rtol, atol=rtol)


def test_device_rank_truncation_and_fit_transform(ops, monkeypatch, rng):
    X = rng.random((40, 3))
    monkeypatch.setattr(_cuda, "STAGING_BYTES", 6 * 12 * 8)
    host = _nystroem("cpu", 12, rank=4).fit_transform(X)
    got = _nystroem("cuda", 12, rank=4).fit_transform(X)
    assert got.shape == (40, 4)
    if ops is not None:
        assert len(ops.products) == 7  # ceil(40 / 6)
    # eigenvectors are defined up to sign: compare the Gram approximations
    np.testing.assert_allclose(got @ got.T, host @ host.T, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,params", [("laplacian", {"gamma": 0.3}), ("chi2", {"gamma": 0.5})])
def test_device_features_of_other_kernels(ops, name, params, rng):
    X = rng.random((30, 4))
    cpu = sparsekit.Nystroem(
        name, n_components=9, random_state=1, kernel_params={**params, "backend": "cpu"}
    ).fit(X)
    gpu = sparsekit.Nystroem(
        name, n_components=9, random_state=1, kernel_params={**params, "backend": "cuda"}
    ).fit(X)
    np.testing.assert_allclose(gpu.transform(X), cpu.transform(X), rtol=1e-10, atol=1e-12)


def test_host_path_when_not_on_the_device(monkeypatch, rng):
    calls = []
    monkeypatch.setattr(_nystrom_cuda, "device_ops", lambda: calls.append(1) or SimOps())
    X = rng.random((20, 3))
    _nystroem("cpu", 5).fit_transform(X)  # the CPU was asked for
    sparsekit.Nystroem("linear", n_components=5, random_state=0).fit_transform(X)  # no CUDA path
    assert calls == []
    assert (
        _nystrom_cuda.device_features(_nystroem("cpu", 5).fit(X).kernel_, X[:5], np.eye(5), [[1.0]])
        is None
    )


def test_without_cupy_the_host_path_gives_the_same_features(monkeypatch, rng):
    monkeypatch.setattr(_nystrom_cuda, "device_ops", lambda: None)
    X = rng.random((30, 4))
    np.testing.assert_allclose(
        _nystroem("cuda", 8).fit_transform(X),
        _nystroem("cpu", 8).fit_transform(X),
        rtol=1e-10,
        atol=1e-12,
    )


def test_auto_uses_the_device_only_from_the_threshold(monkeypatch, rng):
    from sparsekit.kernels import base

    sim = SimOps()
    monkeypatch.setattr(_nystrom_cuda, "device_ops", lambda: sim)
    monkeypatch.setattr(base, "_CUDA_USABLE", True)  # as on a machine with a device
    monkeypatch.setattr(base, "AUTO_CUDA_MIN_ENTRIES", 30 * 6)
    X = rng.random((30, 3))
    small = _nystroem("auto", 5).fit(X)
    small.transform(X)  # 30 x 5 Gram: host
    assert sim.products == [] and sim.eighs == 0
    big = _nystroem("auto", 6).fit(X)
    Z = big.transform(X)  # 30 x 6: device (K_S, 36 entries, stays on the host)
    assert len(sim.products) == 1 and sim.eighs == 0
    np.testing.assert_allclose(Z, _nystroem("cpu", 6).fit_transform(X), rtol=1e-10)


def test_cupy_that_cannot_run_is_reported_once(monkeypatch):
    broken = types.ModuleType("cupy")
    broken.cuda = types.SimpleNamespace(
        Stream=lambda **kw: (_ for _ in ()).throw(
            RuntimeError("CUDA driver version is insufficient")
        )
    )
    monkeypatch.setitem(sys.modules, "cupy", broken)
    monkeypatch.setattr(config, "ENABLE_CUDASIM", False)
    monkeypatch.setattr(_nystrom_cuda, "_state", {"ops": None, "checked": False})
    with pytest.warns(RuntimeWarning, match="driver version"):
        assert _nystrom_cuda.device_ops() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _nystrom_cuda.device_ops() is None  # remembered: no second warning


def test_cupy_that_fails_to_import_is_reported(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def failing_import(name, *args, **kwargs):
        if name == "cupy":
            raise AttributeError("module 'numpy' has no attribute 'row_stack'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", failing_import)
    monkeypatch.setattr(config, "ENABLE_CUDASIM", False)
    monkeypatch.setattr(_nystrom_cuda, "_state", {"ops": None, "checked": False})
    with pytest.warns(RuntimeWarning, match="CuPy is installed but cannot run"):
        assert _nystrom_cuda.device_ops() is None


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


def test_a_kernel_without_a_cuda_implementation_stays_on_the_host(sim_ops, X150):
    ny = Nystroem(_HostOnlyRBF(), n_components=10, random_state=0).fit(X150)
    Z = ny.transform(X150)
    assert sim_ops.products == [] and sim_ops.eighs == 0
    S = ny.component_indices_
    K_XS = rbf_kernel(X150, X150[S], gamma=0.5)
    expected = K_XS @ np.linalg.pinv(K_XS[S], hermitian=True) @ K_XS.T
    np.testing.assert_allclose(Z @ Z.T, expected, atol=1e-8)


def test_device_path_refuses_kernel_parameters_made_invalid_after_fit(sim_ops, X150):
    kw = {"n_components": 6, "random_state": 0}
    gpu = Nystroem("rbf", kernel_params={"gamma": 0.2, "backend": "cuda"}, **kw).fit(X150)
    host = Nystroem("rbf", kernel_params={"gamma": 0.2, "backend": "cpu"}, **kw).fit(X150)
    for ny in (host, gpu):
        ny.kernel_.gamma = -1.0
        with pytest.raises(ValueError, match="gamma"):
            ny.transform(X150)
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
