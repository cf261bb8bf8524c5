"""CUDA Gram kernels against the CPU ones (Numba's simulator unless a GPU is used)."""

import numpy as np
import pytest
from sklearn.metrics import pairwise as skp

import sparsekit
from sparsekit.kernels import RBFKernel, base
from sparsekit.kernels.bandwidth import gamma_from_rule
from sparsekit.kernels.base import cuda_usable, resolve_backend


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize(
    "name,params",
    [("rbf", {"gamma": 0.3}), ("laplacian", {}), ("chi2", {"gamma": 0.5}), ("additive-chi2", {})],
)
def test_cuda_equals_cpu(name, params, dtype, rtol, rng):
    X = rng.random((9, 4)).astype(dtype)
    X[0, 1] = 0.0
    Y = rng.random((6, 4)).astype(dtype)
    Y[2, 1] = 0.0
    cpu = sparsekit.get_kernel(name, backend="cpu", **params)
    gpu = sparsekit.get_kernel(name, backend="cuda", **params)
    for args in ((X, Y), (X,)):
        want = cpu(*args)
        got = gpu(*args)
        assert got.dtype == dtype
        np.testing.assert_allclose(
            got, want, rtol=rtol, atol=1e-12 if dtype == np.float64 else 1e-6
        )


def test_auto_never_picks_the_simulator():
    from numba import config

    if config.ENABLE_CUDASIM:
        assert not cuda_usable()
        assert resolve_backend("auto", True, "rbf") == "cpu"
    assert resolve_backend("auto", False, "linear") == "cpu"


@pytest.mark.parametrize(
    "name,params", [("rbf", {"gamma": 0.3}), ("laplacian", {}), ("chi2", {"gamma": 0.5})]
)
@pytest.mark.parametrize("max_memory", [1, 3 * 6 * 8, None])
def test_cuda_row_blocks_equal_cpu(name, params, max_memory, rng):
    # blocks of 1 row, of a few rows (3 against Y, the last one shorter; 1 when Y = X) and one
    # block; Y stays on the device
    X = rng.random((10, 5))
    Y = rng.random((6, 5))
    cpu = sparsekit.get_kernel(name, backend="cpu", **params)
    gpu = sparsekit.get_kernel(name, backend="cuda", **params)
    for args in ((X, Y), (X,)):
        want = cpu(*args)
        np.testing.assert_allclose(gpu(*args, max_memory=max_memory), want, rtol=1e-12, atol=1e-14)
        rows = [(r.start, r.stop) for r, _ in gpu.blocks(*args, max_memory=max_memory)]
        streamed = np.vstack([b for _, b in gpu.blocks(*args, max_memory=max_memory)])
        np.testing.assert_allclose(streamed, want, rtol=1e-12, atol=1e-14)
        assert rows[0][0] == 0 and rows[-1][1] == len(X)
        if max_memory == 1:
            assert len(rows) == len(X)


def test_chunks_respect_the_grid_limit_and_the_staging_size():
    from sparsekit.kernels import _cuda

    # few columns, many rows: one launch may not exceed 65,535 blocks of 8 rows
    assert _cuda.chunk_rows(10**6, 4, 3, 8) == _cuda.MAX_GRID_ROWS == 65535 * 8
    # wide input rows bound the chunk too (device memory independent of n)
    assert _cuda.chunk_rows(10**6, 100, 2000, 8) == _cuda.STAGING_BYTES // (2000 * 8)
    assert _cuda.chunk_rows(10**6, 5000, 10, 8) == _cuda.STAGING_BYTES // (5000 * 8)
    assert _cuda.chunk_rows(7, 5000, 10, 8) == 7
    assert _cuda.chunk_rows(10, 10**9, 10, 8) == 1


def test_cuda_chunks_capped_by_the_grid_limit_equal_cpu(monkeypatch, rng):
    from sparsekit.kernels import _cuda

    monkeypatch.setattr(_cuda, "MAX_GRID_ROWS", 3)
    X, Y = rng.random((8, 2)), rng.random((5, 2))
    for name in ("rbf", "laplacian"):
        want = sparsekit.get_kernel(name, backend="cpu")(X, Y)
        got = sparsekit.get_kernel(name, backend="cuda")(X, Y)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_cuda_chunks_through_a_small_staging_buffer(monkeypatch, rng):
    from sparsekit.kernels import _cuda

    monkeypatch.setattr(_cuda, "STAGING_BYTES", 2 * 6 * 8)  # two output rows per chunk
    X, Y = rng.random((7, 4)), rng.random((6, 4))
    gpu = sparsekit.get_kernel("rbf", gamma=0.7, backend="cuda")
    np.testing.assert_allclose(
        gpu(X, Y), sparsekit.get_kernel("rbf", gamma=0.7, backend="cpu")(X, Y), rtol=1e-12
    )
    np.testing.assert_array_equal(np.diag(gpu(X)), np.ones(7))


def test_cuda_concurrent_calls_share_the_staging_buffer_safely(rng):
    from concurrent.futures import ThreadPoolExecutor

    data = [rng.random((5 + i, 3)) for i in range(4)]
    cpu = sparsekit.get_kernel("laplacian", gamma=0.4, backend="cpu")
    gpu = sparsekit.get_kernel("laplacian", gamma=0.4, backend="cuda")
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(gpu, data))
    for X, K in zip(data, results):
        np.testing.assert_allclose(K, cpu(X), rtol=1e-12)


def test_auto_falls_back_to_cpu_when_numba_cannot_use_the_device(monkeypatch):
    # a device is reported but kernels cannot be compiled (e.g. numba-cuda built for another
    # NumPy): "auto" must use the CPU and say why, not fail at the first Gram matrix
    from numba import config, cuda

    from sparsekit.kernels import _cuda

    def broken_probe():
        raise AttributeError("module 'numpy' has no attribute 'row_stack'")

    monkeypatch.setattr(config, "ENABLE_CUDASIM", False)
    monkeypatch.setattr(cuda, "is_available", lambda: True, raising=False)
    monkeypatch.setattr(base, "_cuda_driver_loadable", lambda: True)
    monkeypatch.setattr(_cuda, "probe", broken_probe)
    monkeypatch.setattr(base, "_CUDA_USABLE", None)
    with pytest.warns(RuntimeWarning, match="row_stack"):
        assert not base.cuda_usable()
    assert base.resolve_backend("auto", True, "rbf") == "cpu"
    monkeypatch.setattr(base, "_CUDA_USABLE", None)
    monkeypatch.setattr(_cuda, "probe", lambda: None)
    assert base.cuda_usable()  # and a working probe makes the device usable


def test_probe_runs_on_the_device_or_simulator():
    from sparsekit.kernels import _cuda

    _cuda.probe()


def test_auto_keeps_small_grams_on_the_cpu(monkeypatch, rng):
    from sparsekit.kernels import _cuda

    calls = []
    real = _cuda.DeviceGram

    class Spy(real):
        def __init__(self, *args):
            calls.append(args[1].shape)
            super().__init__(*args)

    monkeypatch.setattr(base, "_CUDA_USABLE", True)  # as on a machine with a device
    monkeypatch.setattr(base, "AUTO_CUDA_MIN_ENTRIES", 40)
    monkeypatch.setattr(_cuda, "DeviceGram", Spy)
    k = sparsekit.get_kernel("rbf", gamma=0.5)  # backend "auto"
    small, big = rng.random((6, 3)), rng.random((8, 3))
    k(small)  # 36 entries: CPU
    assert calls == []
    K = k(big)  # 64 entries: GPU (the simulator here)
    assert calls == [(8, 3)]
    np.testing.assert_allclose(
        K, sparsekit.get_kernel("rbf", gamma=0.5, backend="cpu")(big), rtol=1e-12
    )
    assert base.resolve_backend("auto", True, "rbf", entries=39) == "cpu"
    assert base.resolve_backend("cuda", True, "rbf", entries=1) == "cuda"  # explicit wins


# shapes larger than one thread block (32 columns x 8 rows) in both directions and not
# multiples of it: the last block of each grid dimension is partly outside the output
SK_KERNELS = {
    "rbf": ("rbf_kernel", {"gamma": 0.3}),
    "laplacian": ("laplacian_kernel", {"gamma": 0.4}),
    "chi2": ("chi2_kernel", {"gamma": 0.5}),
    "additive-chi2": ("additive_chi2_kernel", {}),
}


@pytest.mark.parametrize("name", sorted(SK_KERNELS))
def test_cuda_grid_of_several_blocks_equals_scikit_learn(name, rng):
    from sparsekit.kernels import _cuda

    assert _cuda._THREADS == (32, 8)  # the shapes below are chosen for this block
    skname, params = SK_KERNELS[name]
    X = rng.random((11, 3))  # 2 blocks of 8 rows
    Y = rng.random((37, 3))  # 2 blocks of 32 columns
    X[0, 1] = Y[3, 2] = 0.0
    want = getattr(skp, skname)(X, Y, **params)
    got = sparsekit.get_kernel(name, backend="cuda", **params)(X, Y)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_cuda_square_gram_of_several_blocks_equals_scikit_learn(dtype, rtol, rng):
    X = rng.normal(size=(35, 3)).astype(dtype)  # 2 x 5 blocks, Y = X
    got = sparsekit.get_kernel("rbf", gamma=0.25, backend="cuda")(X)
    assert got.dtype == dtype
    np.testing.assert_allclose(
        got, skp.rbf_kernel(X.astype(np.float64), gamma=0.25), rtol=rtol, atol=rtol * 1e-2
    )
    np.testing.assert_array_equal(np.diag(got), np.ones(35, dtype=dtype))


def test_auto_sends_a_gram_of_exactly_the_threshold_to_the_gpu(monkeypatch):
    """``AUTO_CUDA_MIN_ENTRIES`` is the first size that goes to the device ("from this many
    entries on"): one entry fewer stays on the CPU, a kernel without a CUDA path always does,
    and an explicit "cpu" wins. Oracle: the documented rule."""

    monkeypatch.setattr(base, "_CUDA_USABLE", True)  # as on a machine with a device
    t = base.AUTO_CUDA_MIN_ENTRIES
    assert resolve_backend("auto", True, "rbf", entries=t) == "cuda"
    assert resolve_backend("auto", True, "rbf", entries=t - 1) == "cpu"
    assert resolve_backend("auto", False, "linear", entries=t) == "cpu"
    assert resolve_backend("cpu", True, "rbf", entries=t) == "cpu"


def test_the_staging_buffer_grows_for_a_larger_block(monkeypatch, rng):
    """The page-locked staging buffer is allocated for the first block and must grow when a
    later call needs more. Oracle: the CPU kernel on the same data."""
    from sparsekit.kernels import _cuda

    monkeypatch.setattr(_cuda, "_staging", None)
    X, Y = rng.random((12, 3)), rng.random((9, 3))
    cpu = sparsekit.get_kernel("laplacian", gamma=0.4, backend="cpu")
    gpu = sparsekit.get_kernel("laplacian", gamma=0.4, backend="cuda")
    for n, m in ((2, 3), (12, 9)):
        np.testing.assert_allclose(gpu(X[:n], Y[:m]), cpu(X[:n], Y[:m]), rtol=1e-12)


@pytest.mark.parametrize("scale", [1e-300, 1e300])
def test_rbf_rule_on_the_cuda_backend_at_extreme_scales_equals_scikit_learn(scale, rng):
    # the rule's gamma is no float64 at these scales; the kernel falls back to the CPU's exact
    # rescaled evaluation instead of exponentiating 0 * inf on the device
    X = rng.normal(size=(15, 4))
    want = skp.rbf_kernel(X, gamma=gamma_from_rule(X, "median"))
    got = RBFKernel(bandwidth="median", backend="cuda")(X * scale)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
