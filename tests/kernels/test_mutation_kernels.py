"""Value tests for rules of the kernels that the other kernel tests leave unchecked: default
block and tile sizes, the reference points of streamed blocks, the dtype of diagonals,
user-function kernels, the data scale named in bandwidth errors, and the triple counting of
the shortest-path kernel at key ranges where a packed sort key would overflow.

Oracles: scikit-learn's pairwise kernels, brute-force medians and triple counts, closed forms.
"""

import os
import subprocess
import sys
import textwrap
import warnings
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import pairwise as skp

import sparsekit
from sparsekit.kernels import AdditiveChi2Kernel, Chi2Kernel, LaplacianKernel, RBFKernel, base
from sparsekit.kernels.bandwidth import gamma_from_rule
from sparsekit.kernels.base import CallableKernel
from sparsekit.kernels.graph import ShortestPathKernel


def _median_gamma(Y):
    """gamma = 1 / (2 median^2), the median over distinct pairs of rows (brute force)."""
    n = len(Y)
    dists = [np.linalg.norm(Y[i] - Y[j]) for i in range(n) for j in range(i + 1, n)]
    return 1.0 / (2.0 * np.median(dists) ** 2)


# -- vector kernels: block and tile sizes -------------------------------------------------------
@pytest.mark.parametrize("name", ["rbf", "laplacian", "linear", "chi2"])
def test_default_blocks_of_a_small_gram_are_one_block(name, rng):
    # the default block holds 256 MiB of output: a 50 x 40 Gram comes as a single block
    X = rng.random((50, 6))
    Y = rng.random((40, 6))
    k = sparsekit.get_kernel(name)
    blocks = list(k.blocks(X, Y))
    assert len(blocks) == 1
    rows, block = blocks[0]
    assert (rows.start, rows.stop) == (0, 50)
    np.testing.assert_allclose(block, k(X, Y), rtol=1e-12)


def _spy_fill(monkeypatch, kernel_cls):
    calls = []
    real = kernel_cls._fill

    def spy(self, Xb, Y, ctx, out, row0, same):
        calls.append((Xb.shape[0], Y.shape[0]))
        return real(self, Xb, Y, ctx, out, row0, same)

    monkeypatch.setattr(kernel_cls, "_fill", spy)
    return calls


def test_sparse_rows_without_a_sparse_formula_fit_one_tile_when_small(monkeypatch, rng):
    # chi2 densifies tiles of at most 32 MiB: 30 x 20 and 25 x 20 float64 rows are one tile each
    X = rng.random((30, 20))
    Y = rng.random((25, 20))
    X[X < 0.5] = 0.0
    Y[Y < 0.5] = 0.0
    calls = _spy_fill(monkeypatch, Chi2Kernel)
    got = Chi2Kernel(gamma=0.3)(sp.csr_matrix(X), sp.csr_matrix(Y))
    assert calls == [(30, 25)]
    np.testing.assert_allclose(got, skp.chi2_kernel(X, Y, gamma=0.3), rtol=1e-12)


def test_sparse_tiles_respect_the_tile_budget(monkeypatch, rng):
    # with a budget of 3 rows of 8 features, no densified tile of X or Y holds more than 3 rows
    X = rng.random((11, 8))
    Y = rng.random((7, 8))
    X[X < 0.4] = 0.0
    Y[Y < 0.4] = 0.0
    monkeypatch.setattr(base, "SPARSE_TILE_BYTES", 3 * 8 * 8)
    calls = _spy_fill(monkeypatch, Chi2Kernel)
    got = Chi2Kernel()(sp.csr_matrix(X), sp.csr_matrix(Y))
    assert calls and max(a for a, _ in calls) == 3 and max(b for _, b in calls) == 3
    assert sum(a * b for a, b in calls) == 11 * 7  # every entry computed once
    np.testing.assert_allclose(got, skp.chi2_kernel(X, Y), rtol=1e-12)


# -- vector kernels: reference points and dtypes ------------------------------------------------
def test_streamed_blocks_of_an_unfitted_rule_take_gamma_from_y(rng):
    # an unfitted bandwidth rule takes gamma from the reference points Y, in blocks as in calls
    X = rng.normal(size=(9, 3))
    Y = 3.0 * rng.normal(size=(8, 3))
    want = skp.rbf_kernel(X, Y, gamma=_median_gamma(Y))
    k = RBFKernel(bandwidth="median")
    streamed = np.vstack([b for _, b in k.blocks(X, Y, max_memory=4 * 8 * 8)])
    np.testing.assert_allclose(streamed, want, rtol=1e-10)
    np.testing.assert_allclose(k(X, Y), want, rtol=1e-10)
    assert k.gamma_ is None


@pytest.mark.parametrize("cls", [RBFKernel, LaplacianKernel, Chi2Kernel])
def test_diag_keeps_float32(cls, rng):
    X = rng.random((6, 4)).astype(np.float32)
    d = cls().diag(X)
    assert d.dtype == np.float32
    np.testing.assert_array_equal(d, np.ones(6, dtype=np.float32))


# -- user functions as kernels ------------------------------------------------------------------
def _cosine(A, B):
    return skp.cosine_similarity(A, B)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_callable_kernel_equals_the_function_on_the_whole_data(dtype, rng):
    X = rng.normal(size=(300, 5)).astype(dtype)  # more rows than one diag block (256)
    Y = rng.normal(size=(20, 5)).astype(dtype)
    k = CallableKernel(_cosine)
    np.testing.assert_allclose(k(X, Y), skp.cosine_similarity(X, Y), rtol=1e-5)
    d = k.diag(X)
    assert d.dtype == dtype and d.shape == (300,)
    np.testing.assert_allclose(d, np.ones(300), rtol=1e-5)


def test_callable_kernel_passes_its_params(rng):
    X = rng.normal(size=(12, 4))
    k = CallableKernel(skp.rbf_kernel, params={"gamma": 0.3})
    np.testing.assert_allclose(k(X), skp.rbf_kernel(X, gamma=0.3), rtol=1e-12)


def test_callable_kernel_refuses_a_block_of_the_wrong_shape(rng):
    X = rng.normal(size=(5, 3))
    k = CallableKernel(lambda A, B: A @ A.T)
    with pytest.raises(ValueError, match=r"returned shape \(5, 5\).*shape \(5, 4\)"):
        k(X, X[:4])


# -- bandwidth rules ----------------------------------------------------------------------------
@pytest.mark.parametrize("amax,decade", [(9e299, "1e\\+299"), (9e-301, "1e-301")])
def test_gamma_out_of_range_names_the_decade_of_the_largest_value(amax, decade):
    # the message names 10^s with 10^s <= max|x| < 10^(s+1) (here floor(log10 max|x|))
    X = np.array([[amax, 0.0], [0.0, -amax / 3], [amax / 2, amax / 5]])
    with pytest.raises(ValueError, match=f"for data at scale {decade} "):
        gamma_from_rule(X, "median")


# -- shortest-path kernel -----------------------------------------------------------------------
def _graphs(rng, n_graphs):
    out = []
    for _ in range(n_graphs):
        n = int(rng.integers(2, 7))
        A = (rng.random((n, n)) < 0.5).astype(float)
        np.fill_diagonal(A, 0.0)
        out.append((A, rng.integers(0, 3, n)))
    return out


def test_default_graph_blocks_of_a_small_gram_are_one_block(rng):
    graphs = _graphs(rng, 20)
    k = ShortestPathKernel()
    blocks = list(k.blocks(graphs))
    assert len(blocks) == 1 and (blocks[0][0].start, blocks[0][0].stop) == (0, 20)
    np.testing.assert_array_equal(blocks[0][1], k(graphs))


def test_small_batch_is_one_chunk_of_distance_matrices(monkeypatch, rng):
    # chunks hold up to 2^23 distance entries: 30 graphs of at most 6 nodes are one chunk
    from sparsekit.kernels.graph import feature_map

    calls = []
    real = feature_map._chunk_runs

    def spy(batch, *args):
        calls.append(batch.n_graphs)
        return real(batch, *args)

    monkeypatch.setattr(feature_map, "_chunk_runs", spy)
    ShortestPathKernel().prepare(_graphs(rng, 30))
    assert calls == [30]


def test_triple_counts_with_keys_near_the_64_bit_limit(rng):
    # L^2 D = 2^61 and 5 graphs: graph * span + key would pass 2^63, so graphs are ordered by a
    # two-key sort; counts against a brute-force tally of every ordered pair
    from sparsekit.kernels.graph import _triples_cpu
    from sparsekit.kernels.graph.feature_map import all_pairs_distances
    from sparsekit.kernels.graph.input import parse_graphs

    graphs = _graphs(rng, 5)
    batch = parse_graphs(graphs)
    dist_ptr, codes, _ = all_pairs_distances(batch, False, "cpu")
    L, D = np.int64(2**20), np.int64(2**21)
    sizes = batch.sizes
    pair_ptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes * (sizes - 1), out=pair_ptr[1:])
    keys = np.empty(pair_ptr[-1], dtype=np.int64)
    counts = np.empty(pair_ptr[-1], dtype=np.float64)
    n_unique = np.empty(len(sizes), dtype=np.int64)
    _triples_cpu.count_triples(
        batch.node_ptr, dist_ptr, codes, batch.label_codes, L, D, pair_ptr, keys, counts, n_unique
    )
    for g in range(len(sizes)):
        first, n, base_ = batch.node_ptr[g], sizes[g], dist_ptr[g]
        tally = Counter()
        for u in range(n):
            for v in range(n):
                c = int(codes[base_ + u * n + v])
                if u != v and c >= 0:
                    lu, lv = int(batch.label_codes[first + u]), int(batch.label_codes[first + v])
                    tally[(lu * int(L) + lv) * int(D) + c] += 1
        want = sorted(tally.items())
        a = pair_ptr[g]
        got = list(zip(keys[a : a + n_unique[g]].tolist(), counts[a : a + n_unique[g]].tolist()))
        assert got == [(key, float(c)) for key, c in want]


def test_pair_given_as_a_list_with_nested_labels_blames_the_labels():
    # [adjacency rows, labels] is an (adjacency, labels) pair even as a list; 2-D labels are
    # the labels' fault, not a malformed 3-D adjacency
    A = [[0, 1], [1, 0]]
    labels = [[0, 1], [1, 0]]
    with pytest.raises(ValueError, match=r"labels must be 1-D"):
        ShortestPathKernel()([[A, labels]])
    # without labels the pair's second item is ignored
    np.testing.assert_array_equal(
        ShortestPathKernel(with_labels=False)([[A, labels]]),
        ShortestPathKernel(with_labels=False)([np.array(A)]),
    )


# -- sparse rows --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name,skfun",
    [
        ("laplacian", skp.laplacian_kernel),
        ("rbf", skp.rbf_kernel),
        ("linear", skp.linear_kernel),
        ("polynomial", skp.polynomial_kernel),
    ],
)
def test_kernels_with_a_sparse_formula_equal_scikit_learn_on_csr_rows(name, skfun, rng):
    # rows of different L1 norms, so that every entry depends on both of its rows' norms
    X = rng.normal(size=(13, 7)) * rng.uniform(0.5, 3.0, size=(13, 1))
    Y = rng.normal(size=(9, 7)) * rng.uniform(0.5, 3.0, size=(9, 1))
    X[rng.random(X.shape) < 0.5] = 0.0
    Y[rng.random(Y.shape) < 0.5] = 0.0
    k = sparsekit.get_kernel(name)
    np.testing.assert_allclose(
        k(sp.csr_matrix(X), sp.csr_matrix(Y)), skfun(X, Y), rtol=1e-10, atol=1e-12
    )
    np.testing.assert_allclose(k(sp.csr_matrix(X)), skfun(X), rtol=1e-10, atol=1e-12)


# -- additive chi2 at the top of the range ------------------------------------------------------
@pytest.mark.parametrize("backend", ["cpu", "cuda"])
@pytest.mark.parametrize("d", [10, 18, 20])
def test_additive_chi2_sum_rounded_past_the_range_is_never_a_silent_inf(d, backend):
    # x = (s, ..., s), z = 0 with d s = max float32 exactly: the true entry -d s is finite, but
    # a float32 sum of d terms s rounds past the largest float; then the call must warn
    top = float(np.finfo(np.float32).max)
    s = np.float32(top / d)
    if d * float(s) != top:
        s = np.nextafter(s, np.float32(np.inf)) if d * float(s) < top else np.nextafter(s, 0)
    assert d * float(s) == top  # exact: a 24-bit float32 times a small integer
    X = np.full((1, d), s, dtype=np.float32)
    Y = np.zeros((1, d), dtype=np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        K = AdditiveChi2Kernel(backend=backend)(X, Y)
    warned = any("additive-chi2 kernel values exceed" in str(w.message) for w in caught)
    assert K[0, 0] == np.float32(-top) or (K[0, 0] == -np.inf and warned)


# -- numba-cuda on NumPy >= 2.5 -----------------------------------------------------------------
def test_the_graph_cuda_module_loads_the_overloads_before_its_kernels(tmp_path):
    # as the vector kernels' CUDA module does (test_numba_cuda_compat.py): importing the
    # shortest-path CUDA module alone runs the compatibility import before its kernel compiles
    (tmp_path / "fake_overloads_graph.py").write_text("import numpy\nALIAS = numpy.row_stack\n")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import sparsekit
        from sparsekit.kernels import _numba_cuda_compat
        import numba.np.arrayobj
        if hasattr(np, "row_stack"):
            del np.row_stack
            np.__all__ = [name for name in np.__all__ if name != "row_stack"]
        _numba_cuda_compat.ARRAY_OVERLOADS = "fake_overloads_graph"
        assert "sparsekit.kernels._cuda" not in sys.modules
        from sparsekit.kernels.graph import _apsp_cuda
        assert "sparsekit.kernels._cuda" not in sys.modules
        assert sys.modules["fake_overloads_graph"].ALIAS is np.vstack
        assert not hasattr(np, "row_stack")
        print("ok")
    """)
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


# -- the GPU path has no rescaling --------------------------------------------------------------
@pytest.mark.parametrize("scale", [1e-300, 1e300])
def test_rbf_rule_on_the_cuda_backend_at_extreme_scales_equals_scikit_learn(scale, rng):
    # the rule's gamma is no float64 at these scales; the kernel falls back to the CPU's exact
    # rescaled evaluation instead of exponentiating 0 * inf on the device
    X = rng.normal(size=(15, 4))
    want = skp.rbf_kernel(X, gamma=gamma_from_rule(X, "median"))
    got = RBFKernel(bandwidth="median", backend="cuda")(X * scale)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
