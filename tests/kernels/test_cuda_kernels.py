"""CUDA Gram kernels against the CPU ones (Numba's simulator unless a GPU is used)."""
import numpy as np
import pytest

import sparsekit
from sparsekit.kernels.base import cuda_usable, resolve_backend


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("name,params", [("rbf", {"gamma": 0.3}), ("laplacian", {}),
                                         ("chi2", {"gamma": 0.5}), ("additive-chi2", {})])
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
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12 if dtype == np.float64 else 1e-6)


def test_auto_never_picks_the_simulator():
    from numba import config

    if config.ENABLE_CUDASIM:
        assert not cuda_usable()
        assert resolve_backend("auto", True, "rbf") == "cpu"
    assert resolve_backend("auto", False, "linear") == "cpu"
