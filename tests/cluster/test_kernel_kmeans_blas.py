"""Kernel k-means' skinny products: the cluster sums are a compiled scatter-add equal to the
one-hot product they replace, and Lloyd's products run on one BLAS thread."""

import tracemalloc

import numpy as np
import pytest

import sparsekit.cluster._lloyd as lloyd
import sparsekit.cluster.kernel_kmeans as kkm
from sparsekit import KernelKMeans
from sparsekit._runtime.threads import blas_limit, blas_threads


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_cluster_sums_equal_the_onehot_product(dtype, order):
    rng = np.random.default_rng(0)
    n, s, k = 1000, 7, 5
    Z = np.asarray(rng.standard_normal((n, s)), dtype=dtype, order=order)
    labels = rng.integers(0, k - 1, n)  # the last cluster stays empty
    onehot = np.zeros((n, k), dtype=dtype)
    onehot[np.arange(n), labels] = 1.0
    sums, counts = lloyd.cluster_sums(Z, labels, k)
    assert sums.dtype == dtype and counts.dtype == dtype and sums.shape == (k, s)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(sums, onehot.T @ Z, rtol=tol, atol=tol * n)
    brute = np.stack([Z[labels == j].astype(np.float64).sum(axis=0) for j in range(k)])
    np.testing.assert_allclose(sums, brute, rtol=tol, atol=tol * n)
    np.testing.assert_array_equal(sums[k - 1], 0.0)
    np.testing.assert_array_equal(counts, np.bincount(labels, minlength=k))


def test_cluster_sums_form_no_onehot_matrix():
    """The sums are a scatter-add by label: no (n, k) one-hot matrix and no GEMM with it."""
    rng = np.random.default_rng(1)
    n, s, k = 200_000, 2, 8
    Z = rng.standard_normal((n, s))
    labels = rng.integers(0, k, n)
    lloyd.cluster_sums(Z, labels, k)  # compiled before measuring
    tracemalloc.start()
    try:
        lloyd.cluster_sums(Z, labels, k)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < n * k * 8 / 10  # the one-hot matrix alone takes n * k * 8 bytes


def test_lloyd_products_run_on_one_blas_thread(monkeypatch):
    with blas_limit(2):
        if blas_threads() < 2:
            pytest.skip("BLAS runs on one thread here")
        seen = []

        def spy(module, name, f):
            def wrapped(*args):
                seen.append((name, blas_threads()))
                return f(*args)

            monkeypatch.setattr(module, name, wrapped)

        spy(kkm, "sq_dists", kkm.sq_dists)
        spy(lloyd, "cluster_sums", lloyd.cluster_sums)  # through lloyd.means
        X = np.random.default_rng(2).standard_normal((600, 4))
        km = KernelKMeans(3, method="nystrom", n_landmarks=40, n_init=2, random_state=0).fit(X)
        assert {name for name, _ in seen} == {"sq_dists", "cluster_sums"}
        assert all(t == 1 for _, t in seen), seen
        seen.clear()
        km.predict(X)
        assert seen == [("sq_dists", 1)]
        assert blas_threads() == 2  # the limit is lifted after the loop


def test_many_clusters_keep_threaded_blas(monkeypatch):
    """Products with more than SKINNY_DIM columns are not skinny: BLAS keeps its threads."""
    with blas_limit(2):
        if blas_threads() < 2:
            pytest.skip("BLAS runs on one thread here")
        seen = []
        sq_dists = kkm.sq_dists

        def spy(*args):
            seen.append(blas_threads())
            return sq_dists(*args)

        monkeypatch.setattr(kkm, "sq_dists", spy)
        X = np.random.default_rng(4).standard_normal((400, 3))
        KernelKMeans(
            70, method="nystrom", n_landmarks=100, n_init=1, max_iter=3, random_state=0
        ).fit(X)
        assert seen and all(t == 2 for t in seen), seen


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_dask_lloyd_products_run_on_one_blas_thread(monkeypatch, scheduler):
    dask = pytest.importorskip("dask")
    import dask.array as da

    import sparsekit.dask.cluster as dask_cluster

    with blas_limit(2):
        if blas_threads() < 2:
            pytest.skip("BLAS runs on one thread here")
        seen = []
        sq_dists = dask_cluster.sq_dists

        def spy(*args):
            seen.append(blas_threads())
            return sq_dists(*args)

        monkeypatch.setattr(dask_cluster, "sq_dists", spy)
        X = np.random.default_rng(5).standard_normal((600, 4))
        with dask.config.set(scheduler=scheduler):
            est = dask_cluster.kernel_kmeans_fit(
                da.from_array(X, chunks=(200, 4)), 3, n_landmarks=40, n_init=2, random_state=0
            )
        ref = KernelKMeans(3, method="nystrom", n_landmarks=40, n_init=2, random_state=0).fit(X)
        assert seen and all(t == 1 for t in seen), seen
        np.testing.assert_array_equal(np.asarray(est.labels_), ref.labels_)
        assert blas_threads() == 2
