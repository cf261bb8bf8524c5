"""SparseFactors: values of every product path, float32 end to end, validation, composition,
the power iteration and persistence, each against dense NumPy products of the same factors."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import sparsekit
import sparsekit.linalg.sparse_factors as mod
from sparsekit import SparseFactors

SHAPES = [(5, 9), (9, 3), (3, 8), (8, 4)]  # the widest intermediate (9 rows) is not the first


def factors_of(dtype=np.float64, seed=0, shapes=SHAPES, density=0.5):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) * (rng.random(s) < density)).astype(dtype) for s in shapes]


def dense(factors, scale=1.0):
    out = factors[0].astype(np.float64)
    for F in factors[1:]:
        out = out @ F.astype(np.float64)
    return scale * out


@pytest.mark.parametrize("width", [1, 3, 7])
@pytest.mark.parametrize("column_block", [512, 2])
def test_float32_end_to_end(monkeypatch, width, column_block):
    """Float32 factors and float32 operands: float32 results equal to the float64 product of
    the same values to float32 precision, on the narrow and the column-block paths."""
    monkeypatch.setattr(mod, "COLUMN_BLOCK", column_block)
    F = factors_of(np.float32, seed=1)
    A = SparseFactors(F, np.float32(0.75))
    M = dense(F, 0.75)
    rng = np.random.default_rng(2)
    X = rng.standard_normal((4, width)).astype(np.float32)
    Y = rng.standard_normal((5, width)).astype(np.float32)
    tol = 1e-5 * np.abs(M).sum()
    for got, want in [
        (A @ X, M @ X),
        (A.T @ Y, M.T @ Y),
        (Y.T @ A, Y.T @ M),
        (A @ X[:, 0], M @ X[:, 0]),
        (A.rmatvec(Y[:, 0]), M.T @ Y[:, 0]),
        (A.toarray(), M),
        (A.T.toarray(), M.T),
    ]:
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=tol)


@pytest.mark.parametrize("width", [2, 9])
def test_float64_operand_of_a_float32_operator_is_computed_in_float64(monkeypatch, width):
    # float32 values times float64 operands, accumulated in float64: exact to float64 rounding
    monkeypatch.setattr(mod, "COLUMN_BLOCK", 2)
    F = factors_of(np.float32, seed=3)
    A = SparseFactors(F, 1.5)
    M = dense(F, 1.5)
    X = np.random.default_rng(4).standard_normal((4, width))
    Y = np.random.default_rng(5).standard_normal((5, width))
    for got, want in [(A @ X, M @ X), (A.T @ Y, M.T @ Y)]:
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_integer_and_sparse_operands():
    F = factors_of(seed=6)
    A, M = SparseFactors(F, 2.0), dense(F, 2.0)
    x = np.arange(4)
    np.testing.assert_allclose(A @ x, M @ x, rtol=1e-12)
    A32 = SparseFactors([f.astype(np.float32) for f in F])
    out = A32 @ np.arange(4, dtype=np.int8)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, dense(F) @ np.arange(4), rtol=1e-5)
    S = sp.random(4, 3, density=0.5, random_state=0, format="csr")
    np.testing.assert_allclose(A @ S, M @ S.toarray(), rtol=1e-12, atol=1e-12)
    y = np.arange(5.0)
    np.testing.assert_allclose(y @ A, y @ M, rtol=1e-12)


def test_wide_operands_use_the_real_column_blocks():
    F = factors_of(seed=7)
    A, M = SparseFactors(F, -0.5), dense(F, -0.5)
    X = np.random.default_rng(8).standard_normal((4, 2 * mod.COLUMN_BLOCK + 77))
    np.testing.assert_allclose(A @ X, M @ X, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scale", [1.0, 2.5, -1.0, 0.0])
def test_scale_multiplies_every_product(scale):
    F = factors_of(seed=9)
    A, M = SparseFactors(F, scale), dense(F, scale)
    X = np.random.default_rng(10).standard_normal((4, 3))
    np.testing.assert_allclose(A @ X, M @ X, atol=1e-12)
    np.testing.assert_allclose(A.toarray(), M, atol=1e-12)
    np.testing.assert_allclose(A.T.toarray(), M.T, atol=1e-12)
    assert A.scale == scale


def test_empty_product_is_the_scaled_identity():
    for dtype in (np.float32, np.float64):
        eye = SparseFactors([], 3.0, shape=(4, 4), dtype=dtype)
        assert eye.shape == (4, 4) and eye.dtype == dtype and eye.n_factors == 0 and eye.nnz == 0
        np.testing.assert_array_equal(eye.toarray(), 3.0 * np.eye(4))
        np.testing.assert_array_equal(eye @ np.arange(4.0), 3.0 * np.arange(4.0))
        np.testing.assert_array_equal(eye.T @ np.arange(4.0), 3.0 * np.arange(4.0))
    for bad in [None, (3, 4), (3,), (2, 2, 2)]:
        with pytest.raises(ValueError, match="empty product needs shape"):
            SparseFactors([], shape=bad)


def test_partial_products_shapes_and_identities():
    F = factors_of(seed=11)
    A = SparseFactors(F, 2.0)
    assert A.left(0).shape == (5, 5) and A.right(4).shape == (4, 4)
    np.testing.assert_array_equal(A.left(0).toarray(), np.eye(5))
    np.testing.assert_array_equal(A.right(4).toarray(), np.eye(4))
    assert A.left(2).shape == (5, 3) and A.right(2).shape == (3, 4)
    assert A.left(2).scale == 1.0 and A.right(1).scale == 1.0
    np.testing.assert_allclose(A.right(1).toarray(), dense(F[1:]), atol=1e-12)
    X = np.random.default_rng(12).standard_normal((4, 2))
    np.testing.assert_allclose(A.right(3) @ X, F[3] @ X, atol=1e-12)
    np.testing.assert_allclose(A.right(3).T @ np.ones(8), F[3].T @ np.ones(8), atol=1e-12)
    for q in (-1, 5, 1.5, True, "1"):
        with pytest.raises(ValueError, match=r"q must be an integer in \[0, 4\]"):
            A.left(q)
        with pytest.raises(ValueError, match=r"q must be an integer in \[0, 4\]"):
            A.right(q)


def test_composition():
    F, G = factors_of(seed=13), factors_of(seed=14, shapes=[(4, 6), (6, 2)])
    A, B = SparseFactors(F, 2.0), SparseFactors(G, -3.0)
    C = A @ B
    assert isinstance(C, SparseFactors) and C.shape == (5, 2) and C.n_factors == 6
    assert C.scale == -6.0
    np.testing.assert_allclose(C.toarray(), dense(F, 2.0) @ dense(G, -3.0), atol=1e-12)
    B32 = SparseFactors([g.astype(np.float32) for g in G])
    assert (A @ B32).dtype == np.float64
    assert (SparseFactors([f.astype(np.float32) for f in F]) @ B32).dtype == np.float32
    half = SparseFactors([], 0.5, shape=(5, 5))
    D = half @ A
    assert D.shape == (5, 4) and D.scale == 1.0
    np.testing.assert_allclose(D.toarray(), dense(F), atol=1e-12)
    with pytest.raises(ValueError, match="do not align"):
        B @ A
    # an ndarray on the left goes through __rmatmul__ (one row, or a matrix of rows)
    W = np.random.default_rng(0).standard_normal((3, 5))
    np.testing.assert_allclose(W @ A, W @ dense(F, 2.0), atol=1e-12)
    np.testing.assert_allclose(W[0] @ A, W[0] @ dense(F, 2.0), atol=1e-12)


def test_factor_conversion_and_dtype_rules():
    F = factors_of(seed=15)
    F[1][0, :] = 0.0
    with_zero = sp.csr_matrix(F[0])
    with_zero.data[:] = np.where(np.arange(with_zero.nnz) % 2, with_zero.data, 0.0)  # stored zeros
    A = SparseFactors([with_zero] + F[1:])
    assert A.factors[0].nnz == np.count_nonzero(with_zero.toarray())
    assert A.nnz == sum(np.count_nonzero(f) for f in [with_zero.toarray()] + F[1:])
    for S in A.factors:
        assert S.has_sorted_indices and S.indices.dtype == np.int32 and S.indptr.dtype == np.int32
        assert sp.isspmatrix_csr(S)
    # unsorted CSR indices are sorted
    U = sp.csr_matrix((np.array([1.0, 2.0]), np.array([2, 0]), np.array([0, 2])), shape=(1, 3))
    assert not U.has_sorted_indices
    np.testing.assert_array_equal(SparseFactors([U]).factors[0].indices, [0, 2])
    np.testing.assert_array_equal(SparseFactors([U]).toarray(), [[2.0, 0, 1.0]])
    # dtype: float32 only when every factor is float32; integers and booleans give float64
    f32 = [f.astype(np.float32) for f in F]
    assert SparseFactors(f32).dtype == np.float32
    assert SparseFactors(f32[:-1] + [F[-1]]).dtype == np.float64
    assert SparseFactors([np.eye(3, dtype=int)]).dtype == np.float64
    assert SparseFactors([np.eye(3, dtype=bool)]).dtype == np.float64
    assert SparseFactors([sp.csr_matrix(f) for f in f32]).dtype == np.float32
    assert SparseFactors(F, dtype=np.float32).dtype == np.float32
    assert SparseFactors(F, dtype=np.float32).factors[0].dtype == np.float32
    np.testing.assert_allclose(
        SparseFactors(F, dtype="float32").toarray(), dense(f32), rtol=1e-5, atol=1e-6
    )
    with pytest.raises(TypeError, match="dtype must be float32 or float64"):
        SparseFactors(F, dtype=np.int64)
    with pytest.raises(TypeError, match="factor 0 has dtype complex128"):
        SparseFactors([np.eye(2) * 1j])
    with pytest.raises(ValueError, match="factor 1 must be 2-D"):
        SparseFactors([np.eye(3), np.ones(3)])
    with pytest.raises(ValueError, match="factor 0 contains NaN or inf"):
        SparseFactors([sp.csr_matrix(np.array([[np.inf, 1.0]]))])
    with pytest.raises(ValueError, match="does not match the factors"):
        SparseFactors(F, shape=(5, 5))
    assert SparseFactors(F, shape=(5, 4)).shape == (5, 4)


@pytest.mark.parametrize("scale", [np.nan, np.inf, "2", 1j, None])
def test_scale_must_be_finite_real(scale):
    with pytest.raises(ValueError, match="scale must be a finite real number"):
        SparseFactors([np.eye(2)], scale)


def test_operand_shape_is_checked():
    A = SparseFactors(factors_of(seed=16))
    for bad in (np.ones(5), np.ones((5, 2)), np.ones((4, 2, 2))):
        with pytest.raises(ValueError, match=r"expected \(4,\) or \(4, k\)"):
            A @ bad
    with pytest.raises(ValueError, match=r"expected \(5,\) or \(5, k\)"):
        A.T @ np.ones(4)


def test_transpose_is_cached_and_involutive():
    F = factors_of(seed=17)
    A = SparseFactors(F, 1.25)
    T = A.T
    assert T.shape == (4, 5) and T.scale == 1.25 and T.n_factors == 4
    np.testing.assert_allclose(T.T.toarray(), A.toarray(), atol=1e-12)
    assert A.T.factors[0] is T.factors[0]  # built once, on first use
    np.testing.assert_allclose(A.H.toarray(), dense(F, 1.25).T, atol=1e-12)


def test_counts():
    F = factors_of(seed=18)
    A = SparseFactors(F)
    nnz = sum(np.count_nonzero(f) for f in F)
    assert A.nnz == nnz and A.flops == 2 * nnz and A.n_factors == 4
    assert A.nbytes == nnz * (8 + 4) + sum((s[0] + 1) * 4 for s in SHAPES) + 8
    assert (
        SparseFactors([f.astype(np.float32) for f in F]).nbytes
        == nnz * 8 + sum((s[0] + 1) * 4 for s in SHAPES) + 8
    )
    fs = A.factors
    fs.clear()  # a copy of the list: the operator keeps its factors
    assert A.n_factors == 4


def test_norm2_defaults_and_edge_cases():
    F = factors_of(seed=19)
    exact = np.linalg.norm(dense(F, 3.0), 2)
    A = SparseFactors(F, 3.0)
    assert A.norm2() == pytest.approx(exact, rel=1e-5)
    # the default start is the seed-0 vector, so a fresh operator gives the same value
    B = SparseFactors(F, 3.0)
    assert B.norm2(warm_start=False, random_state=0, tol=1e-6) == A.__class__(F, 3.0).norm2()
    # the default warm start reuses the last vector: two iterations already converged
    C = SparseFactors(F, 3.0)
    C.norm2(tol=1e-12, max_iter=5000)
    assert C.norm2(max_iter=2) == pytest.approx(exact, rel=1e-10)
    assert C.norm2(max_iter=2, warm_start=False) != pytest.approx(exact, rel=1e-10)
    # the estimate approaches from below and never exceeds the norm
    for it in (1, 2, 3, 5):
        assert SparseFactors(F, 3.0).norm2(max_iter=it) <= exact * (1 + 1e-12)
    # a zero operator: 0.0, not NaN
    Z = SparseFactors([np.zeros((3, 4))])
    assert Z.norm2() == 0.0
    # a rank-one operator: the first estimate is |A v0| for the seed-0 start v0, the second
    # (after one step of the power iteration) is the norm itself
    R = SparseFactors([np.outer([1.0, 2.0], [0.0, 1.0])])
    v0 = np.random.default_rng(0).standard_normal(2)
    assert R.norm2(max_iter=1) == pytest.approx(abs(v0[1]) / np.linalg.norm(v0) * np.sqrt(5))
    assert R.norm2(max_iter=2, warm_start=False) == pytest.approx(np.sqrt(5), rel=1e-12)


def test_save_load_every_dtype_and_the_identity(tmp_path):
    for i, A in enumerate(
        [
            SparseFactors(factors_of(seed=20), -2.5),
            SparseFactors(factors_of(np.float32, seed=21)),
            SparseFactors([], 4.0, shape=(3, 3), dtype=np.float32),
        ]
    ):
        path = tmp_path / f"op{i}.npz"
        A.save(path)
        B = SparseFactors.load(path)
        assert B.dtype == A.dtype and B.shape == A.shape and B.scale == A.scale
        assert B.n_factors == A.n_factors
        np.testing.assert_array_equal(B.toarray(), A.toarray())


def test_repr():
    A = SparseFactors(factors_of(seed=22)[:2], 0.5)
    nnz = A.nnz
    assert repr(A) == (
        f"<SparseFactors 5x3, scale=0.5, factors 5x9 x 9x3, nnz={nnz}, dtype=float64>"
    )
    assert repr(SparseFactors([], shape=(2, 2))) == (
        "<SparseFactors 2x2, scale=1, factors identity, nnz=0, dtype=float64>"
    )


def test_half_precision_operands_on_both_paths(monkeypatch):
    # a float16 operand is converted to the operator's dtype (Numba has no float16 kernels)
    F = factors_of(np.float32, seed=23)
    A, M = SparseFactors(F), dense(F)
    X = np.random.default_rng(24).standard_normal((4, 6)).astype(np.float16)
    for block in (512, 2):
        monkeypatch.setattr(mod, "COLUMN_BLOCK", block)
        out = A @ X
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, M @ X.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_int64_indices_are_stored_as_int32():
    F = factors_of(seed=25, shapes=[(12, 12), (12, 12)], density=0.6)
    wide = []
    for f in F:
        S = sp.csr_matrix(f)
        S.indices, S.indptr = S.indices.astype(np.int64), S.indptr.astype(np.int64)
        wide.append(S)
    assert all(S.nnz >= 62 for S in wide)  # more than 2 * 31
    A = SparseFactors(wide)
    for S in A.factors:
        assert S.indices.dtype == np.int32 and S.indptr.dtype == np.int32
    assert A.nbytes == A.nnz * (8 + 4) + 2 * 13 * 4 + 8
    np.testing.assert_allclose(A.toarray(), dense(F), atol=1e-12)


def test_norm2_tolerance_is_relative_and_zero_operators_stay_zero():
    F = factors_of(seed=26)
    for scale in (1e-6, 1e6):  # tol is relative to the norm, whatever its size
        exact = np.linalg.norm(dense(F, scale), 2)
        assert SparseFactors(F, scale).norm2(tol=1e-8) == pytest.approx(exact, rel=1e-5)
    assert SparseFactors(F).norm2(max_iter=0) == 0.0  # no iteration, no estimate
    Z = SparseFactors([np.zeros((3, 4))])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0 on the way
        assert Z.norm2() == 0.0
        assert Z.norm2() == 0.0


def test_load_refuses_pickled_arrays(tmp_path):
    A = SparseFactors(factors_of(seed=27))
    path = tmp_path / "op.npz"
    A.save(path)
    with np.load(path) as z:
        arrays = dict(z)
    arrays["scale"] = np.array([1.0, "x"], dtype=object)  # an object array needs pickle
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match="allow_pickle"):
        SparseFactors.load(path)


def test_more_dtype_and_composition_cases():
    F = factors_of(seed=28)
    A32 = SparseFactors([sp.csr_matrix(f) for f in F], dtype=np.float32)  # sparse float64 input
    assert all(S.dtype == np.float32 for S in A32.factors)
    assert (A32 @ np.ones(4, dtype=np.float32)).dtype == np.float32
    I64 = SparseFactors([], 2.0, shape=(5, 5))
    assert (I64 @ A32).dtype == np.float64  # the result type of both operands
    I32 = SparseFactors([], 2.0, shape=(5, 5), dtype=np.float32)
    assert I32.toarray().dtype == np.float32
    II = I64 @ SparseFactors([], 3.0, shape=(5, 5))
    assert II.shape == (5, 5) and II.scale == 6.0
    np.testing.assert_array_equal(II.toarray(), 6.0 * np.eye(5))
    with pytest.raises(ValueError):
        A32 @ 2.0  # a scalar is not an operand


def test_norm2_of_derived_operators():
    F = factors_of(seed=29)
    A = SparseFactors(F, 2.0)
    M = dense(F, 2.0)
    assert A.T.norm2() == pytest.approx(np.linalg.norm(M, 2), rel=1e-5)
    assert A.left(2).norm2() == pytest.approx(np.linalg.norm(dense(F[:2]), 2), rel=1e-5)


@pytest.mark.parametrize("kind", [sp.csr_matrix, sp.csr_array])
def test_sparse_factors_passed_in_are_copied_and_left_as_they_were(kind):
    """A CSR factor passed in is copied: the caller's matrix keeps its stored zero and its
    unsorted indices, and a later change to it does not reach the operator. Oracle: NumPy's
    dense product of the factors as they were passed."""
    F = factors_of(seed=30)
    S = kind(F[0])
    S.data[0] = 0.0  # a stored zero
    S.indices[:2], S.data[:2] = S.indices[:2][::-1].copy(), S.data[:2][::-1].copy()  # unsorted
    assert S.indptr[1] >= 2
    saved = [S.data.copy(), S.indices.copy(), S.indptr.copy()]
    M = dense([S.toarray()] + F[1:], 1.5)
    A = SparseFactors([S] + F[1:], 1.5)
    for got, want in zip([S.data, S.indices, S.indptr], saved):
        np.testing.assert_array_equal(got, want)
    S.data[:] = 7.0
    np.testing.assert_allclose(A.toarray(), M, atol=1e-12)
    np.testing.assert_allclose(A @ np.ones(4), M @ np.ones(4), atol=1e-12)
    B32 = sp.csr_matrix(F[0].astype(np.float32))  # same dtype as the operator: copied too
    A32 = SparseFactors([B32], dtype=np.float32)
    B32.data[:] = 0.0
    np.testing.assert_array_equal(A32.toarray(), F[0].astype(np.float32))


@pytest.mark.parametrize("column_block", [512, 2])
def test_complex_operands_give_the_complex_product(monkeypatch, column_block):
    """Real factors times a complex operand: ``A (x + i y) = A x + i A y`` as a complex array
    (complex128 for a float64 operator, complex64 for float32), on the narrow and the
    column-block paths, forwards and transposed. Oracle: NumPy's dense complex product."""
    monkeypatch.setattr(mod, "COLUMN_BLOCK", column_block)
    F = factors_of(seed=31)
    rng = np.random.default_rng(32)
    Z = rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5))
    W = rng.standard_normal((5, 5)) + 1j * rng.standard_normal((5, 5))
    for dtype, cdtype, tol in [
        (np.float64, np.complex128, 1e-12),
        (np.float32, np.complex64, 1e-5),
    ]:
        A = SparseFactors(F, 2.0, dtype=dtype)
        M = dense([f.astype(dtype) for f in F], 2.0)
        z, Zc, Wc = Z[:, 0].astype(cdtype), Z.astype(cdtype), W.astype(cdtype)
        for got, want in [
            (A @ z, M @ z),
            (A.matvec(z), M @ z),
            (A @ Zc, M @ Zc),
            (A.T @ Wc, M.T @ Wc),
            (Wc[0] @ A, Wc[0] @ M),
            (Wc.T @ A, Wc.T @ M),
        ]:
            assert got.dtype == cdtype
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(M).sum())


def test_non_numeric_operands_are_refused():
    A = SparseFactors(factors_of(seed=33))
    for bad in (np.array(["a", "b", "c", "d"]), np.array([object()] * 4)):
        with pytest.raises(TypeError, match="operand has dtype .*; pass a numeric array"):
            A @ bad


def test_composition_of_float32_and_float64_operators_is_float64_either_way():
    """The composed operator has the result type of both dtypes, so a float64 factor is not
    rounded to float32 when the float32 operand is on the left. Oracle: NumPy's float64 product
    of the factors (exact to float64 rounding)."""
    F, G = factors_of(seed=34), factors_of(seed=35, shapes=[(4, 6), (6, 2)])
    A32, B64 = SparseFactors([f.astype(np.float32) for f in F]), SparseFactors(G, 0.5)
    for C in (A32 @ B64, B64.T @ A32.T):
        assert C.dtype == np.float64
    want = dense([f.astype(np.float32) for f in F]) @ dense(G, 0.5)
    np.testing.assert_allclose((A32 @ B64).toarray(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose((B64.T @ A32.T).toarray(), want.T, rtol=1e-12, atol=1e-12)


def test_wide_operands_switch_to_column_blocks_at_exactly_two_blocks(monkeypatch):
    """``2 * COLUMN_BLOCK`` columns or more go through the factors block by block, fewer through
    one product per factor (the documented rule, watched through ``_chain_by_column_blocks``);
    both equal NumPy's dense product (the oracle)."""
    monkeypatch.setattr(mod, "COLUMN_BLOCK", 3)
    calls = []
    real = mod._chain_by_column_blocks
    monkeypatch.setattr(
        mod, "_chain_by_column_blocks", lambda *a: (calls.append(a[1].shape[1]), real(*a))
    )
    F = factors_of(seed=36)
    A, M = SparseFactors(F), dense(F)
    X = np.random.default_rng(37).standard_normal((4, 7))
    for width in (5, 6, 7):
        np.testing.assert_allclose(A @ X[:, :width], M @ X[:, :width], atol=1e-12)
    assert calls == [6, 7]


def test_norm2_stop_rule_is_scale_invariant():
    """The iteration stops when the change of ``‖A v‖`` is below ``tol`` times the estimate, so
    scaling the operator scales the estimate and changes nothing else (the same iterations at
    every scale). Oracle: ``‖λ A‖ = |λ| ‖A‖`` applied to every iterate, and NumPy's 2-norm."""
    F = factors_of(seed=38)
    exact = np.linalg.norm(dense(F), 2)
    base = SparseFactors(F).norm2(tol=1e-3)
    assert base == pytest.approx(exact, rel=1e-2) and base < exact * (1 - 1e-9)  # stopped early
    for scale in (1e-6, 1e6, -2.0):
        got = SparseFactors(F, scale).norm2(tol=1e-3)
        assert got == pytest.approx(abs(scale) * base, rel=1e-12)


def test_scale_is_applied_in_the_result_dtype():
    """A float64 operand of a float32 operator is computed in float64, the scale included: a
    scale float32 cannot hold (0.1) is not rounded to float32 on the way. Oracle: NumPy's
    float64 product of the same float32 factor values."""
    F = factors_of(np.float32, seed=39)
    A, M = SparseFactors(F, 0.1), dense(F, 0.1)
    rng = np.random.default_rng(40)
    X, Y = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    for got, want in [(A @ X, M @ X), (A.T @ Y, M.T @ Y), (A @ X[:, 0], M @ X[:, 0])]:
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_row_block_products_give_the_product_with_every_row_once(dtype, n_jobs):
    """``row_block_products`` hands ``A @ X[r0:r1].T`` for consecutive blocks that cover the
    rows once (the last one narrower), with the scale and the dtype of ``A @ X.T``, on one or
    two threads. Oracle: the dense product of the factors."""
    rng = np.random.default_rng(11)
    factors = [rng.standard_normal((5, 6)), sp.random(6, 9, density=0.4, random_state=1)]
    A = SparseFactors(factors, scale=-1.5, dtype=np.float32 if dtype == np.float32 else None)
    X = (rng.standard_normal((23, 9)) * 4).astype(dtype)
    got = np.full((5, 23), np.nan)
    seen = []

    def consume(r0, r1, P):
        seen.append((r0, r1, P.dtype))
        got[:, r0:r1] = P

    with sparsekit.thread_limit(n_jobs):
        A.row_block_products(X, consume, block_rows=4)
    ref = -1.5 * factors[0] @ factors[1].toarray() @ X.T.astype(np.float64)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)
    assert sorted(s[:2] for s in seen) == [(r, min(23, r + 4)) for r in range(0, 23, 4)]
    assert {s[2] for s in seen} == {np.dtype(np.float32 if dtype == np.float32 else np.float64)}
    got[...] = np.nan
    seen.clear()
    A.row_block_products(X, consume, block_rows=23)  # one block: a product per factor
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)
    assert [s[:2] for s in seen] == [(0, 23)]


def test_row_block_products_take_one_block_up_to_one_block_entries(monkeypatch):
    """By default, ``X`` with at most ``ONE_BLOCK_ENTRIES`` entries is one block (a product per
    factor, no chain kernel); one row more gives blocks of ``ROW_BLOCK`` rows through the chain
    kernel; the products are the same. Oracle: the dense product of the factors."""
    from sparsekit.linalg import sparse_factors

    rng = np.random.default_rng(12)
    factors = [sp.random(5, 6, density=0.5, random_state=2), rng.standard_normal((6, 9))]
    A = SparseFactors(factors, scale=2.0)
    chained = []
    real = sparse_factors.csr_chain_block
    monkeypatch.setattr(
        sparse_factors, "csr_chain_block", lambda *a: (chained.append(1), real(*a))[1]
    )
    monkeypatch.setattr(sparse_factors, "ROW_BLOCK", 4)
    monkeypatch.setattr(sparse_factors, "ONE_BLOCK_ENTRIES", 10 * 9)
    for n, blocks in ((10, [(0, 10)]), (11, [(0, 4), (4, 8), (8, 11)])):
        X = rng.standard_normal((n, 9))
        seen, got = [], np.full((5, n), np.nan)

        def consume(r0, r1, P, seen=seen, got=got):
            seen.append((r0, r1))
            got[:, r0:r1] = P

        chained.clear()
        with sparsekit.thread_limit(1):
            A.row_block_products(X, consume)
        assert sorted(seen) == blocks
        assert bool(chained) == (len(blocks) > 1)
        ref = 2.0 * factors[0].toarray() @ factors[1] @ X.T
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_row_block_products_of_no_factor_is_the_scaled_transpose_and_shapes_are_checked():
    A = SparseFactors([], scale=2.0, shape=(3, 3))
    X = np.arange(12.0).reshape(4, 3)
    out = []
    A.row_block_products(X, lambda r0, r1, P: out.append(P.copy()))
    np.testing.assert_array_equal(np.hstack(out), 2.0 * X.T)
    with pytest.raises(ValueError, match=r"expected \(n, 3\)"):
        A.row_block_products(X.T, lambda *a: None)
