"""The two implementations of the top-k selection give the same masks, on both sides of the
switch between them.

``small_k_keep`` (one compiled pass with sorted buffers, for small counts) and the
partition path (``top_k_rows_mask``, for any count) must select the same entries, ties
included; the oracle is a brute-force sort of ``(−|a|, index)``, written independently of both.
"""

import numpy as np
import pytest

from sparsekit.projections import ColumnTopK, RowColumnTopK, RowTopK
from sparsekit.projections._cpu import SMALL_K, small_k_keep, top_k_rows_mask


def brute_rows(A, k):
    mask = np.zeros(A.shape, dtype=bool)
    for i in range(A.shape[0]):
        order = sorted(range(A.shape[1]), key=lambda j: (-A[i, j], j))
        mask[i, order[:k]] = True
    return mask


def brute_union(A, k_row, k_col):
    return brute_rows(A, k_row) | brute_rows(A.T, k_col).T


def small_k_union_mask(A, k_row, k_col, mask):
    """The mask that ``small_k_keep`` marks."""
    small_k_keep(A, k_row, k_col, mask, np.empty_like(A))
    return mask


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_compiled_kept_entries_are_the_largest_magnitudes_with_their_signs(dtype):
    """``small_k_keep`` selects on ``|M|`` (signed input, ties in magnitude between ``a`` and
    ``-a``), writes ``M`` at the kept entries (``-0.0`` kept as is) and 0 elsewhere, and returns
    the sum of their squares. Oracle: the brute-force selection on ``np.abs(M)``."""
    rng = np.random.default_rng(3)
    for trial in range(200):
        n, m = (int(v) for v in rng.integers(1, 9, 2))
        M = (
            rng.integers(-2, 3, (n, m)).astype(dtype)
            if trial % 2
            else rng.standard_normal((n, m)).astype(dtype)
        )
        M[0, 0] = -0.0
        k_row, k_col = int(rng.integers(0, m + 1)), int(rng.integers(0, n + 1))
        mask, out = np.empty((n, m), dtype=bool), np.full((n, m), np.nan, dtype)
        sq = small_k_keep(M, k_row, k_col, mask, out)
        ref = brute_union(np.abs(M), k_row, k_col)
        assert np.array_equal(mask, ref), (M, k_row, k_col)
        np.testing.assert_array_equal(out, np.where(ref, M, dtype(0)))
        assert np.array_equal(np.signbit(out), np.signbit(M) & ref)
        assert sq == pytest.approx(float((out.astype(np.float64) ** 2).sum()), rel=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_compiled_selection_matches_brute_force_with_ties(dtype):
    rng = np.random.default_rng(0)
    for trial in range(400):
        n, m = (int(v) for v in rng.integers(1, 10, 2))
        if trial % 2:  # few distinct values: many ties, including zeros
            A = rng.integers(0, 3, (n, m)).astype(dtype)
        else:
            A = np.abs(rng.standard_normal((n, m))).astype(dtype)
        k_row, k_col = int(rng.integers(0, m + 2)), int(rng.integers(0, n + 2))
        got = small_k_union_mask(A, k_row, k_col, np.empty((n, m), dtype=bool))
        assert np.array_equal(got, brute_union(A, k_row, k_col)), (A, k_row, k_col)


def test_compiled_selection_on_increasing_rows_fills_every_buffer_slot():
    # increasing values make every entry enter the buffer and shift all others
    A = np.arange(1.0, 1.0 + 6 * 7).reshape(6, 7)
    got = small_k_union_mask(A, 3, 2, np.empty(A.shape, dtype=bool))
    assert np.array_equal(got, brute_union(A, 3, 2))
    assert got[:, -3:].all() and got[-2:, :].all() and got.sum() == 6 * 3 + 2 * 4


def test_partition_path_agrees_with_the_compiled_one():
    A = np.abs(np.random.default_rng(1).standard_normal((20, 30)))
    for k in (1, 3, 19, 20):
        assert np.array_equal(
            top_k_rows_mask(A, k), small_k_union_mask(A, k, 0, np.empty(A.shape, dtype=bool))
        )


@pytest.mark.parametrize("cls", [RowTopK, ColumnTopK, RowColumnTopK])
@pytest.mark.parametrize("k", [2, SMALL_K, SMALL_K + 1])
def test_projections_select_the_same_on_both_sides_of_the_switch(cls, k):
    rng = np.random.default_rng(k)
    M = rng.integers(-3, 4, (SMALL_K + 8, SMALL_K + 12)).astype(float)  # ties everywhere
    P = cls(M.shape, k, normalized=False)(M)
    A = np.abs(M)
    want = {RowTopK: brute_rows(A, k), ColumnTopK: brute_rows(A.T, k).T}.get(
        cls, brute_union(A, k, k)
    )
    np.testing.assert_array_equal(P, np.where(want, M, 0.0))
