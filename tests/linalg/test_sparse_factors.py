"""SparseFactors: products, transposes and partial products equal the dense product."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, aslinearoperator

from sparsekit import SparseFactors

SHAPES = [(7, 11), (11, 4), (4, 9), (9, 6)]  # chained, non-square


def make(dtype, seed=0, density=0.4, scale=1.7):
    rng = np.random.default_rng(seed)
    factors = []
    for r, c in SHAPES:
        F = rng.standard_normal((r, c)) * (rng.random((r, c)) < density)
        factors.append(F.astype(dtype))
    return SparseFactors(factors, scale), factors


def dense(factors, scale):
    out = np.eye(factors[0].shape[0])
    for F in factors:
        out = out @ F.astype(np.float64)
    return scale * out


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_products_equal_dense(dtype, tol):
    A, factors = make(dtype)
    M = dense(factors, 1.7)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(6).astype(dtype)
    X = rng.standard_normal((6, 5)).astype(dtype)
    y = rng.standard_normal(7).astype(dtype)
    Y = rng.standard_normal((7, 3)).astype(dtype)
    scale = np.abs(M).max()
    assert isinstance(A, LinearOperator) and A.shape == (7, 6) and A.dtype == dtype
    for got, want in [
        (A.matvec(x), M @ x),
        (A @ x, M @ x),
        (A.matmat(X), M @ X),
        (A @ X, M @ X),
        (A.rmatvec(y), M.T @ y),
        (A.rmatmat(Y), M.T @ Y),
        (A.T @ y, M.T @ y),
        (A.H @ Y, M.T @ Y),
        (Y.T @ A, Y.T @ M),
        (A.toarray(), M),
        (A.T.toarray(), M.T),
        (aslinearoperator(A) @ X, M @ X),
    ]:
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale * 10)


def test_column_batches_and_float64_operand(monkeypatch):
    import sparsekit.linalg.sparse_factors as mod

    monkeypatch.setattr(mod, "COLUMN_BLOCK", 3)
    A, factors = make(np.float32, seed=2)
    M = dense(factors, 1.7)
    X = np.random.default_rng(3).standard_normal((6, 10))
    out = A @ X  # float64 operand of a float32 operator: float64 result
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, M @ X, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n_factors", [1, 2, 4])
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_column_blocks_through_the_whole_chain(monkeypatch, n_factors, dtype, tol):
    """Wide operands go through every factor one column block at a time on the thread pool
    (a partial last block included), forwards and transposed, equal to the dense product."""
    import sparsekit.linalg.sparse_factors as mod

    monkeypatch.setattr(mod, "COLUMN_BLOCK", 4)
    A, factors = make(dtype, seed=4)
    A = A.left(n_factors) if n_factors < len(factors) else A
    M = dense(factors[:n_factors], 1.0 if n_factors < len(factors) else 1.7)
    rng = np.random.default_rng(5)
    X = rng.standard_normal((M.shape[1], 23)).astype(dtype)
    Y = rng.standard_normal((M.shape[0], 19)).astype(dtype)
    scale = np.abs(M).max()
    for got, want in [(A @ X, M @ X), (A.T @ Y, M.T @ Y), (Y.T @ A, Y.T @ M)]:
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale * 10)


def test_partial_products_and_composition():
    A, factors = make(np.float64, seed=4)
    Q = len(factors)
    for q in range(Q + 1):
        L, R = A.left(q), A.right(q)
        np.testing.assert_allclose(
            L.toarray(), dense(factors[:q], 1.0) if q else np.eye(7), atol=1e-12
        )
        np.testing.assert_allclose(
            R.toarray(), dense(factors[q:], 1.0) if q < Q else np.eye(6), atol=1e-12
        )
        # the partial products share the factors (no densified copy)
        assert all(a is b for a, b in zip(L.factors, A.factors[:q]))
        np.testing.assert_allclose((L @ R).toarray() * 1.7, A.toarray(), atol=1e-12)
    with pytest.raises(ValueError, match="q must be an integer"):
        A.left(Q + 1)


def test_counts_flops_bytes():
    A, factors = make(np.float64, seed=5)
    nnz = sum(int(np.count_nonzero(F)) for F in factors)
    assert A.nnz == nnz and A.flops == 2 * nnz and A.n_factors == 4
    expected = sum(S.data.nbytes + S.indices.nbytes + S.indptr.nbytes for S in A.factors) + 8
    assert A.nbytes == expected
    assert A.nbytes > nnz * 8  # values and indices both count


def test_norm2_power_iteration_warm_start():
    A, factors = make(np.float64, seed=6)
    exact = np.linalg.norm(dense(factors, 1.7), 2)
    est = A.norm2(tol=1e-10, max_iter=2000)
    assert est == pytest.approx(exact, rel=1e-6)
    # the warm start begins at the converged vector: one more call converges at once
    assert A.norm2(tol=1e-10, max_iter=2) == pytest.approx(exact, rel=1e-8)


def test_save_load_roundtrip(tmp_path):
    A, _ = make(np.float32, seed=7)
    path = tmp_path / "ops.npz"
    A.save(path)
    B = SparseFactors.load(path)
    assert B.dtype == np.float32 and B.scale == A.scale and B.shape == A.shape
    np.testing.assert_array_equal(B.toarray(), A.toarray())


def test_bad_input():
    with pytest.raises(ValueError, match="do not chain"):
        SparseFactors([np.ones((3, 4)), np.ones((5, 2))])
    with pytest.raises(ValueError, match="NaN or inf"):
        SparseFactors([np.array([[np.nan, 1.0]])])
    with pytest.raises(ValueError, match="expected"):
        SparseFactors([np.ones((3, 4))]) @ np.ones(3)
    with pytest.raises(ValueError, match="empty product needs shape"):
        SparseFactors([])
    I3 = SparseFactors([], shape=(3, 3))
    np.testing.assert_array_equal(I3 @ np.arange(3.0), np.arange(3.0))
    assert sp.issparse(SparseFactors([np.eye(2)]).factors[0])
