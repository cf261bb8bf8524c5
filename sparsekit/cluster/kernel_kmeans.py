"""Kernel k-means: Lloyd's algorithm in a kernel feature space, exact or on Nyström features.

Objective (the empirical risk of the poster "k-means à noyau" on Nyström features with greedy
residual-trace landmarks): with φ the kernel feature map and centres c_1..c_k ∈ ℋ,

    inertia = Σ_i min_j ‖φ(x_i) − c_j‖²_ℋ.

- **Exact** (``method="exact"``; ``"auto"`` for small n): Lloyd through the Gram matrix K. For
  a cluster C_j with indicator column ``h_j / |C_j|`` (matrix H),
  ‖φ(x_i) − c_j‖² = K_ii − 2 (K H)_ij + (Hᵀ K H)_jj. Θ(n²) per iteration (one pass over K:
  the per-cluster sums of every row, a scatter-add by label, :mod:`sparsekit.cluster._exact`),
  n² memory (the Gram matrix is held: use it only where it fits, ``max_memory``).
- **Nyström** (``method="nystrom"``): Lloyd on the features z_i = P_S φ(x_i) (coordinates in
  an orthonormal basis of ℋ_S = span{φ(x_s), s ∈ S}, :class:`sparsekit.Nystroem`) with
  landmarks S from any registered sampler; the poster's choice is ``"greedy-trace"``
  (``sampler_params={"approximate": True}`` for its random-feature sketch, which spans at most
  ``n_features`` dimensions: it stops with a warning after that many landmarks, so give
  ``n_features >= n_landmarks``). The centres lie in
  ℋ_S, and since φ(x) − P_S φ(x) ⟂ ℋ_S,
  ‖φ(x) − c‖² = ‖P_S^⊥ φ(x)‖² + ‖z − c‖² = k(x, x) − ‖z‖² + ‖z − c‖².
  ``inertia_`` and
  :meth:`~KernelKMeans.transform` report these distances *in ℋ*, so exact and Nyström fits
  are compared on the same objective. The poster's bound on the excess risk of searching the
  centres in ℋ_S instead of ℋ is the residual trace
  ℰ(S) = ‖P_S^⊥ Φ‖²_HS = tr(K − K̃) = Σ_i k(x_i, x_i) − ‖z_i‖², reported as ``residual_trace_``.

Seeding is greedy k-means++ (Arthur & Vassilvitskii 2007; 2 + ⌊ln k⌋ candidates per centre, as
scikit-learn) on the same distances. A cluster left empty is re-seeded with the point farthest
from its centre.

Lloyd's loop, the seeding and the empty-cluster repair are those of
:mod:`sparsekit.cluster._lloyd`, written over a backend of steps (its ``DenseLloyd`` here; the
chunked one of :func:`sparsekit.dask.kernel_kmeans_fit` reduces per-chunk sums and counts), so
that both run the same iterations on the same per-row math.

What a fit reports (scikit-learn's rule for ``KMeans``): ``labels_``, the centres and
``inertia_`` describe one and the same partition. The centres are those of the last Lloyd
step, ``labels_`` the closest centre of every training point (of centres tied up to
rounding, the lowest index, as ``predict`` picks) and ``inertia_`` the objective of
``labels_`` against these centres, so ``inertia_ == -score(X_train)`` and
``predict(X_train) == labels_``. Once Lloyd has converged the centres are the means of the
clusters of ``labels_`` (but for duplicate points split over clusters with equal centres, all
labelled with the lowest of them); when ``tol`` or ``max_iter`` stops it first, they are the
means of the clusters one assignment step earlier.
"""

from __future__ import annotations

import numbers
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._base import ClusterMixin, ParamsMixin, TransformerMixin
from .._runtime.memory import check_allocation, dense_gram_bytes
from .._runtime.small_blas import is_skinny, one_blas_thread
from .._runtime.threads import effective_n_jobs, with_n_jobs
from .._typing import DataLike, RandomStateLike
from .._validation import check_option, check_random_state, check_scalar, looks_like_graphs
from ..components import resolve
from ..kernels.base import VectorKernel
from ._exact import distances as exact_distances, symmetrize_inplace
from ._lloyd import DenseLloyd, best_of_inits, means, nearest, sq_dists

if TYPE_CHECKING:
    from ..registry import Registry

METHODS = ("auto", "exact", "nystrom")
INITS = ("k-means++", "random")
#: Bytes of one row block of kernel values / distances outside the exact Gram.
_BLOCK_BYTES = 32 * 2**20


def _returns_new_array(kernel):
    """Whether the kernel's Gram matrix is a new array (vector kernels write a fresh ``out``),
    so that the fit may overwrite it."""
    return isinstance(kernel, VectorKernel) and type(kernel).__call__ is VectorKernel.__call__


def _indicator(labels, k):
    """(n, k) matrix H with H[i, j] = 1/|C_j| for i ∈ C_j."""
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    H = np.zeros((len(labels), k))
    H[np.arange(len(labels)), labels] = 1.0 / np.maximum(counts[labels], 1.0)
    return H


def warn_distinct(counts: np.ndarray) -> None:
    """Warn when fewer clusters than ``len(counts)`` hold a point, in the words of
    scikit-learn's ``KMeans`` (a ``ConvergenceWarning`` there)."""
    distinct, k = int(np.count_nonzero(counts)), len(counts)
    if distinct < k:
        warnings.warn(
            f"Number of distinct clusters ({distinct}) found smaller than n_clusters ({k}). "
            "Possibly due to duplicate points in X.",
            UserWarning,
            stacklevel=3,
        )


class KernelKMeans(ClusterMixin, TransformerMixin, ParamsMixin):
    """Kernel k-means, exact through the Gram matrix or on Nyström features.

    Parameters
    ----------
    n_clusters : int, default 8
        The number of clusters k.
    kernel : str or kernel object, default "rbf"
        Any registered kernel (graph kernels take a sequence of graphs as X).
    sampler : str or sampler object, default "uniform"
        Landmark sampler of the Nyström method (the poster uses ``"greedy-trace"``).
    n_landmarks : int, optional
        Landmarks of the Nyström method; default min(n, 100).
    n_init : int or "auto", default "auto"
        Seedings tried; the fit with the lowest inertia is kept. ``"auto"``: 3 seedings, or one
        when ``init`` gives sample indices (scikit-learn's ``KMeans`` rule since 1.4). Sample
        indices as ``init`` make one run whatever ``n_init`` (a ``RuntimeWarning`` when an
        integer ``n_init != 1`` is given, as scikit-learn's ``KMeans`` warns for explicit
        initial centres).
    method : {"auto", "exact", "nystrom"}, default "auto"
        ``"auto"``: exact when the n × n Gram matrix fits in ``max_memory`` bytes. The exact
        method uses no landmarks: when ``"auto"`` picks it although ``sampler`` (other than the
        default ``"uniform"``), ``sampler_params`` or ``n_landmarks`` was given, fit warns
        (``UserWarning`` naming them) that they are ignored; pass ``method="nystrom"`` to use
        them. ``"auto"`` keeps its memory rule rather than switching on these parameters, so
        that the method of a fit never depends on whether a default was spelled out.
        ``method="exact"`` is an explicit choice and ignores them without a warning.
    init : {"k-means++", "random"} or array of k sample indices, default "k-means++"
        Seeds: greedy k-means++ in feature space, k distinct random points, or given points.
    max_iter : int, default 300
        The most iterations (centre updates) of each run, as in scikit-learn's ``KMeans``.
    tol : float >= 0, default 1e-6
        Stop when the objective decreases by less than ``tol`` times its value.
    kernel_params, sampler_params : dict, optional
        Parameters of a named kernel / sampler.
    max_memory : int, default 256 MiB
        Largest Gram matrix (bytes) ``method="auto"`` computes exactly.
    random_state : None, int or Generator
        Seeds the landmarks and the seedings.
    n_jobs : int, optional
        Threads (Numba, BLAS and the library's pools) of each call, as
        :func:`sparsekit.thread_limit` (-1: every usable CPU); default: the setting in force.
    registry : Registry, optional
        Where ``kernel`` and ``sampler`` names are looked up (default: the process-wide
        registry); resolved once, in ``fit``, by :func:`sparsekit.components.resolve`.

    Attributes
    ----------
    labels_ : int64 array (n,)
        The closest centre of every training point; of centres that tie with the closest up
        to rounding, within 1e-9 times the squared norms in ℋ of the point and the two centres
        (duplicate points split over clusters with equal centres), the lowest index, so that
        ``predict(X_train) == labels_``. When fewer
        distinct clusters than ``n_clusters`` remain (fewer distinct points than clusters),
        fit warns (``UserWarning``, in the words of scikit-learn's ``KMeans``).
    inertia_ : float
        Σ_i ‖φ(x_i) − c_{labels_i}‖²_ℋ (module docstring), against the centres the fit keeps:
        equal to ``-score(X_train)`` up to rounding. ``labels_``, the centres and ``inertia_``
        describe one and the same partition, as in scikit-learn's ``KMeans``: the centres are
        those of the last Lloyd step and ``labels_`` its assignment (when ``tol`` or
        ``max_iter`` stops Lloyd before it converged, the centres are the means of the
        previous labels, not of ``labels_``).
    residual_trace_ : float
        ‖P_S^⊥ Φ‖²_HS = tr(K − K̃) of the landmarks (0 for the exact method).
    method_ : {"exact", "nystrom"}
    n_iter_ : int
        Lloyd iterations (a centre update each), counted as scikit-learn's ``KMeans`` counts
        them: ``max_iter`` bounds them, and a run that converged counts the last assignment
        that changed no label.
    kernel_ : fitted kernel object
    nystroem_ : fitted :class:`sparsekit.Nystroem` (Nyström method) or None
    cluster_centers_ : (k, s) array, centres in Nyström coordinates (Nyström method) or None
    n_features_in_ : int (vector data)

    Examples
    --------
    >>> from sklearn.datasets import make_circles
    >>> from sklearn.metrics import adjusted_rand_score
    >>> X, y = make_circles(300, factor=0.3, noise=0.04, random_state=0)
    >>> labels = KernelKMeans(2, kernel_params={"gamma": 5}, random_state=0).fit_predict(X)
    >>> float(adjusted_rand_score(y, labels))     # the two rings, which linear k-means cannot split
    1.0
    """

    def __init__(
        self,
        n_clusters: int = 8,
        kernel: str | object = "rbf",
        sampler: str | object = "uniform",
        n_landmarks: int | None = None,
        n_init: int | str = "auto",
        method: str = "auto",
        init: str | ArrayLike = "k-means++",
        max_iter: int = 300,
        tol: float = 1e-6,
        kernel_params: dict[str, Any] | None = None,
        sampler_params: dict[str, Any] | None = None,
        max_memory: int = 256 * 2**20,
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.kernel = kernel
        self.sampler = sampler
        self.n_landmarks = n_landmarks
        self.n_init = n_init
        self.method = method
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.kernel_params = kernel_params
        self.sampler_params = sampler_params
        self.max_memory = max_memory
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.registry = registry

    #: fitted once labels_ exists (TransformerMixin's check)
    _fitted_attribute = "labels_"

    @property
    def _n_features_out(self):
        return int(self.n_clusters)

    # -- input -------------------------------------------------------------------------------
    def _validate(self, X, kernel, fitting):
        kind = getattr(kernel, "accepts", "vectors")
        if getattr(kernel, "name", None) == "precomputed":
            raise ValueError(
                "KernelKMeans does not take kernel='precomputed': transform and predict need "
                "k(x, x) and k(x, x_j) of new samples, which a Gram matrix of the training "
                "samples does not give; pass the samples and the kernel (a registered name, a "
                "function or a kernel object)"
            )
        if kind == "graphs":
            if isinstance(X, np.ndarray) and X.ndim == 2 or hasattr(X, "iloc"):
                raise TypeError(
                    f"kernel {kernel.name!r} takes graphs (a sequence of adjacency matrices, "
                    "(adjacency, labels) pairs or networkx graphs) but X is a 2-D array; use "
                    "a vector kernel such as 'rbf'"
                )
            return kernel.prepare(X)
        if looks_like_graphs(X):
            raise TypeError(
                f"kernel {kernel.name!r} takes vectors (a 2-D array) but X is a sequence of "
                "graphs; use a graph kernel such as 'shortest-path'"
            )
        # width and feature names recorded in fit and checked afterwards (TransformerMixin)
        return kernel.prepare(self._validate_input(X, reset=fitting))

    def _validate_params(self):
        k = check_scalar(
            self.n_clusters, "n_clusters", kind=numbers.Integral, low=1, low_inclusive=True
        )
        if not (isinstance(self.n_init, str) and self.n_init == "auto"):
            check_scalar(self.n_init, "n_init", kind=numbers.Integral, low=1, low_inclusive=True)
        check_scalar(self.max_iter, "max_iter", kind=numbers.Integral, low=1, low_inclusive=True)
        check_scalar(self.tol, "tol", low=0.0, low_inclusive=True)
        check_scalar(self.max_memory, "max_memory", low=0.0, low_inclusive=True)
        if self.n_landmarks is not None:
            check_scalar(
                self.n_landmarks, "n_landmarks", kind=numbers.Integral, low=1, low_inclusive=True
            )
        check_option(self.method, "method", METHODS)
        if isinstance(self.init, str):
            check_option(self.init, "init", INITS)
        return k

    def _init_indices(self, n, k):
        if isinstance(self.init, str):
            return None
        idx = np.asarray(self.init)
        if idx.dtype.kind not in "iu" or idx.shape != (k,):
            raise ValueError(
                f"init must be 'k-means++', 'random' or an array of n_clusters={k} sample "
                f"indices, got {self.init!r}"
            )
        if idx.min() < 0 or idx.max() >= n or len(np.unique(idx)) != k:
            raise ValueError(f"init indices must be {k} distinct integers in [0, {n})")
        if self.n_init != "auto" and self.n_init != 1:
            # scikit-learn's KMeans warns the same way for explicit initial centres
            warnings.warn(
                "Explicit initial centres passed (init= sample indices): performing only one "
                f"init in KernelKMeans instead of n_init={self.n_init}; pass n_init=1",
                RuntimeWarning,
                stacklevel=3,
            )
        return idx.astype(np.int64)

    def _warn_ignored_landmark_params(self, n):
        """Warn when ``method="auto"`` picks the exact method although landmark parameters
        were given."""
        given = []
        if isinstance(self.sampler, str):
            if self.sampler != "uniform":
                given.append(f"sampler={self.sampler!r}")
        elif getattr(self.sampler, "name", None) != "uniform":
            given.append(f"sampler={self.sampler!r}")
        if self.sampler_params:
            given.append(f"sampler_params={self.sampler_params!r}")
        if self.n_landmarks is not None:
            given.append(f"n_landmarks={self.n_landmarks!r}")
        if not given:
            return
        warnings.warn(
            f'method="auto" chose the exact method (the {n} x {n} Gram matrix fits in '
            f"max_memory={self.max_memory} bytes), which uses no landmarks, so "
            f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} ignored; pass "
            'method="nystrom" to cluster on Nyström features with these landmarks',
            UserWarning,
            stacklevel=3,
        )

    def _landmark_count(self, n):
        """Landmarks of the Nyström method for n samples: ``n_landmarks``, default min(n, 100)."""
        s = min(n, 100) if self.n_landmarks is None else int(self.n_landmarks)
        if s > n:
            raise ValueError(
                f"n_landmarks={s} is larger than n_samples={n}; choose n_landmarks <= {n}"
            )
        return s

    # -- fit ---------------------------------------------------------------------------------
    @with_n_jobs
    def fit(self, X: DataLike, y: object = None) -> KernelKMeans:
        """Cluster ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of graphs
            Training data.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        self
            The fitted estimator.
        """
        k = self._validate_params()
        kernel = resolve("kernel", self.kernel, self.kernel_params, registry=self.registry)
        Xp = self._validate(X, kernel, fitting=True)
        n = kernel.n_samples(Xp)
        if n < k:
            raise ValueError(
                f"n_samples={n} should be >= n_clusters={k}; ask for at most {n} clusters"
            )
        kernel.fit(Xp)
        given = self._init_indices(n, k)
        method = check_option(self.method, "method", METHODS)
        if method == "auto":
            method = "exact" if n * n * 8 <= self.max_memory else "nystrom"
            if method == "exact":
                self._warn_ignored_landmark_params(n)
        rng = check_random_state(self.random_state)
        if method == "exact":
            itemsize = getattr(getattr(Xp, "dtype", None), "itemsize", 8)
            # the Gram (converted to float64), plus a float64 copy when the kernel's array may
            # not be overwritten; a vector kernel's fresh array is symmetrised in place
            fresh = _returns_new_array(kernel)
            check_allocation(
                dense_gram_bytes(n, itemsize) + (0 if fresh else 8 * n * n),
                f"KernelKMeans(method='exact') on {n} samples",
                "use method='nystrom' with n_landmarks= (default 100)",
                matrices="its n x n matrices",
            )
            raw = kernel(Xp)
            K = np.asarray(raw, dtype=np.float64, order="C")
            if K is raw and not fresh:
                K = K.copy()  # the kernel's array may be the caller's: symmetrised in place
            del raw
            n_threads = effective_n_jobs()
            K = symmetrize_inplace(K, n_threads)
            diag = np.diagonal(K).copy()
            last: dict[str, Any] = {}  # the centres' norms of the last step, for the model

            def sqdist_to(idx):
                # K is symmetric: the rows K[idx] are the columns K[:, idx], read contiguously
                return (diag[None, :] + diag[idx][:, None] - 2.0 * K[idx]).T

            def distances(labels):
                D, last["cc"] = exact_distances(K, diag, labels, k, n_threads)
                last["labels"] = labels
                return D

            self.nystroem_ = None
            self.residual_trace_ = 0.0
            diag_total = None
        else:
            from ..features.nystrom import Nystroem

            sampler = resolve("sampler", self.sampler, self.sampler_params, registry=self.registry)
            s = self._landmark_count(n)
            ny = Nystroem(kernel=kernel, sampler=sampler, n_components=s, random_state=rng)
            ny.fit(Xp)
            Z = np.asarray(ny.transform(Xp), dtype=np.float64)
            zsq = np.einsum("ij,ij->i", Z, Z)
            diag_total = float(np.sum(kernel.diag(Xp), dtype=np.float64))
            self.nystroem_ = ny
            self.residual_trace_ = max(diag_total - float(zsq.sum()), 0.0)

            def sqdist_to(idx):
                return sq_dists(Z, zsq, Z[idx])

            def distances(labels):
                return sq_dists(Z, zsq, means(Z, labels, k))

        init = self.init if given is not None else check_option(self.init, "init", INITS)
        with one_blas_thread(is_skinny(k)):  # the steps' products have k columns (module doc)
            obj, labels, n_iter, steps = best_of_inits(
                n,
                k,
                init,
                given,
                1 if given is not None else (3 if self.n_init == "auto" else int(self.n_init)),
                rng,
                sqdist_to,
                lambda seeds: DenseLloyd(sqdist_to(seeds), distances, k),
                int(self.max_iter),
                float(self.tol),
            )
            # the centres the last labels were assigned to, against which obj is measured
            if method == "exact":
                H = _indicator(steps.centre_labels, k)
                if last["labels"] is steps.centre_labels:
                    cc = last["cc"]
                else:  # the best of several inits was not the last run
                    cc = exact_distances(K, diag, steps.centre_labels, k, n_threads)[1]
                row_sq, col_sq = diag, cc
            else:
                centres = means(Z, steps.centre_labels, k)
                row_sq, col_sq = zsq, np.einsum("ij,ij->i", centres, centres)
            # the closest centres, ties up to rounding to the lowest index as in predict
            labels = nearest(steps.D, row_sq, col_sq)
            obj = float(steps.D[np.arange(n), labels].sum())
        warn_distinct(np.bincount(labels, minlength=k))
        self.kernel_ = kernel
        self.method_ = method
        self.labels_ = labels.astype(np.int64)
        self.n_iter_ = n_iter
        self._dtype = Xp.dtype if isinstance(Xp, np.ndarray) else np.dtype(np.float64)
        if method == "exact":
            # predict reads the training points: keep a copy the caller cannot change, as
            # scikit-learn's estimators do (a prepared graph set is already the model's own)
            self._X_fit = Xp.copy() if hasattr(Xp, "copy") else Xp
            self._H = H
            self._cc = cc
            self.cluster_centers_ = None
            self.inertia_ = obj
        else:
            self.cluster_centers_ = centres
            self.inertia_ = obj + self.residual_trace_
        return self

    # -- use ---------------------------------------------------------------------------------
    def _sq_distances(self, X, norms=False):
        """‖φ(x) − c_j‖²_ℋ for every row of X, computed in row blocks; with ``norms``, also
        (upper bounds of) the squared norms of the rows and of the centres in ℋ, for
        :func:`~sparsekit.cluster._lloyd.nearest`."""
        self._check_is_fitted()
        kernel = self.kernel_
        Xp = self._validate(X, kernel, fitting=False)
        n = kernel.n_samples(Xp)
        skinny = is_skinny(int(self.n_clusters))
        if self.method_ == "exact":
            m = kernel.n_samples(self._X_fit)
            step = int(max(1, min(n, _BLOCK_BYTES // max(1, 8 * m))))
            out = np.empty((n, self._H.shape[1]))
            diag = np.asarray(kernel.diag(Xp), dtype=np.float64)
            for r0 in range(0, n, step):
                r1 = min(n, r0 + step)
                rows = (
                    Xp[r0:r1] if isinstance(Xp, np.ndarray) else kernel.take(Xp, np.arange(r0, r1))
                )
                Kb = np.asarray(kernel(rows, self._X_fit), dtype=np.float64)
                with one_blas_thread(skinny):
                    KH = Kb @ self._H
                out[r0:r1] = diag[r0:r1, None] - 2.0 * KH + self._cc[None, :]
            out = np.maximum(out, 0.0)
            return (out, diag, self._cc) if norms else out
        Z = np.asarray(self.nystroem_.transform(Xp), dtype=np.float64)
        zsq = np.einsum("ij,ij->i", Z, Z)
        resid = np.maximum(np.asarray(kernel.diag(Xp), dtype=np.float64) - zsq, 0.0)
        C = self.cluster_centers_
        with one_blas_thread(skinny):
            D = sq_dists(Z, zsq, C)
        D += resid[:, None]
        return (D, zsq + resid, np.einsum("ij,ij->i", C, C)) if norms else D

    @with_n_jobs
    def transform(self, X: DataLike) -> np.ndarray:
        """Compute the distances ‖φ(x) − c_j‖_ℋ to the k centres.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of graphs
            The samples.

        Returns
        -------
        ndarray of shape (n_samples, n_clusters)
            The distances ‖φ(x) − c_j‖_ℋ, in the dtype of ``X``.
        """
        D = np.sqrt(self._sq_distances(X))
        return self._wrap_output(D.astype(self._out_dtype(X), copy=False), X)

    def _out_dtype(self, X):
        dt = getattr(X, "dtype", None)
        return dt if dt in (np.float32, np.float64) else np.float64

    @with_n_jobs
    def predict(self, X: DataLike) -> np.ndarray:
        """Assign each sample to the closest centre in feature space.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of graphs
            The samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            The index of the closest centre in feature space.
        """
        return nearest(*self._sq_distances(X, norms=True)).astype(np.int64)

    @with_n_jobs
    def score(self, X: DataLike, y: object = None) -> float:
        """Score ``X``: the opposite of its inertia in feature space.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of graphs
            The samples.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        float
            The opposite of the inertia of ``X`` in feature space (higher is better).
        """
        D = self._sq_distances(X)
        return -float(D.min(axis=1).sum())


__all__ = ["KernelKMeans"]
