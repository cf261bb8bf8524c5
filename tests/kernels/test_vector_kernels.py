"""Vector kernels: parity with scikit-learn, properties, block-wise evaluation (default block and
tile sizes), user functions as kernels, bad input."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.metrics import pairwise as skp

import sparsekit
from sparsekit.kernels import (
    AdditiveChi2Kernel,
    Chi2Kernel,
    LaplacianKernel,
    LinearKernel,
    PolynomialKernel,
    RBFKernel,
    base,
)
from sparsekit.kernels.bandwidth import gamma_from_rule
from sparsekit.kernels.base import CallableKernel

RTOL = {np.float64: 1e-10, np.float32: 1e-5}

# (sparsekit name, params, scikit-learn function, sklearn kwargs, needs non-negative data)
CASES = [
    ("linear", {}, skp.linear_kernel, {}, False),
    ("polynomial", {}, skp.polynomial_kernel, {}, False),
    (
        "polynomial",
        {"degree": 2, "gamma": 0.3, "coef0": -0.5},
        skp.polynomial_kernel,
        {"degree": 2, "gamma": 0.3, "coef0": -0.5},
        False,
    ),
    ("rbf", {}, skp.rbf_kernel, {}, False),
    ("rbf", {"gamma": 0.7}, skp.rbf_kernel, {"gamma": 0.7}, False),
    ("gaussian", {"sigma": 2.0}, skp.rbf_kernel, {"gamma": 1 / 8.0}, False),
    ("laplacian", {}, skp.laplacian_kernel, {}, False),
    ("laplacian", {"gamma": 0.05}, skp.laplacian_kernel, {"gamma": 0.05}, False),
    ("additive-chi2", {}, skp.additive_chi2_kernel, {}, True),
    ("chi2", {}, skp.chi2_kernel, {}, True),
    ("chi2", {"gamma": 0.2}, skp.chi2_kernel, {"gamma": 0.2}, True),
]


def _data(rng, n, d, nonneg, dtype):
    X = rng.random((n, d)) if nonneg else rng.normal(size=(n, d))
    if nonneg:  # exact zeros exercise the 0/0 terms of chi2
        X[rng.random((n, d)) < 0.2] = 0.0
    return X.astype(dtype)


@pytest.mark.parametrize("name,params,skfun,skkw,nonneg", CASES)
def test_parity_with_scikit_learn(name, params, skfun, skkw, nonneg, dtype, rng):
    X = _data(rng, 37, 11, nonneg, dtype)
    Y = _data(rng, 23, 11, nonneg, dtype)
    k = sparsekit.get_kernel(name, **params)
    for args in ((X, Y), (X,)):
        got = k(*args)
        want = skfun(*args, **skkw)
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=0)


@pytest.mark.parametrize("name", ["rbf", "laplacian", "chi2", "additive-chi2", "polynomial"])
def test_blockwise_equals_one_shot_and_blocks_cover_rows(name, rng):
    X = np.abs(rng.normal(size=(101, 9)))
    Y = np.abs(rng.normal(size=(45, 9)))
    k = sparsekit.get_kernel(name)
    full = k(X, Y)
    tiny = k(X, Y, max_memory=3 * 45 * 8)  # three rows per block
    np.testing.assert_allclose(full, tiny, rtol=1e-13)
    rows = []
    for sl, block in k.blocks(X, Y, max_memory=7 * 45 * 8):
        assert block.shape[0] <= 7
        np.testing.assert_allclose(block, full[sl], rtol=1e-13)
        rows.extend(range(sl.start, sl.stop))
    assert rows == list(range(101))
    out = np.empty_like(full)
    assert k(X, Y, out=out) is out
    np.testing.assert_array_equal(out, full)


@pytest.mark.parametrize(
    "name", ["rbf", "laplacian", "chi2", "additive-chi2", "linear", "polynomial"]
)
def test_diag_matches_gram_diagonal(name, rng):
    X = rng.random((30, 5))
    k = sparsekit.get_kernel(name)
    np.testing.assert_allclose(k.diag(X), np.diag(k(X)), rtol=1e-12, atol=1e-14)
    assert k.diag(X.astype(np.float32)).dtype == np.float32


def test_mixed_dtypes_upcast_to_float64(rng):
    X = rng.random((5, 3)).astype(np.float32)
    Y = rng.random((4, 3))
    K = RBFKernel()(X, Y)
    assert K.dtype == np.float64
    # the float32 values of X, exactly, in a float64 computation
    np.testing.assert_allclose(K, skp.rbf_kernel(X.astype(np.float64), Y), rtol=1e-12)


def test_integer_input_becomes_float64():
    X = np.arange(12).reshape(4, 3)
    K = RBFKernel(gamma=0.01)(X)
    assert K.dtype == np.float64
    np.testing.assert_allclose(K, skp.rbf_kernel(X.astype(float), gamma=0.01), rtol=1e-12)


# ---------------------------------------------------------------- properties (hypothesis)
finite = st.floats(-5, 5, allow_nan=False, allow_infinity=False, width=64)
positive = st.floats(0, 5, allow_nan=False, allow_infinity=False, width=64)
shapes = st.tuples(st.integers(1, 12), st.integers(1, 6))


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    name=st.sampled_from(["rbf", "laplacian", "chi2", "polynomial", "linear"]),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_symmetric_psd_and_dtype_kept(data, name, dtype):
    nonneg = name == "chi2"
    shape = data.draw(shapes)
    X = data.draw(arrays(np.float64, shape, elements=positive if nonneg else finite)).astype(dtype)
    k = sparsekit.get_kernel(name)
    K = k(X)
    assert K.dtype == dtype and K.shape == (shape[0], shape[0])
    tol = 1e-4 if dtype == np.float32 else 1e-9
    scale = max(1.0, float(np.abs(K).max()))
    np.testing.assert_allclose(K, K.T, rtol=0, atol=tol * scale)
    eig = np.linalg.eigvalsh(K.astype(np.float64))
    assert eig.min() >= -tol * scale * shape[0]


@settings(max_examples=30, deadline=None)
@given(
    data=st.data(),
    name=st.sampled_from(["rbf", "laplacian", "chi2", "additive-chi2"]),
    cap_rows=st.integers(1, 13),
)
def test_blockwise_equals_one_shot_property(data, name, cap_rows):
    n, m, d = (
        data.draw(st.integers(1, 25)),
        data.draw(st.integers(1, 9)),
        data.draw(st.integers(1, 5)),
    )
    X = data.draw(arrays(np.float64, (n, d), elements=positive))
    Y = data.draw(arrays(np.float64, (m, d), elements=positive))
    k = sparsekit.get_kernel(name)
    # BLAS may round a one-row product (gemv) differently from a block (gemm): equal to 1e-13
    np.testing.assert_allclose(
        k(X, Y, max_memory=cap_rows * m * 8), k(X, Y), rtol=1e-13, atol=1e-300
    )


# ---------------------------------------------------------------- bandwidth rules
def test_mean_sq_dist_rule_matches_double_sum(rng):
    X = rng.normal(size=(60, 4))
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    sigma2 = D2.mean()
    assert gamma_from_rule(X, "mean-sq-dist") == pytest.approx(1 / (2 * sigma2), rel=1e-12)
    k = RBFKernel(bandwidth="mean-sq-dist").fit(X)
    np.testing.assert_allclose(k(X), np.exp(-D2 / (2 * sigma2)), rtol=1e-10)


def test_median_rule_and_scale_rule(rng):
    X = rng.normal(size=(50, 3))
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    med = np.median(D[np.triu_indices(50, 1)])
    assert RBFKernel(bandwidth="median").fit(X).gamma_ == pytest.approx(1 / (2 * med**2), rel=1e-10)
    assert RBFKernel(bandwidth="scale").fit(X).gamma_ == pytest.approx(1 / (3 * X.var()), rel=1e-12)


def test_median_rule_subsamples_large_inputs_deterministically(rng):
    X = rng.normal(size=(3000, 2))
    g1 = gamma_from_rule(X, "median", max_samples=500)
    g2 = gamma_from_rule(X, "median", max_samples=500)
    # the distance of two 2-D standard normals is Rayleigh(sqrt 2): median sqrt(2) * sqrt(2 ln 2)
    want = 1 / (2 * 2 * 2 * np.log(2))
    assert g1 == g2 and abs(g1 - want) < 0.1 * want


def test_unfitted_rule_uses_the_call_data_and_stores_nothing(rng):
    X = rng.normal(size=(20, 3))
    k = RBFKernel(bandwidth="scale")
    K = k(X)
    assert k.gamma_ is None
    np.testing.assert_allclose(K, skp.rbf_kernel(X, gamma=1 / (3 * X.var())), rtol=1e-10)


# ---------------------------------------------------------------- bad input
BAD_X = [
    (np.array([[1.0, np.nan]]), ValueError, "X contains NaN"),
    (np.array([[1.0, np.inf]]), ValueError, "X contains inf"),
    (np.ones(4), ValueError, "X must be 2-D"),
    (np.ones((2, 2, 2)), ValueError, "X must be 2-D"),
    (np.ones((0, 3)), ValueError, "X is empty"),
    (np.ones((3, 0)), ValueError, "X is empty"),
    (np.array([[1 + 1j]]), TypeError, "complex"),
    (np.array([["a"]], dtype=object), TypeError, "dtype object"),
]


@pytest.mark.parametrize("X,exc,msg", BAD_X)
@pytest.mark.parametrize("name", ["rbf", "chi2", "linear"])
def test_bad_arrays(name, X, exc, msg):
    with pytest.raises(exc, match=msg):
        sparsekit.get_kernel(name)(X)


def test_bad_y_is_named():
    with pytest.raises(ValueError, match="Y contains NaN"):
        RBFKernel()(np.ones((2, 2)), np.array([[np.nan, 1.0]]))


def test_feature_count_mismatch():
    with pytest.raises(ValueError, match="X has 3 features but Y has 2"):
        LaplacianKernel()(np.ones((2, 3)), np.ones((2, 2)))


@pytest.mark.parametrize("cls", [Chi2Kernel, AdditiveChi2Kernel])
def test_chi2_rejects_negative(cls):
    with pytest.raises(ValueError, match="negative values"):
        cls()(np.array([[0.5, -0.1]]))
    with pytest.raises(ValueError, match="negative values"):
        cls().diag(np.array([[0.5, -0.1]]))


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"gamma": 0}, "gamma must be > 0"),
        ({"gamma": -1.0}, "gamma must be > 0"),
        ({"sigma": 0.0}, "sigma must be > 0"),
        ({"sigma": -2}, "sigma must be > 0"),
        ({"gamma": float("nan")}, "gamma must be finite"),
        ({"bandwidth": "silverman"}, "unknown bandwidth 'silverman'"),
        ({"gamma": 1.0, "sigma": 1.0}, "only one of gamma, sigma, bandwidth"),
        ({"gamma": "1"}, "gamma must be a real number"),
    ],
)
def test_rbf_bad_parameters(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        RBFKernel(**kwargs)


def test_other_bad_parameters():
    with pytest.raises(ValueError, match="gamma must be > 0"):
        LaplacianKernel(gamma=0)
    with pytest.raises(ValueError, match="gamma must be > 0"):
        Chi2Kernel(gamma=-1)
    with pytest.raises(ValueError, match="degree must be >= 0"):
        PolynomialKernel(degree=-1)
    with pytest.raises(TypeError, match="degree must be an integer"):
        PolynomialKernel(degree=2.5)


def test_bad_backend_and_out():
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        RBFKernel(backend="gpu")(np.ones((2, 2)))
    with pytest.raises(ValueError, match="no CUDA implementation"):
        LinearKernel(backend="cuda")(np.ones((2, 2)))
    with pytest.raises(ValueError, match="out must be a C-contiguous float64 array of shape"):
        RBFKernel()(np.ones((2, 2)), out=np.empty((3, 2)))


def test_bandwidth_rule_degenerate_data():
    with pytest.raises(ValueError, match="non-zero variance"):
        RBFKernel(bandwidth="scale").fit(np.ones((4, 2)))
    with pytest.raises(ValueError, match="two distinct points"):
        RBFKernel(bandwidth="mean-sq-dist").fit(np.ones((4, 2)))


def test_unknown_kernel_name_suggests():
    with pytest.raises(ValueError, match="Did you mean 'laplacian'"):
        sparsekit.get_kernel("laplacain")


def test_get_set_params_round_trip():
    k = RBFKernel(gamma=0.5)
    assert k.get_params()["gamma"] == 0.5
    k.set_params(gamma=2.0)
    assert k(np.zeros((1, 1)), np.ones((1, 1)))[0, 0] == pytest.approx(np.exp(-2.0))
    with pytest.raises(ValueError, match="invalid parameter 'gama'"):
        k.set_params(gama=1)


@pytest.mark.parametrize("offset", [100.0, 1000.0])
def test_rbf_float32_accurate_far_from_origin(offset, rng):
    """Centring keeps the float32 GEMM form accurate when the data sit far from the origin."""
    X = (offset + rng.normal(size=(200, 10))).astype(np.float32)
    Y = (offset + rng.normal(size=(50, 10))).astype(np.float32)
    exact = skp.rbf_kernel(X.astype(np.float64), Y.astype(np.float64), gamma=0.1)
    np.testing.assert_allclose(RBFKernel(gamma=0.1)(X, Y), exact, rtol=1e-5)
    np.testing.assert_allclose(skp.rbf_kernel(X, Y, gamma=0.1), exact, rtol=1e-5)  # the anchor too
    np.testing.assert_allclose(
        RBFKernel(gamma=0.1)(X), skp.rbf_kernel(X.astype(np.float64), gamma=0.1), rtol=1e-5
    )


@pytest.mark.parametrize(
    "name,bad,match",
    [
        ("rbf", {"gamma": -1.0}, "gamma must be > 0"),
        ("rbf", {"gamma": 1.0, "bandwidth": "median"}, "only one of gamma, sigma, bandwidth"),
        ("laplacian", {"gamma": 0.0}, "gamma must be > 0"),
        ("chi2", {"gamma": -2.0}, "gamma must be > 0"),
        ("polynomial", {"degree": -1}, "degree must be >= 0"),
        ("linear", {"backend": "tpu"}, "unknown backend 'tpu'"),
    ],
)
def test_set_params_and_direct_assignment_are_validated(name, bad, match):
    k = sparsekit.get_kernel(name)
    with pytest.raises(ValueError, match=match):
        k.set_params(**bad)
    k2 = sparsekit.get_kernel(name)
    for key, value in bad.items():
        setattr(k2, key, value)
    with pytest.raises(ValueError, match=match):
        k2(np.ones((2, 2)))


def test_set_params_resets_the_fitted_bandwidth(rng):
    X = rng.normal(size=(40, 3))
    k = RBFKernel(bandwidth="scale").fit(X)
    k.set_params(bandwidth="median")
    assert k.gamma_ is None
    k.fit(X)
    assert k.gamma_ == pytest.approx(gamma_from_rule(X, "median"))


def test_rbf_gram_of_x_in_row_blocks_equals_scikit_learn_with_an_exact_diagonal(rng):
    # Y = None in blocks of 13 rows (the last one shorter): every block puts the exact
    # k(x_i, x_i) = 1 on its own part of the diagonal; without that fix-up, rounding in
    # ||x||^2 + ||x||^2 - 2 <x, x> leaves some diagonal entries just below 1
    X = rng.normal(size=(101, 7))
    k = RBFKernel(gamma=0.5)
    K = k(X, max_memory=13 * 101 * 8)
    np.testing.assert_allclose(K, skp.rbf_kernel(X, gamma=0.5), rtol=1e-10, atol=1e-300)
    np.testing.assert_array_equal(np.diag(K), np.ones(101))
    np.testing.assert_array_equal(K, K.T)
    streamed = list(k.blocks(X, max_memory=13 * 101 * 8))
    assert len(streamed) == 8
    np.testing.assert_array_equal(np.vstack([b for _, b in streamed]), K)
    K32 = k(X.astype(np.float32), max_memory=13 * 101 * 4)
    np.testing.assert_array_equal(np.diag(K32), np.ones(101, dtype=np.float32))


def test_threaded_exp_branch_equals_scikit_learn(rng):
    # >= 2 * EXP_ENTRIES_PER_THREAD entries: the exponentials are spread over a pool of threads
    from sparsekit._runtime.threads import thread_limit
    from sparsekit.kernels import _cpu

    X, Y = rng.normal(size=(409, 5)), rng.normal(size=(401, 5))  # > 2 * 65,536 entries
    assert X.shape[0] * Y.shape[0] >= 2 * _cpu.EXP_ENTRIES_PER_THREAD
    with thread_limit(2):
        K = RBFKernel(gamma=0.2)(X, Y)
        A = rng.normal(size=(433, 311))
        B = A.copy()
        _cpu.exp_inplace(B)
    np.testing.assert_allclose(K, skp.rbf_kernel(X, Y, gamma=0.2), rtol=1e-10, atol=0)
    np.testing.assert_array_equal(B, np.exp(A))


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 2e-5)])
def test_rbf_gram_of_x_from_one_triangle_equals_scikit_learn(dtype, rtol, rng, monkeypatch):
    # the whole Gram of X with itself: the upper triangle in strips (product, distances, exp),
    # each copied below; 700 rows make several strips (the last one shorter) in both dtypes
    from sparsekit._runtime.threads import thread_limit
    from sparsekit.kernels import _sym_gram, rbf

    monkeypatch.setattr(rbf, "SYM_STRIPS_MIN_ROWS", 700)  # the strips from 700 rows on

    X = (rng.normal(size=(700, 9)) + 5.0).astype(dtype)
    assert _sym_gram.SYM_STRIP_ROWS < 700
    k = RBFKernel(gamma=0.3)
    with thread_limit(1):
        K1 = k(X)
    with thread_limit(2):
        K2 = k(X)
    assert K1.dtype == dtype and K1.flags.c_contiguous
    exact = skp.rbf_kernel(X.astype(np.float64), gamma=0.3)
    np.testing.assert_allclose(K1, exact, rtol=rtol, atol=1e-30)
    # fixed strips, each product on one BLAS thread: the same Gram whatever the threads
    np.testing.assert_array_equal(K1, K2)
    np.testing.assert_array_equal(K1, K1.T)
    np.testing.assert_array_equal(np.diag(K1), np.ones(700, dtype=dtype))
    assert K1.min() >= 0.0 and K1.max() <= 1.0


def test_rbf_gram_upper_with_small_strips_and_duplicate_rows(rng):
    # strips of 7 rows over 50 (the last one of 1 row); duplicated rows have distance 0, whose
    # rounding may go below 0 before the clip: their entries must be exactly 1 as in the oracle
    from sparsekit.kernels import _sym_gram

    X = rng.normal(size=(50, 4)) * 3.0
    X[10] = X[3]
    Xc = X - X.mean(axis=0)
    out = np.full((50, 50), np.nan)
    _sym_gram.rbf_gram_upper(Xc, np.einsum("ij,ij->i", Xc, Xc), -0.2, out, step=7)
    np.testing.assert_allclose(out, skp.rbf_kernel(X, gamma=0.2), rtol=1e-12, atol=1e-300)
    np.testing.assert_array_equal(out, out.T)
    assert out[3, 10] == 1.0


@pytest.mark.parametrize("name", ["rbf", "linear", "callable"])
@pytest.mark.parametrize("square", [True, False])
def test_a_gram_too_large_for_memory_is_refused_before_any_allocation(monkeypatch, name, square):
    """200,000 rows: the n x n float64 Gram is 298 GiB. The call raises the library's
    InsufficientMemoryError (a MemoryError) naming the size and the way out (blocks, Nystroem)
    before NumPy's allocator fails ("Unable to allocate 298 GiB"); oracle: the size
    n * m * 8 bytes, and the guard's 90 % rule against a fixed available memory."""
    from sparsekit._runtime import memory as _memory

    monkeypatch.setattr(_memory, "available_memory", lambda: 16 * 2**30)
    X = np.zeros((200_000, 2))
    Y = None if square else np.zeros((150_000, 2))
    kernel = (
        sparsekit.kernels.base.CallableKernel(skp.linear_kernel)
        if name == "callable"
        else sparsekit.components.resolve("kernel", name)
    )
    with pytest.raises(_memory.InsufficientMemoryError) as info:
        kernel(X, Y)
    message = str(info.value)
    assert isinstance(info.value, MemoryError)
    assert f"{200_000 * (200_000 if square else 150_000) * 8 / 2**30:.1f} GiB" in message
    assert "blocks(" in message and "Nystroem" in message
    # the same rows stream in blocks without the guard
    m = 200_000 if square else 150_000
    rows, block = next(kernel.blocks(X, Y, max_memory=2 * m * 8))
    assert (rows.start, rows.stop, block.shape) == (0, 2, (2, m))


def test_a_gram_above_half_the_memory_warns_and_out_skips_the_check(monkeypatch):
    """Between 50 % and 90 % of the available memory a LargeAllocationWarning (the memory
    module's rule); a caller-provided ``out`` allocates nothing, so nothing is checked.
    Oracle: the sizes 40 x 30 x 8 bytes against the patched available memory."""
    monkeypatch.setattr("sparsekit.kernels.base.GRAM_CHECK_MIN_BYTES", 0)
    from sparsekit._runtime import memory as _memory

    X, Y = np.ones((40, 2)), np.ones((30, 2))
    monkeypatch.setattr(_memory, "available_memory", lambda: int(40 * 30 * 8 / 0.7))
    with pytest.warns(_memory.LargeAllocationWarning, match="40 x 30"):
        RBFKernel()(X, Y)
    monkeypatch.setattr(_memory, "available_memory", lambda: 40 * 30 * 8 // 2)
    out = np.empty((40, 30))
    assert RBFKernel()(X, Y, out=out) is out
    np.testing.assert_allclose(out, 1.0)


def test_a_small_gram_does_not_read_the_available_memory(monkeypatch):
    """The guard's cost (reading /proc and cgroup files) is paid only from GRAM_CHECK_MIN_BYTES
    on: a small Gram never asks, a large one does (oracle: a patched available_memory that
    records its calls)."""
    from sparsekit._runtime import memory as _memory
    from sparsekit.kernels import base

    calls = []
    monkeypatch.setattr(_memory, "available_memory", lambda: calls.append(1) or None)
    X = np.ones((40, 2))
    RBFKernel()(X)
    assert calls == []
    monkeypatch.setattr(base, "GRAM_CHECK_MIN_BYTES", 40 * 40 * 8)
    RBFKernel()(X)
    assert calls == [1]


# ---------------------------------------------------------------- compute loops, block by block
SK = {
    "linear": (skp.linear_kernel, {}),
    "polynomial": (skp.polynomial_kernel, {"degree": 2, "gamma": 0.3, "coef0": -0.5}),
    "rbf": (skp.rbf_kernel, {"gamma": 0.7}),
    "laplacian": (skp.laplacian_kernel, {"gamma": 0.4}),
    "chi2": (skp.chi2_kernel, {"gamma": 0.2}),
    "additive-chi2": (skp.additive_chi2_kernel, {}),
}


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name", sorted(SK))
def test_every_entry_of_a_nan_filled_out_is_written_in_row_blocks(name, sparse, rng):
    """``out`` filled with NaN, 10 rows in blocks of 3 (the last block of 1 row), X against Y
    and X alone, dense and CSR rows: every entry is written, none is accumulated into what
    ``out`` held. Oracle: scikit-learn's kernel on the dense data."""
    skfun, params = SK[name]
    X = _data(rng, 10, 6, True, np.float64)
    Y = _data(rng, 7, 6, True, np.float64)
    if name in ("linear", "polynomial", "rbf", "laplacian"):
        X, Y = X - 0.4, Y - 0.4  # both signs
    k = sparsekit.get_kernel(name, **params)
    for args in ((X, Y), (X,)):
        m = args[-1].shape[0]
        out = np.full((10, m), np.nan)
        given = [sp.csr_matrix(a) for a in args] if sparse else args
        assert k(*given, out=out, max_memory=3 * m * 8) is out
        np.testing.assert_allclose(out, skfun(*args, **params), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-10), (np.float32, 2e-5)])
def test_rbf_dense_pass_in_several_row_blocks_with_a_short_last_one(dtype, rtol, rng, monkeypatch):
    """The dense RBF pass runs blocks of ``fill_block_rows`` rows (here 32, the fewest) of
    product, distances and exp; 101 rows make 3 full blocks and one of 5 rows. Oracle:
    scikit-learn's ``rbf_kernel`` in float64."""
    from sparsekit.kernels import rbf

    monkeypatch.setattr(rbf, "FILL_BLOCK_BYTES", 1)
    assert rbf.fill_block_rows(101, 40, 8) == 32
    X = rng.normal(size=(101, 5)).astype(dtype)
    Y = rng.normal(size=(40, 5)).astype(dtype)
    out = np.full((101, 40), np.nan, dtype=dtype)
    RBFKernel(gamma=0.3)(X, Y, out=out)
    want = skp.rbf_kernel(X.astype(np.float64), Y.astype(np.float64), gamma=0.3)
    np.testing.assert_allclose(out, want, rtol=rtol, atol=0)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name", ["rbf", "laplacian"])
def test_coinciding_rows_of_x_and_y_give_at_most_one(name, sparse, rng):
    """k = exp(-gamma dist) <= 1 as dist >= 0: the rounding of ||x||^2 + ||z||^2 - 2 <x, z>
    (and of the sparse L1 form ||x||_1 + ||z||_1 - shared terms) leaves coinciding rows a tiny
    negative distance unless it is clipped at 0. Oracle: the bound, and scikit-learn's kernel
    (exactly 1 at coinciding rows)."""
    Z = rng.normal(size=(60, 7)) * rng.uniform(1.0, 100.0, size=(60, 1))
    Z[rng.random(Z.shape) < 0.3] = 0.0
    X, Y = Z, Z[::-1].copy()  # Y given (not the X-with-itself path), every row coinciding once
    skfun = skp.rbf_kernel if name == "rbf" else skp.laplacian_kernel
    k = sparsekit.get_kernel(name, gamma=1e-3)
    for cast in (np.float64, np.float32):
        A, B = X.astype(cast), Y.astype(cast)
        K = k(sp.csr_matrix(A), sp.csr_matrix(B)) if sparse else k(A, B)
        assert K.max() <= 1.0
        want = skfun(A.astype(np.float64), B.astype(np.float64), gamma=1e-3)
        f32 = cast == np.float32  # float32 values below 1e-38 underflow to 0
        np.testing.assert_allclose(K, want, rtol=1e-3 if f32 else 1e-9, atol=1e-37 if f32 else 0)


def test_exp_of_a_large_block_on_one_thread(rng):
    """A block of >= 2 * EXP_ENTRIES_PER_THREAD entries under a limit of one thread takes the
    one-thread branch of ``exp_inplace``. Oracle: NumPy's exp, and scikit-learn's kernel."""
    from sparsekit._runtime.threads import thread_limit
    from sparsekit.kernels import _cpu

    A = rng.normal(size=(433, 311))
    B = A.copy()
    X, Y = rng.normal(size=(409, 5)), rng.normal(size=(401, 5))
    with thread_limit(1):
        _cpu.exp_inplace(B)
        K = LaplacianKernel(gamma=0.3)(X, Y)
    np.testing.assert_allclose(B, np.exp(A), rtol=1e-15, atol=0)
    np.testing.assert_allclose(K, skp.laplacian_kernel(X, Y, gamma=0.3), rtol=1e-10, atol=0)


def test_polynomial_diag_uses_degree_gamma_and_coef0(dtype, rng):
    """Oracle: the diagonal of scikit-learn's ``polynomial_kernel`` with the same parameters
    (none of them the defaults)."""
    X = rng.normal(size=(9, 4)).astype(dtype)
    params = {"degree": 2, "gamma": 0.3, "coef0": -0.5}
    k = PolynomialKernel(**params)
    d = k.diag(X)
    assert d.dtype == dtype
    want = np.diag(skp.polynomial_kernel(X.astype(np.float64), **params))
    np.testing.assert_allclose(d, want, rtol=RTOL[dtype], atol=1e-6)


def test_sparse_rows_of_a_kernel_without_a_sparse_formula_in_row_blocks(monkeypatch, rng):
    """chi2 densifies tiles of sparse rows; in row blocks of 4 (the last of 3) with tiles of 3
    rows, each tile goes to its place inside its block. Oracle: scikit-learn's chi2 kernels."""

    monkeypatch.setattr(base, "SPARSE_TILE_BYTES", 3 * 6 * 8)
    X = _data(rng, 11, 6, True, np.float64)
    Y = _data(rng, 8, 6, True, np.float64)
    for name, skfun in (("chi2", skp.chi2_kernel), ("additive-chi2", skp.additive_chi2_kernel)):
        k = sparsekit.get_kernel(name)
        got = k(sp.csr_matrix(X), sp.csr_matrix(Y), max_memory=4 * 8 * 8)
        np.testing.assert_allclose(got, skfun(X, Y), rtol=1e-12, atol=1e-14)
        streamed = [
            b for _, b in k.blocks(sp.csr_matrix(X), sp.csr_matrix(Y), max_memory=4 * 8 * 8)
        ]
        assert [len(b) for b in streamed] == [4, 4, 3]
        np.testing.assert_allclose(np.vstack(streamed), skfun(X, Y), rtol=1e-12, atol=1e-14)


def test_out_of_another_dtype_or_layout_is_refused():
    """``out`` must be exactly what the call would allocate (dtype and C order): a float32 or
    Fortran-ordered ``out`` for float64 data is refused, not written through a cast."""
    X = np.ones((3, 2))
    for out in (np.empty((3, 3), dtype=np.float32), np.empty((3, 3), order="F")):
        with pytest.raises(ValueError, match="out must be a C-contiguous float64 array"):
            RBFKernel()(X, out=out)


# ---------------------------------------- default blocks and tiles, streamed blocks, diagonals
def _median_gamma(Y):
    """gamma = 1 / (2 median^2), the median over distinct pairs of rows (brute force)."""
    n = len(Y)
    dists = [np.linalg.norm(Y[i] - Y[j]) for i in range(n) for j in range(i + 1, n)]
    return 1.0 / (2.0 * np.median(dists) ** 2)


@pytest.mark.parametrize("name", ["rbf", "laplacian", "linear", "chi2"])
def test_default_blocks_of_a_small_gram_are_one_block(name, rng):
    # the default block holds 256 MiB of output: a 50 x 40 Gram comes as a single block
    X = rng.random((50, 6))
    Y = rng.random((40, 6))
    k = sparsekit.get_kernel(name)
    blocks = list(k.blocks(X, Y))
    assert len(blocks) == 1
    rows, block = blocks[0]
    assert (rows.start, rows.stop) == (0, 50)
    np.testing.assert_allclose(block, k(X, Y), rtol=1e-12)


def _spy_fill(monkeypatch, kernel_cls):
    calls = []
    real = kernel_cls._fill

    def spy(self, Xb, Y, ctx, out, row0, same):
        calls.append((Xb.shape[0], Y.shape[0]))
        return real(self, Xb, Y, ctx, out, row0, same)

    monkeypatch.setattr(kernel_cls, "_fill", spy)
    return calls


def test_sparse_rows_without_a_sparse_formula_fit_one_tile_when_small(monkeypatch, rng):
    # chi2 densifies tiles of at most 32 MiB: 30 x 20 and 25 x 20 float64 rows are one tile each
    X = rng.random((30, 20))
    Y = rng.random((25, 20))
    X[X < 0.5] = 0.0
    Y[Y < 0.5] = 0.0
    calls = _spy_fill(monkeypatch, Chi2Kernel)
    got = Chi2Kernel(gamma=0.3)(sp.csr_matrix(X), sp.csr_matrix(Y))
    assert calls == [(30, 25)]
    np.testing.assert_allclose(got, skp.chi2_kernel(X, Y, gamma=0.3), rtol=1e-12)


def test_sparse_tiles_respect_the_tile_budget(monkeypatch, rng):
    # with a budget of 3 rows of 8 features, no densified tile of X or Y holds more than 3 rows
    X = rng.random((11, 8))
    Y = rng.random((7, 8))
    X[X < 0.4] = 0.0
    Y[Y < 0.4] = 0.0
    monkeypatch.setattr(base, "SPARSE_TILE_BYTES", 3 * 8 * 8)
    calls = _spy_fill(monkeypatch, Chi2Kernel)
    got = Chi2Kernel()(sp.csr_matrix(X), sp.csr_matrix(Y))
    assert calls and max(a for a, _ in calls) == 3 and max(b for _, b in calls) == 3
    assert sum(a * b for a, b in calls) == 11 * 7  # every entry computed once
    np.testing.assert_allclose(got, skp.chi2_kernel(X, Y), rtol=1e-12)


def test_streamed_blocks_of_an_unfitted_rule_take_gamma_from_y(rng):
    # an unfitted bandwidth rule takes gamma from the reference points Y, in blocks as in calls
    X = rng.normal(size=(9, 3))
    Y = 3.0 * rng.normal(size=(8, 3))
    want = skp.rbf_kernel(X, Y, gamma=_median_gamma(Y))
    k = RBFKernel(bandwidth="median")
    streamed = np.vstack([b for _, b in k.blocks(X, Y, max_memory=4 * 8 * 8)])
    np.testing.assert_allclose(streamed, want, rtol=1e-10)
    np.testing.assert_allclose(k(X, Y), want, rtol=1e-10)
    assert k.gamma_ is None


@pytest.mark.parametrize("cls", [RBFKernel, LaplacianKernel, Chi2Kernel])
def test_diag_keeps_float32(cls, rng):
    X = rng.random((6, 4)).astype(np.float32)
    d = cls().diag(X)
    assert d.dtype == np.float32
    np.testing.assert_array_equal(d, np.ones(6, dtype=np.float32))


@pytest.mark.parametrize(
    "name,skfun",
    [
        ("laplacian", skp.laplacian_kernel),
        ("rbf", skp.rbf_kernel),
        ("linear", skp.linear_kernel),
        ("polynomial", skp.polynomial_kernel),
    ],
)
def test_kernels_with_a_sparse_formula_equal_scikit_learn_on_csr_rows(name, skfun, rng):
    # rows of different L1 norms, so that every entry depends on both of its rows' norms
    X = rng.normal(size=(13, 7)) * rng.uniform(0.5, 3.0, size=(13, 1))
    Y = rng.normal(size=(9, 7)) * rng.uniform(0.5, 3.0, size=(9, 1))
    X[rng.random(X.shape) < 0.5] = 0.0
    Y[rng.random(Y.shape) < 0.5] = 0.0
    k = sparsekit.get_kernel(name)
    np.testing.assert_allclose(
        k(sp.csr_matrix(X), sp.csr_matrix(Y)), skfun(X, Y), rtol=1e-10, atol=1e-12
    )
    np.testing.assert_allclose(k(sp.csr_matrix(X)), skfun(X), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- user functions as kernels
def _cosine(A, B):
    return skp.cosine_similarity(A, B)


def test_callable_kernel_equals_the_function_on_the_whole_data(dtype, rng):
    X = rng.normal(size=(300, 5)).astype(dtype)  # more rows than one diag block (256)
    Y = rng.normal(size=(20, 5)).astype(dtype)
    k = CallableKernel(_cosine)
    np.testing.assert_allclose(k(X, Y), skp.cosine_similarity(X, Y), rtol=1e-5)
    d = k.diag(X)
    assert d.dtype == dtype and d.shape == (300,)
    np.testing.assert_allclose(d, np.ones(300), rtol=1e-5)


def test_callable_kernel_passes_its_params(rng):
    X = rng.normal(size=(12, 4))
    k = CallableKernel(skp.rbf_kernel, params={"gamma": 0.3})
    np.testing.assert_allclose(k(X), skp.rbf_kernel(X, gamma=0.3), rtol=1e-12)


def test_callable_kernel_refuses_a_block_of_the_wrong_shape(rng):
    X = rng.normal(size=(5, 3))
    k = CallableKernel(lambda A, B: A @ A.T)
    with pytest.raises(ValueError, match=r"returned shape \(5, 5\).*shape \(5, 4\)"):
        k(X, X[:4])
