"""CPU compute for shortest-path kernels: count the (label, label, distance) triples of graphs.

Input: the packed distance matrices of a batch as integer *distance codes* (``-1`` for an
unreachable pair), the node label codes and the table sizes ``n_labels`` (L) and
``n_distances`` (D). Every ordered pair ``(u, v)``, ``u != v``, with a path from ``u`` to ``v``
gives the key::

    key = (label[u] * L + label[v]) * D + code(d(u, v))

The keys are written by a serial ``nogil`` kernel over ranges of graphs, graphs spread over
threads (:func:`sparsekit._runtime.pools.run_row_ranges`); they are sorted by (graph, key) and
run-length encoded with NumPy, which also gathers the (key, count) runs into CSR order.
"""

import numpy as np
from numba import njit

from ..._runtime.pools import run_row_ranges


def count_triples(
    node_ptr, dist_ptr, codes, label_codes, n_labels, n_distances, pair_ptr, keys, counts, n_unique
):
    """Sorted distinct keys and their counts of every graph.

    Graph ``g`` writes its ``n_unique[g]`` runs at ``keys[pair_ptr[g]:]`` and
    ``counts[pair_ptr[g]:]`` (``pair_ptr[g+1] - pair_ptr[g] = n_g (n_g - 1)`` slots).

    The keys are written by a Numba kernel over ranges of graphs; sorting and run-length
    encoding are NumPy (one sort of all keys by (graph, key)), which keeps a compiled sort out of
    the first call.
    """
    n_graphs = node_ptr.shape[0] - 1
    n_keys = np.zeros(n_graphs, dtype=np.int64)
    run_row_ranges(
        _triple_keys_graphs,
        n_graphs,
        node_ptr,
        dist_ptr,
        codes,
        label_codes,
        n_labels,
        n_distances,
        pair_ptr,
        keys,
        n_keys,
    )
    graph = np.repeat(np.arange(n_graphs, dtype=np.int64), n_keys)
    slot = np.arange(graph.size, dtype=np.int64) - np.repeat(np.cumsum(n_keys) - n_keys, n_keys)
    raw = keys[pair_ptr[graph] + slot]
    span = int(n_labels) * int(n_labels) * int(n_distances)
    if n_graphs * span < 2**62:
        order = np.argsort(graph * span + raw, kind="stable")
    else:
        order = np.lexsort((raw, graph))
    graph = graph[order]
    raw = raw[order]
    start = np.ones(raw.size, dtype=np.bool_)
    start[1:] = (raw[1:] != raw[:-1]) | (graph[1:] != graph[:-1])
    first = np.flatnonzero(start)
    run_graph = graph[first]
    run_len = np.diff(np.append(first, raw.size))
    n_unique[:] = np.bincount(run_graph, minlength=n_graphs)
    run_slot = np.arange(first.size, dtype=np.int64) - np.repeat(
        np.cumsum(n_unique) - n_unique, n_unique
    )
    dest = pair_ptr[run_graph] + run_slot
    keys[dest] = raw[first]
    counts[dest] = run_len


@njit(cache=True, nogil=True)
def _triple_keys_graphs(
    lo, hi, node_ptr, dist_ptr, codes, label_codes, n_labels, n_distances, pair_ptr, keys, n_keys
):
    """The (unsorted) keys of the graphs ``lo <= g < hi`` at ``keys[pair_ptr[g]:]``, and their
    number ``n_keys[g]``."""
    for g in range(lo, hi):
        first = node_ptr[g]
        n = node_ptr[g + 1] - first
        base = dist_ptr[g]
        out = pair_ptr[g]
        m = 0
        for u in range(n):
            lu = label_codes[first + u] * n_labels
            row = base + u * n
            for v in range(n):
                c = codes[row + v]
                if v != u and c >= 0:
                    keys[out + m] = (lu + label_codes[first + v]) * n_distances + c
                    m += 1
        n_keys[g] = m


def gather_runs(pair_ptr, row_ptr, keys, counts, out_keys, out_counts):
    """Copy the runs of graph ``g`` from ``pair_ptr[g]`` to ``row_ptr[g]`` (CSR order)."""
    n_unique = np.diff(row_ptr)
    graph = np.repeat(np.arange(n_unique.size, dtype=np.int64), n_unique)
    src = pair_ptr[graph] + np.arange(graph.size, dtype=np.int64) - row_ptr[graph]
    out_keys[:] = keys[src]
    out_counts[:] = counts[src]
