"""Nyström feature map with any registered kernel and landmark sampler.

With landmarks S (chosen by a sampler) and the Gram matrix of the landmarks K_S = U Λ Uᵀ
(eigendecomposition, eigenvalues descending), the Nyström approximation of the Gram matrix is
K̂ = K_{X,S} K_S⁺ K_{S,X} (Williams & Seeger 2001; Cherfaoui 2022, PhD thesis, §2.1.2;
Giffon 2020, PhD thesis, Ch. 1, Eq. 1.22–1.24). Its explicit feature map is::

    phi(x) = K(x, S) U Λ^(-1/2) Uᵀ         (default: symmetric root, n_components_ = |S|)
    phi(x) = K(x, S) U_k Λ_k^(-1/2)         (rank=k: top-k eigenpairs, n_components_ = k)

so that phi(x)ᵀ phi(z) = K(x, S) K_S⁺ K(S, z) (or its best rank-k version).

Decisions:

- Eigenvalue floor: eigenvalues <= ``floor`` are treated as zero (dropped from the
  pseudo-inverse). The default floor is ``|S| · eps(dtype) · λ_max``, the rank tolerance of
  ``numpy.linalg.pinv``/``scipy.linalg.pinvh``, so phi reproduces K_{X,S} K_S⁺ K_{S,X} even for
  singular K_S (duplicate landmarks, low-rank kernels). scikit-learn clips the singular values at
  1e-12 instead (keeping 1/sqrt(1e-12) weights on numerically null directions); on landmark
  Gram matrices whose eigenvalues are all above the floor the two maps are equal.
- The symmetric root U Λ^(-1/2) Uᵀ is what scikit-learn's ``Nystroem`` computes (its
  ``U diag(1/sqrt(s)) V`` from an SVD of a PSD matrix), so with the same landmarks the features
  are equal, not just equal up to a rotation.
- Sampler weights (``Landmarks.weights``) do not enter the map: scaling the columns of K_{X,S}
  by any invertible diagonal W leaves K_{X,S} W (W K_S W)⁺ W K_{S,X} unchanged.
- ``n_components`` larger than the number of samples warns and uses every sample as a
  landmark (scikit-learn's behaviour).
- Vector input may be NumPy, pandas or ``scipy.sparse`` (the landmarks ``components_`` then
  stay sparse and K(x, S) is computed by the kernel's sparse path, never densifying X).
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np

from .._base import ParamsMixin, TransformerMixin
from .._runtime.memory import _outside_stacklevel, check_allocation
from .._runtime.pools import empty_touched, run_blocks
from .._runtime.small_blas import THREADED_FACTOR_MIN_ROWS, is_skinny, one_blas_thread
from .._runtime.threads import with_n_jobs
from .._typing import DataLike, RandomStateLike
from .._validation import check_random_state, check_scalar, is_sparse
from ..components import check_result, resolve
from ..kernels.base import PrecomputedKernel
from ..registry import Registry, default_registry
from ..samplers.base import Landmarks
from . import _nystrom_cuda

#: Bytes of one K(x, S) row block in ``transform`` at most (one block alive per thread; the
#: output itself is larger).
BLOCK_BYTES = 64 * 2**20

#: the transform splits its rows into about this many blocks (more blocks than threads: a
#: thread slowed down by another process takes fewer), of at least ``MIN_BLOCK_ROWS`` rows
BLOCKS = 16
MIN_BLOCK_ROWS = 256


def _rows(kernel, Xp, r0, r1):
    """Rows ``r0:r1`` of prepared data (arrays and sparse matrices slice, graphs are taken)."""
    if isinstance(Xp, np.ndarray) or is_sparse(Xp):
        return Xp[r0:r1]
    return kernel.take(Xp, np.arange(r0, r1))


def _graph_samplers(registry) -> list[str]:
    names = []
    for info in registry.list("sampler"):
        accepts = getattr(info.registration.factory, "accepts", ("vectors", "graphs"))
        if "graphs" in accepts:
            names.append(info.name)
    return names


def inverse_sqrt_map(K_S, rank=None, eigen_floor=None, eigh=None):
    """The matrix M of phi(x) = K(x, S) M, from the landmark Gram ``K_S``.

    Parameters
    ----------
    K_S : (k, k) array
        Gram matrix of the landmarks (symmetrized here).
    rank : int, optional
        Keep the top ``rank`` eigenpairs: M = U_r Λ_r^(-1/2), shape (k, rank). Default: the
        symmetric root M = U Λ^(-1/2) Uᵀ, shape (k, k).
    eigen_floor : float >= 0, optional
        Eigenvalues <= floor are dropped (their columns of M are zero). Default
        k · eps(dtype) · λ_max.
    eigh : callable, optional
        Symmetric eigensolver with the signature of ``numpy.linalg.eigh`` (default: that one).

    Returns
    -------
    M : array of the dtype of ``K_S``
    eigenvalues : float64 array of shape (k,), descending
    floor : float
    """
    dtype = K_S.dtype
    A = np.asarray(K_S, dtype=np.float64)
    A = 0.5 * (A + A.T)
    # NumPy's eigh is LAPACK's divide-and-conquer syevd, the fastest full decomposition; it runs
    # on NumPy's BLAS threads, the ones the GEMMs around it use (SciPy ships a second OpenBLAS
    # whose threads would compete with them for the cores), one of them for a small matrix
    with one_blas_thread(A.shape[0] < THREADED_FACTOR_MIN_ROWS):
        evals, U = (eigh or np.linalg.eigh)(A)
    evals, U = evals[::-1], U[:, ::-1]
    k = A.shape[0]
    if eigen_floor is None:
        floor = k * np.finfo(dtype).eps * max(float(evals[0]), 0.0)
    else:
        floor = float(eigen_floor)
    keep = evals > floor
    inv_sqrt = np.zeros(k)
    inv_sqrt[keep] = 1.0 / np.sqrt(evals[keep])
    if rank is None:
        M = (U * inv_sqrt) @ U.T
    else:
        M = U[:, :rank] * inv_sqrt[:rank]
    return np.ascontiguousarray(M, dtype=dtype), evals, floor


def checked_landmarks(kernel, landmarks, n_samples, source):
    """``(indices, points)`` of ``landmarks``, the indices as int64 checked: a non-empty 1-D
    array of positions in [0, ``n_samples``) (``n_samples=None``: non-negative, one per
    landmark point); ``source`` says who chose them, in the ``ValueError``."""
    indices = np.asarray(landmarks.indices, dtype=np.int64)
    points = landmarks.points
    if n_samples is None:
        high = "n_samples"
        bad = indices.ndim != 1 or len(indices) != kernel.n_samples(points)
    else:
        high, bad = str(n_samples), False
    if (
        bad
        or indices.ndim != 1
        or indices.size == 0
        or indices.min() < 0
        or (n_samples is not None and indices.max() >= n_samples)
    ):
        raise ValueError(
            f"{source} invalid landmark indices (need a non-empty 1-D array of "
            f"positions in [0, {high}){'' if n_samples is not None else ', one per point'})"
        )
    return indices, points


class Nystroem(TransformerMixin, ParamsMixin):
    """Nyström approximation of a kernel feature map, with landmarks from a named sampler.

    Parameters
    ----------
    kernel : str, kernel object or function, default "rbf"
        A registered kernel name (``kernel_params`` are passed to its factory), a kernel
        object (copied at ``fit``) or a function ``k(A, B, **kernel_params)`` (a ``def`` or
        ``lambda``, a method or a ``functools.partial``) returning the Gram block of two row
        blocks (see :class:`~sparsekit.kernels.base.CallableKernel`); resolved by
        :func:`sparsekit.components.resolve`.
        Graph kernels take a sequence of graphs as ``X``. ``"precomputed"``: ``fit`` takes the
        square Gram matrix of the training samples, ``transform`` the kernel between new samples
        (rows) and the training samples (columns), as scikit-learn's ``Nystroem``; landmarks
        are training samples, chosen by any sampler that accepts graphs (those that reach the
        samples only through the kernel).
    sampler : str or sampler object, default "uniform"
        A registered landmark sampler name (``sampler_params`` are passed to its factory) or
        an object with ``sample(X, kernel, n_landmarks, random_state)`` (copied at ``fit``).
    n_components : int, default 100
        Number of landmarks to ask the sampler for; above the number of samples it warns and
        uses n_samples.
    kernel_params, sampler_params : dict, optional
        Keyword parameters of the named kernel / sampler, e.g. ``{"gamma": 0.5}``.
    rank : int, optional
        Keep only the top-``rank`` eigenpairs of K_S (output width ``rank``). Default: no
        truncation (output width = number of landmarks).
    eigen_floor : float >= 0, optional
        Eigenvalues of K_S at or below this are dropped; default ``|S| · eps · λ_max`` (see the
        module docstring).
    random_state : None, int or numpy Generator
        Passed to the sampler; also draws the evaluation subset of
        :meth:`approximation_error`.
    n_jobs : int, optional
        Threads (Numba, BLAS and the library's pools) of each call, as
        :func:`sparsekit.thread_limit` (-1: every usable CPU); default: the setting in force.
    registry : Registry, optional
        Where ``kernel`` and ``sampler`` names are resolved (default: the process-wide
        registry); an application can pass its own :class:`sparsekit.Registry`.

    Attributes
    ----------
    kernel_ : the fitted kernel object
    sampler_ : the sampler object
    components_ : the landmarks (prepared data, e.g. an array of shape (k, n_features))
    component_indices_ : int64 array of shape (k,)
    landmark_weights_ : float64 array of shape (k,), as returned by the sampler
    eigenvalues_ : float64 array of shape (k,), eigenvalues of K_S, descending
    normalization_ : array of shape (k, ``n_components_``): ``phi(x) = K(x, S) @ normalization_``
    n_components_ : int, output width
    n_features_in_ : int (vector data only)
    feature_names_in_ : ndarray of str (DataFrame input with string column names only)

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).random((500, 4))
    >>> ny = Nystroem("rbf", sampler="uniform", n_components=50,
    ...               kernel_params={"gamma": 0.1}, random_state=0)
    >>> Z = ny.fit_transform(X)
    >>> Z.shape
    (500, 50)
    >>> bool(ny.approximation_error(X, norm="fro", relative=True) < 1e-3)
    True
    """

    _fitted_attribute = "normalization_"
    _accepts_sparse = True

    def __init__(
        self,
        kernel: str | object = "rbf",
        sampler: str | object = "uniform",
        n_components: int = 100,
        kernel_params: dict[str, Any] | None = None,
        sampler_params: dict[str, Any] | None = None,
        rank: int | None = None,
        eigen_floor: float | None = None,
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.kernel = kernel
        self.sampler = sampler
        self.n_components = n_components
        self.kernel_params = kernel_params
        self.sampler_params = sampler_params
        self.rank = rank
        self.eigen_floor = eigen_floor
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.registry = registry

    # -- fit ---------------------------------------------------------------------------------
    @with_n_jobs
    def fit(self, X: DataLike, y: object = None) -> Nystroem:
        """Choose the landmarks and compute the normalization.

        Parameters
        ----------
        X : array-like, sparse matrix or sequence of graphs, of n_samples samples
            Training data (graphs for a graph kernel).
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        self
            The fitted transformer.
        """
        self._fit(X)
        return self

    def _fit(self, X, prepared=False):
        """Fit on ``X`` and return it prepared by the kernel: resolve the components, validate,
        sample the landmarks, normalize.

        ``prepared=True``: ``X`` was already validated and prepared by this kernel (a caller
        that checked its input once), so it is used as is.
        """
        kernel, sampler, Xp, landmarks, rank, floor = self._select(X, prepared)
        self._normalize(
            kernel,
            landmarks,
            rank,
            floor,
            n_samples=kernel.n_samples(Xp),
            source=f"sampler {type(sampler).__name__} returned",
        )
        self.sampler_ = sampler
        return Xp

    def _select(self, X, prepared=False):
        """The landmark selection of :meth:`fit`, without the normalization:
        ``(kernel, sampler, Xp, landmarks, rank, floor)`` with the kernel fitted on the
        prepared data ``Xp`` and the sampler's :class:`~sparsekit.samplers.Landmarks`
        (indices not yet checked). Other estimators on Nyström landmarks choose them here."""
        kernel, sampler = self._resolve_components()
        Xp = self._validated(X, kernel, prepared)
        n = kernel.n_samples(Xp)
        if n == 0:
            raise ValueError("X is empty; at least one sample is needed")
        m = self._landmark_count(n)
        rank, floor = self._check_rank_and_floor(m)
        self._check_sampler_takes(kernel, sampler)
        kernel.fit(Xp)
        return kernel, sampler, Xp, self._sample(Xp, kernel, sampler, m), rank, floor

    @with_n_jobs
    def fit_landmarks(self, landmarks: Landmarks) -> Nystroem:
        """Fit on landmarks chosen elsewhere, without running the sampler; returns self.

        The normalization step of :meth:`fit` on given landmarks S: with K_S = U Λ Uᵀ,
        ``normalization_`` = U Λ^(-1/2) Uᵀ (or U_r Λ_r^(-1/2) with ``rank=r``; eigenvalues at or
        below ``eigen_floor`` dropped), so that phi(x) = K(x, S) ``normalization_``. The Dask
        backend builds its ``Nystroem`` this way from the landmarks it drew chunk by chunk.

        The kernel (``kernel``, ``kernel_params``) is resolved and fitted on the landmark
        points: a data-dependent bandwidth rule is then computed from the landmarks alone, so to
        keep the one of the whole data pass a kernel object whose bandwidth is fixed (fitted,
        with ``bandwidth=None`` and ``gamma`` set). ``sampler_`` is the resolved ``sampler``
        parameter (not run); ``n_components`` is not used (the width comes from the landmarks).

        Parameters
        ----------
        landmarks : Landmarks
            ``indices`` (positions of the landmarks in the data they were drawn from, kept as
            ``component_indices_``), ``points`` (the landmark samples: an array of shape
            (k, n_features), or what the kernel prepares, e.g. graphs) and ``weights``
            (kept as ``landmark_weights_``).

        Returns
        -------
        Nystroem
            The estimator, fitted.

        Raises
        ------
        TypeError
            ``landmarks`` is not a :class:`~sparsekit.samplers.Landmarks`.
        ValueError
            Indices that are not a non-empty 1-D array of non-negative positions, one per
            landmark point; ``rank`` above the number of landmarks.
        """
        if not isinstance(landmarks, Landmarks):
            raise TypeError(
                "landmarks must be a sparsekit.samplers.Landmarks(indices, points, weights), "
                f"got {type(landmarks).__name__}"
            )
        kernel, sampler = self._resolve_components()
        points = self._validated(landmarks.points, kernel, prepared=False)
        k = kernel.n_samples(points)
        rank, floor = self._check_rank_and_floor(k)
        kernel.fit(points)
        self._normalize(
            kernel,
            Landmarks(landmarks.indices, points, landmarks.weights),
            rank,
            floor,
            n_samples=None,
        )
        self.sampler_ = sampler
        return self

    # -- the steps of fit ----------------------------------------------------------------------
    def _resolve_components(self):
        """``(kernel, sampler)``: the ``kernel`` and ``sampler`` parameters resolved
        (:func:`sparsekit.components.resolve`: names built, objects copied)."""
        kernel = resolve("kernel", self.kernel, self.kernel_params, registry=self.registry)
        sampler = resolve("sampler", self.sampler, self.sampler_params, registry=self.registry)
        return kernel, sampler

    def _validated(self, X, kernel, prepared):
        """``X`` checked (vectors and precomputed Gram matrices: ``n_features_in_``, feature
        names) and prepared by ``kernel``; ``n_features_in_`` is None for other data."""
        vectors = getattr(kernel, "accepts", "vectors") == "vectors"
        precomputed = isinstance(kernel, PrecomputedKernel)
        if prepared and vectors:
            self.n_features_in_ = X.shape[1]
            self.__dict__.pop("feature_names_in_", None)
        elif vectors or precomputed:
            X = self._validate_input(X, reset=True, accept_sparse=vectors)
        else:
            self.n_features_in_ = None
        if precomputed and X.shape[0] != X.shape[1]:
            raise ValueError(
                f"kernel='precomputed': fit takes the square Gram matrix of the training "
                f"samples, K[i, j] = k(x_i, x_j); got shape {X.shape}"
            )
        return X if prepared else kernel.prepare(X)

    def _landmark_count(self, n):
        """``n_components`` checked, at most ``n`` (with a warning), within the memory limit."""
        m = check_scalar(
            self.n_components, "n_components", kind=numbers.Integral, low=1, low_inclusive=True
        )
        if m > n:
            warnings.warn(
                f"n_components={m} is larger than the number of samples ({n}); using all "
                f"{n} samples as landmarks (n_components_ = {n}), which evaluates the full "
                "kernel matrix",
                UserWarning,
                stacklevel=_outside_stacklevel(),
            )
            m = n
        # peak of the landmark eigenproblem: K_S, its symmetrised float64 copy, LAPACK's copy,
        # its workspace (2 m^2) and the eigenvectors: 6 m^2 float64 (peak memory measured)
        check_allocation(
            6 * 8 * m * m,
            f"Nystroem with {m} landmarks",
            "use fewer landmarks (a smaller n_components=)",
            matrices="its m x m matrices",
        )
        return m

    def _check_rank_and_floor(self, m):
        """``(rank, eigen_floor)`` checked against ``m`` landmarks."""
        rank = self.rank
        if rank is not None:
            rank = check_scalar(rank, "rank", kind=numbers.Integral, low=1, low_inclusive=True)
            if rank > m:
                raise ValueError(f"rank={rank} must be <= n_components={m}")
        floor = self.eigen_floor
        if floor is not None:
            floor = check_scalar(floor, "eigen_floor", low=0.0, low_inclusive=True)
        return rank, floor

    def _check_sampler_takes(self, kernel, sampler):
        """A ``ValueError`` when the sampler does not take the kernel's kind of input."""
        data_kind = getattr(kernel, "accepts", "vectors")
        accepts = getattr(sampler, "accepts", ("vectors", "graphs"))
        if data_kind in accepts:
            return
        registry = self.registry if self.registry is not None else default_registry()
        graph_ok = _graph_samplers(registry) if data_kind == "graphs" else []
        hint = f" Samplers that accept graphs: {', '.join(graph_ok)}." if graph_ok else ""
        what = (
            "opaque samples (rows of a Gram matrix)"
            if isinstance(kernel, PrecomputedKernel)
            else data_kind
        )
        raise ValueError(
            f"sampler {getattr(sampler, 'name', type(sampler).__name__)!r} needs "
            f"{' or '.join(accepts)} but kernel {getattr(kernel, 'name', '?')!r} takes "
            f"{what}.{hint}"
        )

    def _sample(self, Xp, kernel, sampler, m):
        """The sampler's :class:`~sparsekit.samplers.Landmarks` (its type checked)."""
        rng = check_random_state(self.random_state)
        return check_result(
            "sampler",
            sampler,
            sampler.sample(Xp, kernel, m, random_state=rng),
            registry=self.registry,
        )

    def _normalize(self, kernel, landmarks, rank, floor, n_samples, source="fit_landmarks got"):
        """Set the fitted attributes from the landmarks: K_S and its inverse square root
        (:func:`inverse_sqrt_map`). The indices must lie in [0, ``n_samples``) (``None``: be
        non-negative, one per landmark point); ``source`` says who chose them, in errors."""
        indices, points = checked_landmarks(kernel, landmarks, n_samples, source)
        k = len(indices)
        K_S = np.asarray(kernel(points))
        if rank is not None and rank > k:
            raise ValueError(f"rank={rank} but the sampler returned only {k} landmarks")
        M, evals, _ = inverse_sqrt_map(
            K_S, rank=rank, eigen_floor=floor, eigh=_nystrom_cuda.eigh_for(kernel, k)
        )
        self.kernel_ = kernel
        self.components_ = points
        self.component_indices_ = indices
        self.landmark_weights_ = np.asarray(landmarks.weights, dtype=np.float64)
        self.eigenvalues_ = evals
        self.normalization_ = M
        self.n_components_ = M.shape[1]

    @property
    def _n_features_out(self):
        return self.n_components_

    # -- transform ---------------------------------------------------------------------------
    def _prepare(self, X):
        self._check_is_fitted()
        if self.n_features_in_ is not None:
            X = self._validate_input(X, reset=False)
        return self.kernel_.prepare(X)

    def _features(self, Xp):
        """phi of prepared data, computed in row blocks (one K(x, S) block alive per thread).

        The blocks (a kernel block and its product with ``M``) run on the library's threads,
        each on one thread with one BLAS thread (:func:`~sparsekit._runtime.pools.run_blocks`),
        the threads taking the next block as they finish. The split depends on ``n`` and
        ``k`` only, never on the thread count, so the features do not either. A single block
        runs on the calling thread, the kernel and the product with their own threads.
        """
        kernel, M = self.kernel_, self.normalization_
        # on the GPU (with CuPy): K(x, S) and its product with M stay on the device
        out = _nystrom_cuda.device_features(kernel, self.components_, M, Xp)
        if out is not None:
            return out
        n = kernel.n_samples(Xp)
        k = M.shape[0]
        step = int(max(1, min(n, BLOCK_BYTES // max(1, 8 * k))))
        step = min(step, max(MIN_BLOCK_ROWS, -(-n // BLOCKS)))
        starts = range(0, n, step)
        first = np.asarray(kernel(_rows(kernel, Xp, 0, min(n, step)), self.components_))
        dtype = np.result_type(first.dtype, M.dtype)
        Mt = M.astype(dtype, copy=False)
        out = empty_touched((n, M.shape[1]), dtype)

        def block(i, Kb=None):
            r0 = starts[i]
            r1 = min(n, r0 + step)
            if Kb is None:
                Kb = np.asarray(kernel(_rows(kernel, Xp, r0, r1), self.components_))
            np.dot(Kb.astype(dtype, copy=False), Mt, out=out[r0:r1])

        with one_blas_thread(is_skinny(M.shape[1])):  # the kernel ran its own threads
            block(0, first)  # computed above for the dtype
        if len(starts) > 1:
            run_blocks(lambda i: block(i + 1), len(starts) - 1, numba_regions=True)
        return out

    @with_n_jobs
    def transform(self, X: DataLike) -> Any:
        """Compute the feature map ``phi(X) = K(X, S) @ normalization_``.

        Parameters
        ----------
        X : array-like, sparse matrix or sequence of graphs, of n_samples samples
            The samples.

        Returns
        -------
        ndarray of shape (n_samples, ``n_components_``)
            ``phi(X) = K(X, S) @ normalization_`` (in the container ``set_output`` chose).
        """
        return self._wrap_output(self._features(self._prepare(X)), X)

    @with_n_jobs
    def fit_transform(self, X: DataLike, y: object = None) -> Any:
        """Fit on ``X`` and return its features.

        Parameters
        ----------
        X : array-like, sparse matrix or sequence of graphs, of n_samples samples
            Training data.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        ndarray of shape (n_samples, ``n_components_``)
            ``fit(X).transform(X)`` (the data is validated and prepared once).
        """
        return self._wrap_output(self._features(self._fit(X)), X)

    # -- quality -----------------------------------------------------------------------------
    @with_n_jobs
    def approximation_error(
        self,
        X: DataLike,
        norm: str = "fro",
        n_eval: int = 10_000,
        relative: bool = False,
        random_state: RandomStateLike = None,
        max_memory: int = 256 * 2**20,
        verbose: bool | None = None,
    ) -> float:
        """Compute ‖K_E − K̂_E‖ on a random subset E of ``X``.

        E is all of ``X`` when it has at most ``n_eval`` points; K̂_E = phi(E) phi(E)ᵀ. This is
        this map's :func:`sparsekit.stats.approximation_error` (see there for the norms and
        their sources); ``random_state`` defaults to this estimator's.

        Parameters
        ----------
        X : array-like, sparse matrix or sequence of graphs
            The samples E is drawn from.
        norm : {"fro", "spectral", "trace"}
            ``"fro"``: Frobenius norm, the measure of the Chapter 3 experiments (Cherfaoui
            2022, PhD thesis, §3.3, absolute, on 10,000 points). ``"spectral"``: largest
            ``|eigenvalue|`` of the residual (Lanczos, ``scipy.sparse.linalg.eigsh``).
            ``"trace"``: tr(K_E − K̂_E) = Σ_i k(x_i, x_i) − ‖phi(x_i)‖², equal to the nuclear
            norm for a PSD kernel (the Nyström residual is then PSD); it needs only ``O(|E|)``
            kernel values.
        n_eval : int, default 10000
            The size of the random subset E.
        relative : bool, default False
            Divide by the same norm of K_E.
        random_state : None, int or Generator
            Draws E; default: this estimator's ``random_state``.
        max_memory : int, default 256 MiB
            Bytes of the Gram matrix of E cached for ``norm="spectral"``.
        verbose : bool, optional
            Show progress over the Gram blocks (default: on a terminal, for long runs; see
            :func:`sparsekit.show_progress`).

        Returns
        -------
        float
            The norm of the residual (divided by the norm of K_E with ``relative``).
        """
        from ..stats.approximation import approximation_error

        return approximation_error(
            self,
            X,
            norm=norm,
            n_eval=n_eval,
            relative=relative,
            random_state=random_state,
            max_memory=max_memory,
            verbose=verbose,
        )


__all__ = ["Nystroem"]
