"""CPU compute for shortest-path kernels: all-pairs shortest paths over a batch of graphs.

Graphs arrive packed as block-diagonal CSR arrays (``node_ptr``, ``indptr``, ``indices`` with
targets local to their graph, ``weights``); the distance matrix of graph ``g`` (``n_g x n_g``,
row-major) is written at ``dist[dist_ptr[g]:dist_ptr[g+1]]``. One call handles the whole batch:
serial ``nogil`` Numba kernels over a range of graphs run on ranges from several threads
(:func:`sparsekit._runtime.pools.run_row_ranges`; no ``parallel=True``, short first-call compile).

- :func:`bfs_distances`: unweighted graphs, one breadth-first search per source,
  O(n (n + m)) per graph. Hop counts as int32, ``-1`` for unreachable pairs.
- :func:`floyd_warshall_distances`: weighted graphs, O(n^3) per graph. Float64, ``inf`` for
  unreachable pairs. The relaxation order (k outer, then i, then j) and the sums
  ``d[i, k] + d[k, j]`` are those of the textbook algorithm (and of GraKeL's
  ``floyd_warshall``), so the distances are bit-identical to it and to the CUDA step kernel.
"""

import numpy as np
from numba import njit

from ..._runtime.pools import run_row_ranges


def bfs_distances(node_ptr, indptr, indices, dist_ptr, dist):
    """Hop distances of every graph of the batch into ``dist`` (int32, -1 = unreachable)."""
    n_max = int(np.diff(node_ptr).max(initial=0))
    run_row_ranges(
        _bfs_graphs,
        node_ptr.shape[0] - 1,
        node_ptr,
        indptr,
        indices,
        dist_ptr,
        dist,
        scratch=lambda: (np.empty(n_max, dtype=np.int64),),
    )


@njit(cache=True, nogil=True)
def _bfs_graphs(lo, hi, node_ptr, indptr, indices, dist_ptr, dist, queue):
    for g in range(lo, hi):
        first = node_ptr[g]
        n = node_ptr[g + 1] - first
        base = dist_ptr[g]
        for s in range(n):
            row = base + s * n
            for v in range(n):
                dist[row + v] = -1
            dist[row + s] = 0
            queue[0] = s
            head = 0
            tail = 1
            while head < tail:
                u = queue[head]
                head += 1
                du = dist[row + u] + 1
                for e in range(indptr[first + u], indptr[first + u + 1]):
                    v = indices[e]
                    if dist[row + v] < 0:
                        dist[row + v] = du
                        queue[tail] = v
                        tail += 1


def floyd_warshall_distances(node_ptr, indptr, indices, weights, dist_ptr, dist):
    """Weighted distances of every graph of the batch into ``dist`` (float64, inf = unreachable).

    ``d[i, j]`` starts at the weight of edge ``i -> j`` (``inf`` without an edge, 0 on the
    diagonal, whatever self-loops say) and is relaxed through every intermediate node ``k``.
    """
    run_row_ranges(
        _floyd_warshall_graphs,
        node_ptr.shape[0] - 1,
        node_ptr,
        indptr,
        indices,
        weights,
        dist_ptr,
        dist,
    )


@njit(cache=True, nogil=True)
def _floyd_warshall_graphs(lo, hi, node_ptr, indptr, indices, weights, dist_ptr, dist):
    inf = np.inf
    for g in range(lo, hi):
        first = node_ptr[g]
        n = node_ptr[g + 1] - first
        base = dist_ptr[g]
        for t in range(n * n):
            dist[base + t] = inf
        for i in range(n):
            for e in range(indptr[first + i], indptr[first + i + 1]):
                dist[base + i * n + indices[e]] = weights[e]
            dist[base + i * n + i] = 0.0
        for k in range(n):
            rk = base + k * n
            for i in range(n):
                ri = base + i * n
                dik = dist[ri + k]
                if dik == inf:
                    continue
                for j in range(n):
                    t = dik + dist[rk + j]
                    if t < dist[ri + j]:
                        dist[ri + j] = t
