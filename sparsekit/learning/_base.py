"""What the Nyström kernel models share: landmarks, the conjugate gradient driver, prediction."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from .._base import ParamsMixin, _input_feature_names
from .._runtime.memory import check_allocation
from .._runtime.progress import progress
from .._runtime.threads import with_n_jobs
from .._typing import DataLike
from .._validation import check_array, check_option, check_random_state, check_scalar, is_sparse
from ..exceptions import not_fitted_error
from ..features.nystrom import Nystroem, checked_landmarks
from ._falkon import conjugate_gradient
from ._passes import kernel_passes

#: the centroid landmarks ``landmarks=`` computes by name
CENTROIDS = ("kmeans", "quickmeans")


def sklearn_warning(name):
    """scikit-learn's warning class ``name`` when it is installed (so that its filters apply),
    else ``UserWarning``."""
    try:
        from sklearn import exceptions
    except ImportError:  # pragma: no cover - exercised only without scikit-learn
        return UserWarning
    return getattr(exceptions, name)


def check_y_given(estimator, y):
    """scikit-learn's refusal of ``y=None`` for a supervised estimator."""
    if y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y is None"
        )


def class_codes(y):
    """``(classes, codes)`` of class labels ``y`` (sorted classes, codes into them), with
    scikit-learn's refusals and its warning for a column vector."""
    labels = np.asarray(y)
    if labels.ndim == 2 and labels.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected; pass y.ravel()",
            sklearn_warning("DataConversionWarning"),
            stacklevel=3,
        )
        labels = labels.ravel()
    if labels.ndim != 1:
        raise ValueError(f"y must be 1-D (n_samples,), got shape {labels.shape}")
    if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
        raise ValueError("y contains NaN or infinity; pass finite class labels")
    if labels.dtype.kind == "f" and np.any(labels != np.round(labels)):
        raise ValueError(
            "Unknown label type: continuous; y must hold class labels (a regressor takes "
            "continuous targets)"
        )
    classes, codes = np.unique(labels, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(
            f"y has 1 class ({classes[0]!r} only); a classifier needs at least 2"
            if len(classes)
            else "y is empty; at least one sample is needed"
        )
    return classes, codes


def signed_targets(codes, n_classes):
    """One-vs-rest targets: +1 where the sample is of the class, −1 elsewhere, one column per
    class (one column, ``classes_[1]``'s, for two classes)."""
    Y = -np.ones((len(codes), n_classes))
    Y[np.arange(len(codes)), codes] = 1.0
    return Y[:, 1:] if n_classes == 2 else Y


class NystromModel(ParamsMixin):
    """Landmarks chosen by a sampler, weights α on them, predictions k(x, L) α.

    Subclasses store the parameters ``kernel``, ``sampler``, ``landmarks``, ``n_components``,
    ``kernel_params``, ``sampler_params``, ``callback``, ``random_state``, ``verbose`` and
    ``registry`` and set ``dual_coef_``.
    """

    def _select_landmarks(self, X, n_targets):
        """The passes (:func:`kernel_passes`) over the prepared data and the landmarks that the
        sampler chose (``Nystroem``'s selection step); sets the landmark and input attributes."""
        if self.callback is not None and not callable(self.callback):
            raise TypeError(
                f"callback must be a function callback(iteration, dual_coef) or None, got "
                f"{type(self.callback).__name__}"
            )
        selector = Nystroem(
            kernel=self.kernel,
            sampler=self.sampler,
            n_components=self.n_components,
            kernel_params=self.kernel_params,
            sampler_params=self.sampler_params,
            random_state=self.random_state,
            registry=self.registry,
        )
        if self.landmarks is None:
            kernel, sampler, Xp, landmarks, _, _ = selector._select(X)
            n = kernel.n_samples(Xp)
            indices, points = checked_landmarks(
                kernel, landmarks, n, f"sampler {type(sampler).__name__} returned"
            )
        else:
            kernel, sampler = selector._resolve_components()
            if getattr(kernel, "accepts", "vectors") != "vectors":
                raise ValueError(
                    "landmarks= takes points of vector data; for graphs or a precomputed "
                    "kernel choose them with sampler="
                )
            Xp = selector._validated(X, kernel, prepared=False)
            n = kernel.n_samples(Xp)
            kernel.fit(Xp)
            indices, points = None, kernel.prepare(self._landmark_points(Xp, selector))
        if n_targets != n:
            raise ValueError(
                f"y has {n_targets} samples but X has {n}; pass one target per sample of X"
            )
        self._set_landmarks(
            kernel,
            sampler,
            indices,
            points,
            selector.n_features_in_,
            getattr(selector, "feature_names_in_", None),
        )
        return kernel_passes(kernel, Xp, points)

    def _landmark_points(self, Xp, selector):
        """The ``landmarks`` parameter as points: given ones checked, or k-means centroids."""
        spec = self.landmarks
        if isinstance(spec, str):
            check_option(spec, "landmarks", CENTROIDS)
            m = check_scalar(
                self.n_components, "n_components", kind=numbers.Integral, low=1, low_inclusive=True
            )
            if m > Xp.shape[0]:
                raise ValueError(
                    f"landmarks={spec!r} with n_components={m} needs at least {m} samples, "
                    f"got {Xp.shape[0]}"
                )
            X = Xp.toarray() if is_sparse(Xp) else Xp
            if spec == "quickmeans":
                from ..cluster.quickmeans import QuicKMeans

                km = QuicKMeans(m, random_state=self.random_state).fit(X)
                return km.mean_ + km.cluster_centers_.toarray()
            try:
                from sklearn.cluster import KMeans
            except ImportError:  # pragma: no cover - exercised only without scikit-learn
                raise ImportError(
                    "landmarks='kmeans' uses scikit-learn's KMeans: pip install scikit-learn, "
                    "or use landmarks='quickmeans'"
                ) from None
            seed = check_random_state(self.random_state).integers(2**31)
            return KMeans(m, n_init=1, random_state=int(seed)).fit(X).cluster_centers_
        points = check_array(spec, "landmarks", accept_sparse=True)
        if points.shape[1] != selector.n_features_in_:
            raise ValueError(
                f"landmarks has {points.shape[1]} features but X has {selector.n_features_in_}"
            )
        return points

    def _same_landmarks(self, components, indices):
        """Whether the fitted landmarks are the given ones (a warm start's condition)."""
        if indices is not None or self.component_indices_ is not None:
            return np.array_equal(indices, self.component_indices_)
        return (
            isinstance(components, np.ndarray)
            and isinstance(self.components_, np.ndarray)
            and np.array_equal(components, self.components_)
        )

    def _set_landmarks(self, kernel, sampler, indices, points, n_features, feature_names=None):
        """Set the fitted kernel, sampler, landmarks and input attributes (a memory check of
        the m x m matrices to come first); ``indices`` is None for landmarks that are not
        samples."""
        m = kernel.n_samples(points)
        # K_mm, its float64 copy, T, A and the solver's m x m work matrix
        check_allocation(
            5 * 8 * m * m,
            f"{type(self).__name__} with {m} landmarks",
            "use fewer landmarks (a smaller n_components=)",
            matrices="its m x m matrices",
        )
        self.n_features_in_ = n_features
        if feature_names is not None:
            self.feature_names_in_ = feature_names
        else:
            self.__dict__.pop("feature_names_in_", None)
        self.kernel_, self.sampler_ = kernel, sampler
        self.components_, self.component_indices_ = points, indices

    def _landmark_gram(self):
        return np.asarray(self.kernel_(self.components_), dtype=np.float64)

    def _pcg(self, system, b, start, tol, max_iter, what="conjugate gradient", warn=True):
        """β solving ``system`` from ``start`` (progress bar, ``callback`` with α, a
        ``ConvergenceWarning`` when ``tol`` is not reached and ``warn``):
        ``(beta, n_iter, residuals)``."""
        with progress(max_iter, f"{type(self).__name__} ({what})", verbose=self.verbose) as bar:

            def step_done(iteration, beta):
                bar.update(1)
                if self.callback is not None:
                    self.callback(iteration, system.coefficients(beta))

            beta, n_iter, residuals = conjugate_gradient(
                system.apply, b, x0=start, tol=tol, max_iter=max_iter, callback=step_done
            )
        if warn and residuals[-1] > tol:
            warnings.warn(
                f"{type(self).__name__}: {what} stopped after max_iter={max_iter} iterations "
                f"at a relative residual of {residuals[-1]:.3g} (tol={tol:g}); raise max_iter "
                "or tol, or use more regularization (alpha)",
                sklearn_warning("ConvergenceWarning"),
                stacklevel=4,
            )
        return beta, n_iter, residuals

    # -- predict -------------------------------------------------------------------------------
    def _check_is_fitted(self):
        if getattr(self, "dual_coef_", None) is None:
            raise not_fitted_error(
                f"this {type(self).__name__} is not fitted yet: call fit(X, y) before predict"
            )

    def __sklearn_is_fitted__(self):
        return getattr(self, "dual_coef_", None) is not None

    def _validated(self, X):
        """``(prepared X, dtype)``: ``X`` checked against the training data and prepared by
        the fitted kernel (dtype None for data that is not vectors)."""
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
        passes = kernel_passes(self.kernel_, Xp, self.components_)
        coef = self.dual_coef_.reshape(passes.m, -1)
        return passes.times(coef, dtype=dtype or np.float64)


class NystromClassifierMixin(NystromModel):
    """Decisions, predictions and accuracy of a classifier whose ``dual_coef_`` has one column
    per class (one for two classes, that of ``classes_[1]``)."""

    classes_: np.ndarray

    @with_n_jobs
    def decision_function(self, X: DataLike) -> np.ndarray:
        """Compute the decision values f_c(x) = k(x, L) α_c.

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

    @with_n_jobs
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

    @with_n_jobs
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
