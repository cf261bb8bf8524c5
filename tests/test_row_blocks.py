"""Work shared out in blocks, each on one thread and one BLAS thread (a machine where another
process holds a core slows one thread down; the other takes more blocks instead of waiting).

Oracles: scikit-learn's ``rbf_kernel``, the block counts the shapes fix, and
a block that cannot finish before all the others have (a static split would never let it).
"""

import threading

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import sparsekit
from sparsekit._runtime import pools as _pools
from sparsekit._runtime.threads import blas_limit, blas_threads
from sparsekit.kernels import rbf


@pytest.fixture
def two_blas_threads():
    with blas_limit(2):
        if blas_threads() < 2:
            pytest.skip("BLAS runs on one thread here")
        yield


def test_run_blocks_calls_every_block_once_and_restores_the_blas_limit(two_blas_threads):
    seen, limits = [], []
    lock = threading.Lock()

    def work(i):
        with lock:
            seen.append(i)
            limits.append(blas_threads())

    _pools.run_blocks(work, 37, n_jobs=2)
    assert sorted(seen) == list(range(37))
    assert set(limits) == {1}
    assert blas_threads() == 2


def test_a_stalled_thread_leaves_the_other_blocks_to_the_free_one():
    # block 0 waits until every other block is done: with a static split the thread holding
    # block 0 would hold some of the others too, and they could never be done
    n = 16
    done = threading.Event()
    count = []
    threads = set()
    lock = threading.Lock()

    def work(i):
        with lock:
            threads.add(threading.get_ident())
        if i == 0:
            assert done.wait(timeout=20), "the other blocks were not taken by the free thread"
            return
        with lock:
            count.append(i)
            if len(count) == n - 1:
                done.set()

    _pools.run_blocks(work, n, n_jobs=2)
    assert sorted(count) == list(range(1, n))
    assert len(threads) == 2


def test_run_blocks_raises_a_block_error_after_the_threads_stop():
    ran = []

    def work(i):
        if i == 3:
            raise ValueError("block 3 failed")
        ran.append(i)

    with pytest.raises(ValueError, match="block 3 failed"):
        _pools.run_blocks(work, 8, n_jobs=2)
    assert 3 not in ran


def test_nested_run_blocks_run_on_the_block_thread():
    calls = []
    lock = threading.Lock()

    def work(i):
        me = threading.get_ident()
        inner = []
        _pools.run_blocks(lambda j: inner.append(threading.get_ident()), 3, n_jobs=2)
        with lock:
            calls.append(inner == [me] * 3)

    _pools.run_blocks(work, 4, n_jobs=2)
    assert calls == [True] * 4


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-10), (np.float32, 1e-4)])
@pytest.mark.parametrize("same", [False, True])
def test_rbf_gram_in_blocks_equals_scikit_learn_whatever_the_threads(rng, dtype, rtol, same):
    # X against itself in one call keeps its symmetric product: max_memory cuts it into two
    # calls of 400 rows, each filled in several blocks
    X = rng.normal(size=(700, 6)).astype(dtype)
    Y = None if same else rng.normal(size=(1100, 6)).astype(dtype)
    m = 700 if same else 1100
    rows = 400 if same else 700
    max_memory = rows * m * np.dtype(dtype).itemsize
    assert rbf.fill_block_rows(rows, m, np.dtype(dtype).itemsize) < rows  # several blocks
    k = sparsekit.get_kernel("rbf", gamma=0.3)
    with sparsekit.thread_limit(1):
        K1 = k(X, Y, max_memory=max_memory)
    with sparsekit.thread_limit(2):
        K2 = k(X, Y, max_memory=max_memory)
    np.testing.assert_array_equal(K1, K2)
    want = rbf_kernel(X.astype(np.float64), None if same else Y.astype(np.float64), gamma=0.3)
    assert K2.dtype == dtype
    np.testing.assert_allclose(K2, want, rtol=rtol, atol=0)
    if same:
        np.testing.assert_array_equal(np.diag(K2), np.ones(700, dtype=dtype))


def test_the_gram_of_x_in_one_call_multiplies_only_its_upper_triangle(monkeypatch, rng):
    from sparsekit.kernels import _sym_gram

    X = rng.normal(size=(700, 6))
    shapes, matmul = [], np.matmul

    def spy_matmul(a, b, out=None):
        shapes.append((a.shape[0], b.shape[1]))
        return matmul(a, b, out=out)

    monkeypatch.setattr(_sym_gram.np, "matmul", spy_matmul)
    monkeypatch.setattr(rbf, "SYM_STRIPS_MIN_ROWS", 700)
    K = sparsekit.get_kernel("rbf", gamma=0.3)(X)
    # strips of rows lo:hi times the columns lo: (the upper triangle), not a full n x n product
    step = _sym_gram.SYM_STRIP_ROWS
    expected = [(min(700, lo + step) - lo, 700 - lo) for lo in range(0, 700, step)]
    assert sorted(shapes) == sorted(expected)
    assert sum(r * c for r, c in shapes) < 0.7 * 700 * 700
    np.testing.assert_allclose(K, rbf_kernel(X, gamma=0.3), rtol=1e-10, atol=0)


def test_a_small_gram_of_x_keeps_one_symmetric_product(monkeypatch, rng):
    X = rng.normal(size=(rbf.SYM_STRIPS_MIN_ROWS - 1, 6))
    seen, dot = [], np.dot

    def spy_dot(a, b, out=None):
        seen.append(a.shape[0])
        return dot(a, b, out=out)

    monkeypatch.setattr(np, "dot", spy_dot)
    K = sparsekit.get_kernel("rbf", gamma=0.3)(X)
    assert seen == [len(X)]  # one product of X with itself (BLAS's syrk), not strips
    np.testing.assert_allclose(K, rbf_kernel(X, gamma=0.3), rtol=1e-10, atol=0)


def test_rbf_gram_in_blocks_of_max_memory_equals_scikit_learn(rng):
    # outer blocks of 800 rows (max_memory), each filled in several blocks from row 800 on
    X, Y = rng.normal(size=(1500, 5)), rng.normal(size=(600, 5))
    assert rbf.fill_block_rows(800, 600, 8) < 800
    K = sparsekit.get_kernel("rbf", gamma=0.2)(X, Y, max_memory=800 * 600 * 8)
    np.testing.assert_allclose(K, rbf_kernel(X, Y, gamma=0.2), rtol=1e-10, atol=0)
    KX = sparsekit.get_kernel("rbf", gamma=0.2)(X, max_memory=800 * 1500 * 8)
    np.testing.assert_allclose(KX, rbf_kernel(X, gamma=0.2), rtol=1e-10, atol=0)
    np.testing.assert_array_equal(np.diag(KX), np.ones(1500))


def test_rbf_gram_blocks_run_their_products_on_one_blas_thread(monkeypatch, rng, two_blas_threads):
    X, Y = rng.normal(size=(1000, 4)), rng.normal(size=(600, 4))
    step = rbf.fill_block_rows(1000, 600, 8)
    k = sparsekit.get_kernel("rbf", gamma=0.5)
    ref = k(X, Y)
    seen, dot = [], np.dot

    def spy_dot(a, b, out=None):
        seen.append((a.shape[0], blas_threads()))
        return dot(a, b, out=out)

    monkeypatch.setattr(np, "dot", spy_dot)
    got = k(X, Y)
    assert sorted(r for r, _ in seen) == sorted(
        [step] * (1000 // step) + ([1000 % step] if 1000 % step else [])
    )
    assert {t for _, t in seen} == {1}
    np.testing.assert_array_equal(got, ref)


def test_fill_block_rows_rule():
    # about 1 MiB of output per block, at least 32 rows, at most all of them
    assert rbf.fill_block_rows(10_000, 200, 8) == (1 << 20) // (200 * 8)
    assert rbf.fill_block_rows(10_000, 1_000_000, 8) == 32
    assert rbf.fill_block_rows(20, 1_000_000, 8) == 20
    assert rbf.fill_block_rows(10_000, 200, 4) == (1 << 20) // (200 * 4)


def test_run_row_ranges_with_scratch_keeps_min_rows_and_splits_in_a_new_thread():
    def ranges(n_rows, **kw):
        seen = []
        _pools.run_row_ranges(
            lambda lo, hi, work: seen.append((lo, hi, work.shape)),
            n_rows,
            n_jobs=2,
            scratch=lambda: (np.empty(3),),
            **kw,
        )
        return sorted(seen)

    # fewer rows than min_rows: one range on the caller, with its scratch
    assert ranges(50, min_rows=100) == [(0, 50, (3,))]
    # a thread that never ran a pool block is not a worker: the rows are split
    out = []
    t = threading.Thread(target=lambda: out.append(ranges(50)))
    t.start()
    t.join()
    (split,) = out
    assert len(split) > 1 and split[0][0] == 0 and split[-1][1] == 50
    assert all(b == a2 for (_, b, _), (a2, _, _) in zip(split[:-1], split[1:]))


def test_a_block_that_nests_run_blocks_stays_a_worker_until_the_outer_call_ends():
    """Oracle: the thread identity of every call. After a nested ``run_blocks`` returns inside a
    block, a later ``run_row_ranges`` of the same block still runs inline (the caller is still
    a worker); once the outer call has returned, the caller is no worker and may use the pool."""
    main = threading.get_ident()
    seen = []

    def record(lo, hi):
        seen.append((lo, hi, threading.get_ident()))

    def block(i):
        _pools.run_blocks(lambda j: None, 2, n_jobs=2)
        _pools.run_row_ranges(record, 8, n_jobs=2)

    _pools.run_blocks(block, 1, n_jobs=1)
    assert seen == [(0, 8, main)]
    seen.clear()
    _pools.run_row_ranges(record, 8, n_jobs=2)
    assert sorted((lo, hi) for lo, hi, _ in seen) == [(r, r + 1) for r in range(8)]
    assert any(t != main for *_, t in seen)


def test_run_row_ranges_inside_a_block_runs_on_the_block_thread():
    """Oracle: the thread identity — no pool is entered from a pool's thread (nested pools would
    wait on each other)."""
    out = {}
    lock = threading.Lock()

    def block(i):
        me = threading.get_ident()
        idents = []
        _pools.run_row_ranges(lambda lo, hi: idents.append(threading.get_ident()), 16, n_jobs=2)
        with lock:
            out[i] = set(idents) == {me}

    _pools.run_blocks(block, 4, n_jobs=2)
    assert out == {i: True for i in range(4)}
