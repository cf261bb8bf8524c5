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
import warnings
from typing import Any

import numpy as np

from .._base import ParamsMixin, _input_feature_names
from .._memory import check_allocation
from .._progress import progress
from .._small_blas import is_skinny, one_blas_thread
from .._typing import DataLike, RandomStateLike
from .._validation import check_array, check_option, check_scalar
from ..exceptions import not_fitted_error
from ..features.nystrom import BLOCK_BYTES, Nystroem, _rows, checked_landmarks
from ..registry import Registry
from ._falkon import FalkonSystem, conjugate_gradient

SOLVERS = ("pcg", "direct")


def _sklearn_warning(name):
    """scikit-learn's warning class ``name`` when it is installed (so that its filters apply),
    else ``UserWarning``."""
    try:
        from sklearn import exceptions
    except ImportError:  # pragma: no cover - exercised only without scikit-learn
        return UserWarning
    return getattr(exceptions, name)


def _check_y_given(estimator, y):
    if y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y is None"
        )


class _NystromRidgeBase(ParamsMixin):
    """Landmarks, the FALKON system and the block passes shared by the regressor and the
    classifier."""

    def __init__(
        self,
        kernel: str | object = "rbf",
        sampler: str | object = "uniform",
        n_components: int = 100,
        alpha: float = 1e-6,
        solver: str = "pcg",
        tol: float = 1e-7,
        max_iter: int = 100,
        kernel_params: dict[str, Any] | None = None,
        sampler_params: dict[str, Any] | None = None,
        warm_start: bool = False,
        callback: Any = None,
        random_state: RandomStateLike = None,
        verbose: bool | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.kernel = kernel
        self.sampler = sampler
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
        self.registry = registry

    # -- fit -----------------------------------------------------------------------------------
    def _fit_params(self):
        alpha = check_scalar(self.alpha, "alpha", low=0.0, low_inclusive=False)
        solver = check_option(self.solver, "solver", SOLVERS)
        tol = check_scalar(self.tol, "tol", low=0.0, low_inclusive=True)
        max_iter = check_scalar(
            self.max_iter, "max_iter", kind=numbers.Integral, low=1, low_inclusive=True
        )
        if self.callback is not None and not callable(self.callback):
            raise TypeError(
                f"callback must be a function callback(iteration, dual_coef) or None, got "
                f"{type(self.callback).__name__}"
            )
        return alpha, solver, tol, int(max_iter)

    def _select_landmarks(self, X):
        """Prepared data and the fitted kernel, landmarks chosen by the sampler (``Nystroem``'s
        selection step); sets the landmark and input attributes."""
        selector = Nystroem(
            kernel=self.kernel,
            sampler=self.sampler,
            n_components=self.n_components,
            kernel_params=self.kernel_params,
            sampler_params=self.sampler_params,
            random_state=self.random_state,
            registry=self.registry,
        )
        kernel, sampler, Xp, landmarks, _, _ = selector._select(X)
        n = kernel.n_samples(Xp)
        indices, points = checked_landmarks(
            kernel, landmarks, n, f"sampler {type(sampler).__name__} returned"
        )
        self.n_features_in_ = selector.n_features_in_
        if hasattr(selector, "feature_names_in_"):
            self.feature_names_in_ = selector.feature_names_in_
        else:
            self.__dict__.pop("feature_names_in_", None)
        self.kernel_, self.sampler_ = kernel, sampler
        self.components_, self.component_indices_ = points, indices
        return Xp, n

    def _block_rows(self, m):
        return int(max(1, BLOCK_BYTES // max(1, 8 * m)))

    def _fit_targets(self, X, Y):
        """Fit ``dual_coef_`` (m, t) to the float64 targets ``Y`` (n, t)."""
        alpha, solver, tol, max_iter = self._fit_params()
        previous = getattr(self, "dual_coef_", None) if self.warm_start else None
        previous_indices = getattr(self, "component_indices_", None)
        Xp, n = self._select_landmarks(X)
        if len(Y) != n:
            raise ValueError(
                f"y has {len(Y)} samples but X has {n}; pass one target per sample of X"
            )
        kernel, L = self.kernel_, self.components_
        m, t = len(self.component_indices_), Y.shape[1]
        check_allocation(
            8 * m * m * (5 if solver == "direct" else 4),
            f"{type(self).__name__} with {m} landmarks",
            "use fewer landmarks (a smaller n_components=)",
            matrices="its m x m matrices",
        )
        step = self._block_rows(m)
        skinny = is_skinny(t)

        def blocks():
            for r0 in range(0, n, step):
                r1 = min(n, r0 + step)
                yield r0, r1, np.asarray(kernel(_rows(kernel, Xp, r0, r1), L))

        def gram_pass(V):
            out = np.zeros((m, V.shape[1]))
            for _, _, Kb in blocks():
                with one_blas_thread(skinny):
                    out += Kb.T @ (Kb @ V.astype(Kb.dtype, copy=False))
            return out

        K_mm = np.asarray(kernel(L), dtype=np.float64)
        system = FalkonSystem(K_mm, alpha, n, gram_pass)
        if solver == "direct":
            coef, n_iter, residuals = system.solve_direct(blocks(), Y), 0, []
        else:
            KnmT_y = np.zeros((m, t))
            for r0, r1, Kb in blocks():
                with one_blas_thread(skinny):
                    KnmT_y += Kb.T @ Y[r0:r1].astype(Kb.dtype, copy=False)
            b = system.rhs(KnmT_y)
            start = None
            if (
                previous is not None
                and previous_indices is not None
                and np.array_equal(previous_indices, self.component_indices_)
                and previous.reshape(m, -1).shape[1] == t
            ):
                start = system.start(previous.reshape(m, t))
            with progress(max_iter, f"{type(self).__name__} (pcg)", verbose=self.verbose) as bar:

                def step_done(iteration, beta):
                    bar.update(1)
                    if self.callback is not None:
                        self.callback(iteration, system.coefficients(beta))

                beta, n_iter, residuals = conjugate_gradient(
                    system.apply, b, x0=start, tol=tol, max_iter=max_iter, callback=step_done
                )
            coef = system.coefficients(beta)
            if residuals[-1] > tol:
                warnings.warn(
                    f"{type(self).__name__}: conjugate gradient stopped after max_iter="
                    f"{max_iter} iterations at a relative residual of {residuals[-1]:.3g} "
                    f"(tol={tol:g}); raise max_iter or tol, or use more regularization (alpha)",
                    _sklearn_warning("ConvergenceWarning"),
                    stacklevel=3,
                )
        self.dual_coef_ = coef
        self.n_iter_ = n_iter
        self.residuals_ = np.asarray(residuals)
        self.jitter_ = system.jitter
        return self

    # -- predict -------------------------------------------------------------------------------
    def _check_is_fitted(self):
        if getattr(self, "dual_coef_", None) is None:
            raise not_fitted_error(
                f"this {type(self).__name__} is not fitted yet: call fit(X, y) before predict"
            )

    def _validated(self, X):
        """``X`` checked against the training data and prepared by the fitted kernel."""
        self._check_is_fitted()
        if self.n_features_in_ is None:
            return self.kernel_.prepare(X), None
        names = _input_feature_names(X)
        fitted = getattr(self, "feature_names_in_", None)
        if fitted is not None and names is not None and list(fitted) != list(names):
            raise ValueError(
                "The feature names should match those that were passed during fit; pass the "
                "columns of the training data, in the same order"
            )
        arr = check_array(X, "X", accept_sparse=True)
        if arr.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {arr.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input"
            )
        return self.kernel_.prepare(arr), arr.dtype

    def _decision(self, X):
        """k(X, L) α in row blocks, (n, t), in the dtype of ``X`` (float32 or float64)."""
        Xp, dtype = self._validated(X)
        kernel, L = self.kernel_, self.components_
        coef = self.dual_coef_.reshape(len(self.component_indices_), -1)
        n = kernel.n_samples(Xp)
        out = np.empty((n, coef.shape[1]), dtype=dtype or np.float64)
        step = self._block_rows(coef.shape[0])
        for r0 in range(0, n, step):
            r1 = min(n, r0 + step)
            Kb = np.asarray(kernel(_rows(kernel, Xp, r0, r1), L))
            with one_blas_thread(is_skinny(coef.shape[1])):
                out[r0:r1] = Kb @ coef.astype(Kb.dtype, copy=False)
        return out

    def __sklearn_is_fitted__(self):
        return getattr(self, "dual_coef_", None) is not None


class NystromRidge(_NystromRidgeBase):
    """Nyström kernel ridge regression, solved by FALKON's preconditioned conjugate gradient.

    Minimizes (1/n)‖K_nm α − y‖² + λ αᵀ K_mm α over α ∈ ℝ^m and predicts f(x) = k(x, L) α,
    where L are m landmarks chosen by ``sampler`` (Rudi, Carratino & Rosasco, NeurIPS 2017).

    Parameters
    ----------
    kernel : str, kernel object or function, default "rbf"
        As in :class:`~sparsekit.Nystroem` (a registered name with ``kernel_params``, an
        object, or a function of two row blocks).
    sampler : str or sampler object, default "uniform"
        Any registered landmark sampler (``"uniform"``, ``"exact-rls"``, ``"dac-rls"``,
        ``"recursive-rls"``, ``"greedy"``, ...) with ``sampler_params``, or a sampler object.
    n_components : int, default 100
        The number of landmarks m; above the number of samples it warns and uses them all.
    alpha : float > 0, default 1e-6
        The ridge parameter λ of the normalized objective above; scikit-learn's
        ``KernelRidge``/``Ridge`` ``alpha`` is λ n.
    solver : {"pcg", "direct"}, default "pcg"
        ``"pcg"``: FALKON's preconditioned conjugate gradient, one pass over the data per
        iteration, no n × m matrix stored. ``"direct"``: K_nmᵀ K_nm accumulated in one pass and
        solved by Cholesky (exact; O(n m²) time), for small m.
    tol : float >= 0, default 1e-7
        ``"pcg"`` stops once the residual of the preconditioned system is at most ``tol`` times
        its right-hand side (in norm, for every output).
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
    registry : Registry, optional
        Where the names of ``kernel`` and ``sampler`` are resolved.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (m,) or (m, n_targets)
        α, the weights of the landmarks.
    components_ : the landmarks (an array of shape (m, n_features) for vector data)
    component_indices_ : int64 array of shape (m,)
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
        _check_y_given(self, y)
        Y = np.asarray(y)
        Y = check_array(Y, "y", ndim=Y.ndim if Y.ndim in (1, 2) else 2)
        self._fit_targets(X, np.asarray(Y, dtype=np.float64).reshape(len(Y), -1))
        if Y.ndim == 1:
            self.dual_coef_ = self.dual_coef_[:, 0]
        return self

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
        Y = np.asarray(y, dtype=np.float64)
        pred = np.asarray(self.predict(X), dtype=np.float64).reshape(Y.shape)
        Y, pred = Y.reshape(len(Y), -1), pred.reshape(len(Y), -1)
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


class NystromRidgeClassifier(_NystromRidgeBase):
    """Classification by Nyström kernel ridge regression on one-vs-rest ±1 targets.

    Each class c gets the target +1 on its samples and −1 elsewhere; :class:`NystromRidge`'s
    problem is solved for all of them at once (one pass over the data serves every class) and
    the predicted class has the largest decision value k(x, L) α_c. Two classes share one
    column (+1 for ``classes_[1]``), as in scikit-learn's ``RidgeClassifier``; this is
    FALKON's approach to classification (Meanti et al., NeurIPS 2020).

    Parameters
    ----------
    kernel : str, kernel object or function, default "rbf"
        As in :class:`NystromRidge`.
    sampler : str or sampler object, default "uniform"
        As in :class:`NystromRidge`.
    n_components : int, default 100
        The number of landmarks m.
    alpha : float > 0, default 1e-6
        The ridge parameter λ (see :class:`NystromRidge`).
    solver : {"pcg", "direct"}, default "pcg"
        As in :class:`NystromRidge`.
    tol : float >= 0, default 1e-7
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
        _check_y_given(self, y)
        labels = np.asarray(y)
        if labels.ndim != 1:
            if labels.ndim == 2 and labels.shape[1] == 1:
                warnings.warn(
                    "A column-vector y was passed when a 1d array was expected; pass y.ravel()",
                    _sklearn_warning("DataConversionWarning"),
                    stacklevel=2,
                )
                labels = labels.ravel()
            else:
                raise ValueError(f"y must be 1-D (n_samples,), got shape {labels.shape}")
        if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
            raise ValueError("y contains NaN or infinity; pass finite class labels")
        if labels.dtype.kind == "f" and np.any(labels != np.round(labels)):
            raise ValueError(
                "Unknown label type: continuous; y must hold class labels, use NystromRidge "
                "for continuous targets"
            )
        classes, codes = np.unique(labels, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(
                f"y has 1 class ({classes[0]!r} only); a classifier needs at least 2"
                if len(classes)
                else "y is empty; at least one sample is needed"
            )
        self.classes_ = classes
        Y = -np.ones((len(labels), len(classes)))
        Y[np.arange(len(labels)), codes] = 1.0
        if len(classes) == 2:
            Y = Y[:, 1:]
        self._fit_targets(X, Y)
        if len(classes) == 2:
            self.dual_coef_ = self.dual_coef_[:, 0]
        return self

    def decision_function(self, X: DataLike) -> np.ndarray:
        """Compute the decision values k(x, L) α_c.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or graphs
            The samples.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
            The value of ``classes_[1]`` for two classes (positive: that class), else one
            column per class.
        """
        out = self._decision(X)
        return out[:, 0] if len(self.classes_) == 2 else out

    def predict(self, X: DataLike) -> np.ndarray:
        """Predict the class of the largest decision value.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or graphs
            The samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]

    def score(self, X: DataLike, y: DataLike) -> float:
        """Return the mean accuracy of ``predict(X)`` against ``y``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or graphs
            Test samples.
        y : array-like of shape (n_samples,)
            True labels.

        Returns
        -------
        float
            The fraction of samples whose predicted label equals ``y``.
        """
        return float(np.mean(self.predict(X) == np.asarray(y)))

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(multi_class=True),
            input_tags=InputTags(sparse=True),
        )


__all__ = ["NystromRidge", "NystromRidgeClassifier"]
