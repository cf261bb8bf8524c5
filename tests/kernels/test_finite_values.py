"""No silent NaN or inf: kernels at the edges of the floating range.

Where the true value of a kernel is a finite float, the kernel returns it (rescaling or
reordering its arithmetic as needed); where it is not, it warns instead of returning inf
silently.
"""
import numpy as np
import pytest
from sklearn.metrics import pairwise as skp

import sparsekit

F32_MAX = float(np.finfo(np.float32).max)
F64_MAX = float(np.finfo(np.float64).max)


def _histograms_near_max(rng, n, d, top, dtype):
    """Non-negative data whose first column lies in [0.6, 1] * top, so x + z overflows there
    while every chi2 term, and each row's sum of terms, stays well inside the range."""
    X = rng.random((n, d))
    X[:, 0] = rng.uniform(0.6, 1.0, n) * top
    X[rng.random((n, d)) < 0.2] = 0.0
    return X.astype(dtype)


# (dtype, the largest float of the dtype)
NEAR_MAX = [(np.float32, F32_MAX), (np.float64, F64_MAX)]


# Numba's CUDA simulator computes with NumPy scalars, which warn where x + z overflows
@pytest.mark.filterwarnings("ignore:overflow encountered in scalar add:RuntimeWarning")
@pytest.mark.parametrize("backend", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype,top", NEAR_MAX)
def test_chi2_near_the_largest_float_equals_the_exact_sums(dtype, top, backend, rng):
    # x + z overflows in the first column; the terms (x - z)^2 / (x + z) do not
    X = _histograms_near_max(rng, 12, 5, top, dtype)
    Y = _histograms_near_max(rng, 7, 5, top, dtype)
    X64, Y64 = X.astype(np.float64), Y.astype(np.float64)
    if dtype == np.float32:  # float64 holds every float32 sum and square: the oracle is exact
        want = skp.additive_chi2_kernel(X64, Y64)
    else:  # float64 overflows here: the oracle on the data times 2^-600 (the sums scale alike;
        # the terms of the ordinary columns, ~1e-181 there, are negligible beside ~1e307)
        want = np.ldexp(skp.additive_chi2_kernel(np.ldexp(X64, -600), np.ldexp(Y64, -600)), 600)
    assert np.isfinite(want).all() and np.abs(want).max() > top / 100
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    got = sparsekit.get_kernel("additive-chi2", backend=backend)(X, Y)
    np.testing.assert_allclose(got, want, rtol=rtol)
    gamma = 1.0 / top  # keeps gamma * S_ij of order one
    got = sparsekit.get_kernel("chi2", gamma=gamma, backend=backend)(X, Y)
    np.testing.assert_allclose(got, np.exp(gamma * want), rtol=rtol)
    assert (got > 0.01).any()


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype,scale", [(np.float32, 1e-30), (np.float32, 1e20),
                                         (np.float64, 1e-250), (np.float64, 1e200)])
def test_chi2_of_small_and_large_data_equals_scikit_learn_in_float64(dtype, scale, backend, rng):
    # (x - z)^2 underflows (small data) or overflows (large data) though the term does not
    X = (rng.random((9, 4)) * scale).astype(dtype)
    Y = (rng.random((6, 4)) * scale).astype(dtype)
    X[0, 1] = Y[2, 1] = 0.0
    X64, Y64 = X.astype(np.float64) / scale, Y.astype(np.float64) / scale  # exact oracle
    want = scale * skp.additive_chi2_kernel(X64, Y64)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    got = sparsekit.get_kernel("additive-chi2", backend=backend)(X, Y)
    np.testing.assert_allclose(got, want, rtol=rtol)
    got = sparsekit.get_kernel("chi2", gamma=1.0 / scale, backend=backend)(X, Y)
    np.testing.assert_allclose(got, skp.chi2_kernel(X64, Y64), rtol=rtol)
