"""Nyström kernel ridge regression and classification, solved FALKON's way.

The regressor minimizes (1/n)‖K_nm α − y‖² + λ αᵀ K_mm α over α ∈ ℝ^m, with m landmarks L chosen
by any registered sampler, and predicts f(x) = k(x, L) α (Rudi, Carratino & Rosasco, "FALKON: An
Optimal Large Scale Kernel Method", NeurIPS 2017; Meanti, Carratino, Rosasco & Rudi, "Kernel
methods through the roof", NeurIPS 2020). With every sample a landmark this is kernel ridge
regression with scikit-learn's ``KernelRidge(alpha=λ n)``; with the landmarks of a ``Nystroem``
map it is ``Ridge(alpha=λ n, fit_intercept=False)`` on that map's features.

``solver="pcg"`` runs conjugate gradient on FALKON's preconditioned normal equations
(:mod:`sparsekit.learning._falkon`): each iteration is one pass over the data computing
K_nmᵀ (K_nm v) in row blocks, so memory is the data, O(m²) and one block, never n × m.
``solver="direct"`` accumulates K_nmᵀ K_nm (m × m) in one pass and solves by Cholesky: the
exact answer, O(n m²) time, the better choice for small m.

There is no intercept, as in ``KernelRidge`` and FALKON: center ``y`` first when its mean is far
from zero, or add a constant to the kernel.

The classifier regresses one-vs-rest targets in {−1, +1} (one column per class, a single column
for two classes, as scikit-learn's ``RidgeClassifier``; FALKON's multiclass approach) and
predicts the class of the largest decision value.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .._runtime.threads import with_n_jobs
from .._typing import DataLike, RandomStateLike
from .._validation import check_array, check_option, check_scalar
from ..registry import Registry
from ._base import (
    NystromClassifierMixin,
    NystromModel,
    check_y_given,
    class_codes,
    signed_targets,
)
from ._falkon import FalkonSystem
from ._passes import DIRECT_BLOCK_BYTES

SOLVERS = ("pcg", "direct")


class _NystromRidgeBase(NystromModel):
    """The regressor's and the classifier's parameters and their fit of ``dual_coef_``."""

    def __init__(
        self,
        kernel: str | object = "rbf",
        sampler: str | object = "uniform",
        landmarks: Any = None,
        n_components: int = 100,
        alpha: float = 1e-6,
        solver: str = "pcg",
        tol: float = 1e-4,
        max_iter: int = 100,
        kernel_params: dict[str, Any] | None = None,
        sampler_params: dict[str, Any] | None = None,
        warm_start: bool = False,
        callback: Any = None,
        random_state: RandomStateLike = None,
        verbose: bool | None = None,
        n_jobs: int | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.kernel = kernel
        self.sampler = sampler
        self.landmarks = landmarks
        self.n_components = n_components
        self.alpha = alpha
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.kernel_params = kernel_params
        self.sampler_params = sampler_params
        self.warm_start = warm_start
        self.callback = callback
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.registry = registry

    def _fit_targets(self, X, Y):
        """Fit ``dual_coef_`` (m, t) to the float64 targets ``Y`` (n, t)."""
        self._solver_params()  # refused before the landmarks are drawn
        previous = (
            getattr(self, "dual_coef_", None),
            getattr(self, "components_", None),
            getattr(self, "component_indices_", None),
        )
        passes = self._select_landmarks(X, len(Y))
        return self._solve(passes, Y, previous if self.warm_start else None)

    def _solver_params(self):
        alpha = check_scalar(self.alpha, "alpha", low=0.0, low_inclusive=False)
        solver = check_option(self.solver, "solver", SOLVERS)
        tol = check_scalar(self.tol, "tol", low=0.0, low_inclusive=True)
        max_iter = check_scalar(
            self.max_iter, "max_iter", kind=numbers.Integral, low=1, low_inclusive=True
        )
        return alpha, solver, tol, int(max_iter)

    def _solve(self, passes, Y, previous):
        """Set ``dual_coef_`` (m, t) from the passes over K_nm and the targets ``Y`` (n rows,
        t columns; whatever ``passes.adjoint`` takes); ``previous`` is ``(dual_coef_,
        components_, component_indices_)`` of a fit to start from, or None."""
        alpha, solver, tol, max_iter = self._solver_params()
        m, t = passes.m, Y.shape[1]
        system = FalkonSystem(self._landmark_gram(), alpha, passes.n, passes.gram)
        if solver == "direct":
            coef = system.solve_direct(passes.blocks(DIRECT_BLOCK_BYTES), Y)
            n_iter, residuals = 0, []
        else:
            start = None
            if previous is not None and previous[0] is not None:
                coef0, components0, indices0 = previous
                if self._same_landmarks(components0, indices0) and coef0.size == m * t:
                    start = system.start(coef0.reshape(m, t))
            beta, n_iter, residuals = self._pcg(
                system, system.rhs(passes.adjoint(Y)), start, tol, max_iter
            )
            coef = system.coefficients(beta)
        self.dual_coef_ = coef
        self.n_iter_ = n_iter
        self.residuals_ = np.asarray(residuals)
        self.jitter_ = system.jitter
        return self


class NystromRidge(_NystromRidgeBase):
    """Nyström kernel ridge regression, solved by FALKON's preconditioned conjugate gradient.

    Minimizes (1/n)‖K_nm α − y‖² + λ αᵀ K_mm α over α ∈ ℝ^m and predicts f(x) = k(x, L) α,
    where L are m landmarks chosen by ``sampler`` (Rudi, Carratino & Rosasco, NeurIPS 2017).

    Parameters
    ----------
    kernel : str, kernel object or function, default "rbf"
        As in :class:`~sparsekit.Nystroem` (a registered name with ``kernel_params``, an
        object, or a function of two row blocks). A kernel whose ``backend`` resolves to
        ``"cuda"`` makes the passes over the data run on the GPU (Notes).
    sampler : str or sampler object, default "uniform"
        Any registered landmark sampler (``"uniform"``, ``"exact-rls"``, ``"dac-rls"``,
        ``"recursive-rls"``, ``"greedy"``, ...) with ``sampler_params``, or a sampler object.
    landmarks : None, {"kmeans", "quickmeans"} or array-like of shape (m, n_features)
        Landmarks that are not training samples, in place of the sampler's: given points, or
        the centroids of ``n_components`` clusters of ``X`` by scikit-learn's ``KMeans`` (one
        k-means++ start) or sparsekit's :class:`~sparsekit.QuicKMeans` (centroids give the
        lowest Nyström error in Giffon 2020, PhD thesis, Table 3.3). ``component_indices_`` is
        then None. Default: the sampler chooses training samples.
    n_components : int, default 100
        The number of landmarks m; above the number of samples it warns and uses them all.
    alpha : float > 0, default 1e-6
        The ridge parameter λ of the normalized objective above; scikit-learn's
        ``KernelRidge``/``Ridge`` ``alpha`` is λ n.
    solver : {"pcg", "direct"}, default "pcg"
        ``"pcg"``: FALKON's preconditioned conjugate gradient, one pass over the data per
        iteration, no n × m matrix stored. ``"direct"``: K_nmᵀ K_nm accumulated in one pass and
        solved by Cholesky (exact; O(n m²) time), for small m.
    tol : float >= 0, default 1e-4
        ``"pcg"`` stops once the residual of the preconditioned system is at most ``tol`` times
        its right-hand side (in norm, for every output). The default is scikit-learn's
        ``Ridge`` default: on Friedman #1 and the benchmark's data (n = 20,000, m = 1,000,
        λ = 1e-6 and 1e-8) the test error at 1e-4 equals that at 1e-7 to five digits with
        30-45 % fewer iterations; lower it to match an exact solution more closely.
    max_iter : int, default 100
        The most conjugate gradient iterations (a ``ConvergenceWarning`` when they do not reach
        ``tol``).
    kernel_params, sampler_params : dict, optional
        Parameters of the named kernel / sampler, e.g. ``{"gamma": 0.5}``.
    warm_start : bool, default False
        Start conjugate gradient from the previous fit's ``dual_coef_`` when the landmarks are
        the same (same ``random_state``, data and sampler): a refit with another ``alpha`` or
        ``tol`` then needs fewer iterations.
    callback : callable, optional
        ``callback(iteration, dual_coef)`` after each conjugate gradient iteration, e.g. to
        record a validation error as training goes (``dual_coef`` is α of that iteration;
        ``k(X_val, estimator.components_) @ dual_coef`` predicts with it).
    random_state : None, int or numpy Generator
        Passed to the sampler.
    verbose : bool, optional
        Show progress over the iterations (default: on a terminal, for long fits).
    n_jobs : int, optional
        Threads (Numba, BLAS and the library's pools) of each call, as
        :func:`sparsekit.thread_limit` (-1: every usable CPU); default: the setting in force.
    registry : Registry, optional
        Where the names of ``kernel`` and ``sampler`` are resolved.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (m,) or (m, n_targets)
        α, the weights of the landmarks.
    components_ : the landmarks (an array of shape (m, n_features) for vector data)
    component_indices_ : int64 array of shape (m,), or None
        Positions of the landmarks in ``X`` (None for ``landmarks=`` points or centroids).
    kernel_, sampler_ : the fitted kernel and the sampler
    n_iter_ : int
        Conjugate gradient iterations made (0 for ``"direct"``).
    residuals_ : ndarray of float
        Relative residual of the preconditioned system at the start and after each iteration.
    jitter_ : float
        δ added to the diagonal of K_mm before its Cholesky factorization (see Notes).
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input with string column names only)

    Notes
    -----
    K_mm is only positive semi-definite (duplicate landmarks, low-rank kernels), so it is
    factored as K_mm + δ I = Tᵀ T with δ = m · eps · max_i K_ii (ten times larger while the
    factorization fails), and the regularizer is λ αᵀ (K_mm + δ I) α. On K_mm's null space this
    selects the minimum-norm α, which K_nm does not see, so the predictions are those of the
    pseudo-inverse solution α = (K_nmᵀ K_nm + λ n K_mm)⁺ K_nmᵀ y. FALKON adds eps · m, an
    absolute jitter that assumes kernel values of order one.

    On a GPU: when the kernel's ``backend`` resolves to ``"cuda"`` for K_nm
    (``kernel_params={"backend": "cuda"}``, or ``"auto"`` with a usable device and at least
    2¹⁸ entries) and the data are dense, X and the landmarks go to the device once per fit
    and every pass computes the blocks of K_nm and their products there, with the kernel's
    ``@cuda.jit`` entries (:mod:`sparsekit.learning._passes_cuda`); only the (n, t) or
    (m, t) operands and results cross the bus. Precision is the data's (float32 data:
    float32 blocks). K_mm, the Cholesky factors and the iterates stay on the host;
    ``solver="direct"`` reads the blocks back to the host. ``backend="cuda"`` on a machine
    without a device raises a ``ValueError``. This path is tested in Numba's CUDA
    simulator; it has not been timed on a GPU.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=2000)
    >>> model = NystromRidge(n_components=200, alpha=1e-6, kernel_params={"gamma": 0.5},
    ...                      random_state=0).fit(X, y)
    >>> bool(model.score(X, y) > 0.9)
    True
    """

    @with_n_jobs
    def fit(self, X: DataLike, y: DataLike) -> NystromRidge:
        """Choose the landmarks and solve for their weights.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or graphs
            Training data.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets.

        Returns
        -------
        NystromRidge
            The fitted estimator.
        """
        check_y_given(self, y)
        Y = np.asarray(y)
        Y = check_array(Y, "y", ndim=Y.ndim if Y.ndim in (1, 2) else 2)
        self._fit_targets(X, np.asarray(Y, dtype=np.float64).reshape(len(Y), -1))
        if Y.ndim == 1:
            self.dual_coef_ = self.dual_coef_[:, 0]
        return self

    @with_n_jobs
    def predict(self, X: DataLike) -> np.ndarray:
        """Predict f(x) = k(x, L) α.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or graphs
            The samples.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_targets)
            The predictions, in the dtype of ``X`` (float32 or float64).
        """
        out = self._decision(X)
        return out[:, 0] if self.dual_coef_.ndim == 1 else out

    @with_n_jobs
    def score(self, X: DataLike, y: DataLike) -> float:
        """Return the coefficient of determination R² of the predictions.

        R² = 1 − Σ (y − ŷ)² / Σ (y − ȳ)², averaged over the outputs (scikit-learn's
        ``r2_score``, a constant ``y`` scoring 1 when predicted exactly and 0 otherwise).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or graphs
            Test samples.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            True targets.

        Returns
        -------
        float
            R² of ``predict(X)`` against ``y``.
        """
        targets = np.asarray(y, dtype=np.float64)
        n = len(targets)
        Y = targets.reshape(n, -1)
        pred = np.asarray(self.predict(X), dtype=np.float64).reshape(n, -1)
        ss_res = ((Y - pred) ** 2).sum(axis=0)
        ss_tot = ((Y - Y.mean(axis=0)) ** 2).sum(axis=0)
        r2 = np.where(ss_tot > 0, 1.0 - ss_res / np.where(ss_tot > 0, ss_tot, 1.0), 0.0)
        r2 = np.where((ss_tot == 0) & (ss_res == 0), 1.0, r2)
        return float(r2.mean())

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, RegressorTags, Tags, TargetTags

        return Tags(
            estimator_type="regressor",
            target_tags=TargetTags(required=True, single_output=True, multi_output=True),
            regressor_tags=RegressorTags(),
            input_tags=InputTags(sparse=True),
        )


class NystromRidgeClassifier(NystromClassifierMixin, _NystromRidgeBase):
    """Classification by Nyström kernel ridge regression on one-vs-rest ±1 targets.

    Each class c gets the target +1 on its samples and −1 elsewhere; :class:`NystromRidge`'s
    problem is solved for all of them at once (one pass over the data serves every class) and
    the predicted class has the largest decision value k(x, L) α_c. Two classes share one
    column (+1 for ``classes_[1]``), as in scikit-learn's ``RidgeClassifier``; this is
    FALKON's approach to classification (Meanti et al., NeurIPS 2020).

    Parameters
    ----------
    kernel : str, kernel object or function, default "rbf"
        As in :class:`NystromRidge` (its Notes: the passes on the GPU).
    sampler : str or sampler object, default "uniform"
        As in :class:`NystromRidge`.
    landmarks : None, {"kmeans", "quickmeans"} or array-like of shape (m, n_features)
        As in :class:`NystromRidge`.
    n_components : int, default 100
        The number of landmarks m.
    alpha : float > 0, default 1e-6
        The ridge parameter λ (see :class:`NystromRidge`).
    solver : {"pcg", "direct"}, default "pcg"
        As in :class:`NystromRidge`.
    tol : float >= 0, default 1e-4
        As in :class:`NystromRidge`.
    max_iter : int, default 100
        As in :class:`NystromRidge`.
    kernel_params, sampler_params : dict, optional
        Parameters of the named kernel / sampler.
    warm_start : bool, default False
        As in :class:`NystromRidge`.
    callback : callable, optional
        As in :class:`NystromRidge`.
    random_state : None, int or numpy Generator
        Passed to the sampler.
    verbose : bool, optional
        Show progress over the iterations.
    n_jobs : int, optional
        Threads (Numba, BLAS and the library's pools) of each call, as
        :func:`sparsekit.thread_limit` (-1: every usable CPU); default: the setting in force.
    registry : Registry, optional
        Where the names of ``kernel`` and ``sampler`` are resolved.

    Attributes
    ----------
    classes_ : ndarray
        The class labels, sorted.
    dual_coef_ : ndarray of shape (m,) for two classes, else (m, n_classes)
    components_, component_indices_, kernel_, sampler_, n_iter_, residuals_, jitter_
        As in :class:`NystromRidge`.
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input with string column names only)

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 2))
    >>> y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 < 1.0, "in", "out")
    >>> clf = NystromRidgeClassifier(n_components=100, kernel_params={"gamma": 1.0},
    ...                              random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.95)
    True
    """

    @with_n_jobs
    def fit(self, X: DataLike, y: DataLike) -> NystromRidgeClassifier:
        """Choose the landmarks and solve for the weights of every class.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or graphs
            Training data.
        y : array-like of shape (n_samples,)
            Class labels (any type NumPy can sort).

        Returns
        -------
        NystromRidgeClassifier
            The fitted estimator.
        """
        check_y_given(self, y)
        classes, codes = class_codes(y)
        self.classes_ = classes
        self._fit_targets(X, signed_targets(codes, len(classes)))
        if len(classes) == 2:
            self.dual_coef_ = self.dual_coef_[:, 0]
        return self


__all__ = ["NystromRidge", "NystromRidgeClassifier"]
