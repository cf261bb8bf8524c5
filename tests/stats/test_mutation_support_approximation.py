"""Point identities of the pooled samples and the Gram residual of approximation_error, checked
against brute force (row-by-row comparison, the residual matrix formed whole)."""

import numpy as np
import pytest
import scipy.sparse as sp

from sparsekit import Nystroem, get_kernel
from sparsekit.kernels.linear import LinearKernel
from sparsekit.stats import approximation_error, mmd2_biased
from sparsekit.stats._data import support, support_ids

from .conftest import random_graphs


def _first_equal_brute_force(rows):
    """Index of the first row equal (entry by entry, ``==``) to every row."""
    return np.array(
        [
            next(j for j in range(len(rows)) if np.array_equal(rows[j], rows[i]))
            for i in range(len(rows))
        ]
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_support_ids_are_the_first_index_of_each_distinct_row(dtype):
    rng = np.random.default_rng(0)
    base = rng.integers(-2, 3, size=(6, 3)).astype(dtype)
    rows = base[rng.integers(0, 6, size=40)]
    rows[rows == 0] = -0.0 * rng.integers(0, 2, size=(rows == 0).sum())  # mixed signed zeros
    expected = _first_equal_brute_force(rows)
    ids, distinct = support(None, rows)
    np.testing.assert_array_equal(support_ids(None, rows), expected)
    np.testing.assert_array_equal(ids, expected)
    assert distinct == (len(np.unique(expected)) == len(rows)) and not distinct
    ids, distinct = support(None, base[:1] + np.arange(5, dtype=dtype)[:, None])
    np.testing.assert_array_equal(ids, np.arange(5))
    assert distinct


class _CountsKernel:
    """A graph kernel's prepared data reduced to what ``support`` reads: sparse counts."""

    def n_samples(self, data):
        return data.counts.shape[0]


class _Counts:
    def __init__(self, counts):
        self.counts = counts


def test_support_of_feature_counts_does_not_depend_on_the_stored_index_order():
    # rows 0 and 2 hold the same counts, stored in another column order; row 1 differs
    counts = sp.csr_matrix(
        (
            np.array([5.0, 1.0, 1.0, 5.0, 1.0, 5.0]),
            np.array([2, 0, 0, 3, 0, 2]),
            np.array([0, 2, 4, 6]),
        ),
        shape=(3, 4),
    )
    dense = counts.toarray()
    ids, distinct = support(_CountsKernel(), _Counts(counts))
    np.testing.assert_array_equal(ids, _first_equal_brute_force(dense))
    np.testing.assert_array_equal(ids, [0, 1, 0])
    assert not distinct


def _residual(K, Z):
    return K - Z @ Z.T


def test_approximation_error_of_a_graph_kernel_map_is_the_whole_residual():
    graphs = random_graphs(np.random.default_rng(1), 14, 0.4)
    ny = Nystroem("shortest-path", n_components=5, random_state=0).fit(graphs)
    R = _residual(np.asarray(get_kernel("shortest-path")(graphs)), ny.transform(graphs))
    assert approximation_error(ny, graphs, norm="fro") == pytest.approx(np.linalg.norm(R), rel=1e-9)
    assert approximation_error(ny, graphs, norm="spectral") == pytest.approx(
        np.abs(np.linalg.eigvalsh(R)).max(), rel=1e-9
    )


def test_approximation_error_of_one_sample():
    X = np.random.default_rng(2).normal(size=(30, 2))
    ny = Nystroem("rbf", n_components=4, kernel_params={"gamma": 0.3}, random_state=0).fit(X)
    x = X[5:6]
    z = ny.transform(x)
    expected = 1.0 - float(z[0] @ z[0])  # k(x, x) = 1 for the RBF kernel
    assert expected > 1e-3
    assert approximation_error(ny, x, norm="trace") == pytest.approx(expected, rel=1e-9)
    assert approximation_error(ny, x, norm="fro") == pytest.approx(expected, rel=1e-9)
    assert approximation_error(ny, x, norm="spectral") == pytest.approx(expected, rel=1e-9)


@pytest.fixture(scope="module")
def lanczos_case():
    """1001 points (above the dense-eigensolver limit, so the spectral norm uses Lanczos), a
    kernel function that counts its square Gram blocks, and the residual formed whole."""
    n = 1001
    X = np.random.default_rng(3).normal(size=(n, 2))
    calls = []

    def rbf(A, B):
        if len(A) == n and len(B) == n:
            calls.append(1)
        sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None] - 2.0 * A @ B.T
        return np.exp(-0.5 * np.maximum(sq, 0.0))

    ny = Nystroem(rbf, n_components=6, random_state=0).fit(X)
    Z = ny.transform(X)
    K = rbf(X, X)
    calls.clear()
    spectral = np.abs(np.linalg.eigvalsh(_residual(K, Z))).max()
    return ny, X, calls, n, spectral, np.linalg.eigvalsh(K)[-1]


def test_spectral_gram_blocks_are_cached_exactly_when_they_fit_max_memory(lanczos_case):
    ny, X, calls, n, expected, reference = lanczos_case
    for max_memory, relative, cached in [
        (None, True, True),  # the default, 256 MiB, holds the 8 MB Gram matrix
        (8 * n * n, False, True),  # |E|^2 float64 values fit exactly
        (0, False, False),
    ]:
        calls.clear()
        kw = {} if max_memory is None else {"max_memory": max_memory}
        err = approximation_error(ny, X, norm="spectral", relative=relative, **kw)
        assert err == pytest.approx(expected / reference if relative else expected, rel=1e-7)
        if cached:
            assert len(calls) == 1  # one row block, computed once for every Lanczos step
        else:
            assert len(calls) > 2  # recomputed at every Lanczos step
    with pytest.raises(ValueError, match="max_memory"):
        approximation_error(ny, X, norm="spectral", max_memory=-1)


@pytest.mark.parametrize(
    "norm, label", [("fro", "approximation error"), ("spectral", "Gram blocks")]
)
def test_verbose_reports_progress_over_the_gram_blocks(capsys, norm, label):
    X = np.random.default_rng(5).normal(size=(40, 2))
    ny = Nystroem("rbf", n_components=5, random_state=0).fit(X)
    capsys.readouterr()
    approximation_error(ny, X, norm=norm, verbose=True)
    assert label in capsys.readouterr().err
    approximation_error(ny, X, norm=norm, verbose=False)
    assert capsys.readouterr().err == ""


def test_lanczos_spectral_norm_is_accurate_on_a_clustered_spectrum():
    # a linear kernel of 1001 Gaussian points in 300 dimensions: the top eigenvalues of the
    # residual crowd at the Marchenko-Pastur edge, where a loose Lanczos tolerance stops early
    X = np.random.default_rng(6).normal(size=(1001, 300))
    ny = Nystroem("linear", n_components=10, random_state=0).fit(X)
    Z = ny.transform(X)
    expected = np.abs(np.linalg.eigvalsh(_residual(X @ X.T, Z))).max()
    assert approximation_error(ny, X, norm="spectral") == pytest.approx(expected, rel=1e-8)


class _UnitRowsLinear(LinearKernel):
    """The linear kernel of the rows scaled to unit norm: a vector kernel with its own prepare."""

    def prepare(self, X):
        A = super().prepare(X)
        return A / np.linalg.norm(A, axis=1, keepdims=True)


def test_pooled_samples_go_through_a_vector_kernels_own_prepare():
    rng = np.random.default_rng(7)
    X, Y = rng.normal(size=(20, 3)) + 1.0, rng.normal(size=(15, 3))
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    Yn = Y / np.linalg.norm(Y, axis=1, keepdims=True)
    expected = float(np.sum((Xn.mean(0) - Yn.mean(0)) ** 2))  # V-statistic of a linear kernel
    assert mmd2_biased(X, Y, _UnitRowsLinear()) == pytest.approx(expected, rel=1e-10)
