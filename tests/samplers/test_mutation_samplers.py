"""Value tests of sampler rules that the other sampler tests leave open: importance weights,
default block and first-pass sizes, the streamed (uncached) greedy path, the one-landmark
recursion, parameter types and where warnings point. Oracles: NumPy on small dense Gram
matrices and the closed forms of the module docstrings."""

import math
import warnings

import numpy as np
import pytest

import sparsekit
from sparsekit.samplers import _greedy_cpu, rls as rls_module
from sparsekit.samplers.greedy import GreedyTraceSampler, greedy_exact_select
from sparsekit.samplers.recursive import RecursiveRLSSampler
from sparsekit.samplers.rls import (
    DACRLSSampler,
    ExactRLSSampler,
    TwoPassRLSSampler,
    chunked_dac_scores,
    dac_chunk_partition,
)

from .conftest import clustered
from .test_chunked import ListChunks


def _exact_rls(K, lam):
    """l_i = [K (K + λI)⁻¹]_ii by a dense solve."""
    return np.diag(np.linalg.solve(K + lam * np.eye(len(K)), K))


# -- importance weights -----------------------------------------------------------------------


def test_fixed_size_weights_are_inverse_first_order_inclusion_probabilities():
    # weight_i = 1 / min(1, s q_i), q = l / Σ l (the first-order inclusion probability)
    X = clustered(40, d=3, seed=5)
    kernel = sparsekit.get_kernel("rbf", gamma=0.7)
    lam, s = 0.05, 6
    lev = _exact_rls(kernel(X), lam)
    lm = ExactRLSSampler(lam=lam).sample(X, kernel, s, random_state=2)
    want = 1.0 / np.minimum(1.0, s * lev[lm.indices] / lev.sum())
    np.testing.assert_allclose(lm.weights, want, rtol=1e-8)
    assert np.all(lm.weights > 1.0)  # every point here has s q_i < 1


# -- greedy residual-trace selection ----------------------------------------------------------


def test_exact_greedy_step_clips_a_negative_squared_norm_to_zero():
    # num[i] <- max(0, num[i] + c_i² ‖c‖² − 2 c_i (Rc)_i): a squared norm, so rounding that
    # drives the update below 0 must leave 0 (and criterion 0), not any other value
    num = np.array([1.0, 0.5])
    P = np.array([2.0, 2.0])
    c = np.array([1.0, 1.0])
    Rc = np.array([10.0, 0.1])
    crit = np.empty(2)
    _greedy_cpu.exact_step(num, P, c, Rc, 1.0, 1e-12, crit, n_jobs=1)
    np.testing.assert_allclose(num, [0.0, 1.0 + 0.5 - 0.2])
    np.testing.assert_allclose(P, [1.0, 1.0])
    np.testing.assert_allclose(crit, [0.0, 1.3])


class _CallLog:
    """Delegates to a kernel and records the (rows, cols) of every Gram block it evaluates."""

    accepts = "vectors"
    name = "call-log"

    def __init__(self, inner):
        self.inner = inner
        self.calls = []

    def prepare(self, X):
        return self.inner.prepare(X)

    def take(self, X, indices):
        return self.inner.take(X, indices)

    def n_samples(self, X):
        return self.inner.n_samples(X)

    def diag(self, X):
        return self.inner.diag(X)

    def __call__(self, A, B=None):
        self.calls.append((len(A), len(A) if B is None else len(B)))
        return self.inner(A, B)


@pytest.mark.parametrize("cache_gram", [False, True])
def test_greedy_forms_the_full_gram_only_with_cache_gram(monkeypatch, cache_gram):
    # cache_gram=False streams K in row blocks (O(n l) memory): no n x n block is evaluated
    monkeypatch.setattr(rls_module, "ROW_BLOCK_BYTES", 8 * 30 * 7)  # 7 rows per block
    X = clustered(30, d=3, seed=9)
    kernel = _CallLog(sparsekit.get_kernel("rbf", gamma=0.4))
    got = greedy_exact_select(X, kernel, 4, np.random.default_rng(0), cache_gram=cache_gram)
    full = [shape for shape in kernel.calls if shape == (30, 30)]
    assert len(full) == (1 if cache_gram else 0)
    # blocks of K against every point: 7 rows at a time when streamed
    rows_of_full_width = [rows for rows, cols in kernel.calls if cols == 30]
    assert max(rows_of_full_width) == (30 if cache_gram else 7)
    K = sparsekit.get_kernel("rbf", gamma=0.4)(X)
    # the first pick maximizes ‖K e_s‖² / K_ss (Lemma of the poster, S empty)
    assert got[0] == np.argmax(np.sum(K * K, axis=0) / np.diag(K))


def test_greedy_n_features_must_be_an_integer():
    with pytest.raises(TypeError, match="n_features"):
        GreedyTraceSampler(approximate=True, n_features=64.0)


def test_greedy_early_stop_warning_points_at_the_caller():
    X = clustered(30, d=3, seed=1)
    kernel = sparsekit.get_kernel("linear")  # rank 3: the selection stops after 3 points
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        GreedyTraceSampler().sample(X, kernel, 5)
    stopped = [w for w in caught if "stopped after 3 of 5" in str(w.message)]
    assert len(stopped) == 1
    assert stopped[0].filename == __file__


# -- default sizes: ⌈√n⌉ ----------------------------------------------------------------------


@pytest.mark.parametrize("n", [100, 120])  # a perfect square and not
def test_two_pass_default_first_pass_has_ceil_sqrt_n_points(n):
    # l̂_i = [K̃ (K̃ + λI)⁻¹]_ii with K̃ = K_{X,S₀} K_{S₀}⁺ K_{S₀,X} and |S₀| = ⌈√n⌉ points
    # drawn by rng.choice(n, m, replace=False)
    X = clustered(n, d=3, seed=7)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    K = kernel(X)
    lam = 0.1
    got = TwoPassRLSSampler(lam=lam).scores(X, kernel, random_state=4)
    m = math.ceil(math.sqrt(n))
    S = np.sort(np.random.default_rng(4).choice(n, m, replace=False))
    Kt = K[:, S] @ np.linalg.pinv(K[np.ix_(S, S)], hermitian=True) @ K[S]
    want = _exact_rls(Kt, lam)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("n", [100, 120])
def test_dac_default_blocks_have_ceil_sqrt_n_points(n):
    # the partition: a permutation cut into consecutive chunks of m = ⌈√n⌉
    X = clustered(n, d=3, seed=8)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    K = kernel(X)
    lam = 0.2
    got = DACRLSSampler(lam=lam, n_jobs=1).scores(X, kernel, random_state=6)
    m = math.ceil(math.sqrt(n))
    perm = np.random.default_rng(6).permutation(n)
    want = np.empty(n)
    for a in range(0, n, m):
        b = perm[a : a + m]
        want[b] = _exact_rls(K[np.ix_(b, b)], lam)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("sizes", [[49], [30, 34, 36]])  # n = 49 (a square) and 100
def test_chunked_dac_default_block_size_is_ceil_sqrt_n(sizes):
    n = sum(sizes)
    m = math.ceil(math.sqrt(n))
    blocks = dac_chunk_partition(sizes, None, random_state=3)
    np.testing.assert_array_equal(np.sort(np.concatenate(blocks)), np.arange(n))
    start = 0
    for size in sizes:  # inside each chunk: ⌊size / m⌋ full blocks and the remainder
        inside = [len(b) for b in blocks if start <= b.min() < start + size]
        want = [m] * (size // m) + ([size % m] if size % m else [])
        assert inside == want
        start += size


def test_chunked_dac_with_blocks_of_one_gives_kii_over_kii_plus_lambda():
    # block_size=1 is allowed: every block is one point, l_i = k_ii / (k_ii + λ)
    X = np.random.default_rng(0).standard_normal((20, 3))
    kernel = sparsekit.get_kernel("linear")
    lam = 0.7
    got = chunked_dac_scores(ListChunks(X, [8, 12]), kernel, lam, 1, random_state=0)
    kii = np.sum(X * X, axis=1)
    np.testing.assert_allclose(got, kii / (kii + lam), rtol=1e-10)
    assert [len(b) for b in dac_chunk_partition([8, 12], 1, random_state=0)] == [1] * 20


# -- recursive RLS with a one-point dictionary ------------------------------------------------


def _reference_recursive(K, s, lam, seed, oversample):
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
    want = _reference_recursive(kernel(X), 1, lam, 1, oversample=1.0)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    lm = RecursiveRLSSampler(lam=lam, n_jobs=1).sample(X, kernel, 1, random_state=1)
    assert len(lm) == 1
