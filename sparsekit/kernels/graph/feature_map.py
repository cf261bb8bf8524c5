"""Explicit feature map of the shortest-path kernel: sparse counts of (label, label, distance).

Row ``g`` of ``ShortestPathFeatures.counts`` is ``h(G_g)``: for every feature (a distinct
triple ``(label(u), label(v), d(u, v))``, or ``d(u, v)`` alone without labels) the number of
ordered node pairs ``u != v`` of ``G_g`` with a path ``u -> v`` that produce it.

Features are identified by an integer key built from *table codes*::

    key = (code(label_u) * L + code(label_v)) * D + code(d)

where ``label_values`` (L entries) and ``distance_values`` (D entries) are tables stored with
the features. The keys are a deterministic encoding of the triple values; two feature sets
with different tables (graphs prepared at different times) are aligned by decoding the keys
back to values and matching them exactly (``shared_columns``), so a kernel between them
equals the kernel computed on the union.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from . import _apsp_cpu, _triples_cpu
from .input import GraphBatch

if TYPE_CHECKING:
    import scipy.sparse

_MAX_KEY = 2**62
#: Distance-matrix entries (node pairs) processed per chunk of graphs.
_CHUNK_ENTRIES = 2**23


@dataclass(frozen=True, eq=False)
class ShortestPathFeatures:
    """Graphs prepared for the shortest-path kernel (what ``kernel.prepare`` returns).

    Parameters
    ----------
    counts : scipy.sparse.csr_matrix of float64, shape (n_graphs, n_features)
        Triple counts; columns follow the sorted ``keys``.
    keys : int64 array (n_features,)
        Sorted feature keys (see the module docstring).
    label_values : ndarray or None
        Label table (None when labels are not used).
    distance_values : float64 array
        Distance table: code ``c`` stands for the distance ``distance_values[c]``.
    sq_norms : float64 array (n_graphs,)
        ``<h(G), h(G)>``, the unnormalized ``k(G, G)``.
    with_labels, weighted : bool
        The settings the features were built with.
    """

    counts: scipy.sparse.csr_matrix
    keys: np.ndarray
    label_values: np.ndarray | None
    distance_values: np.ndarray
    sq_norms: np.ndarray
    with_labels: bool
    weighted: bool

    def __len__(self) -> int:
        return self.counts.shape[0]

    def take(self, indices: ArrayLike) -> ShortestPathFeatures:
        """Select the graphs ``indices``.

        Parameters
        ----------
        indices : array-like of int or bool, 1-D
            The graphs to keep (positions, or a mask of length ``n_graphs``).

        Returns
        -------
        ShortestPathFeatures
            The same tables, so kernels with the parent need no alignment.

        Raises
        ------
        TypeError
            ``indices`` is not a 1-D integer or boolean array.
        ValueError
            A boolean mask of the wrong length.
        """
        idx = np.asarray(indices)
        if idx.dtype.kind not in "iub" or idx.ndim != 1:
            raise TypeError(
                f"indices must be a 1-D integer or boolean array, got {idx.dtype} "
                f"of shape {idx.shape}"
            )
        if idx.dtype.kind == "b":
            if len(idx) != len(self):
                raise ValueError(f"boolean indices have length {len(idx)}, expected {len(self)}")
            idx = np.flatnonzero(idx)
        if idx.size and (idx.min() < -len(self) or idx.max() >= len(self)):
            raise ValueError(f"indices out of range for {len(self)} graphs")
        idx = idx.astype(np.intp)
        return ShortestPathFeatures(
            self.counts[idx],
            self.keys,
            self.label_values,
            self.distance_values,
            self.sq_norms[idx],
            self.with_labels,
            self.weighted,
        )


def all_pairs_distances(batch: GraphBatch, weighted: bool, backend: str):
    """Packed distance codes (int64, -1 = unreachable) and the distance table."""
    sizes = batch.sizes
    dist_ptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes * sizes, out=dist_ptr[1:])
    if backend == "cuda":
        from . import _apsp_cuda

        dist = _apsp_cuda.floyd_warshall_distances(
            batch.node_ptr, batch.indptr, batch.indices, batch.weights, dist_ptr
        )
    elif weighted:
        dist = np.empty(dist_ptr[-1], dtype=np.float64)
        _apsp_cpu.floyd_warshall_distances(
            batch.node_ptr, batch.indptr, batch.indices, batch.weights, dist_ptr, dist
        )
    else:
        hops = np.empty(dist_ptr[-1], dtype=np.int32)
        _apsp_cpu.bfs_distances(batch.node_ptr, batch.indptr, batch.indices, dist_ptr, hops)
        return dist_ptr, hops, np.arange(max(1, int(hops.max(initial=0)) + 1), dtype=np.float64)
    finite = np.isfinite(dist)
    if weighted:
        table = np.unique(dist[finite])
        codes = np.searchsorted(table, dist)
    else:  # CUDA hop counts: exact integers in float64
        table = np.arange(max(1, int(dist[finite].max(initial=0)) + 1), dtype=np.float64)
        codes = np.where(finite, dist, 0).astype(np.int64)
    codes = np.where(finite, codes, -1).astype(np.int32)
    return dist_ptr, codes, table


def _check_key_range(n_labels, n_distances):
    if n_labels * n_labels * n_distances >= _MAX_KEY:
        raise ValueError(
            f"too many distinct labels ({n_labels}) and distances ({n_distances}) to encode "
            "the triples in 64-bit keys"
        )


def _chunks(sizes, max_entries):
    """``(start, stop)`` ranges of graphs whose distance matrices hold <= max_entries entries
    together (a larger graph gets a chunk of its own)."""
    bounds = [0]
    cum = np.cumsum(sizes.astype(np.int64) ** 2)
    while bounds[-1] < len(sizes):
        before = cum[bounds[-1] - 1] if bounds[-1] else 0
        stop = int(np.searchsorted(cum, before + max_entries, side="right"))
        bounds.append(max(stop, bounds[-1] + 1))
    return list(zip(bounds[:-1], bounds[1:]))


def _chunk_runs(batch, n_labels, weighted, backend):
    """Per-graph sorted (key, count) runs of one chunk, keys with the chunk's distance table."""
    dist_ptr, codes, table = all_pairs_distances(batch, weighted, backend)
    _check_key_range(n_labels, len(table))
    sizes = batch.sizes
    pair_ptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes * (sizes - 1), out=pair_ptr[1:])
    keys = np.empty(pair_ptr[-1], dtype=np.int64)
    counts = np.empty(pair_ptr[-1], dtype=np.float64)
    n_unique = np.empty(len(sizes), dtype=np.int64)
    _triples_cpu.count_triples(
        batch.node_ptr,
        dist_ptr,
        codes,
        batch.label_codes,
        np.int64(n_labels),
        np.int64(len(table)),
        pair_ptr,
        keys,
        counts,
        n_unique,
    )
    row_ptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(n_unique, out=row_ptr[1:])
    row_keys = np.empty(row_ptr[-1], dtype=np.int64)
    row_counts = np.empty(row_ptr[-1], dtype=np.float64)
    _triples_cpu.gather_runs(pair_ptr, row_ptr, keys, counts, row_keys, row_counts)
    return row_keys, row_counts, n_unique, table


def build_features(
    batch: GraphBatch, *, with_labels: bool, weighted: bool, backend: str = "cpu"
) -> ShortestPathFeatures:
    """Shortest-path feature counts of a parsed batch (APSP, triple keys, CSR).

    Graphs are processed in chunks of at most ``_CHUNK_ENTRIES`` distance-matrix entries, so
    the working memory (about 20 bytes per node pair) stays bounded for large batches. Each
    chunk encodes keys with its own distance table; the keys are then re-encoded with the
    union of the tables (a monotone map, so every row stays sorted).
    """
    import scipy.sparse as sp

    n_labels = len(batch.label_values) if with_labels else 1
    parts = [
        _chunk_runs(batch.graphs(a, b), n_labels, weighted, backend)
        for a, b in _chunks(batch.sizes, _CHUNK_ENTRIES)
    ]
    distance_values = parts[0][3]
    if len(parts) > 1:
        distance_values = np.unique(np.concatenate([table for *_, table in parts]))
        _check_key_range(n_labels, len(distance_values))
        D = np.int64(len(distance_values))
        for i, (keys, counts, n_unique, table) in enumerate(parts):
            pair, code = np.divmod(keys, np.int64(len(table)))
            code_map = np.searchsorted(distance_values, table).astype(np.int64)
            parts[i] = (pair * D + code_map[code], counts, n_unique, table)
    row_keys = np.concatenate([p[0] for p in parts])
    row_counts = np.concatenate([p[1] for p in parts])
    n_unique = np.concatenate([p[2] for p in parts])
    n_graphs = batch.n_graphs
    row_ptr = np.zeros(n_graphs + 1, dtype=np.int64)
    np.cumsum(n_unique, out=row_ptr[1:])
    vocabulary, columns = np.unique(row_keys, return_inverse=True)
    matrix = sp.csr_matrix(
        (row_counts, columns.ravel().astype(np.int32, copy=False), row_ptr),
        shape=(n_graphs, len(vocabulary)),
    )
    matrix.has_sorted_indices = True
    sq_norms = np.bincount(
        np.repeat(np.arange(n_graphs), n_unique),
        weights=row_counts * row_counts,
        minlength=n_graphs,
    )
    return ShortestPathFeatures(
        matrix,
        vocabulary,
        batch.label_values if with_labels else None,
        distance_values,
        sq_norms,
        with_labels,
        weighted,
    )


def _same_tables(A: ShortestPathFeatures, B: ShortestPathFeatures) -> bool:
    if A.keys is B.keys:
        return True
    same_labels = A.label_values is B.label_values or (
        A.label_values is not None
        and B.label_values is not None
        and A.label_values.dtype.kind == B.label_values.dtype.kind
        and np.array_equal(A.label_values, B.label_values)
    )
    return (
        same_labels
        and np.array_equal(A.distance_values, B.distance_values)
        and np.array_equal(A.keys, B.keys)
    )


def _match(values_from, values_to):
    """Position of each of ``values_from`` in the sorted ``values_to``, -1 when absent."""
    if len(values_to) == 0 or len(values_from) == 0:
        return np.full(len(values_from), -1, dtype=np.int64)
    if values_from.dtype.kind != values_to.dtype.kind:  # int labels never equal str labels
        return np.full(len(values_from), -1, dtype=np.int64)
    pos = np.searchsorted(values_to, values_from)
    pos_c = np.minimum(pos, len(values_to) - 1)
    return np.where(values_to[pos_c] == values_from, pos_c, -1).astype(np.int64)


def shared_columns(A: ShortestPathFeatures, B: ShortestPathFeatures):
    """Columns ``(cols_A, cols_B)`` of the features present in both sets, matched by value.

    Returns None when both sets use the same tables and keys (columns already agree).
    """
    if _same_tables(A, B):
        return None
    LB = len(B.label_values) if B.with_labels else 1
    DB = len(B.distance_values)
    LA = len(A.label_values) if A.with_labels else 1
    DA = len(A.distance_values)
    pair, dcode = np.divmod(B.keys, DB)
    lu, lv = np.divmod(pair, LB)
    d_map = _match(B.distance_values, A.distance_values)[dcode]
    if B.with_labels:
        l_map = _match(B.label_values, A.label_values)
        lu, lv = l_map[lu], l_map[lv]
    ok = (d_map >= 0) & (lu >= 0) & (lv >= 0)
    keys_in_A = (lu * LA + lv) * DA + d_map
    cols_A = _match(keys_in_A[ok], A.keys)
    found = cols_A >= 0
    return cols_A[found], np.flatnonzero(ok)[found]


__all__ = ["ShortestPathFeatures"]
