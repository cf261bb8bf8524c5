"""Isomap's neighbourhood graph against scikit-learn's: duplicate points (edges of length 0),
disconnected graphs (every pair of components linked by its shortest link) and coordinates
whose squares overflow or underflow; the Isomap kernel's ``n_jobs`` reaching every thread pool,
and the heap buffers of the Dijkstra kernel against SciPy's ``dijkstra``."""

import threading
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.spatial
from scipy.sparse.csgraph import dijkstra
from sklearn import manifold as skm
from sklearn.datasets import make_blobs

import sparsekit
from sparsekit.manifold import Isomap, _graph_cpu
from sparsekit.manifold._neighbors import Neighbors, knn_graph
from sparsekit.manifold.kernels import (
    IsomapGeodesicKernel,
)


def assert_equal_up_to_sign(a, b, atol):
    signs = np.sign((a * b).sum(axis=0))
    np.testing.assert_allclose(a, b * signs, rtol=0, atol=atol)


def sklearn_isomap(X, n_components, n_neighbors):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its disconnected-graph and sparsity warnings
        return skm.Isomap(
            n_components=n_components, n_neighbors=n_neighbors, eigen_solver="dense"
        ).fit(X)


def test_a_duplicate_point_keeps_its_zero_length_edge():
    X = np.vstack([np.arange(10.0)[:, None], [[0.0]]])  # a chain and a copy of point 0
    ours = Isomap(1, n_neighbors=2).fit(X)
    ref = sklearn_isomap(X, 1, 2)
    assert abs(abs(ref.embedding_[0, 0]) - 4.0909090909) < 1e-9
    assert_equal_up_to_sign(ours.embedding_, ref.embedding_, 1e-9)
    dist, idx = Neighbors(X).query(X, 2, exclude_self=True)
    graph = knn_graph(dist, idx, len(X))
    assert graph[0, 10] == 0 and graph[10, 0] == 0 and graph.has_canonical_format
    assert {0, 10} <= set(graph[0].indices) | {0} and 0 in graph[10].indices


def test_repeated_rows_embed_like_sklearn(rng):
    Y = rng.normal(size=(60, 3))
    X = np.vstack([Y, Y[:20], Y[:5]])  # some rows twice, some three times
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the graph is connected: no warning either
        ours = Isomap(2, n_neighbors=5).fit(X)
    ref = sklearn_isomap(X, 2, 5)
    assert_equal_up_to_sign(ours.embedding_, ref.embedding_, 1e-8)
    X_new = rng.normal(size=(10, 3))
    assert_equal_up_to_sign(ours.transform(X_new), ref.transform(X_new), 1e-8)


def triangle_of_chains():
    corners = np.array([[0.0, 0.0], [10.0, 0.0], [5.0, 8.66]])
    return np.vstack([c + np.array([[0.0, 0.0], [1.0, 0.3], [2.0, 0.9]]) for c in corners])


@pytest.mark.parametrize("disconnected", ["default", "connect"])
def test_disconnected_graph_is_joined_like_sklearn(disconnected):
    X = triangle_of_chains()
    kwargs = {} if disconnected == "default" else {"disconnected": "connect"}
    with pytest.warns(UserWarning, match="3 connected components"):
        ours = Isomap(2, n_neighbors=2, **kwargs).fit(X)
    ref = sklearn_isomap(X, 2, 2)
    assert_equal_up_to_sign(ours.embedding_, ref.embedding_, 1e-6)


def test_clustered_data_with_five_neighbours_embeds_like_sklearn():
    X, _ = make_blobs(n_samples=120, centers=4, cluster_std=0.5, random_state=0)
    X_new, _ = make_blobs(n_samples=15, centers=4, cluster_std=0.5, random_state=1)
    with pytest.warns(UserWarning, match="connected components"):
        ours = Isomap(2, n_neighbors=5).fit(X)
    ref = sklearn_isomap(X, 2, 5)
    assert_equal_up_to_sign(ours.embedding_, ref.embedding_, 1e-6)
    assert_equal_up_to_sign(ours.transform(X_new), ref.transform(X_new), 1e-6)


def test_disconnected_raise_still_raises():
    with pytest.raises(ValueError, match="3 connected components.*increase n_neighbors"):
        Isomap(2, n_neighbors=2, disconnected="raise").fit(triangle_of_chains())
    with pytest.raises(ValueError, match="disconnected must be 'connect' or 'raise'"):
        Isomap(2, n_neighbors=2, disconnected="join").fit(triangle_of_chains())


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_extreme_coordinates_scale_the_embedding(scale, rng):
    X = rng.normal(size=(60, 3))
    X_new = rng.normal(size=(8, 3))
    plain = Isomap(2, n_neighbors=6).fit(X)
    ref = sklearn_isomap(X, 2, 6)
    scaled = Isomap(2, n_neighbors=6).fit(X * scale)
    # X * scale rounds differently from X, hence a relative tolerance of a few ulps of X
    assert_equal_up_to_sign(scaled.embedding_ / scale, plain.embedding_, 1e-9)
    assert_equal_up_to_sign(scaled.embedding_ / scale, ref.embedding_, 1e-9)
    assert_equal_up_to_sign(scaled.transform(X_new * scale) / scale, ref.transform(X_new), 1e-9)


def test_points_repeated_more_often_than_n_neighbors_embed_like_sklearn():
    # with n_neighbors=1 every neighbour of a copy is another copy: all edges inside the groups
    # have length 0, and the groups are components that only the joining links connect
    X = np.repeat([[0.0, 0.0], [3.0, 1.0]], 4, axis=0)
    X = np.vstack([X, [[7.0, 3.0], [8.0, 3.0]]])
    with pytest.warns(UserWarning, match="connected components"):
        ours = Isomap(1, n_neighbors=1).fit(X)
    assert_equal_up_to_sign(ours.embedding_, sklearn_isomap(X, 1, 1).embedding_, 1e-9)


class _RecordingTree:
    """A cKDTree that records the ``workers`` of each query."""

    seen: list = []

    def __init__(self, data):
        self._tree = _CKDTREE(data)

    def query(self, X, **kwargs):
        _RecordingTree.seen.append(kwargs.get("workers"))
        return self._tree.query(X, **kwargs)


_CKDTREE = scipy.spatial.cKDTree


def test_isomap_kernel_n_jobs_reaches_the_neighbour_queries(monkeypatch, curve):
    monkeypatch.setattr(scipy.spatial, "cKDTree", _RecordingTree)
    monkeypatch.setattr(_RecordingTree, "seen", [])
    with sparsekit.thread_limit(1):  # the library's own setting would give 1 worker
        kernel = IsomapGeodesicKernel(5, n_jobs=2).fit(curve)
        kernel(curve[:7] + 0.01)
    assert _RecordingTree.seen == [2, 2]  # fit's self-query, then the new points'


def _thread_recorder(monkeypatch, name):
    """Replace ``_graph_cpu.<name>`` by a slow wrapper that records the calling threads."""
    inner = getattr(_graph_cpu, name)
    seen = []

    def spy(*args):
        seen.append(threading.get_ident())
        time.sleep(0.02)  # every chunk is still running when the next one is submitted
        return inner(*args)

    monkeypatch.setattr(_graph_cpu, name, spy)
    return seen


def test_isomap_kernel_n_jobs_sets_the_threads_of_the_shortest_paths(monkeypatch, curve):
    seen = _thread_recorder(monkeypatch, "dijkstra_rows")
    with sparsekit.thread_limit(1):
        IsomapGeodesicKernel(5, n_jobs=2).fit(curve)
    assert len(seen) == 8  # 4 chunks per thread
    assert len(set(seen)) == 2  # the calling thread and one of the library's pool threads


def test_isomap_kernel_n_jobs_sets_the_threads_of_the_extension(monkeypatch, curve):
    with sparsekit.thread_limit(1):
        kernel = IsomapGeodesicKernel(5, n_jobs=2).fit(curve)
        seen = _thread_recorder(monkeypatch, "geodesic_extension_rows")
        kernel(curve + 0.01)
    assert len(seen) == 8
    assert len(set(seen)) == 2  # the calling thread and one of the library's pool threads


def _star(n_leaves):
    """A star graph: node 0 joined to every leaf, weights 1, 2, ...; CSR, both directions."""
    leaves = np.arange(1, n_leaves + 1)
    w = leaves.astype(np.float64)
    rows = np.concatenate([np.zeros(n_leaves, dtype=np.int64), leaves])
    cols = np.concatenate([leaves, np.zeros(n_leaves, dtype=np.int64)])
    return sp.csr_matrix((np.concatenate([w, w]), (rows, cols)), shape=(n_leaves + 1,) * 2)


def _knn_graph(X, k):
    dist, idx = Neighbors(X).query(X, k, exclude_self=True)
    return knn_graph(dist, idx, len(X))


@pytest.mark.parametrize("graph", ["star", "curve"])
def test_dijkstra_heap_is_large_enough_from_every_source(curve, graph):
    # from a star's centre every leaf is pushed at once: n - 1 heap entries for 2 (n - 1) edges.
    # The Python body of the compiled kernel checks every index, which the compiled one does not.
    g = _star(9) if graph == "star" else _knn_graph(curve, 3)
    n = g.shape[0]
    out = np.empty((n, n))
    _graph_cpu.dijkstra_rows.py_func(
        g.indptr.astype(np.int64),
        g.indices.astype(np.int64),
        g.data.astype(np.float64),
        np.arange(n, dtype=np.int64),
        0,
        n,
        out,
    )
    np.testing.assert_allclose(out, dijkstra(g, directed=False), rtol=0, atol=1e-12)
