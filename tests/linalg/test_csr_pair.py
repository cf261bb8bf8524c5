"""``dense_to_csr_pair`` builds the CSR arrays of a matrix and of its transpose exactly as
scipy's ``csr_matrix`` does (zeros and ``-0.0`` dropped, sorted indices)."""

import numpy as np
import pytest
import scipy.sparse as sp

from sparsekit.linalg._spmm import dense_to_csr_pair


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(7, 11), (11, 7), (1, 5), (5, 1)])
def test_arrays_equal_scipy_csr_of_the_matrix_and_its_transpose(dtype, shape):
    rng = np.random.default_rng(0)
    D = rng.standard_normal(shape).astype(dtype)
    D[rng.random(shape) < 0.6] = 0.0
    D[0] = 0.0  # an empty row
    D[-1, -1] = -0.0  # a signed zero is a zero
    if shape[0] > 1:
        D[1, 0] = dtype(3.5)
    out = dense_to_csr_pair(D)
    for (indptr, indices, data), M in ((out[:3], D), (out[3:], D.T)):
        ref = sp.csr_matrix(M)
        np.testing.assert_array_equal(indptr, ref.indptr)
        np.testing.assert_array_equal(indices, ref.indices)
        np.testing.assert_array_equal(data, ref.data)
        assert data.dtype == dtype
        np.testing.assert_array_equal(
            sp.csr_matrix((data, indices, indptr), shape=M.shape).toarray(), M
        )


def test_all_zero_matrix_has_no_entries():
    out = dense_to_csr_pair(np.zeros((3, 4)))
    assert out[0].tolist() == [0, 0, 0, 0] and out[3].tolist() == [0] * 5
    assert all(a.size == 0 for a in (out[1], out[2], out[4], out[5]))


@pytest.mark.parametrize("n_cols", [3, 5000])
def test_csr_matmat_equals_scipy_on_both_sides_of_the_pool_threshold(monkeypatch, n_cols):
    """``csr_matmat`` runs small products on the calling thread and larger ones on the row-range
    pool (MATMAT_WORK_PER_THREAD); both give SciPy's ``S @ B`` (the oracle), and the pool is
    used only above the threshold (watched through ``run_row_ranges``)."""
    from sparsekit.linalg import _spmm

    rng = np.random.default_rng(0)
    S = sp.random(300, 200, density=0.05, format="csr", random_state=1)
    B = rng.normal(size=(200, n_cols))
    pooled = []
    real = _spmm.run_row_ranges
    monkeypatch.setattr(_spmm, "run_row_ranges", lambda *a, **k: (pooled.append(1), real(*a, **k)))
    out = np.empty((300, n_cols))
    _spmm.csr_matmat(S.indptr, S.indices, S.data, B, out)
    np.testing.assert_allclose(out, S @ B, rtol=1e-12, atol=1e-12)
    assert bool(pooled) == (S.nnz * n_cols >= 2 * _spmm.MATMAT_WORK_PER_THREAD)


def test_csr_matmat_uses_the_pool_from_exactly_the_threshold(monkeypatch):
    """At exactly ``2 * MATMAT_WORK_PER_THREAD`` multiply-adds the product goes to the pool,
    one less stays on the calling thread (the documented rule, watched through
    ``run_row_ranges``); both equal SciPy's ``S @ B`` (the oracle)."""
    from sparsekit.linalg import _spmm

    monkeypatch.setattr(_spmm, "MATMAT_WORK_PER_THREAD", 60)
    S = sp.csr_matrix(np.eye(10)[:, ::-1] * np.arange(1.0, 11.0))  # nnz = 10, exactly
    B = np.random.default_rng(1).normal(size=(10, 13))
    pooled = []
    real = _spmm.run_row_ranges
    monkeypatch.setattr(_spmm, "run_row_ranges", lambda *a, **k: (pooled.append(1), real(*a, **k)))
    for n_cols, want_pool in [(12, True), (11, False)]:  # 10 * 12 = 120 = 2 * 60
        pooled.clear()
        out = np.empty((10, n_cols))
        _spmm.csr_matmat(S.indptr, S.indices, S.data, np.ascontiguousarray(B[:, :n_cols]), out)
        np.testing.assert_allclose(out, (S @ B[:, :n_cols]), rtol=1e-12, atol=1e-12)
        assert bool(pooled) == want_pool


def _rows_with_counts(n_cols, dtype, seed):
    """A CSR matrix whose rows hold 0, 1, 2, 3, 4 and 5 non-zeros (the pairs of the kernels'
    two-per-pass loops, and the odd one left)."""
    rng = np.random.default_rng(seed)
    rows = []
    for count in (0, 1, 2, 3, 4, 5, 1, 0):
        row = np.zeros(n_cols, dtype)
        row[rng.choice(n_cols, count, replace=False)] = rng.standard_normal(count)
        rows.append(row)
    return sp.csr_matrix(np.array(rows))


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_csr_kernels_every_row_length_equal_scipy(dtype, rtol):
    from sparsekit.linalg import _spmm

    S = _rows_with_counts(9, dtype, 0)
    B = np.random.default_rng(2).standard_normal((9, 5)).astype(dtype)
    out = np.full((8, 5), np.nan, dtype)  # every entry written, none accumulated from before
    _spmm.csr_matmat(S.indptr, S.indices, S.data, B, out)
    np.testing.assert_allclose(out, S.toarray() @ B, rtol=rtol, atol=rtol)
    # the chain kernel: T S B through buffers, on the same row lengths
    chain = [S, sp.csr_matrix(_rows_with_counts(8, dtype, 3).toarray()[:, :8])]
    n_rows = np.array([M.shape[0] for M in chain], np.int64)
    ptr_off = np.array([0, chain[0].shape[0] + 1], np.int64)
    nnz_off = np.array([0, chain[0].nnz], np.int64)
    indptr = np.concatenate([M.indptr for M in chain]).astype(np.int64)
    indices = np.concatenate([M.indices for M in chain]).astype(np.int64)
    data = np.concatenate([M.data for M in chain])
    buf = np.full((8, 5), np.nan, dtype)
    out = np.full((8, 5), np.nan, dtype)
    _spmm.csr_chain_block(n_rows, ptr_off, nnz_off, indptr, indices, data, B, buf, buf, out)
    expected = chain[1].toarray() @ (S.toarray() @ B)
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=rtol)
