"""CUDA compute for shortest-path kernels: batched Floyd–Warshall on the GPU.

The packed distance matrices of all graphs live in one device array; one thread owns one
entry ``(g, i, j)``. Step ``k`` relaxes every entry of every graph with ``n_g > k`` at once::

    d[i, j] <- min(d[i, j], d[i, k] + d[k, j])

Within a step the entries read (row and column ``k``) do not change, because ``d[k, k] = 0``
and weights are non-negative, so the threads need no synchronisation beyond the launch
boundary; ``max(n_g)`` launches finish the batch. The sums are those of the sequential
algorithm, so the result is bit-identical to :func:`._apsp_cpu.floyd_warshall_distances`.
Unweighted graphs use weight 1 (exact integer hop counts in float64).

Imported only when ``backend="cuda"`` is chosen; tested against the CPU path with
``NUMBA_ENABLE_CUDASIM=1``.
"""

import math

import numpy as np
from numba import cuda

from .. import _numba_cuda_compat

# before any kernel of this module compiles (numba-cuda on NumPy >= 2.5)
_numba_cuda_compat.load_cuda_array_overloads()

_THREADS = 256


@cuda.jit(cache=True)
def _relax_step(k, entry_graph, node_ptr, dist_ptr, dist):
    t = cuda.grid(1)
    if t < dist.shape[0]:
        g = entry_graph[t]
        n = node_ptr[g + 1] - node_ptr[g]
        if k < n:
            base = dist_ptr[g]
            local = t - base
            i = local // n
            j = local - i * n
            via = dist[base + i * n + k] + dist[base + k * n + j]
            if via < dist[t]:
                dist[t] = via


def initial_distances(node_ptr, indptr, indices, weights, dist_ptr):
    """Packed edge-weight matrices (``inf`` off the edges, 0 on the diagonal), float64.

    Also returns ``entry_graph``: the graph owning each packed entry.
    """
    sizes = np.diff(node_ptr)
    n_graphs = len(sizes)
    node_graph = np.repeat(np.arange(n_graphs), sizes)
    node_local = np.arange(node_ptr[-1]) - node_ptr[node_graph]
    edge_node = np.repeat(np.arange(node_ptr[-1]), np.diff(indptr))
    eg = node_graph[edge_node]
    dist = np.full(dist_ptr[-1], np.inf)
    dist[dist_ptr[eg] + node_local[edge_node] * sizes[eg] + indices] = weights
    dist[dist_ptr[node_graph] + node_local * (sizes[node_graph] + 1)] = 0.0
    entry_graph = np.repeat(np.arange(n_graphs, dtype=np.int64), sizes * sizes)
    return dist, entry_graph


def floyd_warshall_distances(node_ptr, indptr, indices, weights, dist_ptr):
    """All-pairs shortest paths of the whole batch on the GPU; float64, ``inf`` = unreachable."""
    dist, entry_graph = initial_distances(node_ptr, indptr, indices, weights, dist_ptr)
    if dist.size == 0:
        return dist
    d_dist = cuda.to_device(dist)
    d_graph = cuda.to_device(entry_graph)
    d_node_ptr = cuda.to_device(np.ascontiguousarray(node_ptr, dtype=np.int64))
    d_dist_ptr = cuda.to_device(np.ascontiguousarray(dist_ptr, dtype=np.int64))
    blocks = math.ceil(dist.size / _THREADS)
    for k in range(int(np.diff(node_ptr).max())):
        _relax_step[blocks, _THREADS](k, d_graph, d_node_ptr, d_dist_ptr, d_dist)
    d_dist.copy_to_host(dist)
    return dist
