"""Nearest neighbours, the symmetric k-NN graph, and threaded drivers of the graph kernels."""

from __future__ import annotations

import numpy as np

from .._runtime.pools import run_blocks
from .._runtime.threads import effective_n_jobs
from . import _graph_cpu


class Neighbors:
    """Exact Euclidean k-nearest-neighbour queries on the fitted points (a k-d tree)."""

    def __init__(self, X):
        from scipy.spatial import cKDTree  # SciPy submodules load on first use (cold start)

        # a private copy: the tree refers to its data, so a caller changing X must not reach it
        self.X: np.ndarray = np.array(X, dtype=np.float64, order="C", copy=True)
        self.tree = cKDTree(self.X)

    @property
    def n_samples(self):
        return self.X.shape[0]

    def query(self, X, k, *, exclude_self=False, n_jobs=None):
        """Distances and indices of the ``k`` nearest fitted points of each row of ``X``.

        With ``exclude_self`` (``X`` is the fitted set), each point's own index is left out.
        """
        extra = 1 if exclude_self else 0
        if k + extra > self.n_samples:
            raise ValueError(
                f"n_neighbors={k} needs more than {k + extra - 1} other points, "
                f"got {self.n_samples} fitted points: lower n_neighbors"
            )
        d, i = self.tree.query(
            np.asarray(X, dtype=np.float64), k=k + extra, workers=effective_n_jobs(n_jobs)
        )
        d, i = np.atleast_2d(d), np.atleast_2d(i)
        if exclude_self:
            d, i = _drop_self(d, i)
        return np.ascontiguousarray(d), np.ascontiguousarray(i, dtype=np.int64)


def _drop_self(d, i):
    """Remove each row's own index (or, with duplicates, its last neighbour) from the results."""
    rows = np.arange(i.shape[0])[:, None]
    is_self = i == rows
    has_self = is_self.any(axis=1)
    is_self[~has_self, -1] = True  # a duplicate point took the self slot: drop the last
    keep = ~is_self
    k = i.shape[1] - 1
    return d[keep].reshape(-1, k), i[keep].reshape(-1, k)


def knn_graph(dist, idx, n):
    """Symmetric k-NN graph (CSR, float64 weights): edge ``i - j`` when either is a neighbour of
    the other, weighted by their distance (scikit-learn's ``kneighbors_graph`` made undirected).

    An edge of length 0 (duplicate points) is kept as an explicit zero: it joins the duplicates,
    as in scikit-learn (``A.maximum(A.T)`` alone drops it).
    """
    import scipy.sparse as sp

    rows = np.repeat(np.arange(n), idx.shape[1])
    A = sp.csr_matrix((dist.ravel(), (rows, idx.ravel())), shape=(n, n))
    A = A.maximum(A.T).tocsr()  # prunes the zeros; d(i, j) = d(j, i), so no other loss
    zero = dist.ravel() == 0
    if zero.any():
        r, c = rows[zero], idx.ravel()[zero]
        A = _add_edges(A, r, c, np.zeros(r.size))
    A.sort_indices()
    return A


def _add_edges(graph, rows, cols, weights):
    """``graph`` with the edges ``rows[e] - cols[e]`` (both directions; none of them already in
    ``graph``), zero weights stored: a zero-length edge is an edge."""
    import scipy.sparse as sp

    coo = graph.tocoo()
    r = np.concatenate([coo.row, rows, cols])
    c = np.concatenate([coo.col, cols, rows])
    w = np.concatenate([coo.data, weights, weights])
    out = sp.csr_matrix((w, (r, c)), shape=graph.shape)  # duplicates summed: 0 + 0 stays 0
    out.sort_indices()
    return out


def bridge_components(X, graph):
    """Join the connected components of ``graph`` as scikit-learn's Isomap does.

    Every pair of components is linked by its shortest Euclidean link (the closest pair of
    points, one in each; ``sklearn.utils.graph._fix_connected_components``), not only enough
    links to make one chain. Returns ``(graph, n_components)`` (the count before joining).
    """
    import scipy.sparse as sp
    from scipy.spatial import cKDTree

    n_comp, labels = sp.csgraph.connected_components(graph, directed=False)
    if n_comp == 1:
        return graph, 1
    members = [np.flatnonzero(labels == c) for c in range(n_comp)]
    trees = [cKDTree(X[m]) for m in members]
    rows, cols, vals = [], [], []
    for i in range(1, n_comp):
        Xi = X[members[i]]
        for j in range(i):
            d, nearest = trees[j].query(Xi, k=1)
            best = int(np.argmin(d))
            rows.append(members[i][best])
            cols.append(members[j][nearest[best]])
            vals.append(d[best])
    # the links join different components: none of them is already an edge
    graph = _add_edges(graph, np.asarray(rows), np.asarray(cols), np.asarray(vals))
    return graph, n_comp


def _chunks(n, n_jobs):
    n_chunks = min(n, 4 * n_jobs) if n else 0
    bounds = np.linspace(0, n, n_chunks + 1).astype(np.int64)
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def _run(work, n, n_jobs):
    """``work(a, b)`` over row ranges covering ``range(n)``, on the library's block pool.

    Rows are independent, so the results do not depend on the cut or the thread count.
    """
    n_jobs = effective_n_jobs(n_jobs)
    chunks = _chunks(n, n_jobs)
    run_blocks(lambda i: work(*chunks[i]), len(chunks), n_jobs=n_jobs)


def geodesics(graph, sources, *, n_jobs=None):
    """Shortest-path distances from each of ``sources`` to every node (``inf``: unreachable)."""
    sources = np.ascontiguousarray(sources, dtype=np.int64)
    out = np.empty((sources.size, graph.shape[0]), dtype=np.float64)
    indptr = graph.indptr.astype(np.int64)
    indices = graph.indices.astype(np.int64)
    weights = graph.data.astype(np.float64)

    def work(a, b):
        _graph_cpu.dijkstra_rows(indptr, indices, weights, sources, a, b, out[a:b])

    _run(work, sources.size, n_jobs)
    return out


def extend_geodesics(nbr_dist, nbr_idx, G, *, n_jobs=None):
    """``out[q, j] = min_k nbr_dist[q, k] + G[nbr_idx[q, k], j]`` (rows of ``G``: graph nodes)."""
    out = np.empty((nbr_idx.shape[0], G.shape[1]), dtype=np.float64)
    G = np.ascontiguousarray(G, dtype=np.float64)
    # queries with the same nearest neighbour read mostly the same rows of G: visit them together
    order = np.argsort(nbr_idx[:, 0], kind="stable").astype(np.int64)

    def work(a, b):
        _graph_cpu.geodesic_extension_rows(nbr_dist, nbr_idx, G, order, a, b, out)

    _run(work, nbr_idx.shape[0], n_jobs)
    return out
