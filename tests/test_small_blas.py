"""Skinny products on hot paths run on one BLAS thread (the library's own threads, such as
the kernels' pools, keep their count): Nystroem's transform, the Nystroem MMD sums, the
permutation test's statistics, the RBF kernel's column sums."""

import numpy as np
import pytest

import sparsekit
import sparsekit.features.nystrom as nystrom_module
import sparsekit.kernels.rbf as rbf_module
import sparsekit.stats.nystrom as stats_nystrom
import sparsekit.stats.permutation as permutation
from sparsekit._runtime.threads import blas_limit, blas_threads


@pytest.fixture
def two_blas_threads():
    with blas_limit(2):
        if blas_threads() < 2:
            pytest.skip("BLAS runs on one thread here")
        yield


class Spy(np.ndarray):
    """An array that records the BLAS limit whenever it takes part in a matrix product."""

    seen = []

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is np.matmul:
            Spy.seen.append(blas_threads())
        inputs = [np.asarray(x) for x in inputs]
        return getattr(ufunc, method)(*inputs, **kwargs)


class SpyNumpy:
    """A module's numpy, with ``ones`` returning ``spy`` arrays (their products are recorded)."""

    def __init__(self, spy):
        self.spy = spy

    def __getattr__(self, name):
        return getattr(np, name)

    def ones(self, *args, **kwargs):
        return np.ones(*args, **kwargs).view(self.spy)


@pytest.fixture
def spy():
    Spy.seen = []
    yield Spy
    Spy.seen = []


@pytest.mark.parametrize("n", [200, 2000])
@pytest.mark.parametrize("m,expected", [(20, 1), (80, 2)])
def test_nystroem_transform_product(monkeypatch, two_blas_threads, m, expected, n):
    X = np.random.default_rng(0).standard_normal((n, 5))
    ny = sparsekit.Nystroem(
        "rbf", n_components=m, kernel_params={"gamma": 0.3}, random_state=0
    ).fit(X)
    ref = ny.transform(X)
    seen, dot = [], np.dot

    def spy_dot(a, b, out=None):
        if np.shape(b) == (m, m):  # K(x, S) @ normalization_ (the kernel's own dots: (5, m))
            seen.append((len(a), blas_threads()))
        return dot(a, b, out=out)

    monkeypatch.setattr(np, "dot", spy_dot)
    got = ny.transform(X)
    # the first block on the caller (threaded unless skinny); the others on the pool's
    # threads, one BLAS thread each; every row once
    step = min(n, max(nystrom_module.MIN_BLOCK_ROWS, -(-n // nystrom_module.BLOCKS)))
    assert seen[0] == (step, expected)
    assert {t for _, t in seen[1:]} <= {1} and sum(r for r, _ in seen) == n
    assert len(seen) == -(-n // step) and (n == 200) == (len(seen) == 1)
    np.testing.assert_array_equal(got, ref)
    with sparsekit.thread_limit(1):
        np.testing.assert_array_equal(ny.transform(X), ref)  # the split ignores the threads


def test_nystrom_mmd_sums_run_on_one_blas_thread(monkeypatch, two_blas_threads, spy):
    rng = np.random.default_rng(1)
    X, Y = rng.standard_normal((300, 3)), rng.standard_normal((200, 3)) + 0.5
    ref = sparsekit.stats.mmd2_nystrom(X, Y, n_landmarks=30, random_state=0)

    monkeypatch.setattr(stats_nystrom, "np", SpyNumpy(spy))
    got = sparsekit.stats.mmd2_nystrom(X, Y, n_landmarks=30, random_state=0)
    assert spy.seen and all(t == 1 for t in spy.seen), spy.seen
    assert got == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("same", [True, False])
def test_rbf_column_sums_run_on_one_blas_thread(monkeypatch, two_blas_threads, spy, same):
    """The centring sums of the dense RBF Gram (a threaded BLAS call there leaves OpenBLAS's
    threads spinning through the Gram blocks that follow), for X alone and X against Y."""
    rng = np.random.default_rng(4)
    X, Y = rng.standard_normal((2100, 4)), rng.standard_normal((300, 4))  # X: the strip path
    kernel = sparsekit.get_kernel("rbf", gamma=0.2)
    ref = kernel(X) if same else kernel(X, Y)

    monkeypatch.setattr(rbf_module, "np", SpyNumpy(spy))
    got = kernel(X) if same else kernel(X, Y)
    assert spy.seen == [1] * (1 if same else 2)
    np.testing.assert_allclose(got, ref, rtol=1e-12)


@pytest.mark.parametrize("batch,expected", [(8, 1), (100, 2)])
def test_permutation_statistics_products(two_blas_threads, spy, batch, expected):
    rng = np.random.default_rng(2)
    X, Y = rng.standard_normal((60, 3)), rng.standard_normal((40, 3))
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    pool = permutation.Pooled([X, Y], kernel, names=["X", "Y"])
    W = rng.standard_normal((batch, 100))
    K = kernel(np.vstack([X, Y]))
    Phi = rng.standard_normal((100, 70))
    exact = permutation._exact_statistics(pool, W.view(spy), None)
    assert spy.seen == [expected]
    np.testing.assert_allclose(exact, np.einsum("br,rb->b", W, K @ W.T), rtol=1e-10)
    spy.seen.clear()
    feats = permutation._feature_statistics(Phi, W.view(spy))
    assert spy.seen == [expected]
    np.testing.assert_allclose(feats, ((W @ Phi) ** 2).sum(axis=1), rtol=1e-10)


def test_dask_nystrom_mmd_chunk_sums_run_on_one_blas_thread(monkeypatch, two_blas_threads, spy):
    dask = pytest.importorskip("dask")
    import dask.array as da

    import sparsekit.dask.stats as dask_stats

    rng = np.random.default_rng(3)
    X, Y = rng.standard_normal((300, 3)), rng.standard_normal((200, 3)) + 0.5
    Xd, Yd = da.from_array(X, chunks=(100, 3)), da.from_array(Y, chunks=(100, 3))
    with dask.config.set(scheduler="sync"):  # the chunks run on this thread
        ref = dask_stats.mmd2_nystrom(Xd, Yd, n_landmarks=30, random_state=0)

        class SpyNumpy:
            def __getattr__(self, name):
                return getattr(np, name)

            @staticmethod
            def ones(*args, **kwargs):
                return np.ones(*args, **kwargs).view(spy)

        monkeypatch.setattr(dask_stats, "np", SpyNumpy())
        got = dask_stats.mmd2_nystrom(Xd, Yd, n_landmarks=30, random_state=0)
    assert spy.seen and all(t == 1 for t in spy.seen), spy.seen
    assert got == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("kernel_name", ["rbf", "linear"])
@pytest.mark.parametrize("n_x,n_y,expected", [(3, 500, 1), (500, 2, 1), (300, 200, 2)])
def test_gram_blocks_of_few_rows_run_on_one_blas_thread(
    monkeypatch, two_blas_threads, kernel_name, n_x, n_y, expected
):
    rng = np.random.default_rng(4)
    X, Y = rng.standard_normal((n_x, 6)), rng.standard_normal((n_y, 6))
    kernel = sparsekit.get_kernel(kernel_name)
    ref = kernel(X, Y)
    seen, dot = [], np.dot

    def spy_dot(a, b, out=None):
        seen.append(blas_threads())
        return dot(a, b, out=out)

    monkeypatch.setattr(np, "dot", spy_dot)
    got = kernel(X, Y)
    assert seen == [expected]
    np.testing.assert_array_equal(got, ref)


def test_quickmeans_seeding_runs_on_one_blas_thread(two_blas_threads, spy):
    from sparsekit.cluster.quickmeans import kmeans_plusplus

    X = np.random.default_rng(5).standard_normal((400, 8))
    ref = kmeans_plusplus(X, 6, np.random.default_rng(0))
    got = kmeans_plusplus(X.view(spy), 6, np.random.default_rng(0))
    assert len(spy.seen) == 6 and all(t == 1 for t in spy.seen), spy.seen
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("k,expected", [(50, 1), (1023, 1), (1024, 2)])
def test_nystroem_eigendecomposition_of_a_small_gram_runs_on_one_blas_thread(
    two_blas_threads, k, expected
):
    from sparsekit.features.nystrom import inverse_sqrt_map

    seen = []

    class Seen(Exception):
        pass

    def spy_eigh(A):
        seen.append(blas_threads())
        raise Seen  # the thread count is all this test needs

    with pytest.raises(Seen):
        inverse_sqrt_map(np.eye(k), eigh=spy_eigh)
    assert seen == [expected]
    X = np.random.default_rng(6).standard_normal((40, 3))
    K = sparsekit.get_kernel("rbf", gamma=0.5)(X)
    M, evals, _ = inverse_sqrt_map(K)
    np.testing.assert_allclose(M @ K @ M, np.eye(40), atol=1e-6)
    np.testing.assert_allclose(evals, np.linalg.eigvalsh(K)[::-1], rtol=1e-10, atol=1e-12)


def test_one_blas_thread_when_false_leaves_the_limit_alone(two_blas_threads):
    """Oracle: threadpoolctl's reading of the BLAS limit (``blas_threads``) in each block."""
    from sparsekit._runtime.small_blas import one_blas_thread

    before = blas_threads()
    with one_blas_thread(False):
        assert blas_threads() == before >= 2
    with one_blas_thread(True):
        assert blas_threads() == 1
    assert blas_threads() == before
