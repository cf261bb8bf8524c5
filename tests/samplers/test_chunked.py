"""The sample_chunked capability of samplers, on chunks held in memory (no Dask needed)."""

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
from sparsekit.samplers.rls import DACRLSSampler, dac_chunk_partition
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
