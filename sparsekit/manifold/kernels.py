"""Data-dependent kernels: the Gram matrices of spectral embeddings and their out-of-sample rows.

Classical MDS, Isomap, LLE, spectral clustering and kernel PCA all eigendecompose a Gram matrix
``M_ij = k_D(x_i, x_j)`` of a kernel that depends on the training set ``D``; evaluating the same
kernel between a new point and the training points, with the training statistics frozen, gives
the Nyström out-of-sample extension (Bengio, Paiement, Vincent, Delalleau, Le Roux & Ouimet,
"Out-of-Sample Extensions for LLE, Isomap, MDS, Eigenmaps, and Spectral Clustering", NIPS 2003;
Paiement 2003, M.Sc. thesis, Université de Montréal, Ch. 5).

Every kernel here has ``fit(X)`` (store the training statistics), ``gram()`` (the ``n x n``
training Gram ``M``) and ``__call__(X)`` (the ``n_new x n`` matrix ``k_D(x, x_i)``). That is not
the kernel protocol (``k(X, Y)``, ``diag``, ``prepare``, ``take``): these are a registry family
of their own, ``"manifold-kernel"`` (hook ``sparsekit_manifold_kernels``,
:func:`sparsekit.get_manifold_kernel`), and a vector-kernel entry point (``Nystroem``,
``KernelKMeans``, the MMD tests, ...) given one of their names or objects raises an error that
says so.

- :class:`CentredKernel` (kernel PCA, and classical MDS with ``k = -1/2 ||x - y||^2``): additive
  double centring with the training means,
  ``k(x, x_i) = k~(x, x_i) - mean_l k~(x, x_l) - r_i + g``.
- :class:`IsomapGeodesicKernel` (``"isomap-geodesic"``): ``k~ = -1/2 d_G^2`` on the symmetric
  k-NN graph, centred as above; a new point reaches the graph through its neighbours,
  ``d(x, x_i) = min_{z in N(x)} ||x - z|| + d_G(z, x_i)`` (it is a path endpoint only, Paiement
  2003, §5.1.3).
- :class:`LLEKernel` (``"lle"``): ``M = W + W^T - W^T W = I - (I - W)^T (I - W)`` for the
  barycentric reconstruction weights ``W``; for a new point ``k(x, x_i) = w(x, x_i)``.
- :class:`SpectralNormalizedKernel` (``"spectral-normalized"``): the divisive normalisation
  ``k(x, y) = k~(x, y) / sqrt(S(x) S(y))`` with degrees ``S(x) = sum_i k~(x, x_i)``
  (Ng, Jordan & Weiss 2002), training diagonal set to 0 or kept (``zero_diagonal``).
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._base import ParamsMixin
from .._validation import check_array
from ..exceptions import not_fitted_error
from ._neighbors import Neighbors, bridge_components, extend_geodesics, geodesics, knn_graph

if TYPE_CHECKING:
    import scipy.sparse as sp


def _check_fitted(kernel: DataDependentKernel) -> np.ndarray:
    """Return ``kernel.X_fit_``; a kernel that is not fitted raises the not-fitted error."""
    X_fit = getattr(kernel, "X_fit_", None)
    if X_fit is None:
        raise not_fitted_error(
            f"this {type(kernel).__name__} is not fitted: call fit(X) on the training points first"
        )
    return X_fit


def _check_rows(kernel, X):
    X = check_array(X, "X")
    if X.shape[1] != kernel.X_fit_.shape[1]:
        raise ValueError(
            f"X has {X.shape[1]} features, but the kernel was fitted on {kernel.X_fit_.shape[1]}"
        )
    return X


def resolve_base(base: Any, params: Mapping[str, Any] | None = None) -> Any:
    """A base kernel from a registered name (with ``params``), a kernel object or a callable
    ``k(X, Y)``, through :func:`sparsekit.components.resolve` (an object is copied).

    Raises
    ------
    TypeError
        ``base`` is a class or not callable, or ``params`` come with an object.
    """
    from ..components import resolve

    if not isinstance(base, str) and (isinstance(base, type) or not callable(base)):
        raise TypeError(
            f"base must be a kernel name, a kernel object or a callable k(X, Y), got {base!r}"
        )
    if params and not isinstance(base, str):
        raise TypeError("base_params can only be given with a kernel name")
    return resolve("kernel", base, params)


def _fit_base(kernel, X):
    """Store a copy of ``X`` as ``kernel.X_fit_``, resolve ``kernel.base`` (with
    ``kernel.base_params``) into ``kernel.base_``, and return the training Gram ``k~(X, X)``
    as a new float64 array."""
    X = check_array(X, "X").copy()  # kept: the caller may change its array later
    kernel.X_fit_ = X
    kernel.base_ = resolve_base(kernel.base, kernel.base_params)
    return np.array(kernel.base_(X, X), dtype=np.float64)


def _check_neighbors(value, name="n_neighbors"):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


class DataDependentKernel(ParamsMixin, ABC):
    """Base class of the manifold kernels.

    They have ``fit(X)``, ``gram()``, and ``kernel(X)`` = ``k_D(X, X_fit)`` (see
    :class:`sparsekit.protocols.ManifoldKernelProtocol`).
    """

    name = "manifold-kernel"
    #: what ``fit`` and ``kernel(X)`` take (:data:`sparsekit._accepts.ACCEPTS`)
    accepts = "vectors"

    X_fit_: np.ndarray | None = None
    #: evaluated only against the points it was fitted on (not a plain k(X, Y) kernel)
    data_dependent = True

    @abstractmethod
    def fit(self, X: ArrayLike) -> DataDependentKernel:
        """Store the training statistics of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training points.

        Returns
        -------
        self
            The fitted kernel.
        """

    @abstractmethod
    def gram(self) -> np.ndarray:
        """Return the ``n x n`` Gram matrix ``M`` of the training points.

        Returns
        -------
        ndarray of shape (n_samples, n_samples)
            ``M``.
        """

    def __call__(self, X: ArrayLike, Y: None = None) -> np.ndarray:
        """Evaluate ``k_D(x, x_i)`` for the rows of ``X`` against the training points.

        Parameters
        ----------
        X : array-like of shape (n, n_features)
            The points.
        Y : None
            Must be None: a data-dependent kernel is only defined against the points it was fitted
            on.

        Returns
        -------
        ndarray of shape (n, n_train)
            ``k_D(x, x_i)`` for each row ``x`` of ``X`` and training point ``x_i``.

        Raises
        ------
        ValueError
            ``Y`` is given.
        """
        if Y is not None:
            raise ValueError(
                f"{type(self).__name__} is evaluated against its training points "
                "only: call kernel(X) after kernel.fit(X_train)"
            )
        _check_fitted(self)
        return self._evaluate(_check_rows(self, X))

    def _evaluate(self, X: np.ndarray) -> np.ndarray:
        """``k_D(X, X_fit_)`` for the checked rows ``X`` of a fitted kernel (each subclass)."""
        raise NotImplementedError(f"{type(self).__name__} does not define _evaluate(X)")


class CentredKernel(DataDependentKernel):
    """A base kernel centred in feature space with the training means (kernel PCA, MDS).

    ``M = H K~ H`` with ``H = I - 11^T/n``, and for new points
    ``k(x, x_i) = k~(x, x_i) - (1/n) sum_l k~(x, x_l) - r_i + g`` with the training row means
    ``r_i`` and grand mean ``g`` (Schölkopf, Smola & Müller 1998; Paiement 2003, §4.5).

    Parameters
    ----------
    base : str, kernel object or callable
        A registered kernel name (with ``base_params``), a kernel object, or a callable
        ``base(X, Y) -> Gram`` (e.g. ``neg_half_sq_dist`` for classical MDS).
    base_params : dict, optional
        Parameters of a named base kernel, or keyword arguments of every call of a callable.
    """

    name = "centred"

    def __init__(
        self, base: str | Callable[..., Any] = "rbf", base_params: Mapping[str, Any] | None = None
    ) -> None:
        self.base = base
        self.base_params = base_params

    def fit(self, X: ArrayLike) -> CentredKernel:
        K = _fit_base(self, X)
        self._fit_gram(K)
        return self

    def _fit_gram(self, K):
        """Double-centre the (freshly computed, symmetric) training kernel ``K`` in place."""
        self.row_means_ = K.mean(axis=1)
        self.grand_mean_ = float(self.row_means_.mean())
        K -= self.row_means_[:, None]
        K -= self.row_means_[None, :]
        K += self.grand_mean_
        self._gram = K

    def gram(self) -> np.ndarray:
        _check_fitted(self)
        return self._gram

    def _centre(self, K):
        """Centre the rows of a freshly computed kernel block in place (they are new points)."""
        K -= K.mean(axis=1, keepdims=True)
        K -= self.row_means_[None, :]
        K += self.grand_mean_
        return K

    def _evaluate(self, X):
        return self._centre(np.array(self.base_(X, self.X_fit_), dtype=np.float64))


def neg_half_sq_dist(X, Y):
    """``-1/2 ||x - y||^2`` (the classical MDS kernel before centring)."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    D = (X * X).sum(1)[:, None] + (Y * Y).sum(1)[None, :] - 2.0 * (X @ Y.T)
    np.maximum(D, 0.0, out=D)
    return -0.5 * D


class IsomapGeodesicKernel(CentredKernel):
    """Isomap's kernel: ``-1/2 d_G^2`` on the symmetric k-NN graph, double-centred.

    Parameters
    ----------
    n_neighbors : int
        Neighbours of each point in the graph (edge ``i - j`` when either is among the other's
        ``n_neighbors`` nearest, weighted by the Euclidean distance; Tenenbaum, de Silva &
        Langford 2000).
    transform_neighbors : int, optional
        Neighbours through which a new point reaches the graph (default ``n_neighbors``, as in
        Paiement 2003, §5.1.3, and scikit-learn's ``Isomap.transform``). More neighbours can
        only shorten the estimated geodesics, but a training point then no longer gets its
        training embedding back (a neighbour that is not adjacent in the graph offers a
        Euclidean shortcut).
    n_jobs : int, optional
        Threads for the shortest paths and the extension (default: the library's setting).
    disconnected : {"connect", "raise"}, default "connect"
        A disconnected graph has infinite geodesics: ``"connect"`` links every pair of
        components by its shortest Euclidean link and warns (scikit-learn's behaviour);
        ``"raise"`` raises ``ValueError`` instead (increase ``n_neighbors``).

    Attributes
    ----------
    scale_ : float
        A power of two, 1.0 unless the coordinates are so large or so small (largest magnitude
        outside ``[2**-100, 2**100]``) that squared geodesics would overflow or underflow: then
        the graph is built on ``X / scale_`` (exact: only the exponents change), and ``gram()``
        and ``kernel(X)`` are the kernel divided by ``scale_**2``, ``X_fit_`` and the geodesics
        in units of ``scale_``.

    Notes
    -----
    ``fit(X, landmarks=idx)`` keeps every point in the graph but uses only the landmark rows as
    training points: geodesics run from the landmarks (O(m) Dijkstra searches, an ``n x m``
    matrix), the Gram is ``m x m``, and any point (fitted or new) reaches the landmarks through
    its neighbours among all fitted points (landmark Isomap, de Silva & Tenenbaum 2003).
    """

    name = "isomap-geodesic"

    def __init__(
        self,
        n_neighbors: int = 10,
        transform_neighbors: int | None = None,
        n_jobs: int | None = None,
        disconnected: str = "connect",
    ) -> None:
        self.n_neighbors = n_neighbors
        self.transform_neighbors = transform_neighbors
        self.n_jobs = n_jobs
        self.disconnected = disconnected

    def fit(self, X: ArrayLike, landmarks: ArrayLike | None = None) -> IsomapGeodesicKernel:
        import scipy.sparse as sp

        k = _check_neighbors(self.n_neighbors)
        if self.transform_neighbors is not None:
            _check_neighbors(self.transform_neighbors, "transform_neighbors")
        if self.disconnected not in ("raise", "connect"):
            raise ValueError(
                f"disconnected must be 'connect' or 'raise', got {self.disconnected!r}"
            )
        X = check_array(X, "X")
        n = X.shape[0]
        self.scale_ = _power_of_two_scale(X)
        self.neighbors_ = Neighbors(X / self.scale_ if self.scale_ != 1.0 else X)  # a copy
        X = self.neighbors_.X
        dist, idx = self.neighbors_.query(X, k, exclude_self=True, n_jobs=self.n_jobs)
        graph = knn_graph(dist, idx, n)
        n_comp = sp.csgraph.connected_components(graph, directed=False)[0]
        if n_comp > 1:
            if self.disconnected == "raise":
                raise ValueError(
                    f"the {k}-nearest-neighbour graph has {n_comp} connected components, so "
                    "some geodesic distances are infinite: increase n_neighbors, or pass "
                    "disconnected='connect' to link the components by their shortest links"
                )
            graph, _ = bridge_components(X, graph)
            import warnings

            warnings.warn(
                f"the {k}-nearest-neighbour graph had {n_comp} connected "
                "components; each pair was joined by its shortest link, as "
                "scikit-learn does (increase n_neighbors to avoid it)",
                UserWarning,
                stacklevel=3,
            )
        sources = np.arange(n) if landmarks is None else np.asarray(landmarks, dtype=np.int64)
        G = geodesics(graph, sources, n_jobs=self.n_jobs)  # (m, n), all finite
        self.landmarks_ = sources
        if landmarks is None:
            # the graph is undirected, so G is symmetric: it is its own node -> landmark table
            self.node_geodesics_ = G
            self.X_fit_ = X
            K = np.square(G)
        else:
            self.node_geodesics_ = np.ascontiguousarray(G.T)  # (n, m): node -> landmark
            self.X_fit_ = X[sources]
            K = np.square(G[:, sources])
        K *= -0.5
        self._fit_gram(K)
        return self

    def _evaluate(self, X):
        k = self.transform_neighbors or self.n_neighbors
        k = min(int(k), self.neighbors_.n_samples)
        if self.scale_ != 1.0:
            X = X / self.scale_
        dist, idx = self.neighbors_.query(X, k, n_jobs=self.n_jobs)
        D = extend_geodesics(dist, idx, self.node_geodesics_, n_jobs=self.n_jobs)
        np.square(D, out=D)
        D *= -0.5
        return self._centre(D)


def _power_of_two_scale(X):
    """1.0, or the power of two near ``max |X|`` when that is outside ``[2**-100, 2**100]``
    (squares of distances would overflow or underflow); dividing by it is exact."""
    m = float(np.abs(X).max())
    if m == 0.0 or 2.0**-100 <= m <= 2.0**100:
        return 1.0
    return float(2.0 ** np.frexp(m)[1])


def barycenter_weights(X, Z, idx, reg):
    """Weights ``w`` (rows sum to 1) reconstructing each ``X[q]`` from ``Z[idx[q]]``.

    ``C = (Z[idx] - x)(Z[idx] - x)^T + r I`` with ``r = reg * trace`` (``reg`` if the trace is
    0), ``w = C^{-1} 1 / (1^T C^{-1} 1)`` (Roweis & Saul 2000; Paiement 2003, eq. 5.3).
    """
    n, k = idx.shape
    W = np.empty((n, k), dtype=np.float64)
    ones = np.ones(k)
    for q in range(n):
        A = Z[idx[q]] - X[q]
        C = A @ A.T
        trace = np.trace(C)
        C.flat[:: k + 1] += reg * trace if trace > 0 else reg
        w = np.linalg.solve(C, ones)
        W[q] = w / w.sum()
    return W


class LLEKernel(DataDependentKernel):
    """Locally linear embedding's kernel ``M = W + W^T - W^T W = I - (I - W)^T (I - W)``.

    ``W`` holds the barycentric weights of each training point on its ``n_neighbors`` nearest
    other training points; a new point ``x`` gets ``k(x, x_i) = w(x, x_i)``, its own weights on
    its ``n_neighbors`` nearest training points (the kernel ``w(x, y) + w(y, x) - sum_i
    w(x_i, x) w(x_i, y)`` of Paiement 2003, §5.1.4, whose last two terms vanish for a new
    point). The top eigenvector of ``M`` is constant (eigenvalue 1) and is not an embedding
    coordinate.

    Parameters
    ----------
    n_neighbors : int, default 10
        Neighbours whose barycentric weights reconstruct each point.
    reg : float > 0, default 1e-3
        Regularisation of the local Gram, times its trace (as scikit-learn).
    n_jobs : int, optional
        Threads for the nearest neighbours and the local weights.
    """

    name = "lle"

    def __init__(self, n_neighbors: int = 10, reg: float = 1e-3, n_jobs: int | None = None) -> None:
        self.n_neighbors = n_neighbors
        self.reg = reg
        self.n_jobs = n_jobs

    def fit(self, X: ArrayLike) -> LLEKernel:
        k = _check_neighbors(self.n_neighbors)
        if not isinstance(self.reg, numbers.Real) or not self.reg > 0:
            raise ValueError(f"reg must be a number > 0, got {self.reg!r}")
        X = check_array(X, "X")
        n = X.shape[0]
        self.neighbors_ = Neighbors(X)  # a float64 copy of X, shared with X_fit_
        X = self.X_fit_ = self.neighbors_.X
        _, idx = self.neighbors_.query(X, k, exclude_self=True, n_jobs=self.n_jobs)
        w = barycenter_weights(X, X, idx, float(self.reg))
        import scipy.sparse as sp  # on first use: keeps it out of the registry's import

        self.weights_: sp.csr_matrix = sp.csr_matrix(
            (w.ravel(), idx.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n)
        )
        return self

    def residual_operator(self) -> sp.csr_matrix:
        """Return ``(I - W)^T (I - W)`` as a sparse matrix (its smallest eigenvectors embed).

        Returns
        -------
        scipy.sparse matrix of shape (n_train, n_train)
            ``(I - W)^T (I - W)``.
        """
        n = _check_fitted(self).shape[0]
        import scipy.sparse as sp

        A = sp.identity(n, format="csr") - self.weights_
        return (A.T @ A).tocsr()

    def gram(self) -> np.ndarray:
        n = _check_fitted(self).shape[0]
        return np.identity(n) - self.residual_operator().toarray()

    def _evaluate(self, X):
        k = min(int(self.n_neighbors), self.X_fit_.shape[0])
        _, idx = self.neighbors_.query(X, k, n_jobs=self.n_jobs)
        w = barycenter_weights(X, self.X_fit_, idx, float(self.reg))
        out = np.zeros((X.shape[0], self.X_fit_.shape[0]))
        np.put_along_axis(out, idx, w, axis=1)
        return out


class SpectralNormalizedKernel(DataDependentKernel):
    """Divisive normalisation of an affinity: ``k(x, y) = k~(x, y) / sqrt(S(x) S(y))``.

    ``S(x) = sum_i k~(x, x_i)`` over the training points; on the training set
    ``M = S^{-1/2} K~ S^{-1/2}`` (Ng, Jordan & Weiss 2002; Paiement 2003, eq. 5.2 without its
    factor ``n``, which scales the eigenvalues only).

    Parameters
    ----------
    base : str, kernel object or callable, default "rbf"
        The affinity ``k~(X, Y)``, non-negative: a registered kernel name (with
        ``base_params``), a kernel object, or a callable ``k(X, Y) -> Gram``.
    base_params : dict, optional
        Parameters of a named ``base`` kernel (e.g. ``{"gamma": 5.0}``).
    zero_diagonal : bool, default False
        Set ``k~(x_i, x_i) = 0`` on the training set (Ng, Jordan & Weiss; Paiement 2003,
        Table 4.5). Then a training point submitted to ``transform`` is *not* mapped exactly to
        its training embedding (its self-affinity 1 enters the sums); with ``False`` it is.
    """

    name = "spectral-normalized"

    def __init__(
        self,
        base: str | Callable[..., Any] = "rbf",
        base_params: Mapping[str, Any] | None = None,
        zero_diagonal: bool = False,
    ) -> None:
        self.base = base
        self.base_params = base_params
        self.zero_diagonal = zero_diagonal

    def fit(self, X: ArrayLike) -> SpectralNormalizedKernel:
        K = _fit_base(self, X)
        if self.zero_diagonal:
            np.fill_diagonal(K, 0.0)
        if (K < 0).any():
            raise ValueError(
                "the affinity has negative values: spectral normalisation needs "
                "a non-negative kernel (e.g. 'rbf')"
            )
        self.degrees_ = K.sum(axis=1)
        if (self.degrees_ <= 0).any():
            raise ValueError(
                "a training point has zero affinity to all others: use a wider "
                "kernel (smaller gamma)"
            )
        inv = 1.0 / np.sqrt(self.degrees_)
        self._gram = inv[:, None] * K * inv[None, :]
        return self

    def gram(self) -> np.ndarray:
        _check_fitted(self)
        return self._gram

    def _evaluate(self, X):
        return self._evaluate_with_degrees(X)[0]

    def evaluate_with_degrees(self, X: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Compute the normalised kernel rows and the degrees of new points.

        Parameters
        ----------
        X : array-like of shape (n, n_features)
            New points.

        Returns
        -------
        K : ndarray of shape (n, n_train)
            The normalised kernel rows ``k_D(X, X_fit)``.
        S : ndarray of shape (n,)
            The degrees of the new points.
        """
        _check_fitted(self)
        return self._evaluate_with_degrees(_check_rows(self, X))

    def _evaluate_with_degrees(self, X):
        K = np.asarray(self.base_(X, self.X_fit_), dtype=np.float64)
        S = K.sum(axis=1)
        S = np.where(S > 0, S, np.inf)  # a point far from all data gets k = 0
        return K / np.sqrt(S)[:, None] / np.sqrt(self.degrees_)[None, :], S


__all__ = [
    "DataDependentKernel",
    "CentredKernel",
    "IsomapGeodesicKernel",
    "LLEKernel",
    "SpectralNormalizedKernel",
]
