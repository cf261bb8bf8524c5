"""The sample_chunked capability of samplers, on chunks held in memory (no Dask needed)."""

import math

import numpy as np
import pytest

import sparsekit
from sparsekit.samplers import _draw
from sparsekit.samplers.chunked import (
    ChunkedData,
    check_chunked_landmarks,
    integer_seed,
    supports_chunked,
)
from sparsekit.samplers.rls import (
    DACRLSSampler,
    chunked_dac_scores,
    dac_chunk_partition,
)
from sparsekit.samplers.uniform import UniformSampler


class ListChunks:
    """ChunkedData over row blocks of an in-memory array, recording each chunk visited."""

    def __init__(self, X, sizes):
        self.n_samples = len(X)
        self.chunk_sizes = tuple(sizes)
        bounds = np.cumsum([0, *sizes])
        self._chunks = [X[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        self.visited = []

    def map_chunks(self, func, *args):
        out = []
        for i, chunk in enumerate(self._chunks):
            self.visited.append(i)
            out.append(func(chunk, i, *args))
        return out


@pytest.fixture
def X():
    return np.random.default_rng(0).standard_normal((90, 3))


def test_the_capability_is_read_from_the_component():
    assert isinstance(ListChunks(np.zeros((2, 1)), [2]), ChunkedData)
    assert supports_chunked(UniformSampler()) and supports_chunked(DACRLSSampler())
    assert not supports_chunked(sparsekit.get_sampler("recursive-rls"))
    assert not supports_chunked(sparsekit.get_sampler("rls"))


@pytest.mark.parametrize("replace", [False, True])
def test_uniform_chunked_draw_is_the_in_memory_draw_and_reads_no_chunk(X, replace):
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    data = ListChunks(X, [40, 30, 20])
    idx, weights = UniformSampler(replace).sample_chunked(data, kernel, 12, random_state=3)
    ref = UniformSampler(replace).sample(X, kernel, 12, random_state=3)
    np.testing.assert_array_equal(idx, ref.indices)
    np.testing.assert_array_equal(weights, np.ones(12))
    assert data.visited == []


def test_dac_chunked_scores_are_the_in_memory_scores_of_the_chunk_partition(X):
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    sizes = [40, 30, 20]
    data = ListChunks(X, sizes)
    idx, weights = DACRLSSampler(lam=0.1, block_size=7).sample_chunked(
        data, kernel, 10, random_state=5
    )
    assert data.visited == [0, 1, 2]
    blocks = dac_chunk_partition(sizes, 7, random_state=5)
    # every block lies inside one chunk; together they cover every row once
    bounds = np.cumsum([0, *sizes])
    assert all(
        np.searchsorted(bounds, b.min(), "right") == np.searchsorted(bounds, b.max(), "right")
        for b in blocks
    )
    np.testing.assert_array_equal(np.sort(np.concatenate(blocks)), np.arange(90))
    scores = DACRLSSampler(lam=0.1).scores_for_partition(X, kernel, blocks)
    ref_idx, ref_w = _draw.fixed_size(scores, 10, np.random.default_rng(5))
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_allclose(weights, ref_w)


def test_dac_chunked_refuses_bernoulli_and_lam_rules(X):
    data = ListChunks(X, [45, 45])
    kernel = sparsekit.get_kernel("rbf")
    with pytest.raises(ValueError, match="mode='fixed'"):
        DACRLSSampler(mode="bernoulli").sample_chunked(data, kernel, 5)
    with pytest.raises(TypeError, match="lam must be a number"):
        DACRLSSampler(lam="inverse-mean-norm").sample_chunked(data, kernel, 5)


def test_integer_seed_and_result_checks():
    assert integer_seed(7) == 7
    g1, g2 = np.random.default_rng(1), np.random.default_rng(1)
    assert integer_seed(g1) == int(g2.integers(2**63))
    sampler = UniformSampler()
    idx, w = check_chunked_landmarks((np.array([3, 1]), [1.0, 2.0]), 4, sampler)
    assert idx.dtype == np.int64 and w.dtype == np.float64
    with pytest.raises(TypeError, match=r"must return \(indices, weights\)"):
        check_chunked_landmarks(np.array([1, 2]), 4, sampler)
    with pytest.raises(ValueError, match=r"positions in \[0, 4\)"):
        check_chunked_landmarks((np.array([4]), [1.0]), 4, sampler)
    with pytest.raises(ValueError, match="2 weights for 1 landmarks"):
        check_chunked_landmarks((np.array([0]), [1.0, 1.0]), 4, sampler)


# -- the protocol's checks and seeds, each against an outside oracle ----------------------------
def test_result_check_refuses_negative_and_fractional_positions_and_casts_weights():
    """Oracle: the protocol's text (positions are integers in [0, n); weights float64)."""
    sampler = UniformSampler()
    with pytest.raises(ValueError, match=r"positions in \[0, 4\)"):
        check_chunked_landmarks((np.array([-1, 2]), [1.0, 1.0]), 4, sampler)
    with pytest.raises(ValueError, match="integer array"):
        check_chunked_landmarks((np.array([0.0, 2.5]), [1.0, 1.0]), 4, sampler)
    with pytest.raises(ValueError, match="non-empty"):
        check_chunked_landmarks((np.array([], dtype=np.int64), []), 4, sampler)
    idx, w = check_chunked_landmarks((np.array([0, 3], dtype=np.int32), [2, 5]), 4, sampler)
    assert idx.dtype == np.int64 and w.dtype == np.float64
    np.testing.assert_array_equal(w, [2.0, 5.0])


def test_a_bool_is_not_a_seed_of_the_chunks():
    """Oracle: the library's check_random_state refuses True; integer_seed must too (True
    would otherwise seed the chunks as 1)."""
    with pytest.raises(TypeError, match="random_state"):
        integer_seed(True)


def test_each_chunk_is_permuted_by_its_own_spawned_generator():
    """Oracle: NumPy's SeedSequence(seed).spawn(k), one generator per chunk, each permuting its
    chunk's rows (the module's rule), written out here; two chunks of the same size get
    different permutations."""
    sizes, m, seed = [30, 30, 30], 6, 11
    blocks = dac_chunk_partition(sizes, m, random_state=seed)
    expected = []
    for i, ss in enumerate(np.random.SeedSequence(seed).spawn(len(sizes))):
        perm = np.random.default_rng(ss).permutation(30) + 30 * i
        expected += [perm[a : a + m] for a in range(0, 30, m)]
    assert len(blocks) == len(expected)
    for got, ref in zip(blocks, expected):
        np.testing.assert_array_equal(got, ref)
    first = np.concatenate(blocks[:5])
    second = np.concatenate(blocks[5:10]) - 30
    assert not np.array_equal(first, second)


def test_default_block_size_is_ceil_sqrt_of_the_global_n(X):
    """Oracle: ⌈√90⌉ = 10 rows per block (the global n, not a chunk's), as in memory; the
    chunked scores are the in-memory scores of that partition."""
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    sizes = [50, 40]
    data = ListChunks(X, sizes)
    blocks = dac_chunk_partition(sizes, None, random_state=2)
    assert sorted(len(b) for b in blocks) == [10] * 9
    scores = DACRLSSampler(lam=0.1).scores_for_partition(X, kernel, blocks)
    got = chunked_dac_scores(data, kernel, 0.1, None, 2)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, scores, rtol=1e-12)


def test_float32_chunks_give_float64_scores():
    """Oracle: the protocol's text (scores float64); the values are those of the float64 data
    to float32 rounding."""
    X = np.random.default_rng(1).standard_normal((40, 3))
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    got32 = chunked_dac_scores(ListChunks(X.astype(np.float32), [20, 20]), kernel, 0.1, 5, 0)
    got64 = chunked_dac_scores(ListChunks(X, [20, 20]), kernel, 0.1, 5, 0)
    assert got32.dtype == np.float64
    np.testing.assert_allclose(got32, got64, rtol=1e-4, atol=1e-6)


def test_chunked_paths_refuse_what_sample_refuses(X):
    """Oracle: the in-memory ``sample`` of the same sampler refuses the same parameters."""
    kernel = sparsekit.get_kernel("rbf")
    data = ListChunks(X, [45, 45])
    zero = DACRLSSampler()
    zero.lam = 0.0
    with pytest.raises(ValueError, match="lam"):
        zero.sample(X, kernel, 5)
    with pytest.raises(ValueError, match="lam"):
        zero.sample_chunked(data, kernel, 5)
    with pytest.raises(ValueError, match=r"n_landmarks must be in \[1, n_samples=90\]"):
        DACRLSSampler(lam=0.1).sample(X, kernel, 91)
    with pytest.raises(ValueError, match=r"n_landmarks must be in \[1, n_samples=90\]"):
        DACRLSSampler(lam=0.1).sample_chunked(data, kernel, 91)
    with pytest.raises(TypeError, match="replace must be True or False"):
        UniformSampler("yes").sample(X, kernel, 5)
    with pytest.raises(TypeError, match="replace must be True or False"):
        UniformSampler("yes").sample_chunked(data, kernel, 5)


def test_the_capability_needs_a_callable_method():
    """Oracle: the protocol's text (``sample_chunked`` is a method): an attribute set to None
    is no capability."""

    class Off(UniformSampler):
        sample_chunked = None

    assert not supports_chunked(Off())
    assert not supports_chunked(object())


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
