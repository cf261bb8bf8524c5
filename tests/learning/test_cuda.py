"""The GPU passes of the Nyström learners (``backend="cuda"``), in Numba's CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``): products against NumPy on the explicit Gram matrix, fits against
the CPU fits, the data sent to the device once, and the refusal without a device."""

import numpy as np
import pytest
from numba import config

import sparsekit
from sparsekit import NystromLogisticRegression, NystromRidge

pytestmark = pytest.mark.skipif(
    not config.ENABLE_CUDASIM, reason="runs in Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
)

GAMMA = 0.4


def _rbf(X, L):
    """exp(−γ‖x − l‖²) in float64 with NumPy."""
    X, L = np.asarray(X, dtype=np.float64), np.asarray(L, dtype=np.float64)
    return np.exp(-GAMMA * ((X[:, None, :] - L[None, :, :]) ** 2).sum(axis=2))


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_device_passes_equal_numpy_products(dtype, rtol, monkeypatch):
    """Oracle: K_nm = exp(−γ‖x − l‖²) formed with NumPy in float64, then K V, Kᵀ U and
    Kᵀ (D ∘ K V); several chunks of rows (a small staging size), each summed by several
    threads per entry of Kᵀ U; float32 data to float32 rounding."""
    from sparsekit.kernels import _cuda
    from sparsekit.learning import _passes_cuda
    from sparsekit.learning._passes import kernel_passes
    from sparsekit.learning._passes_cuda import DevicePasses

    n, m = 37, 6
    monkeypatch.setattr(_cuda, "STAGING_BYTES", 8 * m * np.dtype(dtype).itemsize)  # 8 rows
    monkeypatch.setattr(_passes_cuda, "_ROWS", 3)  # K_nmᵀ U: row groups of 3, 3 and 2
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3)).astype(dtype)
    L = X[[1, 5, 8, 13, 21, 34]]
    kernel = sparsekit.get_kernel("rbf", gamma=GAMMA, backend="cuda").fit(X)
    passes = kernel_passes(kernel, kernel.prepare(X), kernel.prepare(L))
    assert isinstance(passes, DevicePasses) and passes._chunk == 8
    K = _rbf(X, L)
    V, U, D = rng.normal(size=(m, 2)), rng.normal(size=(n, 2)), rng.uniform(size=(n, 2))
    scale = np.abs(K) @ np.abs(V)  # the size of the terms, for a relative tolerance
    np.testing.assert_allclose(passes.times(V), K @ V, atol=rtol * scale.max())
    np.testing.assert_allclose(
        passes.adjoint(U), K.T @ U, atol=rtol * (np.abs(K.T) @ np.abs(U)).max()
    )
    want = K.T @ (D * (K @ V))
    np.testing.assert_allclose(passes.gram(V, D), want, atol=rtol * (K.T @ (D * scale)).max())
    np.testing.assert_allclose(passes.gram(V), K.T @ (K @ V), atol=rtol * (K.T @ scale).max())


def _data(n=48, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=n), (X[:, 0] * X[:, 1] > 0).astype(int)


@pytest.mark.parametrize(
    "make",
    [
        lambda backend: NystromRidge(
            n_components=6,
            alpha=1e-3,
            tol=1e-10,
            kernel_params={"gamma": GAMMA, "backend": backend},
            random_state=0,
        ),
        lambda backend: NystromLogisticRegression(
            n_components=6,
            alpha=1e-3,
            kernel_params={"gamma": GAMMA, "backend": backend},
            random_state=0,
        ),
    ],
    ids=["ridge", "logistic"],
)
def test_fit_on_the_device_equals_the_cpu_fit(make):
    """Oracle: the same estimator with ``backend="cpu"`` (host passes, host Gram blocks):
    same landmarks, coefficients and predictions to float64 rounding."""
    X, y_reg, y_cls = _data()
    y = y_reg if isinstance(make("cpu"), NystromRidge) else y_cls
    cpu, gpu = make("cpu").fit(X, y), make("cuda").fit(X, y)
    np.testing.assert_array_equal(gpu.component_indices_, cpu.component_indices_)
    np.testing.assert_allclose(gpu.dual_coef_, cpu.dual_coef_, rtol=1e-8, atol=1e-10)
    out = "decision_function" if hasattr(cpu, "decision_function") else "predict"
    np.testing.assert_allclose(getattr(gpu, out)(X), getattr(cpu, out)(X), rtol=1e-8, atol=1e-10)


def test_the_data_goes_to_the_device_once_per_fit(monkeypatch):
    """Oracle: a count of the rows of X (arrays of d columns) that ``cuda.to_device`` sends
    during a fit of many passes: the n rows once and the m landmarks' rows for K_mm, where
    sending each block of rows at each pass would send n rows per pass."""
    from numba import cuda

    sent = []
    to_device = cuda.to_device

    def counting(a, *args, **kwargs):
        if np.ndim(a) == 2 and np.shape(a)[1] == 2:
            sent.append(np.shape(a)[0])
        return to_device(a, *args, **kwargs)

    monkeypatch.setattr(cuda, "to_device", counting)
    X, y, _ = _data()
    model = NystromRidge(
        n_components=6,
        alpha=1e-3,
        tol=1e-10,
        kernel_params={"gamma": GAMMA, "backend": "cuda"},
        random_state=0,
    )
    model.fit(X, y)
    assert model.n_iter_ >= 3
    assert sum(sent) <= len(X) + 6, sent


def test_backend_cuda_without_a_device_names_the_fix(monkeypatch):
    """Asking for the GPU on a machine without one: a ValueError naming backend='cpu' /
    'auto' and the simulator, before any work."""
    from numba import cuda

    monkeypatch.setattr(config, "ENABLE_CUDASIM", False)
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    X, y, _ = _data()
    model = NystromRidge(n_components=6, kernel_params={"gamma": GAMMA, "backend": "cuda"})
    with pytest.raises(ValueError, match="backend='cuda' but no CUDA device.*'cpu'"):
        model.fit(X, y)
