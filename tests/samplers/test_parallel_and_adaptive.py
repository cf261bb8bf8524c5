"""Score samplers against dense reference computations, with several row blocks and blocks
spread over worker threads; recursive RLS with its adaptive λ."""

import math

import numpy as np
import pytest
from scipy.linalg import eigvalsh

import sparsekit
from sparsekit.samplers import rls as rls_module
from sparsekit.samplers.recursive import ADAPTIVE_FLOOR, RecursiveRLSSampler, adaptive_lambda
from sparsekit.samplers.rls import DACRLSSampler

from .conftest import clustered


def _block_rls(K, lam):
    return np.diag(K @ np.linalg.inv(K + lam * np.eye(len(K))))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_dac_scores_equal_exact_scores_of_each_block(n_jobs):
    # 13 blocks of 23 and a last block of 1 (the authors' partition: chunks of a permutation)
    X = clustered(300, seed=2)
    kernel = sparsekit.get_kernel("rbf", gamma=0.4)
    K = kernel(X)
    lam = 0.3
    got = DACRLSSampler(lam=lam, block_size=23, n_jobs=n_jobs).scores(X, kernel, random_state=5)
    perm = np.random.default_rng(5).permutation(300)
    want = np.empty(300)
    for a in range(0, 300, 23):
        b = perm[a : a + 23]
        want[b] = _block_rls(K[np.ix_(b, b)], lam)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def _reference_adaptive_lambda(K_S, w, k):
    """Musco & Musco's λ: (Σ_i w_i² [K_S]_ii − Σ top-k eig(W K_S W)) / k, floored at 1e-5."""
    if k >= len(K_S):
        return 1e-5
    ev = np.linalg.eigvalsh(np.diag(w) @ K_S @ np.diag(w))[::-1]
    return max(1e-5, (np.sum(w**2 * np.diag(K_S)) - np.sum(ev[:k])) / k)


def _reference_recursive(K, s, lam, seed):
    """Dense recursive RLS (Musco & Musco 2017), consuming the random stream as documented:
    a permutation, then one uniform draw per point of every intermediate level."""
    rng = np.random.default_rng(seed)
    n = len(K)
    oversample = math.log(s)
    k = math.ceil(s / (4 * oversample))
    sizes = [n]
    for _ in range(max(1, math.ceil(math.log2(n / s)))):
        sizes.append(math.ceil(sizes[-1] / 2))
    perm = rng.permutation(n)
    sample, w = np.arange(sizes[-1]), np.ones(sizes[-1])

    def estimates(rows, S, w):
        K_S = K[np.ix_(S, S)]
        lam_l = _reference_adaptive_lambda(K_S, w, k) if lam == "adaptive" else lam
        A = K_S + np.diag(lam_l / w**2)
        q = np.einsum("ij,ji->i", K[np.ix_(rows, S)], np.linalg.solve(A, K[np.ix_(S, rows)]))
        return np.maximum(0.0, np.diag(K)[rows] - q) / lam_l

    for level in range(len(sizes) - 2, 0, -1):
        rows = perm[: sizes[level]]
        p = np.minimum(1.0, oversample * estimates(rows, perm[sample], w))
        sample = np.flatnonzero(rng.random(rows.size) < p)
        assert sample.size > 0
        w = 1.0 / np.sqrt(p[sample])
    return np.minimum(1.0, estimates(np.arange(n), perm[sample], w))


@pytest.mark.parametrize("lam", ["adaptive", 0.5])
@pytest.mark.parametrize("n_jobs, row_bytes", [(1, None), (2, 8 * 64 * 9)])
def test_recursive_scores_equal_the_dense_reference(monkeypatch, lam, n_jobs, row_bytes):
    if row_bytes is not None:  # a few rows per block, on two threads
        monkeypatch.setattr(rls_module, "ROW_BLOCK_BYTES", row_bytes)
    X = clustered(500, d=3, seed=4)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    K = kernel(X)
    got = RecursiveRLSSampler(lam=lam, level_size=40, n_jobs=n_jobs).scores(
        X, kernel, random_state=3
    )
    want = _reference_recursive(K, 40, lam, 3)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
    if lam == 0.5:  # a fixed λ: the estimates track the exact scores of that λ
        exact = _block_rls(K, lam)
        assert np.corrcoef(got, exact)[0, 1] > 0.9


def test_adaptive_lambda_matches_the_formula(rng):
    X = rng.normal(size=(30, 3))
    K_S = sparsekit.get_kernel("rbf", gamma=0.3)(X)
    w = 1.0 / np.sqrt(rng.uniform(0.1, 1.0, size=30))
    for k in (1, 4, 12):
        want = _reference_adaptive_lambda(K_S, w, k)
        assert want > 1e-3
        assert adaptive_lambda(K_S, w, k) == pytest.approx(want, rel=1e-10)
    # the residual mass of the top k directions: equal to the spectrum's tail over k
    ev = eigvalsh(np.diag(w) @ K_S @ np.diag(w))
    assert adaptive_lambda(K_S, w, 4) == pytest.approx(np.sum(ev[:-4]) / 4, rel=1e-10)
    assert adaptive_lambda(K_S, w, 30) == ADAPTIVE_FLOOR
    assert adaptive_lambda(np.ones((3, 3)), np.ones(3), 1) == ADAPTIVE_FLOOR  # rank one: 0


@pytest.mark.parametrize("n, threaded", [(200, False), (rls_module.THREADED_FACTOR_MIN_ROWS, True)])
def test_exact_rls_factors_small_grams_on_one_blas_thread(monkeypatch, n, threaded):
    """A small exact-RLS factorization runs on one BLAS thread (threaded OpenBLAS stalls at each
    panel when another process holds a core); from the threshold on, BLAS keeps its threads."""
    from threadpoolctl import threadpool_info

    from sparsekit._runtime.threads import blas_limit

    seen = []
    original = rls_module.rls_from_gram

    def spy(K, lam, overwrite=False):
        seen.append(
            max(info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas")
        )
        return original(K, lam, overwrite=overwrite)

    monkeypatch.setattr(rls_module, "rls_from_gram", spy)
    X = np.random.default_rng(0).random((n, 3))
    kernel = sparsekit.get_kernel("rbf", gamma=1.0)
    with blas_limit(2):
        scores = rls_module.exact_rls(X, kernel, 1.0)
    assert seen == [1 if not threaded else 2]
    K = kernel(X)
    expected = np.diag(K @ np.linalg.inv(K + np.eye(n)))
    np.testing.assert_allclose(scores, expected, atol=1e-8)


@pytest.mark.parametrize(
    "name, params", [("recursive-rls", {"level_size": 30}), ("two-pass-rls", {"lam": 0.5})]
)
def test_streamed_passes_cut_every_level_and_give_the_same_scores_on_any_thread_count(
    monkeypatch, name, params
):
    """Every streamed pass is cut into at least MIN_ROW_BLOCKS row blocks (a small level is
    shared by the threads) of at most STREAM_BLOCK_BYTES of kernel values, not below
    MIN_BLOCK_ROWS rows, and the cut does not depend on n_jobs: 1 and 3 threads give bitwise
    equal scores."""
    from sparsekit.samplers import recursive

    cuts = []
    original = recursive.run_blocks

    def spy(work, n_blocks, **kwargs):
        cuts.append(n_blocks)
        return original(work, n_blocks, **kwargs)

    monkeypatch.setattr(recursive, "run_blocks", spy)
    monkeypatch.setattr(rls_module, "run_blocks", spy)
    X = clustered(2000, d=3, seed=5)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    sparsekit.get_sampler(name, n_jobs=2, **params).scores(X[:256], kernel, random_state=2)
    assert set(cuts) == {1}  # 256 rows: one block (MIN_BLOCK_ROWS = 1024)
    cuts.clear()
    monkeypatch.setattr(rls_module, "MIN_BLOCK_ROWS", 1)
    one = sparsekit.get_sampler(name, n_jobs=1, **params).scores(X, kernel, random_state=2)
    assert cuts and min(cuts) >= rls_module.MIN_ROW_BLOCKS
    three = sparsekit.get_sampler(name, n_jobs=3, **params).scores(X, kernel, random_state=2)
    np.testing.assert_array_equal(one, three)
    cuts.clear()
    monkeypatch.setattr(rls_module, "STREAM_BLOCK_BYTES", 8 * 50 * 7)  # < 20 rows per block
    few = sparsekit.get_sampler(name, n_jobs=2, **params).scores(X, kernel, random_state=2)
    assert max(cuts) > 100  # the pass over all 2000 rows: the bytes bound the cut, not the floor
    np.testing.assert_allclose(few, one, rtol=1e-10, atol=1e-13)


def _reference_recursive_fixed_lam(K, s, lam, seed, oversample):
    """Dense recursive RLS with a fixed λ and the given oversampling factor, including the
    uniform fallback of an empty level draw (module docstring of recursive.py)."""
    rng = np.random.default_rng(seed)
    n = len(K)
    sizes = [n]
    for _ in range(max(1, math.ceil(math.log2(n / s)))):
        sizes.append(math.ceil(sizes[-1] / 2))
    perm = rng.permutation(n)
    sample, w = np.arange(sizes[-1]), np.ones(sizes[-1])

    def estimates(rows, S, w):
        A = K[np.ix_(S, S)] + np.diag(lam / w**2)
        q = np.einsum("ij,ji->i", K[np.ix_(rows, S)], np.linalg.solve(A, K[np.ix_(S, rows)]))
        return np.maximum(0.0, np.diag(K)[rows] - q) / lam

    for level in range(len(sizes) - 2, 0, -1):
        rows = perm[: sizes[level]]
        p = np.minimum(1.0, oversample * estimates(rows, perm[sample], w))
        sample = np.flatnonzero(rng.random(rows.size) < p)
        if sample.size == 0:
            sample = np.sort(rng.choice(rows.size, min(s, rows.size), replace=False))
            w = np.full(sample.size, math.sqrt(rows.size / sample.size))
        else:
            w = 1.0 / np.sqrt(p[sample])
    return np.minimum(1.0, estimates(np.arange(n), perm[sample], w))


def test_recursive_rls_with_one_landmark_uses_an_oversampling_factor_of_one():
    # s = 1: log(s) = 0 would make every keep probability 0; the factor is 1 instead
    X = clustered(60, d=3, seed=2)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    lam = 0.3
    got = RecursiveRLSSampler(lam=lam, level_size=1, n_jobs=1).scores(X, kernel, random_state=1)
    want = _reference_recursive_fixed_lam(kernel(X), 1, lam, 1, oversample=1.0)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    lm = RecursiveRLSSampler(lam=lam, n_jobs=1).sample(X, kernel, 1, random_state=1)
    assert len(lm) == 1
