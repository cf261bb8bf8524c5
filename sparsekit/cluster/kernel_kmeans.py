"""Kernel k-means: Lloyd's algorithm in a kernel feature space, exact or on Nyström features.

Objective (the empirical risk of the poster "k-means à noyau" on Nyström features with greedy
residual-trace landmarks): with φ the kernel feature map and centres c_1..c_k ∈ ℋ,

    inertia = Σ_i min_j ‖φ(x_i) − c_j‖²_ℋ.

- **Exact** (``method="exact"``; ``"auto"`` for small n): Lloyd through the Gram matrix K. For
  a cluster C_j with indicator column ``h_j / |C_j|`` (matrix H),
  ‖φ(x_i) − c_j‖² = K_ii − 2 (K H)_ij + (Hᵀ K H)_jj. Θ(n² k) per iteration, n² memory
  (the Gram matrix is held: use it only where it fits, ``max_memory``).
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

Lloyd's loop is written over a backend of steps (:class:`_DenseLloyd` here; the chunked one of
:func:`sparsekit.dask.kernel_kmeans_fit` reduces per-chunk sums and counts), so that both run
the same iterations on the same per-row math.
"""
from __future__ import annotations

import copy
import math
import numbers
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base import ParamsMixin
from .._memory import check_allocation, dense_gram_bytes
from .._small_blas import is_skinny, one_blas_thread
from .._typing import DataLike, RandomStateLike
from .._validation import check_option, check_random_state, check_scalar
from ..exceptions import not_fitted_error
from ..registry import default_registry
from ._cpu import cluster_sums

METHODS = ("auto", "exact", "nystrom")
INITS = ("k-means++", "random")
#: Bytes of one row block of kernel values / distances outside the exact Gram.
_BLOCK_BYTES = 32 * 2**20


def _resolve(family, spec, params):
    if isinstance(spec, str):
        return default_registry().get(family, spec, **dict(params or {}))
    if params:
        raise TypeError(f"{family}_params can only be given with a {family} name, not an object")
    if spec is None:
        raise TypeError(f"{family} must be a registered {family} name or a {family} object")
    return copy.deepcopy(spec)


# -- seeding and Lloyd, shared by both methods -----------------------------------------------
def _kmeanspp(n, k, sqdist_to, rng, n_trials=None):
    """Greedy k-means++: indices of k seed points; ``sqdist_to(idx)`` gives (n, len(idx))."""
    if n_trials is None:
        n_trials = 2 + int(math.log(k))
    centres = [int(rng.integers(n))]
    closest = np.maximum(sqdist_to(np.array(centres))[:, 0], 0.0)
    for _ in range(1, k):
        total = closest.sum()
        if total <= 0:  # every point coincides with a centre: any distinct index will do
            rest = np.setdiff1d(np.arange(n), centres)
            centres.append(int(rng.choice(rest)))
            continue
        cand = rng.choice(n, size=n_trials, p=closest / total)
        D = np.maximum(sqdist_to(cand), 0.0)
        pots = np.minimum(closest[:, None], D).sum(axis=0)
        best = int(np.argmin(pots))
        centres.append(int(cand[best]))
        closest = np.minimum(closest, D[:, best])
    return np.asarray(centres, dtype=np.int64)


def _fix_empty(labels, own, k):
    """Move the points farthest from their centre into the empty clusters.

    ``own[i]`` is the squared distance of point i to the centre of its cluster ``labels[i]``.
    """
    counts = np.bincount(labels, minlength=k)
    empty = np.flatnonzero(counts == 0)
    if empty.size == 0:
        return labels, 0
    labels = labels.copy()
    far = np.argsort(-own, kind="stable")
    moved = 0
    for j in empty:
        for i in far:
            if counts[labels[i]] > 1:
                counts[labels[i]] -= 1
                labels[i] = j
                counts[j] = 1
                moved += 1
                far = far[far != i]
                break
    return labels, moved


def _reassign(D, labels):
    """The closest centre of every row of D (n, k), keeping ``labels[i]`` where it ties with
    the minimum, so that Lloyd's loop cannot cycle on ties."""
    rows = np.arange(D.shape[0])
    new = np.argmin(D, axis=1)
    return np.where(D[rows, labels] <= D[rows, new], labels, new)


class _DenseLloyd:
    """Lloyd's steps on distances held in memory: ``distances(labels)`` -> (n, k)."""

    def __init__(self, D0, distances, k):
        self.D, self.distances, self.k = D0, distances, k

    def start(self):
        return np.argmin(self.D, axis=1)

    def fix_empty(self, labels):
        return _fix_empty(labels, self.D[np.arange(len(labels)), labels], self.k)[0]

    def step(self, labels):
        self.D = D = self.distances(labels)
        rows = np.arange(len(labels))
        new = _reassign(D, labels)
        return (float(D[rows, labels].sum()), new, bool(np.array_equal(new, labels)),
                float(D[rows, new].sum()))


def _lloyd(steps, max_iter, tol):
    """Lloyd's iterations on a backend; returns ``(labels, objective, n_iter)``.

    ``steps`` (:class:`_DenseLloyd`, or a chunked one) provides ``start()`` (the labels of the
    seeds), ``fix_empty(labels)`` and ``step(labels)`` -> (objective of ``labels`` against
    the centres they define, reassigned labels, whether none changed, objective of the
    reassigned labels against the same centres).
    """
    labels = steps.start()
    prev = np.inf
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - the count is returned after the loop
        labels = steps.fix_empty(labels)
        obj, new, unchanged, _ = steps.step(labels)
        if unchanged or (np.isfinite(prev) and prev - obj <= tol * abs(prev)):
            labels = new
            break
        labels, prev = new, obj
    labels = steps.fix_empty(labels)
    _, labels, _, obj = steps.step(labels)
    return labels, obj, n_iter


def _best_of_inits(n, k, init, given, n_init, rng, sqdist_to, lloyd_from_seeds, max_iter, tol):
    """Lloyd from ``n_init`` seedings; ``(objective, labels, n_iter, steps)`` of the best."""
    best = None
    for _ in range(n_init):
        if given is not None:
            seeds = given
        elif init == "random":
            seeds = rng.choice(n, k, replace=False)
        else:
            seeds = _kmeanspp(n, k, sqdist_to, rng)
        steps = lloyd_from_seeds(seeds)
        labels, obj, n_iter = _lloyd(steps, max_iter, tol)
        if best is None or obj < best[0]:
            best = (obj, labels, n_iter, steps)
        if given is not None:
            break
    return best


def _indicator(labels, k):
    """(n, k) matrix H with H[i, j] = 1/|C_j| for i ∈ C_j."""
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    H = np.zeros((len(labels), k))
    H[np.arange(len(labels)), labels] = 1.0 / np.maximum(counts[labels], 1.0)
    return H


def _cluster_sums(Z, labels, k):
    """Sums (k, s) and counts (k,) of the rows of Z per cluster. Sums over row blocks add up to
    the sums of the whole (the chunked Lloyd step).

    A compiled scatter-add by label (no BLAS, no one-hot matrix): the product of an (n, k)
    one-hot matrix with Z is a skinny GEMM, which multi-threaded BLAS runs 100x slower than
    idle while another process holds a core (its threads wait for each other at every step).
    """
    Z = np.ascontiguousarray(Z)
    labels = np.ascontiguousarray(labels, dtype=np.intp)
    counts = np.bincount(labels, minlength=k).astype(Z.dtype)
    return cluster_sums(Z, labels, np.empty((k, Z.shape[1]), dtype=Z.dtype)), counts


def _centres(sums, counts):
    """Cluster means from per-cluster sums and counts (an empty cluster's mean is 0)."""
    return sums / np.maximum(counts, 1.0)[:, None]


def _means(Z, labels, k):
    """Cluster means of the rows of Z (k, s)."""
    return _centres(*_cluster_sums(Z, labels, k))


def _sq_dists(Z, zsq, C):
    """‖z_i − c_j‖² (n, k), clipped at 0."""
    # (C Zᵀ)ᵀ: BLAS streams the tall Z once with the small C as the left operand (about 2x
    # faster than Z Cᵀ for k << s on OpenBLAS)
    D = (C @ Z.T).T
    D *= -2.0
    D += zsq[:, None]
    D += np.einsum("ij,ij->i", C, C)[None, :]
    return np.maximum(D, 0.0)


class KernelKMeans(ParamsMixin):
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
    n_init : int, default 3
        Seedings tried; the fit with the lowest inertia is kept.
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
        The most iterations of each run.
    tol : float >= 0, default 1e-6
        Stop when the objective decreases by less than ``tol`` times its value.
    kernel_params, sampler_params : dict, optional
        Parameters of a named kernel / sampler.
    max_memory : int, default 256 MiB
        Largest Gram matrix (bytes) ``method="auto"`` computes exactly.
    random_state : None, int or Generator
        Seeds the landmarks and the seedings.

    Attributes
    ----------
    labels_ : int64 array (n,)
    inertia_ : float
        Σ_i ‖φ(x_i) − c_{labels_i}‖²_ℋ (module docstring).
    residual_trace_ : float
        ‖P_S^⊥ Φ‖²_HS = tr(K − K̃) of the landmarks (0 for the exact method).
    method_ : {"exact", "nystrom"}
    n_iter_ : int
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

    def __init__(self, n_clusters: int = 8, kernel: str | object = "rbf",
                 sampler: str | object = "uniform", n_landmarks: int | None = None,
                 n_init: int = 3, method: str = "auto", init: str | ArrayLike = "k-means++",
                 max_iter: int = 300, tol: float = 1e-6,
                 kernel_params: dict[str, Any] | None = None,
                 sampler_params: dict[str, Any] | None = None, max_memory: int = 256 * 2**20,
                 random_state: RandomStateLike = None) -> None:
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

    # -- input -------------------------------------------------------------------------------
    def _validate(self, X, kernel, fitting):
        kind = getattr(kernel, "accepts", "vectors")
        if kind == "graphs":
            if isinstance(X, np.ndarray) and X.ndim == 2 or hasattr(X, "iloc"):
                raise TypeError(
                    f"kernel {kernel.name!r} takes graphs (a sequence of adjacency matrices, "
                    "(adjacency, labels) pairs or networkx graphs) but X is a 2-D array; use "
                    "a vector kernel such as 'rbf'"
                )
            return kernel.prepare(X)
        from ..stats._data import _looks_like_graphs

        if _looks_like_graphs(X):
            raise TypeError(
                f"kernel {kernel.name!r} takes vectors (a 2-D array) but X is a sequence of "
                "graphs; use a graph kernel such as 'shortest-path'"
            )
        names = _feature_names(X)
        Xp = kernel.prepare(_as_2d_array(X))
        if fitting:
            self.n_features_in_ = Xp.shape[1]
            if names is not None:
                self.feature_names_in_ = names
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        else:
            _check_feature_names(self, names)
            if Xp.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {Xp.shape[1]} features, but KernelKMeans is expecting "
                    f"{self.n_features_in_} features as input; transform data with the columns "
                    "used in fit"
                )
        return Xp

    def _validate_params(self):
        k = check_scalar(self.n_clusters, "n_clusters", kind=numbers.Integral, low=1,
                         low_inclusive=True)
        check_scalar(self.n_init, "n_init", kind=numbers.Integral, low=1, low_inclusive=True)
        check_scalar(self.max_iter, "max_iter", kind=numbers.Integral, low=1, low_inclusive=True)
        check_scalar(self.tol, "tol", low=0.0, low_inclusive=True)
        check_scalar(self.max_memory, "max_memory", low=0.0, low_inclusive=True)
        if self.n_landmarks is not None:
            check_scalar(self.n_landmarks, "n_landmarks", kind=numbers.Integral, low=1,
                         low_inclusive=True)
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
            UserWarning, stacklevel=3)

    def _landmark_count(self, n):
        """Landmarks of the Nyström method for n samples: ``n_landmarks``, default min(n, 100)."""
        s = min(n, 100) if self.n_landmarks is None else int(self.n_landmarks)
        if s > n:
            raise ValueError(
                f"n_landmarks={s} is larger than n_samples={n}; choose n_landmarks <= {n}"
            )
        return s

    # -- fit ---------------------------------------------------------------------------------
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
        kernel = _resolve("kernel", self.kernel, self.kernel_params)
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
            check_allocation(  # the Gram (converted to float64) and its symmetrised copy
                dense_gram_bytes(n, itemsize) + 8 * n * n,
                f"KernelKMeans(method='exact') on {n} samples",
                "use method='nystrom' with n_landmarks= (default 100)",
                matrices="its n x n matrices")
            K = np.asarray(kernel(Xp), dtype=np.float64)
            K = 0.5 * (K + K.T)
            diag = np.diagonal(K).copy()

            def sqdist_to(idx):
                return diag[:, None] + diag[idx][None, :] - 2.0 * K[:, idx]

            def distances(labels):
                H = _indicator(labels, k)
                KH = K @ H
                cc = np.einsum("ij,ij->j", H, KH)
                return np.maximum(diag[:, None] - 2.0 * KH + cc[None, :], 0.0)

            self.nystroem_ = None
            self.residual_trace_ = 0.0
            diag_total = None
        else:
            from ..features.nystrom import Nystroem

            sampler = _resolve("sampler", self.sampler, self.sampler_params)
            s = self._landmark_count(n)
            ny = Nystroem(kernel=kernel, sampler=sampler, n_components=s, random_state=rng)
            ny.fit(Xp)
            Z = np.asarray(ny.transform(Xp), dtype=np.float64)
            zsq = np.einsum("ij,ij->i", Z, Z)
            diag_total = float(np.sum(kernel.diag(Xp), dtype=np.float64))
            self.nystroem_ = ny
            self.residual_trace_ = max(diag_total - float(zsq.sum()), 0.0)

            def sqdist_to(idx):
                return _sq_dists(Z, zsq, Z[idx])

            def distances(labels):
                return _sq_dists(Z, zsq, _means(Z, labels, k))

        init = self.init if given is not None else check_option(self.init, "init", INITS)
        with one_blas_thread(is_skinny(k)):  # the steps' products have k columns (module doc)
            obj, labels, n_iter, _ = _best_of_inits(
                n, k, init, given, int(self.n_init), rng, sqdist_to,
                lambda seeds: _DenseLloyd(sqdist_to(seeds), distances, k), int(self.max_iter),
                float(self.tol))
            if method == "exact":
                H = _indicator(labels, k)
                cc = np.einsum("ij,ij->j", H, K @ H)
            else:
                centres = _means(Z, labels, k)
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
    def _check_fitted(self):
        if not hasattr(self, "labels_"):
            raise not_fitted_error(
                "this KernelKMeans is not fitted yet: call fit(X) before predict or transform"
            )

    def _sq_distances(self, X):
        """‖φ(x) − c_j‖²_ℋ for every row of X, computed in row blocks."""
        self._check_fitted()
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
            return np.maximum(out, 0.0)
        Z = np.asarray(self.nystroem_.transform(Xp), dtype=np.float64)
        zsq = np.einsum("ij,ij->i", Z, Z)
        resid = np.maximum(np.asarray(kernel.diag(Xp), dtype=np.float64) - zsq, 0.0)
        with one_blas_thread(skinny):
            D = _sq_dists(Z, zsq, self.cluster_centers_)
        return D + resid[:, None]

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
        return D.astype(self._out_dtype(X), copy=False)

    def _out_dtype(self, X):
        dt = getattr(X, "dtype", None)
        return dt if dt in (np.float32, np.float64) else np.float64

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
        return np.argmin(self._sq_distances(X), axis=1).astype(np.int64)

    def fit_predict(self, X: DataLike, y: object = None) -> np.ndarray:
        """Cluster ``X`` and return its labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of graphs
            Training data.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        ndarray of shape (n_samples,)
            ``fit(X).labels_``.
        """
        return self.fit(X).labels_

    def fit_transform(self, X: DataLike, y: object = None) -> np.ndarray:
        """Cluster ``X`` and return its distances to the centres.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of graphs
            Training data.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        ndarray of shape (n_samples, n_clusters)
            ``fit(X).transform(X)``.
        """
        return self.fit(X).transform(X)

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

    def get_feature_names_out(self, input_features: object = None) -> np.ndarray:
        """Return the output feature names, one per centre.

        Parameters
        ----------
        input_features : array-like of str, optional
            Ignored: the output names do not depend on the input features.

        Returns
        -------
        ndarray of object
            ``kernelkmeans0`` ... ``kernelkmeans{k-1}``: one output per centre.
        """
        self._check_fitted()
        return np.asarray([f"kernelkmeans{j}" for j in range(int(self.n_clusters))], dtype=object)

    def __sklearn_tags__(self):
        from sklearn.utils import Tags, TargetTags, TransformerTags

        tags = Tags(estimator_type="clusterer", target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(preserves_dtype=["float64", "float32"]))
        return tags


def _as_2d_array(X):
    """X as a 2-D real array, with scikit-learn's messages for the common mistakes."""
    if hasattr(X, "tocsr") and hasattr(X, "nnz"):
        raise TypeError("X is a scipy.sparse matrix; KernelKMeans needs a dense array "
                        "(X.toarray())")
    arr = np.asarray(X)
    if arr.dtype.kind == "O":
        arr = arr.astype(np.float64)
    if arr.dtype.kind == "c":
        raise ValueError("Complex data not supported; pass real values")
    if arr.ndim == 1:
        raise ValueError(
            f"Expected a 2-D array, got a 1-D array of shape {arr.shape}. Reshape your data "
            "with X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for a single sample"
        )
    if arr.ndim == 2 and arr.shape[1] == 0:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    return arr


def _feature_names(X):
    cols = getattr(X, "columns", None)
    if cols is None:
        return None
    names = np.asarray(cols, dtype=object)
    if len(names) and all(isinstance(c, str) for c in names):
        return names
    return None


def _check_feature_names(est, names):
    fitted = getattr(est, "feature_names_in_", None)
    if fitted is None and names is None:
        return
    if fitted is not None and names is None:
        warnings.warn(f"X does not have valid feature names, but {type(est).__name__} was "
                      "fitted with feature names", UserWarning, stacklevel=3)
        return
    if fitted is None:
        warnings.warn(f"X has feature names, but {type(est).__name__} was fitted without "
                      "feature names", UserWarning, stacklevel=3)
        return
    if len(fitted) != len(names) or np.any(fitted != names):
        raise ValueError(
            "The feature names should match those that were passed during fit; got "
            f"{list(names)[:5]}, expected {list(fitted)[:5]}"
        )

__all__ = ["KernelKMeans"]
