"""The exact kernel k-means steps on the Gram matrix (sparsekit.cluster._exact): the per-cluster
sums of every row against the dense product K @ H, the in-place symmetrisation against
0.5 * (K + K.T), the distances against the indicator formula, and results that do not depend on
the thread count."""

import numpy as np
import pytest

import sparsekit.cluster._exact as exact
from sparsekit import KernelKMeans, thread_limit
from sparsekit._runtime.threads import blas_limit, blas_threads
from sparsekit.kernels.base import Kernel


def _symmetric(n, dtype, seed=0):
    A = np.random.default_rng(seed).standard_normal((n, n))
    return np.ascontiguousarray((A + A.T) / 2, dtype=dtype)


def _onehot(labels, k, dtype=np.float64):
    H = np.zeros((len(labels), k), dtype=dtype)
    H[np.arange(len(labels)), labels] = 1.0
    return H


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n, k", [(1, 1), (300, 5), (1000, 3), (517, 70)])
def test_row_cluster_sums_equal_the_dense_product(dtype, n, k):
    K = _symmetric(n, dtype)
    labels = np.random.default_rng(1).integers(0, max(k - 1, 1), n)  # the last cluster empty
    S = exact.row_cluster_sums(K, labels, k, n_jobs=2)
    assert S.shape == (k, n) and S.dtype == dtype
    tol = 1e-12 if dtype == np.float64 else 1e-5
    K64 = K.astype(np.float64)
    np.testing.assert_allclose(S.T, K64 @ _onehot(labels, k), rtol=tol, atol=tol * n)
    brute = np.stack([K64[:, labels == j].sum(axis=1) for j in range(k)])
    np.testing.assert_allclose(S, brute, rtol=tol, atol=tol * n)
    if k > 1:
        np.testing.assert_array_equal(S[k - 1], 0.0)


def test_row_cluster_sums_do_not_depend_on_the_thread_count():
    K = _symmetric(700, np.float64, seed=2)
    labels = np.random.default_rng(3).integers(0, 6, 700)
    one = exact.row_cluster_sums(K, labels, 6, n_jobs=1)
    np.testing.assert_array_equal(exact.row_cluster_sums(K, labels, 6, n_jobs=2), one)
    np.testing.assert_array_equal(exact.row_cluster_sums(K, labels, 6, n_jobs=3), one)


@pytest.mark.parametrize("n", [1, 127, 128, 300])
def test_symmetrize_inplace_equals_the_half_sum_bit_for_bit(n):
    K = np.random.default_rng(4).standard_normal((n, n))
    expected = 0.5 * (K + K.T)
    out = exact.symmetrize_inplace(K, n_jobs=2)
    assert out is K
    np.testing.assert_array_equal(K, expected)
    np.testing.assert_array_equal(K, K.T)


def test_symmetrize_inplace_keeps_a_symmetric_matrix():
    K = _symmetric(300, np.float64, seed=5)
    before = K.copy()
    exact.symmetrize_inplace(K, n_jobs=2)
    np.testing.assert_array_equal(K, before)


def test_distances_equal_the_indicator_formula():
    n, k = 400, 6
    K = _symmetric(n, np.float64, seed=6)
    K = K @ K.T / n  # positive semi-definite
    diag = np.diagonal(K).copy()
    labels = np.random.default_rng(7).integers(0, k - 1, n)  # cluster k - 1 empty
    counts = np.bincount(labels, minlength=k)
    H = _onehot(labels, k) / np.maximum(counts, 1)[None, :]
    KH = K @ H
    cc = np.einsum("ij,ij->j", H, KH)
    expected = np.maximum(diag[:, None] - 2 * KH + cc[None, :], 0.0)
    D, got_cc = exact.distances(K, diag, labels, k, n_jobs=2)
    np.testing.assert_allclose(D, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_cc, cc, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(D[:, k - 1], diag)  # an empty cluster's centre is the origin


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_exact_fit_does_not_depend_on_the_thread_count(dtype):
    rng = np.random.default_rng(8)
    X = (rng.standard_normal((900, 4)) + 3 * rng.integers(0, 4, (900, 1))).astype(dtype)
    fits = []
    for t in (1, 2):
        with thread_limit(t):
            km = KernelKMeans(5, method="exact", n_init=2, random_state=0).fit(X)
        fits.append((km.labels_, km.inertia_, km.transform(X)))
    np.testing.assert_array_equal(fits[0][0], fits[1][0])
    assert fits[0][1] == fits[1][1]
    np.testing.assert_array_equal(fits[0][2], fits[1][2])
    assert fits[0][2].dtype == dtype


class _StoredGram(Kernel):
    """A kernel (not a vector kernel) that returns an array its owner keeps."""

    name = "stored-gram"

    def __init__(self, G=None):
        self.G = G

    def __call__(self, X, Y=None):
        return self.G

    def diag(self, X):
        return np.diagonal(self.G).copy()


def test_exact_fit_leaves_a_kernel_s_own_gram_unchanged():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((120, 3))
    G = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))
    G[0, 1] += 1e-9  # not symmetric: the fit symmetrises a copy, not the kernel's array
    before = G.copy()
    km = KernelKMeans(3, kernel=_StoredGram(G), method="exact", random_state=0).fit(X)
    np.testing.assert_array_equal(G, before)
    np.testing.assert_array_equal(km.kernel_.G, before)  # the fitted kernel's own copy
    ref = KernelKMeans(3, kernel=_StoredGram(0.5 * (G + G.T)), method="exact", random_state=0)
    np.testing.assert_array_equal(km.labels_, ref.fit(X).labels_)


def test_exact_steps_run_on_one_blas_thread(monkeypatch):
    """The Lloyd steps' pass over the Gram runs in pool blocks, each on one BLAS thread."""
    with blas_limit(2):
        if blas_threads() < 2:
            pytest.skip("BLAS runs on one thread here")
        seen = []
        loop = exact.label_sums_cols

        def spy(*args):
            seen.append(blas_threads())
            return loop(*args)

        monkeypatch.setattr(exact, "label_sums_cols", spy)
        X = np.random.default_rng(3).standard_normal((300, 3))
        KernelKMeans(3, method="exact", n_init=2, random_state=0).fit(X)
        assert seen and all(t == 1 for t in seen), seen
        assert blas_threads() == 2
