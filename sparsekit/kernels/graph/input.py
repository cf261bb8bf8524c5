"""Graph input: validate a sequence of graphs and pack it into CSR arrays.

Accepted graphs (one sequence may mix them):

- an adjacency matrix, dense (2-D ``ndarray`` of bool/int/float) or ``scipy.sparse``, square;
  entry ``A[u, v] != 0`` is an edge ``u -> v`` with weight ``A[u, v]``. An asymmetric matrix is a
  directed graph (as in GraKeL). Explicitly stored zeros of a sparse matrix are not edges and
  duplicate sparse entries are summed (scipy's convention). Diagonal entries (self-loops) do
  not change shortest paths.
- a pair ``(adjacency, labels)``: ``labels`` holds one label per node (a sequence or 1-D array,
  or a dict ``{node index: label}`` with keys ``0..n-1`` as GraKeL takes them).
- a networkx graph (``Graph``/``DiGraph``; multigraphs are refused): nodes in ``G.nodes``
  order, edge weights from the ``weight`` edge attribute (1 when absent), labels from the
  ``label`` node attribute. networkx is imported only when such a graph is passed.
- a 3-D array ``(n_graphs, n, n)`` is read as a stack of same-size adjacency matrices.

Labels are integers or strings (booleans and integral floats count as integers); one graph set
must use one kind. They are mapped to dense codes ``0..L-1`` in sorted order of the distinct
labels of the set (``GraphBatch.label_values`` keeps the table, so two sets prepared
separately are matched on label values, never on codes).

Weights must be finite and non-negative (a zero is "no edge").
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class GraphBatch:
    """Graphs packed as one block-diagonal CSR structure.

    Parameters
    ----------
    node_ptr : int64 array (n_graphs + 1,)
        Graph ``g`` owns the global nodes ``node_ptr[g]:node_ptr[g+1]``.
    indptr : int64 array (n_nodes_total + 1,)
        Out-edges of global node ``i`` are ``indices[indptr[i]:indptr[i+1]]``.
    indices : int32 array
        Edge targets as node indices local to their graph (``0..n_g-1``).
    weights : float64 array
        Edge weights (1 for every edge when the batch is unweighted).
    label_codes : int64 array (n_nodes_total,)
        Node label codes ``0..L-1`` (all 0 without labels).
    label_values : ndarray or None
        The sorted distinct labels (code ``c`` is ``label_values[c]``); None without labels.
    """

    node_ptr: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray
    label_codes: np.ndarray
    label_values: np.ndarray | None

    @property
    def n_graphs(self) -> int:
        """Return the number of graphs in the batch.

        Returns
        -------
        int
            ``len(node_ptr) - 1``.
        """
        return len(self.node_ptr) - 1

    @property
    def sizes(self) -> np.ndarray:
        """Return the number of nodes of every graph.

        Returns
        -------
        ndarray of int64, shape (n_graphs,)
            ``np.diff(node_ptr)``.
        """
        return np.diff(self.node_ptr)

    def graphs(self, start: int, stop: int) -> GraphBatch:
        """Return the graphs ``start:stop`` as a batch of their own.

        Parameters
        ----------
        start, stop : int
            The slice of graphs.

        Returns
        -------
        GraphBatch
            Views of this batch's arrays, with the same label table.
        """
        n0, n1 = self.node_ptr[start], self.node_ptr[stop]
        e0, e1 = self.indptr[n0], self.indptr[n1]
        return GraphBatch(
            self.node_ptr[start : stop + 1] - n0,
            self.indptr[n0 : n1 + 1] - e0,
            self.indices[e0:e1],
            self.weights[e0:e1],
            self.label_codes[n0:n1],
            self.label_values,
        )


def _issparse(obj) -> bool:
    """A scipy.sparse matrix or array (checked without importing scipy)."""
    return type(obj).__module__.startswith("scipy.sparse") and hasattr(obj, "tocsr")


def _is_networkx_graph(obj) -> bool:
    return type(obj).__module__.split(".")[0] == "networkx" and hasattr(obj, "adj")


def _as_graph_list(graphs: Any, name: str) -> list[Any]:
    if isinstance(graphs, np.ndarray):
        if graphs.ndim == 3:
            return list(graphs)
        if graphs.ndim == 2 and graphs.dtype != object:
            raise TypeError(
                f"{name} is a single 2-D array; pass a sequence of graphs (for one graph: [A])"
            )
    if _issparse(graphs) or _is_networkx_graph(graphs):
        raise TypeError(f"{name} is a single graph; pass a sequence of graphs (for one graph: [G])")
    if isinstance(graphs, (str, bytes, Mapping)) or not isinstance(graphs, Iterable):
        raise TypeError(
            f"{name} must be a sequence of graphs (adjacency matrices, (adjacency, labels) pairs "
            f"or networkx graphs), got {type(graphs).__name__}"
        )
    graphs = list(graphs)
    if not graphs:
        raise ValueError(f"{name} is empty; pass at least one graph")
    return graphs


def _check_values(values, where):
    if values.size == 0:
        return
    if not np.isfinite(values).all():
        bad = "NaN" if np.isnan(values).any() else "inf"
        raise ValueError(f"{where} contains {bad}; edge weights must be finite")
    low = values.min()
    if low < 0:
        raise ValueError(
            f"{where} contains negative weights (min {low:g}); shortest paths need weights >= 0"
        )


def _dense_adjacency(A, where):
    kind = A.dtype.kind
    if kind not in "biuf":
        raise TypeError(f"{where} has dtype {A.dtype}; pass a numeric (bool, int or float) matrix")
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{where} must be a square n x n matrix, got shape {A.shape}")
    if kind == "f":
        _check_values(A, where)
    elif kind in "iu" and A.size and A.min() < 0:
        raise ValueError(
            f"{where} contains negative weights (min {A.min()}); shortest paths need weights >= 0"
        )
    rows, cols = np.nonzero(A)
    weights = A[rows, cols].astype(np.float64)
    counts = np.bincount(rows, minlength=A.shape[0])
    return A.shape[0], counts, cols, weights


def _sparse_adjacency(A, where):
    if A.dtype.kind not in "biuf":
        raise TypeError(f"{where} has dtype {A.dtype}; pass a numeric sparse matrix")
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{where} must be a square n x n matrix, got shape {A.shape}")
    import scipy.sparse as sp

    A = sp.csr_matrix(A, dtype=np.float64, copy=True)  # sums duplicates
    _check_values(A.data, where)
    A.eliminate_zeros()
    A.sort_indices()
    return A.shape[0], np.diff(A.indptr), A.indices, A.data


def _networkx_parts(G, where, weighted, with_labels):
    import networkx as nx  # optional: only needed when networkx graphs are passed

    if G.is_multigraph():
        raise TypeError(
            f"{where} is a networkx multigraph; parallel edges have no single length, convert "
            "it first (e.g. nx.Graph(G) or keep the lightest edge of each pair)"
        )
    nodes = list(G.nodes)
    A = nx.to_scipy_sparse_array(
        G, nodelist=nodes, weight="weight" if weighted else None, format="csr"
    )
    labels = None
    if with_labels:
        missing = [u for u in nodes if "label" not in G.nodes[u]]
        if missing:
            raise ValueError(
                f"{where}: node {missing[0]!r} has no 'label' attribute; set "
                "G.nodes[u]['label'] on every node or use with_labels=False"
            )
        labels = [G.nodes[u]["label"] for u in nodes]
    return A, labels


def _labels_array(labels, n, where):
    if isinstance(labels, Mapping):
        if set(labels) != set(range(n)):
            raise ValueError(
                f"{where} is a dict whose keys are not the node indices 0..{n - 1} "
                f"({len(labels)} keys for {n} nodes)"
            )
        labels = [labels[i] for i in range(n)]
    if isinstance(labels, (str, bytes)) or not isinstance(labels, (Iterable, np.ndarray)):
        raise TypeError(f"{where} must be a sequence of node labels, got {type(labels).__name__}")
    arr = np.asarray(list(labels) if not isinstance(labels, np.ndarray) else labels)
    if arr.ndim != 1:
        raise ValueError(f"{where} must be 1-D (one label per node), got shape {arr.shape}")
    if len(arr) != n:
        raise ValueError(f"{where} has {len(arr)} labels but the graph has {n} nodes")
    return _normalize_label_kind(arr, where)


def _normalize_label_kind(arr, where):
    """Labels as an int64 array or a str array; anything else is a TypeError."""
    kind = arr.dtype.kind
    if kind in "biu":
        if kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
            raise ValueError(f"{where} has integer labels beyond the int64 range")
        return arr.astype(np.int64)
    if kind == "f":
        if arr.size and not (np.isfinite(arr).all() and (arr == np.round(arr)).all()):
            raise TypeError(f"{where} has non-integral float labels; use integer or string labels")
        return arr.astype(np.int64)
    if kind in "US":
        return arr.astype(str)
    if kind == "O":
        if all(isinstance(x, str) for x in arr):
            return arr.astype(str)
        if all(isinstance(x, numbers.Integral) for x in arr):
            return arr.astype(np.int64)
    raise TypeError(f"{where} must hold integers or strings, got dtype {arr.dtype}")


def _as_adjacency(obj):
    """``obj`` as a dense or sparse matrix when it looks like one, else None."""
    if _issparse(obj) or (isinstance(obj, np.ndarray) and obj.ndim == 2):
        return obj
    if isinstance(obj, list) and obj and all(isinstance(row, (list, tuple)) for row in obj):
        try:
            arr = np.asarray(obj)
        except ValueError:  # ragged: not a matrix
            return None
        return arr if arr.ndim == 2 and arr.dtype.kind in "biuf" else None
    return None


def _split_graph(g, where, with_labels):
    """(adjacency, labels or None) of one input graph."""
    A = _as_adjacency(g) if not isinstance(g, tuple) else None
    if A is not None:
        return A, None
    if isinstance(g, (tuple, list)) and len(g) == 2:
        A = _as_adjacency(g[0])
        if A is not None:
            return A, (g[1] if with_labels else None)
    raise TypeError(
        f"{where} is a {type(g).__name__}, not a graph; pass an adjacency matrix (ndarray or "
        "scipy.sparse), an (adjacency, labels) pair or a networkx graph"
    )


def parse_graphs(
    graphs: Iterable[Any], name: str = "X", *, weighted: bool = False, with_labels: bool = True
) -> GraphBatch:
    """Validate ``graphs`` and pack them into a :class:`GraphBatch`.

    Parameters
    ----------
    graphs : sequence of graphs
        See the module docstring for the accepted forms.
    name : str, default "X"
        Argument name used in error messages.
    weighted : bool, default False
        Keep edge values as weights; otherwise every edge has weight 1.
    with_labels : bool, default True
        Node labels are required (and read); otherwise they are ignored.

    Returns
    -------
    GraphBatch
        The graphs packed as one block-diagonal CSR structure.
    """
    graph_list = _as_graph_list(graphs, name)
    sizes, counts, targets, weights, labels = [], [], [], [], []
    for i, g in enumerate(graph_list):
        where = f"{name}[{i}]"
        if _is_networkx_graph(g):
            A, lab = _networkx_parts(g, where, weighted, with_labels)
        else:
            A, lab = _split_graph(g, where, with_labels)
            if with_labels and lab is None:
                raise ValueError(
                    f"{where} has no node labels but with_labels=True; pass (adjacency, labels) "
                    "pairs or use with_labels=False"
                )
        if _issparse(A):
            n, c, t, w = _sparse_adjacency(A, f"{where} adjacency")
        else:
            n, c, t, w = _dense_adjacency(np.asarray(A), f"{where} adjacency")
        if n == 0:
            raise ValueError(f"{where} has no nodes; every graph needs at least one node")
        sizes.append(n)
        counts.append(c)
        targets.append(t)
        weights.append(w)
        if with_labels:
            labels.append(_labels_array(lab, n, f"{where} labels"))

    node_ptr = np.zeros(len(graph_list) + 1, dtype=np.int64)
    np.cumsum(sizes, out=node_ptr[1:])
    indptr = np.zeros(node_ptr[-1] + 1, dtype=np.int64)
    np.cumsum(np.concatenate(counts), out=indptr[1:])
    indices = np.concatenate(targets).astype(np.int32, copy=False)
    if weighted:
        edge_weights = np.concatenate(weights).astype(np.float64, copy=False)
    else:
        edge_weights = np.ones(len(indices), dtype=np.float64)

    if with_labels:
        kinds = {arr.dtype.kind for arr in labels}
        if len(kinds) > 1:
            raise TypeError(
                f"{name} mixes integer and string node labels; use one kind for all graphs"
            )
        label_values, label_codes = np.unique(np.concatenate(labels), return_inverse=True)
        label_codes = label_codes.astype(np.int64).ravel()
    else:
        label_values = None
        label_codes = np.zeros(node_ptr[-1], dtype=np.int64)
    return GraphBatch(
        node_ptr, indptr, np.ascontiguousarray(indices), edge_weights, label_codes, label_values
    )


__all__ = ["GraphBatch", "parse_graphs"]
