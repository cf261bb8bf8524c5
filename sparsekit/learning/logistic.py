"""Nyström kernel logistic regression, by Newton's method with FALKON-preconditioned steps.

With y_i ∈ {−1, +1}, f = K_nm α and m landmarks L chosen by any sampler, the model minimizes

    J(α) = (1/n) Σ_i log(1 + exp(−y_i f_i)) + (λ/2) αᵀ K_mm α

(Meanti, Carratino, Rosasco & Rudi, "Kernel methods through the roof: handling billions of
points efficiently", NeurIPS 2020, §3). Its gradient and Hessian are

    g = K_nmᵀ r / n + λ K_mm α,         r_i = −y_i σ(−y_i f_i)
    H = K_nmᵀ D K_nm / n + λ K_mm,      D_i = σ(f_i) (1 − σ(f_i))

so a Newton step H δ = −g is a weighted Nyström ridge system: it is solved by the conjugate
gradient of :mod:`sparsekit.learning._falkon`, preconditioned with D at the landmarks (the
paper's choice), one pass over the data per iteration. With features z(x) = K_mm^(−1/2) k(x, L)
(scikit-learn's ``Nystroem``) and w = K_mm^(1/2) α, J is 1/(λ n) times the objective of
scikit-learn's ``LogisticRegression(C = 1 / (λ n), fit_intercept=False)``; several classes are
fitted one-vs-rest (as ``OneVsRestClassifier``), all classes sharing each pass.

Decisions: the steps are inexact Newton steps (the conjugate gradient stops at a relative
residual η_k = min(0.5, √(‖g_k‖ / ‖g_0‖)), Eisenstat & Walker's forcing term, which keeps
Newton's superlinear convergence; Nocedal & Wright, *Numerical Optimization*, 2006, Thm 7.2)
followed by a backtracking line search on J (Armijo, factor 1/2), evaluated from K_nm δ, one
more pass. Newton stops once the decrement −gᵀδ / 2 is at most ``tol`` (the objective is
then within about ``tol`` of its minimum) for every class.

Meanti et al. instead take one Newton step per value of a decreasing sequence of λ, each
warm-started from the previous one; the line search makes any λ safe without choosing that
sequence. The sequence was measured and not adopted: from a cold start, one step (η = 1/2)
at each of λ_k = 10⁻³ / 10^k above λ, then steps at λ, on n = 5,000 points (20 features,
10 % flipped labels, m = 300 uniform landmarks, RBF γ = 0.05) changed the conjugate gradient
iterations of a fit, for λ = 1e-4, 1e-5, 1e-6, 1e-7, from 39, 103, 277, 577 to 35, 87, 279,
412 with two classes and from 41, 106, 259, 381 to 52, 90, 318, 372 with three (the same
minimum each time); other starts (1e-4 to 1e-1) and ratios (3 to 100) gave 252 to 290
iterations at λ = 1e-6 and 385 to 528 at 1e-7 with two classes. Small λ is slow because the
last Newton steps need an accurate conjugate gradient on a system whose condition grows
like 1/λ; the sequence moves their count by amounts of either sign.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
from scipy.special import expit

from .._runtime.threads import with_n_jobs
from .._typing import DataLike, RandomStateLike
from .._validation import check_scalar
from ..registry import Registry
from ._base import (
    NystromClassifierMixin,
    NystromModel,
    check_y_given,
    class_codes,
    signed_targets,
    sklearn_warning,
)
from ._falkon import FalkonSystem, jittered_cholesky

#: the most conjugate gradient iterations of one Newton step
CG_MAX_ITER = 200
#: the Armijo constant of the line search and its most halvings
ARMIJO, MAX_HALVINGS = 1e-4, 40


def _loss(Y, F):
    """Mean logistic loss per column: mean_i log(1 + exp(−y_i f_i))."""
    return np.logaddexp(0.0, -Y * F).mean(axis=0)


class NystromLogisticRegression(NystromClassifierMixin, NystromModel):
    """Kernel logistic regression on Nyström landmarks, by FALKON-preconditioned Newton steps.

    Minimizes (1/n) Σ log(1 + exp(−y_i f(x_i))) + (λ/2) αᵀ K_mm α with f(x) = k(x, L) α
    (Meanti et al., NeurIPS 2020); several classes are fitted one-vs-rest.

    Parameters
    ----------
    kernel : str, kernel object or function, default "rbf"
        As in :class:`~sparsekit.Nystroem`; with a ``backend`` that resolves to ``"cuda"``
        the passes over the data run on the GPU (:class:`~sparsekit.NystromRidge`, Notes).
    sampler : str or sampler object, default "uniform"
        Any registered landmark sampler, or a sampler object.
    landmarks : None, {"kmeans", "quickmeans"} or array-like of shape (m, n_features)
        As in :class:`~sparsekit.NystromRidge`.
    n_components : int, default 100
        The number of landmarks m.
    alpha : float > 0, default 1e-6
        The regularization λ; scikit-learn's ``LogisticRegression`` on the Nyström features
        has ``C = 1/(λ n)``.
    tol : float >= 0, default 1e-10
        Newton stops once its decrement −gᵀδ/2 is at most ``tol`` for every class.
    max_iter : int, default 30
        The most Newton steps (a ``ConvergenceWarning`` when they do not reach ``tol``).
    kernel_params, sampler_params : dict, optional
        Parameters of the named kernel / sampler.
    warm_start : bool, default False
        Start from the previous fit's ``dual_coef_`` when the landmarks and classes are the
        same.
    callback : callable, optional
        ``callback(iteration, dual_coef)`` after each conjugate gradient iteration of every
        Newton step.
    random_state : None, int or numpy Generator
        Passed to the sampler.
    verbose : bool, optional
        Show progress over the conjugate gradient iterations.
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
    components_, component_indices_, kernel_, sampler_, jitter_
        As in :class:`~sparsekit.NystromRidge`.
    n_iter_ : int
        Newton steps made.
    cg_iterations_ : list of int
        Conjugate gradient iterations of each Newton step.
    objective_ : ndarray of float
        J at the start and after each Newton step (summed over the classes).
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input with string column names only)

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 2))
    >>> y = (X[:, 0] ** 2 + X[:, 1] ** 2 < 1.0).astype(int)
    >>> clf = NystromLogisticRegression(n_components=100, alpha=1e-4,
    ...                                 kernel_params={"gamma": 1.0}, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.95)
    True
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    """

    def __init__(
        self,
        kernel: str | object = "rbf",
        sampler: str | object = "uniform",
        landmarks: Any = None,
        n_components: int = 100,
        alpha: float = 1e-6,
        tol: float = 1e-10,
        max_iter: int = 30,
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

    @with_n_jobs
    def fit(self, X: DataLike, y: DataLike) -> NystromLogisticRegression:
        """Choose the landmarks and minimize the regularized logistic loss.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or graphs
            Training data.
        y : array-like of shape (n_samples,)
            Class labels (any type NumPy can sort).

        Returns
        -------
        NystromLogisticRegression
            The fitted estimator.
        """
        check_y_given(self, y)
        lam = check_scalar(self.alpha, "alpha", low=0.0, low_inclusive=False)
        tol = check_scalar(self.tol, "tol", low=0.0, low_inclusive=True)
        max_iter = int(
            check_scalar(
                self.max_iter, "max_iter", kind=numbers.Integral, low=1, low_inclusive=True
            )
        )
        classes, codes = class_codes(y)
        previous = getattr(self, "dual_coef_", None) if self.warm_start else None
        previous_landmarks = (
            getattr(self, "components_", None),
            getattr(self, "component_indices_", None),
        )
        previous_classes = getattr(self, "classes_", None)
        Y = signed_targets(codes, len(classes))
        passes = self._select_landmarks(X, len(Y))
        self.classes_ = classes
        n, m, t = passes.n, passes.m, Y.shape[1]
        factor = jittered_cholesky(self._landmark_gram())
        T_mm = factor[0].T @ factor[0]  # K_mm + δ I, the regularizer's matrix

        coef = np.zeros((m, t))
        if (
            previous is not None
            and self._same_landmarks(*previous_landmarks)
            and previous_classes is not None
            and np.array_equal(previous_classes, classes)
        ):
            coef = previous.reshape(m, t).astype(np.float64)
        F = passes.times(coef) if coef.any() else np.zeros((n, t))
        objective, cg_iterations, g0 = [self._objective(Y, F, coef, T_mm, lam)], [], None
        n_iter, converged = 0, False
        while n_iter < max_iter and not converged:
            n_iter += 1
            D = expit(F) * expit(-F)
            system = FalkonSystem(
                factor,
                lam,
                n,
                lambda V, D=D: passes.gram(V, D),
                landmark_weights=self._curvature_at_landmarks(T_mm @ coef),
            )
            R = -Y * expit(-Y * F)
            c = -passes.adjoint(R) - lam * n * (T_mm @ coef)  # −n g
            g_norm = np.linalg.norm(c)
            g0 = g_norm if g0 is None else g0
            eta = min(0.5, np.sqrt(g_norm / g0)) if g0 > 0 else 0.5
            beta, iterations, _ = self._pcg(
                system, system.rhs(c), None, eta, CG_MAX_ITER, what="Newton step", warn=False
            )
            cg_iterations.append(iterations)
            delta = system.coefficients(beta)
            decrement = np.einsum("ij,ij->j", c / n, delta)  # −gᵀδ per class
            U = passes.times(delta)
            steps = self._line_search(Y, F, U, coef, delta, T_mm, lam, decrement)
            coef = coef + steps * delta
            F = F + steps * U
            objective.append(self._objective(Y, F, coef, T_mm, lam))
            converged = bool(np.all(decrement / 2.0 <= tol))
        if not converged:
            warnings.warn(
                f"NystromLogisticRegression: Newton's method stopped after max_iter="
                f"{max_iter} steps with a decrement above tol={tol:g}; raise max_iter or tol",
                sklearn_warning("ConvergenceWarning"),
                stacklevel=2,
            )
        self.dual_coef_ = coef[:, 0] if t == 1 else coef
        self.n_iter_ = n_iter
        self.cg_iterations_ = cg_iterations
        self.objective_ = np.asarray(objective)
        self.jitter_ = factor[1]
        return self

    @staticmethod
    def _curvature_at_landmarks(F_landmarks):
        """σ(f)(1 − σ(f)) at the landmarks, averaged over the classes (f(L) = K_mm α)."""
        return (expit(F_landmarks) * expit(-F_landmarks)).mean(axis=1)

    @staticmethod
    def _objective(Y, F, coef, T_mm, lam):
        reg = 0.5 * lam * np.einsum("ij,ij->j", coef, T_mm @ coef)
        return float(np.sum(_loss(Y, F) + reg))

    @staticmethod
    def _line_search(Y, F, U, coef, delta, T_mm, lam, decrement):
        """Per class, the largest step 2^−k with Armijo's sufficient decrease of J."""
        t = Y.shape[1]
        steps = np.ones(t)

        def per_class(s):
            C = coef + s * delta
            return _loss(Y, F + s * U) + 0.5 * lam * np.einsum("ij,ij->j", C, T_mm @ C)

        J0 = per_class(np.zeros(t))
        pending = np.ones(t, dtype=bool)
        for _ in range(MAX_HALVINGS):
            J = per_class(steps)
            pending = J > J0 - ARMIJO * steps * decrement
            if not pending.any():
                break
            steps = np.where(pending, steps / 2.0, steps)
        return np.where(pending, 0.0, steps)

    @with_n_jobs
    def predict_proba(self, X: DataLike) -> np.ndarray:
        """Compute the class probabilities.

        Two classes: [1 − σ(f), σ(f)]. More: σ(f_c) of each one-vs-rest model, normalized to
        sum to one (as scikit-learn's ``OneVsRestClassifier``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or graphs
            The samples.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Probabilities, in the order of ``classes_``.
        """
        scores = self._decision(X)
        if len(self.classes_) == 2:
            p = expit(scores[:, 0])
            return np.column_stack([1.0 - p, p])
        P = expit(scores)
        return P / P.sum(axis=1, keepdims=True)

    @with_n_jobs
    def predict_log_proba(self, X: DataLike) -> np.ndarray:
        """Compute the logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or graphs
            The samples.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Log-probabilities, in the order of ``classes_``.
        """
        return np.log(self.predict_proba(X))


__all__ = ["NystromLogisticRegression"]
