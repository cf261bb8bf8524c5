"""Spectral embeddings with the Nyström out-of-sample extension: one core, six methods.

Every method here eigendecomposes the Gram matrix ``M`` of a data-dependent kernel ``k_D``
(:mod:`sparsekit.manifold.kernels`) and embeds any point — training or new — with the Nyström
formula (Bengio et al., "Out-of-Sample Extensions for LLE, Isomap, MDS, Eigenmaps, and Spectral
Clustering", NIPS 2003; Paiement 2003, M.Sc. thesis, Université de Montréal, eq. 5.5)::

    y_k(x) = (1 / l_k) sum_i v_ik k_D(x, x_i)           (eigenvector scale)
    e_k(x) = (1 / sqrt(l_k)) sum_i v_ik k_D(x, x_i)     (MDS scale: kernel PCA, MDS, Isomap)

with ``(l_k, v_k)`` the eigenpairs of ``M``. On a training point these give ``v_ik`` and
``sqrt(l_k) v_ik``: the training embedding. What differs between methods is only the kernel,
which eigenpairs are kept and the scale:

============================  =========================  ============================  =======
estimator                     kernel                     eigenpairs                    scale
============================  =========================  ============================  =======
:class:`KernelPCA`            base kernel, centred       top ``d``, ``l > 0``          sqrt
:class:`MDS` (classical)      ``-1/2 ||x - y||^2``,      top ``d``, ``l > 0``          sqrt
                              centred
:class:`Isomap`               ``-1/2 d_G^2``, centred    top ``d``, ``l > 0``          sqrt
``LocallyLinearEmbedding``    ``I - (I-W)^T(I-W)``       top ``d`` after the constant  eigvec
:class:`SpectralEmbedding`    affinity, divisive         top ``d``                     eigvec
:class:`LaplacianEigenmaps`   affinity, divisive         top ``d`` after the first     S^-1/2
============================  =========================  ============================  =======

Landmark training (``n_landmarks``, ``sampler``): the eigenproblem is solved on ``m``
landmarks drawn by any registered sampler, and every point is embedded by the Nyström formula —
O(m^2) memory and O(m^3) time instead of O(n^2) and O(n^3). With all points as landmarks it is
the full fit. Isomap keeps every point in its neighbourhood graph and runs its shortest paths
from the landmarks only.
"""

from __future__ import annotations

import numbers
from typing import Any, TypeVar

import numpy as np

from .._base import ClusterMixin, ParamsMixin, TransformerMixin
from .._runtime.threads import with_n_jobs
from .._typing import DataLike
from ..cluster._lloyd import DenseLloyd, best_of_inits, means
from ..components import resolve
from ..exceptions import not_fitted_error
from ..registry import Registry, default_registry
from ._eigen import bottom_eigenpairs, top_eigenpairs
from ._memory_check import check_fit_memory
from .kernels import (
    CentredKernel,
    IsomapGeodesicKernel,
    LLEKernel,
    SpectralNormalizedKernel,
    neg_half_sq_dist,
)

#: rows of new points embedded at once (bounds the n_new x n_train kernel block)
_BLOCK_ROWS = 4096

_E = TypeVar("_E", bound="_NystromEmbedding")


class _NystromEmbedding(TransformerMixin, ParamsMixin):
    """The shared fit / transform; subclasses give ``_make_kernel`` and ``_eigen``."""

    _fitted_attribute = "embedding_"
    _scale = "eigenvector"  # or "sqrt" (MDS scale)

    @property
    def _n_features_out(self):
        return self.eigenvalues_.shape[0]

    # -- what each method supplies -----------------------------------------------------------
    def _check_method_params(self) -> None:
        """Check the method's own parameters."""

    def _make_kernel(self) -> Any:
        """The data-dependent kernel of the method (unfitted)."""
        raise NotImplementedError

    def _eigen(self, kernel: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(eigenvalues, eigenvectors)`` of the fitted kernel's eigenproblem."""
        raise NotImplementedError

    # -- checks -----------------------------------------------------------------------------
    def _n_requested(self):
        return self.n_components

    def _check_common(self):
        k = self._n_requested()
        name = "n_clusters" if isinstance(self, SpectralClustering) else "n_components"
        if not isinstance(k, numbers.Integral) or isinstance(k, bool) or k < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {k!r}")
        if self.n_landmarks is not None and (
            not isinstance(self.n_landmarks, numbers.Integral)
            or isinstance(self.n_landmarks, bool)
            or self.n_landmarks < 1
        ):
            raise ValueError(
                f"n_landmarks must be None or an integer >= 1, got {self.n_landmarks!r}"
            )

    def _landmarks(self, X):
        """Indices of the training rows of the eigenproblem (all rows by default)."""
        n = X.shape[0]
        if self.n_landmarks is None:
            return None
        registry = self.registry if self.registry is not None else default_registry()
        sampler = resolve("sampler", self.sampler, registry=registry)
        kernel = registry.get("kernel", "rbf", bandwidth="median")
        found = sampler.sample(
            X, kernel, min(int(self.n_landmarks), n), random_state=self.random_state
        )
        return np.sort(np.asarray(found.indices, dtype=np.int64))

    def _base_kernel(self):
        """``(base, base_params)`` of the kernel: a named ``kernel`` is built by ``registry``
        when one is given, else resolved by the manifold kernel itself."""
        if isinstance(self.kernel, str) and self.registry is not None:
            return self.registry.get("kernel", self.kernel, **(self.kernel_params or {})), None
        return self.kernel, self.kernel_params

    # -- fit / transform --------------------------------------------------------------------
    @with_n_jobs
    def fit(self: _E, X: DataLike, y: object = None) -> _E:
        """Solve the eigenproblem on ``X`` (or its landmarks) and embed ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        self
            The fitted estimator (``embedding_`` holds the embedding of ``X``).
        """
        self._check_common()
        self._check_method_params()
        X = self._validate_input(X, reset=True)
        if X.shape[0] < 2:
            raise ValueError(
                f"n_samples={X.shape[0]}: a spectral embedding needs at least 2 samples"
            )
        if self._n_requested() > X.shape[0]:
            name = "n_clusters" if isinstance(self, SpectralClustering) else "n_components"
            raise ValueError(f"{name}={self._n_requested()} is larger than n_samples={X.shape[0]}")
        landmarks = self._landmarks(X)
        kernel = self._make_kernel()
        check_fit_memory(type(self).__name__, kernel, X.shape[0], landmarks)
        self._fit_kernel(kernel, X, landmarks)
        values, vectors = self._eigen(kernel)
        self.kernel_ = kernel
        self.eigenvalues_ = values
        self.eigenvectors_ = vectors
        self.landmarks_ = landmarks
        if landmarks is None:
            embedding = self._training_embedding(values, vectors, kernel)
        else:
            embedding = self._embed(X)
        # computed in float64; float32 input gets a float32 embedding, as scikit-learn's
        self.embedding_ = embedding.astype(X.dtype, copy=False)
        return self

    def _fit_kernel(self, kernel, X, landmarks):
        kernel.fit(X if landmarks is None else X[landmarks])

    def _training_embedding(self, values, vectors, kernel):
        if self._scale == "sqrt":
            return vectors * np.sqrt(values)
        return vectors.copy()

    def _coefficients(self):
        """``A`` with ``embedding(x) = k_D(x, X_train) @ A``."""
        if self._scale == "sqrt":
            return self.eigenvectors_ / np.sqrt(self.eigenvalues_)
        return self.eigenvectors_ / self.eigenvalues_

    def _embed(self, X):
        A = self._coefficients()
        out = np.empty((X.shape[0], A.shape[1]))
        for a in range(0, X.shape[0], _BLOCK_ROWS):
            out[a : a + _BLOCK_ROWS] = self._embed_block(X[a : a + _BLOCK_ROWS], A)
        return out

    def _embed_block(self, X, A):
        return self.kernel_(X) @ A

    @with_n_jobs
    def transform(self, X: DataLike) -> Any:
        """Embed the rows of ``X`` by the Nyström formula.

        Training points get their training embedding back (see each method for the exceptions).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The points to embed.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            Their embedding (in the container ``set_output`` chose).
        """
        self._check_is_fitted()
        Xv = self._validate_input(X, reset=False)
        out = self._embed(Xv).astype(Xv.dtype, copy=False)
        return self._wrap_output(out, X)

    @with_n_jobs
    def fit_transform(self, X: DataLike, y: object = None) -> Any:
        """Fit on ``X`` and return its embedding.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            The training embedding ``embedding_``.
        """
        self.fit(X, y)
        return self._wrap_output(self.embedding_, X)

    def _top_positive(self, kernel):
        """The top eigenpairs of ``kernel.gram()``, keeping the positive eigenvalues (MDS scale
        needs sqrt(l)); say so when some are not."""
        method = type(self).__name__
        values, vectors = top_eigenpairs(kernel.gram(), int(self._n_requested()))
        keep = values > values.max(initial=0.0) * 1e-12
        if not keep.any():
            raise ValueError(
                f"the {method} Gram matrix has no positive eigenvalue among the "
                f"top {values.size}: the data may be degenerate"
            )
        if not keep.all():
            import warnings

            warnings.warn(
                f"{method}: only {int(keep.sum())} of the {values.size} requested "
                "components have a positive eigenvalue; the others are dropped",
                UserWarning,
                stacklevel=3,
            )
        return values[keep], vectors[:, keep]


class _CommonParams:
    """Docstring fragments of the parameters every method shares, in signature order."""

    n_components = """
    n_components : int, default 2
        Embedding dimension."""
    landmarks = """
    n_landmarks : int, optional
        Solve the eigenproblem on this many landmarks (drawn by ``sampler``) and embed every
        point by the Nyström formula. Default: all training points.
    sampler : str or sampler object, default "uniform"
        A registered landmark sampler (``"uniform"``, ``"dac-rls"``, ``"greedy-trace"``, ...);
        score-based samplers use an RBF kernel with the median bandwidth.
    random_state : int or None
        Seeds the landmark sampler."""
    n_jobs = """
    n_jobs : int, optional
        Threads (Numba, BLAS and the library's pools) of each call, as
        :func:`sparsekit.thread_limit` (-1: every usable CPU); default: the setting in force."""
    registry = """
    registry : Registry, optional
        Where the sampler (and named kernels) are resolved.
"""
    doc = landmarks + n_jobs + registry
    affinity = """
    kernel : str, kernel object or callable, default "rbf"
        A non-negative affinity: a registered kernel name, a kernel object or a function
        ``k(X, Y) -> Gram``.
    kernel_params : dict, optional
        Parameters of a named kernel (``{"gamma": 0.1}``).
    zero_diagonal : bool, default False
        Give the training affinity a zero diagonal (Ng, Jordan & Weiss) instead of keeping it
        (see the decision above)."""


class KernelPCA(_NystromEmbedding):
    __doc__ = (
        """Kernel principal component analysis (Schölkopf, Smola & Müller 1998).

    The centred Gram ``H K H`` of a registered kernel is eigendecomposed; the embedding of any
    point is its projection ``sum_i v_ik k_c(x, x_i) / sqrt(l_k)`` on the principal axes, the
    Nyström formula at the MDS scale. Equal to scikit-learn's ``KernelPCA`` up to the sign of
    each component.

    Parameters
    ----------"""
        + _CommonParams.n_components
        + """
    kernel : str, kernel object or callable, default "rbf"
        A registered kernel name, a kernel object or a function ``k(X, Y) -> Gram``.
    kernel_params : dict, optional
        Parameters of a named kernel (``{"gamma": 0.1}``)."""
        + _CommonParams.doc
        + """
    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components)
        The embedding of the training points.
    eigenvalues_, eigenvectors_ : ndarray
        The eigenpairs of the centred Gram matrix that are kept.
    kernel_ : CentredKernel
        The fitted :class:`~sparsekit.manifold.kernels.CentredKernel`.
    landmarks_ : ndarray of int or None
        The training rows of the eigenproblem (None: all of them).
    """
    )

    _scale = "sqrt"

    def __init__(
        self,
        n_components: int = 2,
        *,
        kernel: str | object = "rbf",
        kernel_params: dict[str, Any] | None = None,
        n_landmarks: int | None = None,
        sampler: str | object = "uniform",
        random_state: int | None = None,
        n_jobs: int | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.n_components = n_components
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.n_landmarks = n_landmarks
        self.sampler = sampler
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.registry = registry

    def _make_kernel(self):
        return CentredKernel(*self._base_kernel())

    def _eigen(self, kernel):
        return self._top_positive(kernel)


class MDS(KernelPCA):
    __doc__ = (
        """Classical (Torgerson–Gower) multidimensional scaling with an out-of-sample map.

    ``M = -1/2 H D^2 H`` for the squared Euclidean distances ``D^2``; coordinates
    ``sqrt(l_k) v_k``; a new point ``e_k(x) = -1/(2 sqrt(l_k)) sum_i v_ik (d^2(x, x_i) - a_i)``
    with the training row means ``a_i`` of ``D^2`` (Paiement 2003, §5.1.1; the landmark-MDS
    formula of de Silva & Tenenbaum). With Euclidean distances the embedding is the PCA
    projection (up to signs).

    Parameters
    ----------"""
        + _CommonParams.n_components
        + _CommonParams.doc
    )

    def __init__(
        self,
        n_components: int = 2,
        *,
        n_landmarks: int | None = None,
        sampler: str | object = "uniform",
        random_state: int | None = None,
        n_jobs: int | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.n_components = n_components
        self.n_landmarks = n_landmarks
        self.sampler = sampler
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.registry = registry

    def _make_kernel(self):
        return CentredKernel(neg_half_sq_dist)


class Isomap(_NystromEmbedding):
    __doc__ = (
        """Isomap (Tenenbaum, de Silva & Langford 2000) with its out-of-sample extension.

    Classical MDS on the geodesic distances of the symmetric k-nearest-neighbour graph
    (Dijkstra from every training point, in parallel); a new point reaches the graph through its
    ``transform_neighbors`` nearest fitted points and is embedded by the Nyström formula
    (Paiement 2003, §5.1.3). Equal to scikit-learn's ``Isomap`` (fit and transform) up to the
    sign of each component.

    With landmarks, every point stays in the graph and the geodesics run from the landmarks
    (landmark Isomap, de Silva & Tenenbaum 2003).

    Coordinates so large or small that squared geodesics would overflow or underflow (beyond
    ``2**±100``) are handled in units of a power of two, ``kernel_.scale_``: the embedding is in
    the units of ``X``, ``eigenvalues_`` are those of ``kernel_.gram()`` (in units of
    ``kernel_.scale_**2``).

    Parameters
    ----------"""
        + _CommonParams.n_components
        + """
    n_neighbors : int, default 5
        Neighbours of each point in the neighbourhood graph.
    transform_neighbors : int, optional
        Neighbours of a new point (default ``n_neighbors``)."""
        + _CommonParams.landmarks
        + """
    n_jobs : int, optional
        Threads (Numba, BLAS and the library's pools) of each call, as
        :func:`sparsekit.thread_limit` (-1: every usable CPU); default: the setting in force.
    disconnected : {"connect", "raise"}, default "connect"
        What a disconnected neighbourhood graph does: link every pair of components by its
        shortest link with a warning (scikit-learn's behaviour), or raise ``ValueError``
        (increase ``n_neighbors``)."""
        + _CommonParams.registry
    )

    _scale = "sqrt"

    def __init__(
        self,
        n_components: int = 2,
        *,
        n_neighbors: int = 5,
        transform_neighbors: int | None = None,
        n_landmarks: int | None = None,
        sampler: str | object = "uniform",
        random_state: int | None = None,
        n_jobs: int | None = None,
        disconnected: str = "connect",
        registry: Registry | None = None,
    ) -> None:
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.transform_neighbors = transform_neighbors
        self.disconnected = disconnected
        self.n_landmarks = n_landmarks
        self.sampler = sampler
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.registry = registry

    def _make_kernel(self):
        return IsomapGeodesicKernel(
            self.n_neighbors, self.transform_neighbors, self.n_jobs, self.disconnected
        )

    def _fit_kernel(self, kernel, X, landmarks):
        kernel.fit(X, landmarks=landmarks)

    def _eigen(self, kernel):
        return self._top_positive(kernel)

    # the kernel works in units of kernel.scale_ (1.0 for ordinary data): back to those of X
    def _training_embedding(self, values, vectors, kernel):
        return super()._training_embedding(values, vectors, kernel) * kernel.scale_

    def _embed(self, X):
        return super()._embed(X) * self.kernel_.scale_


class LocallyLinearEmbedding(_NystromEmbedding):
    __doc__ = (
        """Locally linear embedding (Roweis & Saul 2000) with its out-of-sample extension.

    The bottom eigenvectors of ``(I - W)^T (I - W)`` after the constant one; a new point gets
    ``y_k(x) = sum_j w(x, x_j) y_jk / l_k`` with its barycentric weights on its nearest training
    points and ``l_k = 1 - mu_k`` (the Nyström formula for the kernel ``I - (I-W)^T (I-W)``,
    Paiement 2003, §5.1.4). scikit-learn's ``transform`` omits the factor ``1 / l_k`` (close to
    1); the training embedding equals scikit-learn's up to signs. A training point submitted to
    ``transform`` is reconstructed from itself and its neighbours, so it gets its training
    embedding back only up to the regularisation (about ``reg``).

    Parameters
    ----------"""
        + _CommonParams.n_components
        + """
    n_neighbors : int, default 5
        Neighbours whose barycentric weights reconstruct each point.
    reg : float, default 1e-3
        Regularisation of the local Gram matrices (times their trace)."""
        + _CommonParams.landmarks
        + _CommonParams.n_jobs
        + _CommonParams.registry
    )

    def __init__(
        self,
        n_components: int = 2,
        *,
        n_neighbors: int = 5,
        reg: float = 1e-3,
        n_landmarks: int | None = None,
        sampler: str | object = "uniform",
        random_state: int | None = None,
        n_jobs: int | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.reg = reg
        self.n_landmarks = n_landmarks
        self.sampler = sampler
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.registry = registry

    def _make_kernel(self):
        return LLEKernel(self.n_neighbors, self.reg, self.n_jobs)

    def _eigen(self, kernel):
        mu, vectors = bottom_eigenpairs(kernel.residual_operator(), int(self._n_requested()))
        return 1.0 - mu, vectors


class SpectralEmbedding(_NystromEmbedding):
    __doc__ = (
        """Spectral embedding with the Ng–Jordan–Weiss normalisation and its extension.

    The top eigenvectors of ``S^{-1/2} K~ S^{-1/2}`` for an affinity ``K~`` and degrees ``S``; a
    new point ``y_k(x) = (1/l_k) sum_i v_ik K~(x, x_i) / sqrt(S(x) S_i)`` (Paiement 2003,
    eq. 5.2).

    Decision: the training affinity keeps its diagonal by default (``zero_diagonal=False``, the
    generalised kernel of Paiement 2003, Table 5.2), so that ``transform`` of a training point
    gives exactly its training embedding and ``fit_transform(X)`` equals ``fit(X).transform(X)``.
    ``zero_diagonal=True`` is the training affinity of Ng, Jordan & Weiss (Paiement 2003,
    Table 4.5): a training point submitted to ``transform`` then differs from its training
    embedding (its self-affinity 1 enters the sums).

    Parameters
    ----------"""
        + _CommonParams.n_components
        + _CommonParams.affinity
        + _CommonParams.doc
    )

    def __init__(
        self,
        n_components: int = 2,
        *,
        kernel: str | object = "rbf",
        kernel_params: dict[str, Any] | None = None,
        zero_diagonal: bool = False,
        n_landmarks: int | None = None,
        sampler: str | object = "uniform",
        random_state: int | None = None,
        n_jobs: int | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.n_components = n_components
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.zero_diagonal = zero_diagonal
        self.n_landmarks = n_landmarks
        self.sampler = sampler
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.registry = registry

    def _check_method_params(self):
        if not isinstance(self.zero_diagonal, (bool, np.bool_)):
            raise TypeError(f"zero_diagonal must be True or False, got {self.zero_diagonal!r}")

    def _make_kernel(self):
        return SpectralNormalizedKernel(*self._base_kernel(), self.zero_diagonal)

    def _eigen(self, kernel):
        return top_eigenpairs(kernel.gram(), int(self._n_requested()))


class LaplacianEigenmaps(SpectralEmbedding):
    __doc__ = (
        """Laplacian eigenmaps (Belkin & Niyogi 2003) with the out-of-sample extension.

    Solutions of ``(S - K~) y = s S y`` after the constant one: ``y = S^{-1/2} v`` for the
    eigenvectors ``v`` of ``S^{-1/2} K~ S^{-1/2}`` (eigenvalue ``l = 1 - s``); a new point
    ``y_k(x) = (1/l_k) sum_i K~(x, x_i) y_ik / S(x)``, a kernel-weighted average of the training
    embeddings (Bengio et al., NIPS 2003). Same parameters as :class:`SpectralEmbedding`.

    Parameters
    ----------"""
        + _CommonParams.n_components
        + _CommonParams.affinity
        + _CommonParams.doc
    )

    def _eigen(self, kernel):
        return top_eigenpairs(kernel.gram(), int(self._n_requested()), skip=1)

    def _training_embedding(self, values, vectors, kernel):
        return vectors / np.sqrt(kernel.degrees_)[:, None]

    def _coefficients(self):
        # rows of A are scaled so that K_norm(x) @ A = sum_i K~(x, x_i) y_i / (sqrt(S(x)) l)
        return self.eigenvectors_ / self.eigenvalues_

    def _embed_block(self, X, A):
        K, S = self.kernel_.evaluate_with_degrees(X)
        return (K @ A) / np.sqrt(S)[:, None]


def _kmeans(Y, k, rng, n_init, max_iter=300):
    """Lloyd's k-means with k-means++ seeding (:mod:`sparsekit.cluster._lloyd`, the package's
    one k-means; one candidate per seed, the plain k-means++ of Arthur & Vassilvitskii 2007);
    ``(inertia, centres, labels)`` of the best of ``n_init`` runs.

    The embedding has only k columns: the squared distances are summed from the differences
    (exact 0 for a point on its centre) rather than expanded into norms and products."""
    Z = np.asarray(Y, dtype=np.float64)

    def sq_distances(C):
        return ((Z[:, None, :] - C[None]) ** 2).sum(2)

    def distances(labels):
        return sq_distances(means(Z, labels, k))

    inertia, labels, _, steps = best_of_inits(
        len(Z),
        k,
        "k-means++",
        None,
        n_init,
        rng,
        lambda idx: sq_distances(Z[idx]),
        lambda seeds: DenseLloyd(sq_distances(Z[seeds]), distances, k),
        max_iter,
        0.0,
        n_trials=1,
    )
    return inertia, means(Z, steps.centre_labels, k).astype(Y.dtype, copy=False), labels


class SpectralClustering(ClusterMixin, SpectralEmbedding):
    __doc__ = (
        """Spectral clustering (Ng, Jordan & Weiss 2002) that can also label new points.

    The :class:`SpectralEmbedding` with ``n_components = n_clusters`` eigenvectors, each row
    normalised to unit length, then k-means (k-means++ seeding, ``n_init`` runs). ``predict``
    embeds new points by the Nyström formula, normalises them the same way and assigns each to
    the nearest centre (Bengio et al., NIPS 2003) — what scikit-learn's ``SpectralClustering``
    cannot do.

    Parameters
    ----------
    n_clusters : int, default 2
        Number of clusters (and of eigenvectors in the embedding)."""
        + _CommonParams.affinity
        + """
    n_init : int, default 10
        Runs of k-means from different seeds; the one of least inertia is kept."""
        + (_CommonParams.doc)
        + """
    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The cluster of each training point.
    cluster_centers_ : ndarray of shape (n_clusters, n_clusters)
        The centres, in the normalised embedding.
    embedding_, eigenvalues_, eigenvectors_ : ndarray
        As :class:`SpectralEmbedding`.
    """
    )

    # set by fit (declared for type checkers; no class attributes are created)
    labels_: np.ndarray
    cluster_centers_: np.ndarray

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        kernel: str | object = "rbf",
        kernel_params: dict[str, Any] | None = None,
        zero_diagonal: bool = False,
        n_init: int = 10,
        n_landmarks: int | None = None,
        sampler: str | object = "uniform",
        random_state: int | None = None,
        n_jobs: int | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.zero_diagonal = zero_diagonal
        self.n_init = n_init
        self.n_landmarks = n_landmarks
        self.sampler = sampler
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.registry = registry

    def _n_requested(self):
        return self.n_clusters

    @staticmethod
    def _normalise_rows(Y):
        norms = np.linalg.norm(Y, axis=1, keepdims=True)
        return Y / np.where(norms > 0, norms, 1.0)

    @with_n_jobs
    def fit(self, X: DataLike, y: object = None) -> SpectralClustering:
        """Embed ``X``, normalise the rows and run k-means.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        self
            The fitted estimator (``labels_`` and ``cluster_centers_`` set).
        """
        if (
            not isinstance(self.n_init, numbers.Integral)
            or isinstance(self.n_init, bool)
            or self.n_init < 1
        ):
            raise ValueError(f"n_init must be an integer >= 1, got {self.n_init!r}")
        super().fit(X)
        rng = np.random.default_rng(self.random_state)
        _, self.cluster_centers_, self.labels_ = _kmeans(
            self._normalise_rows(self.embedding_), int(self.n_clusters), rng, int(self.n_init)
        )
        return self

    @with_n_jobs
    def predict(self, X: DataLike) -> np.ndarray:
        """Assign each row of ``X`` to a cluster.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The points to label.

        Returns
        -------
        ndarray of shape (n_samples,)
            The cluster of each row: the centre nearest its normalised Nyström embedding.
        """
        if getattr(self, "cluster_centers_", None) is None:
            raise not_fitted_error(
                f"this {type(self).__name__} is not fitted yet: call fit(X) before predict"
            )
        Y = self._normalise_rows(self._embed(self._validate_input(X, reset=False)))
        return ((Y[:, None, :] - self.cluster_centers_[None]) ** 2).sum(2).argmin(1)


__all__ = [
    "KernelPCA",
    "MDS",
    "Isomap",
    "LocallyLinearEmbedding",
    "SpectralEmbedding",
    "LaplacianEigenmaps",
    "SpectralClustering",
]
