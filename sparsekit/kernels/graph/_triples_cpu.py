"""CPU compute for shortest-path kernels: count the (label, label, distance) triples of graphs.

Input: the packed distance matrices of a batch as integer *distance codes* (``-1`` for an
unreachable pair), the node label codes and the table sizes ``n_labels`` (L) and
``n_distances`` (D). Every ordered pair ``(u, v)``, ``u != v``, with a path from ``u`` to ``v``
gives the key::

    key = (label[u] * L + label[v]) * D + code(d(u, v))

Per graph the keys are sorted and run-length encoded in place, graphs spread over threads
(serial ``nogil`` kernels over ranges of graphs, :func:`sparsekit._row_ranges.run_row_ranges`);
a second pass gathers the (key, count) runs into CSR order.
"""
import numpy as np
from numba import njit

from ..._row_ranges import run_row_ranges


def count_triples(node_ptr, dist_ptr, codes, label_codes, n_labels, n_distances,
                  pair_ptr, keys, counts, n_unique):
    """Sorted distinct keys and their counts of every graph.

    Graph ``g`` writes its ``n_unique[g]`` runs at ``keys[pair_ptr[g]:]`` and
    ``counts[pair_ptr[g]:]`` (``pair_ptr[g+1] - pair_ptr[g] = n_g (n_g - 1)`` slots).
    """
    run_row_ranges(_count_triples_graphs, node_ptr.shape[0] - 1, node_ptr, dist_ptr, codes,
                   label_codes, n_labels, n_distances, pair_ptr, keys, counts, n_unique)


@njit(cache=True, nogil=True)
def _count_triples_graphs(lo, hi, node_ptr, dist_ptr, codes, label_codes, n_labels, n_distances,
                          pair_ptr, keys, counts, n_unique):
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
        if m == 0:
            n_unique[g] = 0
            continue
        run = np.sort(keys[out:out + m])
        j = 0
        keys[out] = run[0]
        counts[out] = 1
        for t in range(1, m):
            if run[t] == keys[out + j]:
                counts[out + j] += 1
            else:
                j += 1
                keys[out + j] = run[t]
                counts[out + j] = 1
        n_unique[g] = j + 1


def gather_runs(pair_ptr, row_ptr, keys, counts, out_keys, out_counts):
    """Copy the runs of graph ``g`` from ``pair_ptr[g]`` to ``row_ptr[g]`` (CSR order)."""
    run_row_ranges(_gather_runs_graphs, row_ptr.shape[0] - 1, pair_ptr, row_ptr, keys, counts,
                   out_keys, out_counts)


@njit(cache=True, nogil=True)
def _gather_runs_graphs(lo, hi, pair_ptr, row_ptr, keys, counts, out_keys, out_counts):
    for g in range(lo, hi):
        src = pair_ptr[g]
        dst = row_ptr[g]
        for t in range(row_ptr[g + 1] - dst):
            out_keys[dst + t] = keys[src + t]
            out_counts[dst + t] = counts[src + t]
