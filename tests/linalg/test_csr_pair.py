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
