"""Rules of the manifold kernels, graph code, eigensolvers and memory check that the value tests
of the estimators do not reach: ``n_jobs`` reaching every thread pool, the heap buffers of the
Dijkstra kernel, the error messages of bad ``base`` kernels and of too many LLE components, and
LLE's exemption from the dense-memory check."""

import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.spatial
from scipy.sparse.csgraph import dijkstra

import sparsekit
from sparsekit._runtime import memory as _memory
from sparsekit.exceptions import NotFittedError
from sparsekit.kernels import RBFKernel
from sparsekit.manifold import Isomap, LocallyLinearEmbedding, _graph_cpu
from sparsekit.manifold._neighbors import Neighbors, knn_graph
from sparsekit.manifold.kernels import (
    CentredKernel,
    IsomapGeodesicKernel,
    LLEKernel,
    SpectralNormalizedKernel,
    neg_half_sq_dist,
)


@pytest.fixture
def curve():
    t = np.linspace(0.0, 3.0, 40)
    return np.column_stack([np.cos(t), np.sin(t), 0.1 * t])


# -- the argument errors ------------------------------------------------------------------------
@pytest.mark.parametrize("base", [5, RBFKernel], ids=["not-callable", "a-class"])
@pytest.mark.parametrize("cls", [CentredKernel, SpectralNormalizedKernel])
def test_a_bad_base_kernel_is_refused_naming_base(curve, cls, base):
    with pytest.raises(TypeError, match=r"^base must be a kernel name"):
        cls(base=base).fit(curve)


@pytest.mark.parametrize(
    "kernel",
    [
        CentredKernel(neg_half_sq_dist),
        IsomapGeodesicKernel(5),
        LLEKernel(5),
        SpectralNormalizedKernel(base_params={"gamma": 1.0}),
    ],
    ids=lambda k: type(k).__name__,
)
def test_fit_returns_the_kernel_itself(curve, kernel):
    assert kernel.fit(curve) is kernel


def test_unfitted_spectral_kernel_degrees_say_not_fitted(curve):
    with pytest.raises(NotFittedError, match="not fitted: call fit"):
        SpectralNormalizedKernel().evaluate_with_degrees(curve)


def test_lle_with_as_many_components_as_samples_names_the_skipped_constant(curve):
    # the constant eigenvector is skipped, so n samples give at most n - 1 components
    X = curve[:12]
    with pytest.raises(ValueError, match=r"asked for 12 components \(\+1 skipped\) of 12"):
        LocallyLinearEmbedding(12, n_neighbors=4).fit(X)
    assert LocallyLinearEmbedding(11, n_neighbors=4).fit(X).embedding_.shape == (12, 11)


# -- the memory check ---------------------------------------------------------------------------
def test_lle_is_not_memory_checked_but_isomap_is(monkeypatch, curve):
    # LLE forms sparse weights and solves a sparse eigenproblem: no dense n x n matrix to refuse
    monkeypatch.setattr(_memory, "available_memory", lambda: 0)
    LocallyLinearEmbedding(2, n_neighbors=5).fit(curve)
    with pytest.raises(_memory.InsufficientMemoryError):
        Isomap(2, n_neighbors=5).fit(curve)


# -- n_jobs reaches every thread pool -----------------------------------------------------------
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


# -- the Dijkstra kernel's heap -----------------------------------------------------------------
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


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_a_bad_transform_neighbors_is_refused_at_fit_naming_it(bad):
    """0 would otherwise fall back to ``n_neighbors`` silently (``k = 0 or n_neighbors``)."""
    X = np.random.default_rng(0).standard_normal((20, 3))
    with pytest.raises(ValueError, match=r"transform_neighbors must be an integer >= 1"):
        IsomapGeodesicKernel(n_neighbors=5, transform_neighbors=bad).fit(X)
