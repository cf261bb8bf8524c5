"""The exact MMD² in row blocks and in square tiles on the block pool, against brute-force
NumPy MMD².

Oracles: the three Gram matrices written out whole (scikit-learn's ``rbf_kernel``, NumPy's
products, sums of exact products of powers of two) and summed directly; the tile cut is forced
below the sample sizes (and not dividing them) through ``max_memory`` and ``POOL_MIN_ENTRIES``;
the row blocks the ``max_memory`` rule fixes (rows = bytes // (8 × columns), at least 1).
"""

import threading

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import sparsekit
from sparsekit.exceptions import UnknownComponentError
from sparsekit.registry import Registry
from sparsekit.stats import exact, mmd2_biased, mmd2_unbiased


def brute(KA, KB, KAB, unbiased):
    n, m = len(KA), len(KB)
    if unbiased:
        return (
            (KA.sum() - np.trace(KA)) / (n * (n - 1))
            + (KB.sum() - np.trace(KB)) / (m * (m - 1))
            - 2.0 * KAB.sum() / (n * m)
        )
    return KA.sum() / n**2 + KB.sum() / m**2 - 2.0 * KAB.sum() / (n * m)


@pytest.fixture
def pooled(monkeypatch):
    """Every input large enough for the pool; the calls to ``run_blocks`` are counted."""
    import sparsekit._runtime.pools as rr

    calls = []
    run = rr.run_blocks

    def counting(work, n_blocks, **kw):
        calls.append(n_blocks)
        return run(work, n_blocks, **kw)

    monkeypatch.setattr(exact, "POOL_MIN_ENTRIES", 0)
    monkeypatch.setattr(rr, "run_blocks", counting)
    return calls


@pytest.mark.parametrize("unbiased", [False, True])
@pytest.mark.parametrize(
    "max_memory, side", [(8 * 7**2, 7), (8 * 16**2, 16), (8 * 40**2 + 7, 40), (None, 1024)]
)
def test_tiles_give_the_brute_force_statistic(rng, pooled, unbiased, max_memory, side):
    A = rng.normal(size=(53, 3))
    B = rng.normal(size=(38, 3)) + 0.3
    assert exact._tile_side(max_memory) == side
    want = brute(
        rbf_kernel(A, gamma=0.4), rbf_kernel(B, gamma=0.4), rbf_kernel(A, B, gamma=0.4), unbiased
    )
    f = mmd2_unbiased if unbiased else mmd2_biased
    got = f(A, B, "rbf", kernel_params={"gamma": 0.4}, max_memory=max_memory)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)
    # the three sums' tiles in one pool: 53 = 7·7 + 4 rows give 8 row tiles, 38 give 6, so
    # 8·9/2 + 6·7/2 + 8·6 tiles with side 7
    if side == 7:
        assert pooled == [36 + 21 + 48]
    elif side == 1024:
        assert pooled == [3]


def test_weighted_tiles_add_up_to_the_whole_sums(rng):
    # integer matrices: the weighted tile sums must equal the direct sums exactly
    S = rng.integers(0, 1000, size=(30, 30)).astype(np.float64)
    S = S + S.T
    for r0, r1, side in [(0, 10, 3), (5, 22, 4), (0, 7, 7), (0, 7, 100), (3, 30, 1)]:
        total = 0.0
        for a, b, c0, c1, count in exact._sym_blocks(r0, r1, 8 * side**2, tiles=True):
            assert b - a <= side and c1 - c0 <= side and c0 >= a
            total += {exact._ONCE: 1.0, exact._TWICE: 2.0}[count] * S[a:b, c0:c1].sum()
        assert total == S[r0:r1, r0:r1].sum()
        cover = np.zeros((30, 30))
        for a, b, c0, c1, count in exact._cross_blocks(r0, r1, 3, 30, 8 * side**2, tiles=True):
            assert count == exact._ONCE and b - a <= side and c1 - c0 <= side
            cover[a:b, c0:c1] += 1.0
        want = np.zeros((30, 30))
        want[r0:r1, 3:30] = 1.0
        assert np.array_equal(cover, want)


@pytest.mark.parametrize("unbiased", [False, True])
def test_one_and_two_threads_give_bitwise_equal_statistics(rng, unbiased):
    A = rng.normal(size=(700, 4))
    B = rng.normal(size=(650, 4)) + 0.1
    f = mmd2_unbiased if unbiased else mmd2_biased
    kw = {"kernel_params": {"gamma": 0.2}, "max_memory": 8 * 150**2}
    one = f(A, B, "rbf", n_jobs=1, **kw)
    two = f(A, B, "rbf", n_jobs=2, **kw)
    with sparsekit.thread_limit(2):
        default = f(A, B, "rbf", **kw)
    assert one == two == default
    want = brute(
        rbf_kernel(A, gamma=0.2), rbf_kernel(B, gamma=0.2), rbf_kernel(A, B, gamma=0.2), unbiased
    )
    assert one == pytest.approx(want, rel=1e-11)


@pytest.mark.parametrize("unbiased", [False, True])
def test_float32_tiles_stay_float32_and_are_summed_in_float64(pooled, unbiased):
    # products of powers of two are exact in float32; the sums 2**26 + 16389 or 2**24 + 1 are
    # not, so a float32 accumulation would be off; the pooled linear kernel computes in float32
    A = np.array([[4096.0], [4096.0], [1.0], [2.0**-12]])
    B = np.array([[4096.0], [2.0**-12], [1.0]])
    f = mmd2_unbiased if unbiased else mmd2_biased
    got = f(A.astype(np.float32), B.astype(np.float32), "linear", max_memory=8 * 2**2)
    assert pooled, "the linear kernel should take the pool"
    want = brute(A @ A.T, B @ B.T, A @ B.T, unbiased)
    assert got == pytest.approx(want, rel=1e-13)

    seen = []
    k = sparsekit.get_kernel("linear")
    call = type(k).__call__

    def recording(self, X, Y=None, **kw):
        seen.append((X.dtype, kw["out"].dtype))
        return call(self, X, Y, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(type(k), "__call__", recording)
        f(A.astype(np.float32), B.astype(np.float32), k, max_memory=8 * 2**2)
    assert seen and all(s == (np.float32, np.float32) for s in seen)


def test_a_user_function_is_called_in_order_on_the_calling_thread(rng, pooled):
    # a user's function may keep state: it keeps the row blocks, in order, on one thread
    A, B = rng.normal(size=(40, 2)), rng.normal(size=(30, 2))
    threads, shapes = set(), []

    def k(a, b):
        threads.add(threading.get_ident())
        shapes.append((len(a), len(b)))
        return a @ b.T

    got = mmd2_biased(A, B, k, max_memory=8 * 40 * 10, n_jobs=2)
    assert threads == {threading.get_ident()} and not pooled
    assert shapes[:4] == [(10, 40), (10, 30), (10, 20), (10, 10)]
    assert got == pytest.approx(brute(A @ A.T, B @ B.T, A @ B.T, False), rel=1e-12, abs=1e-13)


def test_a_failing_tile_raises_its_error(rng, pooled, monkeypatch):
    A, B = rng.normal(size=(30, 2)), rng.normal(size=(20, 2))
    real = exact._block_sum

    def failing(kernel, data, block, cols, out=None):
        if block[0] >= 20:
            raise RuntimeError("tile failed")
        return real(kernel, data, block, cols, out)

    monkeypatch.setattr(exact, "_block_sum", failing)
    with pytest.raises(RuntimeError, match="tile failed"):
        mmd2_unbiased(A, B, "laplacian", max_memory=8 * 10**2, n_jobs=2)


def test_a_failing_fused_rbf_tile_raises_its_error(rng, pooled, monkeypatch):
    from sparsekit.stats import _rbf_tiles

    A, B = rng.normal(size=(30, 2)), rng.normal(size=(20, 2))
    real = _rbf_tiles.RBFTiles.tile_sum

    def failing(self, a, b, c0, c1, buf):
        if a >= 20:
            raise RuntimeError("tile failed")
        return real(self, a, b, c0, c1, buf)

    monkeypatch.setattr(_rbf_tiles.RBFTiles, "tile_sum", failing)
    with pytest.raises(RuntimeError, match="tile failed"):
        mmd2_unbiased(A, B, "rbf", max_memory=8 * 10**2, n_jobs=2)


def test_kernels_that_may_use_the_gpu_keep_the_calling_thread(rng, pooled, monkeypatch):
    # "auto" on a machine with a usable device: the row blocks, on the calling thread
    import sparsekit.kernels.base as base

    A, B = rng.normal(size=(30, 2)), rng.normal(size=(20, 2))
    k = sparsekit.get_kernel("rbf", gamma=0.5, backend="auto")
    assert exact._pool_safe(k, A)
    monkeypatch.setattr(base, "cuda_usable", lambda: True)
    assert not exact._pool_safe(k, A)
    got = mmd2_biased(A, B, k, max_memory=8 * 5**2)  # blocks too small for the GPU
    assert not pooled
    want = brute(
        rbf_kernel(A, gamma=0.5), rbf_kernel(B, gamma=0.5), rbf_kernel(A, B, gamma=0.5), False
    )
    assert got == pytest.approx(want, rel=1e-12)
    assert exact._pool_safe(sparsekit.get_kernel("rbf", gamma=0.5, backend="cpu"), A)
    assert not exact._pool_safe(sparsekit.get_kernel("shortest-path"), A)


def test_a_budget_below_one_entry_gives_tiles_of_one_entry():
    assert exact._tile_side(0) == exact._tile_side(-5) == exact._tile_side(7) == 1


def direct(A, B, k, unbiased):
    KA, KB, KAB = k(A, A), k(B, B), k(A, B)
    n, m = len(A), len(B)
    if unbiased:
        return (
            (KA.sum() - np.trace(KA)) / (n * (n - 1))
            + (KB.sum() - np.trace(KB)) / (m * (m - 1))
            - 2.0 * KAB.sum() / (n * m)
        )
    return KA.sum() / n**2 + KB.sum() / m**2 - 2.0 * KAB.sum() / (n * m)


def linear64(a, b):
    return np.asarray(a, dtype=np.float64) @ np.asarray(b, dtype=np.float64).T


def recorder():
    """The linear kernel as a function, and the list of the Gram shapes it is asked for."""
    calls = []

    def k(a, b):
        calls.append((len(a), len(b)))
        return linear64(a, b)

    return k, calls


@pytest.mark.parametrize("unbiased", [False, True])
def test_row_blocks_follow_max_memory(rng, unbiased):
    A, B = rng.normal(size=(10, 1)), rng.normal(size=(7, 1))
    k, calls = recorder()
    f = mmd2_unbiased if unbiased else mmd2_biased
    got = f(A, B, k, max_memory=240)
    # 240 bytes: 240 // (8·10) = 3 rows of A against the rest of A, 240 // (8·7) = 4 rows of B,
    # 4 rows of A against the 7 columns of B
    assert calls[:9] == [(3, 10), (3, 7), (3, 4), (1, 1), (4, 7), (3, 3), (4, 7), (4, 7), (2, 7)]
    assert got == pytest.approx(direct(A, B, linear64, unbiased), rel=1e-12, abs=1e-12)


def test_default_block_is_32_mib(rng):
    # 32 MiB hold 2**22 float64: 2**22 // 4096 = 1024 rows against 4096 columns (the pool is
    # the 4096 points of A and 5 of B), so A is summed in 4 blocks, B in one
    A, B = rng.normal(size=(4096, 1)), rng.normal(size=(5, 1))
    k, calls = recorder()
    got = mmd2_biased(A, B, k)
    assert calls[:4] == [(1024, 4096), (1024, 3072), (1024, 2048), (1024, 1024)]
    assert calls[4] == (5, 5)
    assert got == pytest.approx(direct(A, B, linear64, False), rel=1e-9)


@pytest.mark.parametrize("unbiased", [False, True])
def test_a_budget_below_one_row_still_takes_one_row_per_block(rng, unbiased):
    A, B = rng.normal(size=(5, 2)), rng.normal(size=(4, 2))
    k, calls = recorder()
    f = mmd2_unbiased if unbiased else mmd2_biased
    got = f(A, B, k, max_memory=1)
    assert calls[:5] == [(1, 5), (1, 4), (1, 3), (1, 2), (1, 1)]
    assert got == pytest.approx(direct(A, B, linear64, unbiased), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("unbiased", [False, True])
@pytest.mark.parametrize("max_memory", [8, None])
def test_float32_grams_are_summed_in_float64(unbiased, max_memory):
    # the linear kernel on float32 data gives float32 Grams; products of powers of two are
    # exact in float32, but sums such as 2**26 + 16389 or 2**24 + 1 are not: a float32
    # accumulation is off by at least 1
    A = np.array([[4096.0], [4096.0], [1.0], [2.0**-12]])
    B = np.array([[4096.0], [2.0**-12], [1.0]])
    f = mmd2_unbiased if unbiased else mmd2_biased
    got = f(A.astype(np.float32), B.astype(np.float32), "linear", max_memory=max_memory)
    assert got == pytest.approx(direct(A, B, linear64, unbiased), rel=1e-13)


@pytest.mark.parametrize("f", [mmd2_biased, mmd2_unbiased])
def test_kernel_name_is_resolved_in_the_given_registry(rng, f):
    A, B = rng.normal(size=(5, 2)), rng.normal(size=(4, 2))
    with pytest.raises(UnknownComponentError):
        f(A, B, "rbf", registry=Registry(builtins=False, entry_points=False))
    reg = Registry(entry_points=False)
    assert f(A, B, "linear", registry=reg) == pytest.approx(
        direct(A, B, linear64, f is mmd2_unbiased), rel=1e-12, abs=1e-12
    )


def test_unbiased_accepts_two_points_per_sample(rng):
    A, B = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    assert mmd2_unbiased(A, B, linear64) == pytest.approx(direct(A, B, linear64, True), rel=1e-12)
    with pytest.raises(ValueError, match="at least two points per sample"):
        mmd2_unbiased(A[:1], B, linear64)
