"""No silent NaN or inf: kernels at the edges of the floating range.

Where the true value of a kernel is a finite float, the kernel returns it (rescaling or
reordering its arithmetic as needed); where it is not, it warns instead of returning inf
silently.
"""

import re
import warnings

import numpy as np
import pytest
from sklearn.metrics import pairwise as skp

import sparsekit
from sparsekit.kernels import AdditiveChi2Kernel
from sparsekit.kernels.bandwidth import gamma_from_rule

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
@pytest.mark.parametrize(
    "dtype,scale",
    [(np.float32, 1e-30), (np.float32, 1e20), (np.float64, 1e-250), (np.float64, 1e200)],
)
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


# -- RBF bandwidth rules at any scale of the data ------------------------------------------
RULE_SCALES = [
    (np.float64, 1e-300),
    (np.float64, 1e300),
    (np.float64, 1e-310),
    (np.float32, 1e-38),
    (np.float32, 1e-42),
]


def _scaled(X, scale, dtype):
    """``X * scale`` in ``dtype`` and the same points brought back to order one exactly (by a
    power of two): subnormal data keep only a few digits of X, so the oracle starts from them."""
    Xs = (X * scale).astype(dtype)
    e = int(np.frexp(np.abs(Xs.astype(np.float64)).max())[1])
    return Xs, np.ldexp(Xs.astype(np.float64), -e)


@pytest.mark.parametrize("rule", ["median", "mean-sq-dist", "scale"])
@pytest.mark.parametrize("dtype,scale", RULE_SCALES)
def test_rbf_bandwidth_rules_give_the_gram_of_the_unscaled_data(rule, dtype, scale, rng):
    # every rule is scale-equivariant, so exp(-gamma ||x - z||^2) does not depend on the scale;
    # at 1e-300 gamma itself (~1e600) is no float64, at 1e-38 no float32
    Z, Z1 = _scaled(rng.normal(size=(49, 5)), scale, dtype)
    X, X1, Y, Y1 = Z[:40], Z1[:40], Z[40:], Z1[40:]
    g1 = gamma_from_rule(X1, rule)
    rtol = 1e-10 if dtype == np.float64 else 1e-5
    atol = 1e-12 if dtype == np.float64 else 1e-6
    fitted = sparsekit.get_kernel("rbf", bandwidth=rule).fit(X)
    unfitted = sparsekit.get_kernel("rbf", bandwidth=rule)
    for got in (
        fitted(X),
        unfitted(X),
        fitted(X, max_memory=7 * 40 * 8),
        sparsekit.get_kernel("rbf", bandwidth=rule, backend="cuda").fit(X)(X),
    ):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, skp.rbf_kernel(X1, gamma=g1), rtol=rtol, atol=atol)
    np.testing.assert_allclose(fitted(Y, X), skp.rbf_kernel(Y1, X1, gamma=g1), rtol=rtol, atol=atol)
    np.testing.assert_allclose(
        unfitted(Y, X), skp.rbf_kernel(Y1, X1, gamma=g1), rtol=rtol, atol=atol
    )


@pytest.mark.parametrize("scale", [1e-300, 1e300])
def test_rbf_rule_on_sparse_data_far_from_one(scale, rng):
    import scipy.sparse as sp

    X = rng.normal(size=(30, 6))
    X[rng.random(X.shape) < 0.5] = 0.0
    g1 = gamma_from_rule(X, "median")
    got = sparsekit.get_kernel("rbf", bandwidth="median")(sp.csr_matrix(X * scale))
    np.testing.assert_allclose(got, skp.rbf_kernel(X, gamma=g1), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("scale", [1e-300, 1e300])
def test_gamma_out_of_the_float64_range_is_refused_with_the_data_scale(scale, rng):
    X = rng.normal(size=(20, 3)) * scale
    k = sparsekit.get_kernel("rbf", bandwidth="median").fit(X)
    assert k.gamma_ in (np.inf, 0.0)  # no float64 holds it; the kernel keeps it exactly
    if scale > 1:
        match = r"gamma ~ 1e-60\d for data at scale 1e\+300 .*outside the float64 range.*rescale"
    else:
        match = r"gamma ~ 1e\+59\d for data at scale 1e-300 .*outside the float64 range.*rescale"
    with pytest.raises(ValueError, match=match):
        k.effective_gamma(3)
    with pytest.raises(ValueError, match=match):
        gamma_from_rule(X, "median")


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
@pytest.mark.parametrize(
    "dtype,scale", [(np.float64, 1e-200), (np.float64, 1e200), (np.float32, 1e-30)]
)
def test_rbf_sigma_whose_square_is_no_float_gives_the_gram_of_the_unscaled_data(
    dtype, scale, backend, rng
):
    """sigma = 1e200 is a float, sigma^2 is not (and gamma = 1 / (2 sigma^2) ~ 1e-400 is no
    float64): the kernel of data and sigma scaled by one factor is that of the unscaled data,
    k = exp(-||x - z||^2 / (2 sigma^2)). Oracle: scikit-learn's ``rbf_kernel`` of the unscaled
    data with gamma = 1 / (2 sigma^2); ``effective_gamma`` refuses, naming sigma."""
    X, Y = (
        (rng.normal(size=(9, 3)) * scale).astype(dtype),
        (rng.normal(size=(5, 3)) * scale).astype(dtype),
    )
    X1, Y1 = X.astype(np.float64) / scale, Y.astype(np.float64) / scale
    k = sparsekit.get_kernel("rbf", sigma=1.5 * scale, backend=backend)
    rtol = 1e-5 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(k(X, Y), skp.rbf_kernel(X1, Y1, gamma=1 / 4.5), rtol=rtol)
    np.testing.assert_allclose(k(X), skp.rbf_kernel(X1, gamma=1 / 4.5), rtol=rtol, atol=1e-30)
    if dtype == np.float64:
        with pytest.raises(ValueError, match=r"sigma=1.5e[+-]200 gives gamma .* outside"):
            k.effective_gamma(3)


@pytest.mark.parametrize("swap", [False, True])
def test_rbf_rescaling_takes_the_scale_of_x_and_y_together(swap, rng):
    """Rows near 1 against rows near 1e200 (sigma 1.5e200): the squared distances, ~1e400,
    are computed on both inputs scaled down by the power of two of the larger one. Oracle:
    scikit-learn's ``rbf_kernel`` of the data divided by 1e200, gamma = 1 / (2 * 1.5^2)."""
    X, Y = rng.normal(size=(6, 3)), rng.normal(size=(5, 3)) * 1e200
    if swap:
        X, Y = Y, X
    want = skp.rbf_kernel(X / 1e200, Y / 1e200, gamma=1 / 4.5)
    got = _no_warning(sparsekit.get_kernel("rbf", sigma=1.5e200), X, Y)
    np.testing.assert_allclose(got, want, rtol=1e-10)


@pytest.mark.filterwarnings("ignore:.*overflow encountered in scalar multiply:RuntimeWarning")
@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_rbf_gamma_beyond_the_float32_range_gives_the_limits_not_nan(backend, rng):
    # gamma = 1e50 is a float64 but no float32: k = 1 at distance 0 and 0 elsewhere (between
    # X and Y, rounding in the CPU's GEMM form leaves x_i and itself a tiny distance apart)
    X = rng.normal(size=(12, 3)).astype(np.float32)
    k = sparsekit.get_kernel("rbf", gamma=1e50, backend=backend)
    np.testing.assert_array_equal(k(X), np.eye(12, dtype=np.float32))
    K = k(X, X[:5])
    assert np.isin(K, [0.0, 1.0]).all()
    np.testing.assert_array_equal(K * (1 - np.eye(12, 5)), 0.0)


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
@pytest.mark.parametrize(
    "name,skfun", [("laplacian", skp.laplacian_kernel), ("chi2", skp.chi2_kernel)]
)
def test_gamma_beyond_the_float32_range_gives_the_float64_values_not_nan(name, skfun, backend):
    """gamma = 1e40 is a float64 but no float32 (largest 3.4e38): rounded to float32 it is
    inf, and inf * 0 made k(x, x) NaN where exp(-gamma * 0) = 1. Distances of subnormal
    float32 size (1e-40) put gamma * distance near 1, so the values are not only the limits 0
    and 1. Oracle: scikit-learn's kernel in float64 on the same float32 values (for one
    feature with a zero, the chi2 distance is the other value, as the L1 distance)."""
    X = np.array([[0.0], [1e-40], [3e-40], [1.0]], dtype=np.float32)
    want = skfun(X.astype(np.float64), gamma=1e40)
    assert 0.1 < want[0, 1] < 0.9  # not a limit
    k = sparsekit.get_kernel(name, gamma=1e40, backend=backend)
    for args in ((X,), (X, X[:3])):
        got = _no_warning(k, *args)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want[:, : got.shape[1]], rtol=1e-4, atol=0)


@pytest.mark.parametrize(
    "dtype,scale", [(np.float64, 1e-300), (np.float64, 1e300), (np.float32, 1e-38)]
)
def test_nystroem_with_a_median_bandwidth_fits_data_far_from_one(dtype, scale, rng):
    X, X1 = _scaled(rng.normal(size=(60, 5)), scale, dtype)
    params = dict(
        kernel="rbf", kernel_params={"bandwidth": "median"}, n_components=20, random_state=0
    )
    got = sparsekit.Nystroem(**params).fit(X).transform(X)
    want = sparsekit.Nystroem(**params).fit(X1).transform(X1)
    assert got.dtype == dtype
    np.testing.assert_allclose(
        got,
        want,
        rtol=1e-4 if dtype == np.float32 else 1e-8,
        atol=1e-5 if dtype == np.float32 else 1e-10,
    )


# -- values beyond the range: a warning, never a silent inf ---------------------------------
def _no_warning(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return f(*args)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(
    "name,params,scale",
    [
        ("linear", {}, 1e200),
        ("linear", {}, 1e300),
        ("polynomial", {}, 1e300),
        ("polynomial", {"degree": 2, "coef0": 0.0}, 1e160),
    ],
)
def test_values_beyond_the_range_warn_naming_kernel_and_scale(name, params, scale, sparse, rng):
    import scipy.sparse as sp

    X = rng.normal(size=(10, 4))
    Xs = X * scale
    k = sparsekit.get_kernel(name, **params)
    data = sp.csr_matrix(Xs) if sparse else Xs
    match = rf"{name} kernel values exceed the float64 range .* data at scale " + re.escape(
        f"{np.abs(Xs).max():.3g}"
    )
    with pytest.warns(RuntimeWarning, match=match):
        K = k(data)
    assert np.isinf(K).any()
    with pytest.warns(RuntimeWarning, match=match):
        k.diag(data)
    # ordinary data: no warning, and the values of scikit-learn
    want = (skp.linear_kernel if name == "linear" else skp.polynomial_kernel)(X, **params)
    np.testing.assert_allclose(_no_warning(k, sp.csr_matrix(X) if sparse else X), want, rtol=1e-10)


@pytest.mark.parametrize("sparse", [False, True])
def test_polynomial_products_that_overflow_on_the_way_are_exact(sparse, rng):
    # gamma <x, z> is ~1e100 though <x, z> (~1e400) is no float64
    import scipy.sparse as sp

    X, Y = rng.normal(size=(10, 4)), rng.normal(size=(6, 4))
    k = sparsekit.get_kernel("polynomial", gamma=1e-300, degree=2, coef0=0.0)
    A, B = X * 1e200, Y * 1e200
    if sparse:
        A, B = sp.csr_matrix(A), sp.csr_matrix(B)
    want = skp.polynomial_kernel(X, Y, gamma=1e100, degree=2, coef0=0.0)
    np.testing.assert_allclose(_no_warning(k, A, B), want, rtol=1e-12)
    np.testing.assert_allclose(
        _no_warning(k.diag, A),
        np.diag(skp.polynomial_kernel(X, gamma=1e100, degree=2, coef0=0.0)),
        rtol=1e-12,
    )
    lin = sparsekit.get_kernel("linear")
    np.testing.assert_allclose(
        _no_warning(lin, A / 1e120, B / 1e120),  # <x, z> ~ 1e160
        skp.linear_kernel(X, Y) * 1e160,
        rtol=1e-12,
    )


# Numba's CUDA simulator computes with NumPy scalars, which warn where x + z overflows
@pytest.mark.filterwarnings("ignore:overflow encountered in scalar add:RuntimeWarning")
@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_additive_chi2_sums_beyond_the_range_warn(backend, rng):
    X = (rng.uniform(0.6, 1.0, (8, 6)) * F32_MAX).astype(np.float32)
    Y = (rng.uniform(0.0, 0.1, (5, 6)) * F32_MAX).astype(np.float32)
    with pytest.warns(RuntimeWarning, match=r"additive-chi2 kernel values exceed the float32"):
        K = sparsekit.get_kernel("additive-chi2", backend=backend)(X, Y)
    assert np.isneginf(K).any()
    # the exponential kernel's limit, 0, is its true value
    K = sparsekit.get_kernel("chi2", backend=backend)(X, Y)
    np.testing.assert_array_equal(K, 0.0)


def test_polynomial_products_that_underflow_on_the_way_are_exact(rng):
    # float32 data at 1e-30: <x, z> ~ 1e-60 is no float32, gamma <x, z> ~ 1e-10 is
    X = (rng.normal(size=(10, 4)) * 1e-30).astype(np.float32)
    X64 = X.astype(np.float64)
    k = sparsekit.get_kernel("polynomial", gamma=1e50, degree=2, coef0=0.0)
    want = skp.polynomial_kernel(X64, gamma=1e50, degree=2, coef0=0.0)
    np.testing.assert_allclose(_no_warning(k, X), want, rtol=1e-5)
    np.testing.assert_allclose(_no_warning(k.diag, X), np.diag(want), rtol=1e-5)


# -- products of rows at different scales -------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("swap", [False, True])
def test_products_of_tiny_and_huge_rows_are_exact(swap, sparse, rng):
    """x ~ 1e-200 and z ~ 1e300: <x, z> ~ 1e100 needs no rescaling, though x (or z) alone at
    its scale would under- (over-)flow when rescaled by the other's scale. Oracle: the
    products of the unscaled data times 1e100 (scikit-learn's ``linear_kernel`` and
    ``polynomial_kernel``); the inputs are left unchanged."""
    import scipy.sparse as sp

    X, Y = rng.normal(size=(6, 4)), rng.normal(size=(5, 4))
    A, B = X * 1e-200, Y * 1e300
    if swap:
        X, Y, A, B = Y, X, B, A
    if sparse:
        A, B = sp.csr_matrix(A), sp.csr_matrix(B)
    kept = [a.copy() for a in (A, B)]
    np.testing.assert_allclose(
        _no_warning(sparsekit.get_kernel("linear"), A, B),
        skp.linear_kernel(X, Y) * 1e100,
        rtol=1e-12,
    )
    k = sparsekit.get_kernel("polynomial", gamma=1e-100, degree=2, coef0=0.5)
    want = skp.polynomial_kernel(X, Y, gamma=1.0, degree=2, coef0=0.5)
    np.testing.assert_allclose(_no_warning(k, A, B), want, rtol=1e-12)
    for a, b in zip((A, B), kept):
        np.testing.assert_array_equal(a.toarray() if sparse else a, b.toarray() if sparse else b)


@pytest.mark.parametrize("sparse", [False, True])
def test_rescaling_leaves_the_callers_data_unchanged(sparse, rng):
    """The kernels rescale data at 1e200 by powers of two before their products: on copies,
    never on the caller's arrays. Oracle: copies taken before the calls."""
    import scipy.sparse as sp

    X, Y = rng.normal(size=(6, 3)) * 1e200, rng.normal(size=(4, 3)) * 1e200
    A, B = (sp.csr_matrix(X), sp.csr_matrix(Y)) if sparse else (X, Y)
    with np.errstate(over="ignore"):
        for name in ("linear", "polynomial", "rbf"):
            k = sparsekit.get_kernel(name)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                k(A, B)
                k(A)
                k.diag(A)
    np.testing.assert_array_equal(A.toarray() if sparse else A, X)
    np.testing.assert_array_equal(B.toarray() if sparse else B, Y)


def test_polynomial_sum_of_products_that_overflows_only_over_the_features():
    """1000 features at 1e153: each product x_k z_k = 1e306 is a float but their sum 1e309 is
    not, while gamma <x, z> + coef0 (gamma = 1 / 1000, the default) is 1e306. Oracle: the
    closed form gamma d s^2 + 1 = s^2 + 1 (degree 1) for constant rows s."""
    s = 1e153
    X = np.full((2, 1000), s)
    X[1] *= 0.5
    got = _no_warning(sparsekit.get_kernel("polynomial", degree=1), X)
    want = np.array([[1.0, 0.5], [0.5, 0.25]]) * s * s + 1.0
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("k", [-1080, 1014])
def test_linear_diag_at_the_ends_of_the_range_is_correctly_rounded(k, rng):
    """x = Z 2^(k/2) with small integers Z: ||x||^2 = (sum Z^2) 2^k exactly. At k = -1080 it
    is subnormal, and each square alone, below the smallest subnormal, would round on its own;
    at k = 1014 the squares lie above max float / (4 d), so the norms are computed on the data
    scaled down by a power of two and scaled back by its square. Oracle: ``np.ldexp`` of the
    exact integer sum (one correct rounding)."""
    Z = rng.integers(1, 8, size=(5, 10)).astype(np.float64)
    Z[:, 0] = 7.0
    X = np.ldexp(Z, k // 2)
    want = np.ldexp((Z * Z).sum(axis=1), k)
    assert np.isfinite(want).all() and (want > 0).all()
    np.testing.assert_array_equal(_no_warning(sparsekit.get_kernel("linear").diag, X), want)


@pytest.mark.filterwarnings("ignore:overflow encountered in scalar add:RuntimeWarning")
@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_additive_chi2_sums_beyond_the_range_from_y_warn(backend):
    """The scale that decides the check of the result is that of X and Y together: X = 0 and
    z at 0.6 max float32 in 4 features give sums 2.4 max (-inf), with a warning, as with the
    roles of X and Y swapped. Oracle: the closed form -sum z (x = 0)."""
    X = np.zeros((2, 4), dtype=np.float32)
    Y = np.full((3, 4), 0.6 * F32_MAX, dtype=np.float32)
    k = sparsekit.get_kernel("additive-chi2", backend=backend)
    with pytest.warns(RuntimeWarning, match=r"additive-chi2 kernel values exceed the float32"):
        K = k(X, Y)
    np.testing.assert_array_equal(K, -np.inf)


def test_polynomial_of_a_high_degree_beyond_float32_warns():
    """gamma <x, z> + coef0 = 101 is a float32, its 50th power (1e100) is not: inf, with the
    warning. Oracle: the closed form 101^50 > max float32."""
    X = np.full((2, 4), 5.0, dtype=np.float32)
    k = sparsekit.get_kernel("polynomial", degree=50, gamma=1.0, coef0=1.0)
    with pytest.warns(RuntimeWarning, match=r"polynomial kernel values exceed the float32"):
        K = k(X)
    assert np.isposinf(K).all()
    with pytest.warns(RuntimeWarning, match=r"polynomial kernel values exceed the float32"):
        k.diag(X)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_data_of_one_sign_far_from_one_is_rescaled_by_its_largest_magnitude(sign, rng):
    """All entries negative (or all positive) at 1e200: the scale that decides the rescaling
    is max |x|, whichever the sign. Oracle: scikit-learn's ``polynomial_kernel`` and
    ``rbf_kernel`` of the data divided by 1e200 (gamma multiplied by 1e400 to match)."""
    Z = sign * rng.uniform(0.5, 2.0, size=(7, 3))
    X = Z * 1e200
    poly = sparsekit.get_kernel("polynomial", gamma=1e-300, degree=2, coef0=0.0)
    want = skp.polynomial_kernel(Z, gamma=1e100, degree=2, coef0=0.0)
    np.testing.assert_allclose(_no_warning(poly, X), want, rtol=1e-12)
    np.testing.assert_allclose(_no_warning(poly.diag, X), np.diag(want), rtol=1e-12)
    rbf = sparsekit.get_kernel("rbf", sigma=1e200)
    np.testing.assert_allclose(
        _no_warning(rbf, X, X[:4]), skp.rbf_kernel(Z, Z[:4], gamma=0.5), rtol=1e-10
    )


@pytest.mark.parametrize("backend,sparse", [("cpu", False), ("cpu", True), ("cuda", False)])
@pytest.mark.parametrize("dtype,k", [(np.float64, 1022), (np.float32, 126)])
def test_laplacian_distances_beyond_the_largest_float_with_a_small_gamma(
    dtype, k, backend, sparse, rng
):
    """x = Z 2^k with the largest |x| near max float: ||x - z||_1 (up to 2 d max|x|) is no
    float, gamma ||x - z||_1 with gamma = 0.3 2^-k is of order one. Oracle: scikit-learn's
    ``laplacian_kernel`` of Z with gamma = 0.3 (scaling by 2^k is exact)."""
    import scipy.sparse as sp

    Z = rng.uniform(-1.9, 1.9, size=(8, 3))
    Z[rng.random(Z.shape) < 0.3] = 0.0
    X = np.ldexp(Z, k).astype(dtype)
    with np.errstate(over="ignore"):
        assert np.isinf(np.abs(X[:, None, :] - X[None, :, :]).sum(-1, dtype=dtype)).any()
    gamma = float(np.ldexp(0.3, -k))
    kern = sparsekit.get_kernel("laplacian", gamma=gamma, backend=backend)
    A = sp.csr_matrix(X) if sparse else X
    want = skp.laplacian_kernel(Z, gamma=0.3)
    rtol = 1e-5 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(_no_warning(kern, A), want, rtol=rtol)
    np.testing.assert_allclose(_no_warning(kern, A, A[:5]), want[:, :5], rtol=rtol)


# -- the data scale in errors; additive chi2 at the top of the range -----------------------
@pytest.mark.parametrize("amax,decade", [(9e299, "1e\\+299"), (9e-301, "1e-301")])
def test_gamma_out_of_range_names_the_decade_of_the_largest_value(amax, decade):
    # the message names 10^s with 10^s <= max|x| < 10^(s+1) (here floor(log10 max|x|))
    X = np.array([[amax, 0.0], [0.0, -amax / 3], [amax / 2, amax / 5]])
    with pytest.raises(ValueError, match=f"for data at scale {decade} "):
        gamma_from_rule(X, "median")


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
@pytest.mark.parametrize("d", [10, 18, 20])
def test_additive_chi2_sum_rounded_past_the_range_is_never_a_silent_inf(d, backend):
    # x = (s, ..., s), z = 0 with d s = max float32 exactly: the true entry -d s is finite, but
    # a float32 sum of d terms s rounds past the largest float; then the call must warn
    top = float(np.finfo(np.float32).max)
    s = np.float32(top / d)
    if d * float(s) != top:
        s = np.nextafter(s, np.float32(np.inf)) if d * float(s) < top else np.nextafter(s, 0)
    assert d * float(s) == top  # exact: a 24-bit float32 times a small integer
    X = np.full((1, d), s, dtype=np.float32)
    Y = np.zeros((1, d), dtype=np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        K = AdditiveChi2Kernel(backend=backend)(X, Y)
    warned = any("additive-chi2 kernel values exceed" in str(w.message) for w in caught)
    assert K[0, 0] == np.float32(-top) or (K[0, 0] == -np.inf and warned)
