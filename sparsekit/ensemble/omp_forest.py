"""OMP forests: prune a random forest to a few weighted trees with a sparse solver.

The forest's trees ``t_1..t_l`` form a dictionary whose atoms are their predictions on the
training samples, ``T = [t_1(X) .. t_l(X)]``; a sparse solver picks ``m`` of them and weights
them (Cherfaoui 2022, PhD thesis, Ch. 6, Algorithms 6 and 7; Giffon 2020, PhD thesis, Ch. 4)::

    f(x) = g(b + sum_{i in S} w_i t_i(x)),   |S| <= m

with ``g`` the identity (regression) or the class decision (classification). ``solver="omp"``
is Algorithm 6 (orthogonal matching pursuit, least-squares weights), ``solver="nn-omp"`` is
Algorithm 7 (non-negative weights; it stops by itself once no tree correlates positively with
the residual, which picks the forest size), and any other sparse solver of the registry works
by name. ``solver="random"`` is the baseline of the thesis' experiments (``m`` trees drawn
uniformly). ``weights="uniform"`` keeps the selected trees and averages them (the "without
weights" variants).

Decisions:

- The dictionary is centred and its columns normalised to unit norm before the selection (the
  thesis' experimental code fits an intercept and normalises the dictionary); the norms are
  kept, and prediction applies ``w_i = alpha_i / ||t_i - mean(t_i)||`` to the raw tree outputs.
- Classification: a tree's output for class ``c`` is ``2 P_i(c | x) - 1`` (in ``{-1, +1}`` for
  a fully grown tree), the target ``+1`` for samples of class ``c`` and ``-1`` otherwise. The
  blocks of all classes are stacked into one signal, each centred on its own (one intercept
  per class), so each tree has one weight; the predicted class maximises
  ``b_c + sum_i w_i (2 P_i(c | x) - 1)``. For two classes this is exactly the thesis' binary
  formulation ``sign(b + sum_i w_i t_i(x))`` with ``y`` in ``{-1, +1}``; more classes extend
  it (the thesis treats binary problems only).
- The weights are learned on the data given to ``fit``. The thesis' protocol fits the forest on
  a training split and the weights on training + validation: pass the forest fitted on the
  first (``forest=``) and the union to ``fit``.

scikit-learn is needed here (the forests are its estimators): install ``sparsekit[forest]``.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

try:
    from sklearn.base import ClassifierMixin, RegressorMixin
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data
except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError(
        "sparsekit.ensemble needs scikit-learn >= 1.6: pip install 'sparsekit[forest]'"
    ) from exc

from .._base import ParamsMixin
from .._required_params import factory_signature
from .._runtime.threads import with_n_jobs
from ..components import resolve
from ..exceptions import not_fitted_error
from ..registry import Registry, default_registry
from ._selection import select

_UNIFORM_OR_FITTED = ("fitted", "uniform")


def _check_fitted(estimator):
    """scikit-learn's ``check_is_fitted``, raising sparsekit's ``NotFittedError`` (a subclass of
    scikit-learn's, so the same handlers catch it)."""
    try:
        check_is_fitted(estimator, "coef_")
    except NotFittedError as exc:
        raise not_fitted_error(str(exc)) from None


def _check_forest(forest, kind):
    """The trees of a fitted forest (``FrozenEstimator`` unwrapped), or a clear error."""
    inner = (
        getattr(forest, "estimator", forest)
        if type(forest).__name__ == "FrozenEstimator"
        else forest
    )
    if not hasattr(inner, "fit"):
        raise TypeError(
            f"forest must be a scikit-learn forest {kind} (e.g. RandomForest{kind}) "
            f"or None, got {type(forest).__name__}"
        )
    try:
        check_is_fitted(inner, "estimators_")
    except NotFittedError:
        raise ValueError(
            f"forest {type(inner).__name__} is not fitted: fit it first (wrap it in "
            "sklearn.frozen.FrozenEstimator so that clone() keeps it fitted), or pass "
            "forest=None to let the estimator fit one"
        ) from None
    trees = np.ravel(inner.estimators_)
    if trees.size == 0 or not all(hasattr(t, "predict") for t in trees):
        raise TypeError(f"forest {type(inner).__name__} has no trees with predict()")
    return inner, list(trees)


class _OMPForestBase(ParamsMixin):
    """Shared fitting: forest, tree-prediction matrix, selection, staged weights.

    Parameters are handled by sparsekit's ``ParamsMixin``, as every estimator of the package;
    scikit-learn's ``RegressorMixin`` / ``ClassifierMixin`` add ``score`` and the estimator
    type."""

    _forest_kind = ""

    def __init__(
        self,
        n_trees: int = 10,
        *,
        solver: str | object = "omp",
        weights: str = "fitted",
        forest: object = None,
        n_estimators: int = 100,
        forest_params: dict[str, Any] | None = None,
        solver_params: dict[str, Any] | None = None,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.n_trees = n_trees
        self.solver = solver
        self.weights = weights
        self.forest = forest
        self.n_estimators = n_estimators
        self.forest_params = forest_params
        self.solver_params = solver_params
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.registry = registry

    # -- parameters ---------------------------------------------------------------------------
    def _check_fit_params(self):
        if (
            not isinstance(self.n_trees, numbers.Integral)
            or isinstance(self.n_trees, bool)
            or self.n_trees < 1
        ):
            raise ValueError(f"n_trees must be an integer >= 1, got {self.n_trees!r}")
        if self.weights not in _UNIFORM_OR_FITTED:
            raise ValueError(f"weights must be one of {_UNIFORM_OR_FITTED}, got {self.weights!r}")
        if self.forest_params is not None and not isinstance(self.forest_params, dict):
            raise TypeError("forest_params must be a dict of the forest's parameters or None")
        if self.solver_params is not None and not isinstance(self.solver_params, dict):
            raise TypeError("solver_params must be a dict of the solver's parameters or None")

    def _make_solver(self, n_trees, n_forest):
        """The solver object (``"random"`` stays a string): ``n_nonzero_coefs`` = ``n_trees``."""
        if isinstance(self.solver, str) and self.solver.strip().lower() == "random":
            return "random"
        registry = self.registry if self.registry is not None else default_registry()
        params = dict(self.solver_params or {})
        if isinstance(self.solver, str):
            info = registry.lookup("solver", self.solver)
            names = factory_signature(info.registration.factory).names
            if "n_nonzero_coefs" in names:
                params.setdefault("n_nonzero_coefs", n_trees)
            if "return_path" in names:
                params.setdefault("return_path", True)
            if "precompute" in names and 10 * n_trees >= n_forest:
                # D^T D costs n l^2 flops at GEMM speed, the residual form m gemv's of n l at
                # memory speed (about 10x slower per flop): the Gram pays from m >= l / 10
                params.setdefault("precompute", True)
        return resolve("solver", self.solver, params, registry=registry)

    def _fit_forest(self, X, y):
        if self.forest is not None:
            return _check_forest(self.forest, self._forest_kind)
        from sklearn import ensemble

        if not isinstance(self.n_estimators, numbers.Integral) or self.n_estimators < 1:
            raise ValueError(f"n_estimators must be an integer >= 1, got {self.n_estimators!r}")
        if self.n_trees > self.n_estimators:
            raise ValueError(
                f"n_trees={self.n_trees} must be <= n_estimators={self.n_estimators}: the forest "
                f"fitted here has n_estimators trees to prune; raise n_estimators to at least "
                f"{self.n_trees} or lower n_trees"
            )
        cls = getattr(ensemble, f"RandomForest{self._forest_kind}")
        forest = cls(
            n_estimators=self.n_estimators,
            random_state=self.random_state,
            **(self.forest_params or {}),
        ).fit(X, y)
        return forest, list(forest.estimators_)

    # -- fitting ------------------------------------------------------------------------------
    def _fit(self, X, y):
        self._check_fit_params()
        X, y = validate_data(
            self, X, y, dtype=(np.float64, np.float32), y_numeric=self._forest_kind == "Regressor"
        )
        if X.shape[0] < 2:
            raise ValueError(f"n_samples={X.shape[0]}: OMP forests need at least 2 samples")
        forest, trees = self._fit_forest(X, y)
        if getattr(forest, "n_features_in_", X.shape[1]) != X.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features but the forest was fitted on {forest.n_features_in_}"
            )
        if self.n_trees > len(trees):
            warnings.warn(
                f"n_trees={self.n_trees} is larger than the given forest's {len(trees)} trees: "
                f"at most {len(trees)} are selected",
                UserWarning,
                stacklevel=3,
            )
        n_trees = min(int(self.n_trees), len(trees))
        T_blocks, y_blocks = self._blocks(forest, trees, X, y)
        rng = check_random_state(self.random_state)
        selection = select(
            T_blocks,
            y_blocks,
            self._make_solver(n_trees, len(trees)),
            n_trees=n_trees,
            uniform=self.weights == "uniform",
            rng=rng,
        )
        self.forest_ = forest
        self.selected_trees_ = selection.order
        self.estimators_ = [trees[i] for i in selection.order]
        self.n_trees_ = int(selection.order.size)
        self.coef_ = selection.weights
        self.path_coef_ = selection.path
        self._path_intercepts = [self._score_offsets(b) for b in selection.path_intercepts]
        self.intercept_ = self._score_offsets(selection.intercepts)
        selected = selection.weights[selection.order]
        self.negative_weight_fraction_ = float(np.mean(selected < 0)) if selected.size else 0.0
        return self

    def _staged_scores(self, X):
        """Yield the score arrays of the pruned forests with 1, 2, ... selected trees."""
        outputs = self._outputs(X)  # (n_selected, n_samples[, n_classes])
        acc = np.zeros(outputs.shape[1:])
        for j in range(self.n_trees_):
            acc = np.tensordot(self.path_coef_[j, : j + 1], outputs[: j + 1], axes=1)
            yield acc + self._path_intercepts[j]

    def _scores(self, X):
        _check_fitted(self)
        X = validate_data(self, X, dtype=(np.float64, np.float32), reset=False)
        outputs = self._outputs(X)
        w = self.path_coef_[-1]
        keep = w != 0
        acc = (
            np.tensordot(w[keep], outputs[keep], axes=1)
            if keep.any()
            else np.zeros(outputs.shape[1:])
        )
        return acc + self.intercept_

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags

        # the base of scikit-learn's Regressor/ClassifierMixin tags (they set the type)
        return Tags(
            estimator_type=None,
            target_tags=TargetTags(required=True),
            input_tags=InputTags(allow_nan=False),
        )


class OMPForestRegressor(RegressorMixin, _OMPForestBase):
    """A random forest pruned to at most ``n_trees`` weighted trees by a sparse solver.

    ``f(x) = b + sum_{i in S} w_i t_i(x)`` with the trees ``S`` and weights ``w`` chosen by
    ``solver`` on the centred, column-normalised tree-prediction matrix (Cherfaoui 2022, PhD
    thesis, Ch. 6, Algorithm 6 with ``solver="omp"``, Algorithm 7 with ``"nn-omp"``).

    Parameters
    ----------
    n_trees : int >= 1, default 10
        Most trees kept (``n_nonzero_coefs`` of the solver). At most ``n_estimators`` when
        the estimator fits the forest (a larger value raises ValueError); clipped, with a
        ``UserWarning``, to the size of a given ``forest``.
        NN-OMP may keep fewer: it stops once no tree correlates positively with the residual.
    solver : str or solver object, default "omp"
        ``"omp"``, ``"nn-omp"``, any sparse solver of the registry, or ``"random"``
        (``n_trees`` trees drawn uniformly, least-squares weights: the baseline).
    weights : {"fitted", "uniform"}, default "fitted"
        ``"fitted"``: the solver's weights and an intercept. ``"uniform"``: the plain mean of
        the selected trees (the "without weights" variants).
    forest : fitted forest, optional
        A fitted scikit-learn forest (``RandomForestRegressor``, ``ExtraTreesRegressor``, ...) to
        prune, optionally wrapped in
        ``sklearn.frozen.FrozenEstimator`` so that ``clone`` keeps it. Default: a
        ``RandomForestRegressor`` fitted on the data given to ``fit``.
    n_estimators : int, default 100
        Size of the forest fitted when ``forest`` is None.
    forest_params : dict, optional
        Other parameters of the forest fitted when ``forest`` is None.
    solver_params : dict, optional
        Further parameters of the named solver.
    random_state : int, RandomState or None
        Seeds the forest and the random baseline.
    n_jobs : int, optional
        Threads (Numba, BLAS and the library's pools) of each call, as
        :func:`sparsekit.thread_limit` (-1: every usable CPU); default: the setting in force.
        The forest's own ``n_jobs`` is a ``forest_params`` entry.
    registry : Registry, optional
        Where to resolve ``solver`` (default: the process-wide registry).

    Attributes
    ----------
    forest_ : the full forest
    estimators_ : list of the selected trees, in order of selection
    selected_trees_ : ndarray of int, indices of the selected trees in ``forest_.estimators_``
    n_trees_ : int, trees selected
    coef_ : ndarray (n_trees_in_forest,), weight of every tree on its raw output (0 if dropped)
    path_coef_ : ndarray (``n_trees_``, ``n_trees_``), ``[k, s]``: weight of ``estimators_[s]``
        in the pruned forest of the first ``k + 1`` selected trees (what :meth:`staged_predict`
        uses)
    intercept_ : float
    negative_weight_fraction_ : float, share of the selected trees with a negative weight
    n_features_in_, feature_names_in_

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = OMPForestRegressor(n_trees=10, n_estimators=100, random_state=0).fit(X, y)
    >>> model.n_trees_
    10
    """

    _forest_kind = "Regressor"

    @with_n_jobs
    def fit(self, X: ArrayLike, y: ArrayLike) -> OMPForestRegressor:
        """Fit (or take) the forest, then select and weight its trees on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Targets.

        Returns
        -------
        self
            The fitted estimator.
        """
        return self._fit(X, y)

    def _blocks(self, forest, trees, X, y):
        y = np.asarray(y, dtype=np.float64)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D (one target), got shape {y.shape}")
        T = np.column_stack([np.asarray(t.predict(X), dtype=np.float64) for t in trees])
        return [T], [y]

    @staticmethod
    def _score_offsets(intercepts):
        return float(intercepts[0])

    def _outputs(self, X):
        return np.stack([np.asarray(t.predict(X), dtype=np.float64) for t in self.estimators_])

    @with_n_jobs
    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict with the pruned forest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            ``b + sum_i w_i t_i(x)`` over the selected trees.
        """
        return self._scores(X)

    def staged_predict(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """Predict with the pruned forests of 1, 2, ..., ``n_trees_`` trees (selection order).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Yields
        ------
        ndarray of shape (n_samples,)
            The predictions of the pruned forest of the first 1, 2, ..., ``n_trees_`` selected
            trees, each with the weights of that size's solution.
        """
        _check_fitted(self)
        X = validate_data(self, X, dtype=(np.float64, np.float32), reset=False)
        yield from self._staged_scores(X)


class OMPForestClassifier(ClassifierMixin, _OMPForestBase):
    """A random forest classifier pruned to at most ``n_trees`` weighted trees.

    Each class ``c`` scores ``b_c + sum_{i in S} w_i (2 P_i(c | x) - 1)`` and the highest score
    wins; for two classes this is the thesis' ``sign(b + sum_i w_i t_i(x))`` with labels in
    ``{-1, +1}`` (Cherfaoui 2022, PhD thesis, §6.2). Attributes as
    :class:`OMPForestRegressor`, plus ``classes_`` and ``intercept_`` of shape (n_classes,).

    Parameters
    ----------
    n_trees : int >= 1, default 10
        Most trees kept (``n_nonzero_coefs`` of the solver). At most ``n_estimators`` when
        the estimator fits the forest (a larger value raises ValueError); clipped, with a
        ``UserWarning``, to the size of a given ``forest``.
        NN-OMP may keep fewer: it stops once no tree correlates positively with the residual.
    solver : str or solver object, default "omp"
        ``"omp"``, ``"nn-omp"``, any sparse solver of the registry, or ``"random"``
        (``n_trees`` trees drawn uniformly, least-squares weights: the baseline).
    weights : {"fitted", "uniform"}, default "fitted"
        ``"fitted"``: the solver's weights and an intercept. ``"uniform"``: the plain mean of
        the selected trees (the "without weights" variants).
    forest : fitted forest, optional
        A fitted scikit-learn forest (``RandomForestClassifier``, ``ExtraTreesClassifier``, ...) to
        prune, optionally wrapped in
        ``sklearn.frozen.FrozenEstimator`` so that ``clone`` keeps it. Default: a
        ``RandomForestClassifier`` fitted on the data given to ``fit``.
    n_estimators : int, default 100
        Size of the forest fitted when ``forest`` is None.
    forest_params : dict, optional
        Other parameters of the forest fitted when ``forest`` is None.
    solver_params : dict, optional
        Further parameters of the named solver.
    random_state : int, RandomState or None
        Seeds the forest and the random baseline.
    n_jobs : int, optional
        Threads (Numba, BLAS and the library's pools) of each call, as
        :func:`sparsekit.thread_limit` (-1: every usable CPU); default: the setting in force.
        The forest's own ``n_jobs`` is a ``forest_params`` entry.
    registry : Registry, optional
        Where to resolve ``solver`` (default: the process-wide registry).
    """

    _forest_kind = "Classifier"

    @with_n_jobs
    def fit(self, X: ArrayLike, y: ArrayLike) -> OMPForestClassifier:
        """Fit (or take) the forest, then select and weight its trees on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self
            The fitted estimator.
        """
        check_classification_targets(y)
        return self._fit(X, y)

    def _blocks(self, forest, trees, X, y):
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(
                f"y has a single class ({classes[0]!r}): OMP forest "
                "classification needs at least two classes"
            )
        forest_classes = np.asarray(getattr(forest, "classes_", classes))
        missing = np.setdiff1d(classes, forest_classes)
        if missing.size or forest_classes.ndim != 1:
            raise ValueError(f"y has classes the forest never saw: {missing.tolist()}")
        self.classes_ = forest_classes
        P = self._tree_probabilities(trees, X)  # (n_trees, n_samples, n_classes)
        # one block per class of the forest (a class absent from y has target -1 throughout)
        T_blocks = [2.0 * P[:, :, c].T - 1.0 for c in range(forest_classes.size)]
        y_blocks = [np.where(y == cls, 1.0, -1.0) for cls in forest_classes]
        if forest_classes.size == 2:  # the two blocks mirror each other: keep the positive class's
            T_blocks, y_blocks = T_blocks[1:], y_blocks[1:]
        return T_blocks, y_blocks

    def _tree_probabilities(self, trees, X):
        n_classes = len(self.classes_)
        out = np.empty((len(trees), X.shape[0], n_classes))
        for i, tree in enumerate(trees):
            out[i] = tree.predict_proba(X)
        return out

    def _score_offsets(self, intercepts):
        if len(self.classes_) == 2:  # the negative class mirrors the positive one
            return np.array([-intercepts[0], intercepts[0]])
        return np.asarray(intercepts, dtype=np.float64)

    def _outputs(self, X):
        return 2.0 * self._tree_probabilities(self.estimators_, X) - 1.0

    @with_n_jobs
    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Compute the class scores of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            The score of the positive class for two classes, else the score of every class.
        """
        scores = self._scores(X)
        return scores[:, 1] if len(self.classes_) == 2 else scores

    @with_n_jobs
    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict the class with the highest score.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            The class with the highest score, for each sample.
        """
        _check_fitted(self)
        return self.classes_[np.argmax(self._scores(X), axis=1)]

    def staged_predict(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """Predict the classes with the pruned forests of 1, 2, ..., ``n_trees_`` trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Yields
        ------
        ndarray of shape (n_samples,)
            The predicted classes of the pruned forest of the first 1, 2, ..., ``n_trees_`` selected
            trees.
        """
        _check_fitted(self)
        X = validate_data(self, X, dtype=(np.float64, np.float32), reset=False)
        for scores in self._staged_scores(X):
            yield self.classes_[np.argmax(scores, axis=1)]


__all__ = ["OMPForestRegressor", "OMPForestClassifier"]
