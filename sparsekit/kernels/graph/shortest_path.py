"""Shortest-path graph kernel (Borgwardt & Kriegel 2005).

Definition (the standard one; Cherfaoui 2022, PhD thesis, Ch. 4, uses it on MUTAG without
defining it): with ``d(u, v)`` the shortest-path length from ``u`` to ``v`` in ``G``,

    k(G, G') = sum_{(u, v) in P(G)} sum_{(u', v') in P(G')}
               [label(u) = label(u')] [label(v) = label(v')] [d(u, v) = d(u', v')]

where ``P(G)`` holds the node pairs with a path between them. With this Dirac kernel on edges
of the shortest-path graph, ``k(G, G') = <h(G), h(G')>`` with ``h`` the histogram of triples
``(label(u), label(v), d(u, v))`` (of ``d(u, v)`` alone when ``with_labels=False``); the Gram
matrix of N graphs is one product of sparse count matrices ``Phi_X Phi_Y^T``.

Conventions (those of GraKeL's ``ShortestPath``, whose values this kernel equals):

- ``P(G)`` is the set of **ordered** pairs ``(u, v)``, ``u != v``: on an undirected graph every
  connected pair is counted twice, as ``(l_u, l_v, d)`` and ``(l_v, l_u, d)``, and triples are
  *not* canonicalised (``(a, b, d)`` and ``(b, a, d)`` are distinct features). The common
  "unordered endpoints" variant differs from this by the constant factor 4 on same-label pairs
  and a merge of mirrored features otherwise; GraKeL's convention is kept for parity.
- Self-pairs (``d = 0``) and unreachable pairs (``d = inf``) are not counted.
- A non-symmetric adjacency matrix is a directed graph; ``d(u, v)`` follows edge directions.
- Unweighted (``weighted=False``): ``d`` is the hop count. Weighted: the sum of edge weights,
  computed by Floyd–Warshall in GraKeL's summation order, and compared **exactly** (distances
  that differ in their last bit are different features, as in GraKeL); use integer or
  dyadic weights when exact ties matter.
- Normalization (``normalize=True``): ``k(G, G') / sqrt(k(G, G) k(G', G'))``. For a graph
  without any counted pair (one node, or no edges) ``k(G, G) = 0``; GraKeL returns NaN there,
  this kernel returns **0** (cosine with a zero vector taken as 0), so its normalized diagonal
  is 0 for such graphs and 1 otherwise.
- The kernel is PSD (a Gram matrix of explicit features), not strictly PD.

Graph input: see :mod:`sparsekit.kernels.graph.input` (adjacency matrices, ``(adjacency,
labels)`` pairs, networkx graphs). Labels are integers or strings, compared by value (the
integer 1 and the string "1" differ, as in GraKeL).

Values are float64 whatever the adjacency dtype: unnormalized values are exact integer counts
(float32 would lose them above 2**24), and weights are read as float64, as GraKeL does.

Evaluation: :meth:`ShortestPathKernel.prepare` parses the graphs and computes their feature
counts once (all-pairs shortest paths in one Numba call over the batch, triple keys counted
per graph in parallel, CSR built without Python loops over pairs); kernel calls then only
multiply count matrices. Graphs prepared separately are aligned on the values of their
triples (see :mod:`sparsekit.kernels.graph.feature_map`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..._validation import check_option, check_scalar
from ..base import BACKENDS, Kernel, check_gram_fits, resolve_backend
from .feature_map import ShortestPathFeatures, build_features, shared_columns
from .input import parse_graphs

if TYPE_CHECKING:
    import scipy.sparse

#: Densify the count matrices for the product (BLAS GEMM) below this many bytes.
_DENSE_PRODUCT_BYTES = 64 * 2**20
#: ... and when at least this fraction of their entries is non-zero.
_DENSE_PRODUCT_DENSITY = 0.02
_DEFAULT_BLOCK_BYTES = 8 * 2**20

#: Graphs as :func:`~sparsekit.kernels.graph.input.parse_graphs` reads them (adjacency matrices,
#: ``(adjacency, labels)`` pairs, networkx graphs), or their prepared features.
GraphsLike = Sequence[Any] | ShortestPathFeatures


def _check_flag(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _use_dense_product(A, B):
    """Densify for BLAS when the count matrices are small and not too sparse."""
    n, f = A.shape
    m = B.shape[0]
    entries = (n + m) * f
    return (
        f > 0
        and entries * 8 <= _DENSE_PRODUCT_BYTES
        and (A.nnz + B.nnz >= _DENSE_PRODUCT_DENSITY * entries)
    )


def _row_products(A, B):
    """A function ``rows -> A[rows] @ B.T`` (dense float64) for two CSR count matrices.

    Counts are integers, so both the GEMM and the sparse product are exact below 2**53.
    """
    if _use_dense_product(A, B):
        Bt = B.toarray().T
        At = Bt.T if A is B else None
        return lambda rows: (At[rows] if At is not None else A[rows].toarray()) @ Bt
    Bt = B.T.tocsc()
    return lambda rows: (A[rows] @ Bt).toarray()


class ShortestPathKernel(Kernel):
    """Shortest-path kernel on node-labelled graphs (Borgwardt & Kriegel 2005).

    Parameters
    ----------
    with_labels : bool, default True
        Count ``(label(u), label(v), d(u, v))`` triples (graphs need node labels); with False,
        count distances ``d(u, v)`` only.
    normalize : bool, default False
        Cosine normalization ``k(G, G') / sqrt(k(G, G) k(G', G'))`` (0 when a norm is 0).
    weighted : bool, default False
        Use adjacency values as edge lengths (Floyd–Warshall); otherwise hop counts (BFS).
    backend : {"auto", "cpu", "cuda"}, default "auto"
        Where the all-pairs shortest paths run. ``"auto"`` picks CUDA only for weighted graphs
        on a real device: for hop counts the CPU's BFS was faster than Floyd–Warshall on an
        H200 (0.53–0.75×, ``benchmarks/bench_cuda.py``). The triple counts and the Gram product
        always run on the CPU.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    >>> k = ShortestPathKernel()
    >>> k([(A, ["C", "O", "C"])])
    array([[12.]])
    """

    name = "shortest-path"
    accepts = "graphs"
    has_cuda = True

    def __init__(
        self,
        with_labels: bool = True,
        normalize: bool = False,
        weighted: bool = False,
        backend: str = "auto",
    ):
        self.with_labels: bool = with_labels
        self.normalize: bool = normalize
        self.weighted: bool = weighted
        self.backend: str = backend
        self._check_params()

    def _check_params(self):
        self.with_labels = _check_flag(self.with_labels, "with_labels")
        self.normalize = _check_flag(self.normalize, "normalize")
        self.weighted = _check_flag(self.weighted, "weighted")
        self.backend = check_option(self.backend, "backend", BACKENDS)

    # -- data protocol ------------------------------------------------------------------
    def prepare(self, X: GraphsLike, name: str = "X") -> ShortestPathFeatures:
        """Parse graphs and compute their feature counts once (returned as-is when prepared).

        Parameters
        ----------
        X : sequence of graphs or ShortestPathFeatures
            Graphs, or graphs already prepared by this kernel.
        name : str, default "X"
            The argument's name, for the error messages.

        Returns
        -------
        ShortestPathFeatures
            The graphs' feature counts.

        Raises
        ------
        ValueError
            ``X`` was prepared with other settings (``with_labels``, ``weighted``).
        """
        self._check_params()
        if isinstance(X, ShortestPathFeatures):
            if X.with_labels != self.with_labels or X.weighted != self.weighted:
                raise ValueError(
                    f"{name} was prepared with with_labels={X.with_labels}, "
                    f"weighted={X.weighted} but this kernel has with_labels={self.with_labels}, "
                    f"weighted={self.weighted}; prepare it again with this kernel"
                )
            return X
        batch = parse_graphs(X, name, weighted=self.weighted, with_labels=self.with_labels)
        backend = self.backend
        if backend == "auto" and not self.weighted:
            backend = "cpu"  # hop counts: BFS on the CPU beats Floyd–Warshall on a GPU
        backend = resolve_backend(backend, self.has_cuda, self.name)
        return build_features(
            batch, with_labels=self.with_labels, weighted=self.weighted, backend=backend
        )

    def features(self, X: GraphsLike) -> scipy.sparse.csr_matrix:
        """Compute the explicit feature map: sparse triple counts, one row per graph.

        Parameters
        ----------
        X : sequence of graphs or ShortestPathFeatures
            Graphs, or graphs already prepared by this kernel.

        Returns
        -------
        scipy.sparse.csr_matrix of shape (n_graphs, n_features)
            The triple counts, one row per graph.
        """
        return self.prepare(X).counts

    def take(self, X: GraphsLike, indices: ArrayLike) -> ShortestPathFeatures:
        """Select the graphs ``indices`` of prepared (or raw) graphs ``X``.

        Parameters
        ----------
        X : sequence of graphs or ShortestPathFeatures
            Graphs, or graphs already prepared by this kernel.
        indices : array-like of int or bool
            The graphs to keep.

        Returns
        -------
        ShortestPathFeatures
            The selected graphs, prepared.
        """
        return self.prepare(X).take(indices)

    def n_samples(self, X: GraphsLike) -> int:
        """Count the graphs in ``X``.

        Parameters
        ----------
        X : sequence of graphs or ShortestPathFeatures
            Graphs, or graphs already prepared by this kernel.

        Returns
        -------
        int
            The number of graphs.
        """
        if isinstance(X, ShortestPathFeatures):
            return len(X)
        return len(self.prepare(X))

    # -- evaluation ---------------------------------------------------------------------
    def _aligned(self, PX, PY):
        cols = shared_columns(PX, PY)
        if cols is None:
            return PX.counts, PY.counts
        cx, cy = cols
        return PX.counts[:, cx], PY.counts[:, cy]

    def _finish(self, K, nx, ny):
        if self.normalize:
            scale = np.sqrt(np.outer(nx, ny))
            np.divide(K, scale, out=K, where=scale > 0)
            K[scale == 0] = 0.0
        return K

    def __call__(self, X: GraphsLike, Y: GraphsLike | None = None) -> np.ndarray:
        """Compute the Gram matrix ``K[i, j] = k(X_i, Y_j)``.

        ``X`` and ``Y`` are graph sequences or the output of :meth:`prepare`; ``Y = X`` when
        omitted.

        Parameters
        ----------
        X : sequence of graphs or ShortestPathFeatures
            The graphs of the rows.
        Y : sequence of graphs or ShortestPathFeatures, optional
            The graphs of the columns; ``X`` when omitted.

        Returns
        -------
        ndarray of float64, shape (len(X), len(Y))
            The Gram matrix.
        """
        PX = self.prepare(X, "X")
        PY = PX if Y is None else self.prepare(Y, "Y")
        FX, FY = self._aligned(PX, PY)
        check_gram_fits(self.name, FX.shape[0], FY.shape[0], 8)
        K = _row_products(FX, FY)(slice(None))
        return self._finish(K, PX.sq_norms, PY.sq_norms)

    def blocks(
        self, X: GraphsLike, Y: GraphsLike | None = None, *, max_memory: int | None = None
    ) -> Iterator[tuple[slice, np.ndarray]]:
        """Yield ``(rows, block)``: the Gram matrix in row blocks of <= ``max_memory`` bytes.

        Parameters
        ----------
        X : sequence of graphs or ShortestPathFeatures
            The graphs of the rows.
        Y : sequence of graphs or ShortestPathFeatures, optional
            The graphs of the columns; ``X`` when omitted.
        max_memory : int, optional
            Bytes of one block; the library's default block size when omitted.

        Yields
        ------
        rows : slice
            The rows of the block.
        block : ndarray of float64
            The Gram matrix on those rows.
        """
        PX = self.prepare(X, "X")
        PY = PX if Y is None else self.prepare(Y, "Y")
        FX, FY = self._aligned(PX, PY)
        budget = (
            _DEFAULT_BLOCK_BYTES
            if max_memory is None
            else check_scalar(max_memory, "max_memory", low=0)
        )
        n, m = FX.shape[0], FY.shape[0]
        step = int(max(1, min(n, budget // max(1, 8 * m))))
        product = _row_products(FX, FY)
        for r0 in range(0, n, step):
            rows = slice(r0, min(n, r0 + step))
            yield rows, self._finish(product(rows), PX.sq_norms[rows], PY.sq_norms)

    def diag(self, X: GraphsLike) -> np.ndarray:
        """Compute ``k(G_i, G_i)`` for every graph (no Gram matrix).

        Parameters
        ----------
        X : sequence of graphs or ShortestPathFeatures
            Graphs, or graphs already prepared by this kernel.

        Returns
        -------
        ndarray of float64, shape (n_graphs,)
            ``k(G_i, G_i)``.
        """
        P = self.prepare(X, "X")
        if self.normalize:
            return (P.sq_norms > 0).astype(np.float64)
        return P.sq_norms.copy()


__all__ = ["ShortestPathKernel"]
