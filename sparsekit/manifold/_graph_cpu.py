"""CPU compute for the neighbourhood-graph methods: Dijkstra from many sources, geodesic extension.

Pure array functions (``@njit(nogil=True)``, serial): the callers split the sources or the query
rows into chunks and run the chunks on a thread pool, so one thread setting governs them and
nothing is compiled twice.

- :func:`dijkstra_rows`: shortest-path distances from ``sources[a:b]`` to every node of a
  weighted graph in CSR form (non-negative weights), one binary-heap Dijkstra per source,
  O((n + m) log n) each; ``inf`` for unreachable nodes.
- :func:`geodesic_extension_rows`: ``out[q, j] = min_k (dist[q, k] + G[nbr[q, k], j])``, the
  geodesic from a point outside the graph to every column of ``G`` through its neighbours in the
  graph (the point is an endpoint of the path, never an intermediate node).
"""

import numpy as np
from numba import njit


@njit(nogil=True, cache=True)
def dijkstra_rows(indptr, indices, weights, sources, a, b, out):
    """``out[s - a, v]``: distance from node ``sources[s]`` to ``v``, for ``a <= s < b``."""
    n = indptr.shape[0] - 1
    n_edges = indices.shape[0]
    heap_d = np.empty(n_edges + n, dtype=np.float64)
    heap_v = np.empty(n_edges + n, dtype=np.int64)
    done = np.zeros(n, dtype=np.bool_)
    for s in range(a, b):
        row = s - a
        dist = out[row]
        for v in range(n):
            dist[v] = np.inf
            done[v] = False
        src = sources[s]
        dist[src] = 0.0
        heap_d[0] = 0.0
        heap_v[0] = src
        size = 1
        while size > 0:
            du = heap_d[0]
            u = heap_v[0]
            # pop the root: move the last entry to the top and sift it down
            size -= 1
            if size > 0:
                d_last = heap_d[size]
                v_last = heap_v[size]
                i = 0
                while True:
                    c = 2 * i + 1
                    if c >= size:
                        break
                    if c + 1 < size and heap_d[c + 1] < heap_d[c]:
                        c += 1
                    if heap_d[c] >= d_last:
                        break
                    heap_d[i] = heap_d[c]
                    heap_v[i] = heap_v[c]
                    i = c
                heap_d[i] = d_last
                heap_v[i] = v_last
            if done[u]:
                continue  # a stale entry: u was settled with a shorter distance
            done[u] = True
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                nd = du + weights[e]
                if nd < dist[v]:
                    dist[v] = nd
                    # push (nd, v) and sift it up
                    i = size
                    size += 1
                    while i > 0:
                        p = (i - 1) // 2
                        if heap_d[p] <= nd:
                            break
                        heap_d[i] = heap_d[p]
                        heap_v[i] = heap_v[p]
                        i = p
                    heap_d[i] = nd
                    heap_v[i] = v


@njit(nogil=True, cache=True)
def geodesic_extension_rows(nbr_dist, nbr_idx, G, order, a, b, out):
    """``out[q, j] = min_k nbr_dist[q, k] + G[nbr_idx[q, k], j]`` for ``q = order[a:b]``.

    ``order`` visits queries that share neighbours one after the other, so the rows of ``G``
    they read are still in cache.
    """
    n_cols = G.shape[1]
    k_max = nbr_idx.shape[1]
    for t in range(a, b):
        q = order[t]
        row = out[q]
        for j in range(n_cols):
            row[j] = np.inf
        for k in range(k_max):
            dk = nbr_dist[q, k]
            gk = G[nbr_idx[q, k]]
            for j in range(n_cols):
                row[j] = min(row[j], dk + gk[j])  # branch-free: the loop vectorizes
