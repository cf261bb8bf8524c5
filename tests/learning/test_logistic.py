"""NystromLogisticRegression against scikit-learn's LogisticRegression on the same Nyström
features (C = 1/(λ n), no intercept; OneVsRestClassifier for several classes)."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier

from sparsekit import NystromLogisticRegression

GAMMA = 0.3


def _data(n_classes, n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    codes = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    if n_classes == 3:
        codes = codes + (X[:, 1] > 0.3)
    return X, codes


def _reference(model, X, y, lam):
    L = model.components_
    features = SkNystroem(kernel="rbf", gamma=GAMMA, n_components=len(L)).fit(L)
    lr = LogisticRegression(
        C=1.0 / (lam * len(X)),
        fit_intercept=False,
        solver="newton-cholesky",
        tol=1e-12,
        max_iter=10**4,
    )
    ref = lr if len(np.unique(y)) == 2 else OneVsRestClassifier(lr)
    return ref.fit(features.transform(X), y), features


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("lam", [1e-2, 1e-4, 1e-6])
def test_equals_sklearn_logistic_regression_on_the_same_features(n_classes, lam):
    """Decision values to 1e-4 and probabilities to 1e-5 of scikit-learn's
    LogisticRegression(C = 1/(λ n), fit_intercept=False) on Nystroem features of the landmarks
    (one-vs-rest for three classes); string labels. The reference is its exact Newton solver
    ("newton-cholesky"): at λ = 1e-6 (decision values up to 45) L-BFGS with tol=1e-12 stops
    2e-5 short, relatively, at an objective 1.5e-12 above this model's."""
    X, codes = _data(n_classes)
    labels = np.array(["low", "mid", "top"])[:n_classes]
    y = labels[codes]
    model = NystromLogisticRegression(
        n_components=40, alpha=lam, tol=1e-14, kernel_params={"gamma": GAMMA}, random_state=0
    ).fit(X, y)
    ref, features = _reference(model, X, y, lam)
    Z = features.transform(X)
    np.testing.assert_array_equal(model.classes_, ref.classes_)
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(Z), atol=1e-4)
    np.testing.assert_allclose(model.predict_proba(X), ref.predict_proba(Z), atol=1e-5)
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.predict(X), ref.predict(Z))
    np.testing.assert_allclose(
        np.exp(model.predict_log_proba(X)), model.predict_proba(X), rtol=1e-12
    )


def test_newton_decreases_the_objective_and_converges_fast():
    """Every step lowers J (line search); the decrement reaches tol in few Newton steps."""
    X, y = _data(2)
    model = NystromLogisticRegression(
        n_components=40, alpha=1e-3, tol=1e-12, kernel_params={"gamma": GAMMA}, random_state=0
    ).fit(X, y)
    assert np.all(np.diff(model.objective_) <= 1e-15)
    assert model.objective_[0] == pytest.approx(np.log(2.0))  # α = 0: log(1 + e⁰)
    assert model.n_iter_ <= 12
    assert len(model.cg_iterations_) == model.n_iter_


def test_max_iter_bounds_newton_and_warns():
    X, y = _data(2)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        model = NystromLogisticRegression(
            n_components=40, alpha=1e-5, max_iter=2, kernel_params={"gamma": GAMMA}
        ).fit(X, y)
    assert model.n_iter_ == 2


def test_warm_start_from_the_solution_takes_one_step():
    X, y = _data(3)
    model = NystromLogisticRegression(
        n_components=40,
        alpha=1e-3,
        tol=1e-12,
        warm_start=True,
        kernel_params={"gamma": GAMMA},
        random_state=0,
    ).fit(X, y)
    first, steps = model.dual_coef_.copy(), model.n_iter_
    assert steps > 2
    model.fit(X, y)
    assert model.n_iter_ == 1
    np.testing.assert_allclose(model.dual_coef_, first, atol=1e-7)


def test_separable_data_stays_finite():
    """Separable classes with a tiny λ: the line search keeps every iterate finite."""
    X = np.r_[np.full((20, 2), -1.0), np.full((20, 2), 1.0)]
    X = X + 0.01 * np.random.default_rng(0).normal(size=X.shape)
    y = np.r_[np.zeros(20), np.ones(20)]
    with pytest.warns(ConvergenceWarning):
        model = NystromLogisticRegression(n_components=10, alpha=1e-12, max_iter=5).fit(X, y)
    assert np.all(np.isfinite(model.dual_coef_))
    assert model.score(X, y) == 1.0
    assert np.all(np.diff(model.objective_) <= 0)


@pytest.mark.parametrize(
    "params, y_kind, match",
    [
        ({"alpha": 0.0}, "ok", "alpha"),
        ({"max_iter": 0}, "ok", "max_iter"),
        ({}, "one class", "1 class"),
        ({}, "continuous", "continuous"),
        ({}, "short", "y has 299 samples but X has 300"),
    ],
)
def test_bad_input_names_the_argument(params, y_kind, match):
    X, y = _data(2)
    if y_kind == "one class":
        y = np.zeros_like(y)
    elif y_kind == "continuous":
        y = X[:, 0]
    elif y_kind == "short":
        y = y[:-1]
    with pytest.raises(ValueError, match=match):
        NystromLogisticRegression(n_components=20, **params).fit(X, y)


def test_warm_start_ignores_a_fit_on_other_classes():
    """Other class labels (same count): the refit starts from zero, as a cold fit does."""
    X, codes = _data(3)
    params = dict(n_components=40, alpha=1e-3, tol=1e-12, kernel_params={"gamma": GAMMA})
    cold = NystromLogisticRegression(random_state=0, **params).fit(X, codes + 10)
    model = NystromLogisticRegression(warm_start=True, random_state=0, **params)
    model.fit(X, np.array(["a", "b", "c"])[codes]).fit(X, codes + 10)
    assert model.n_iter_ == cold.n_iter_
    np.testing.assert_allclose(model.dual_coef_, cold.dual_coef_, atol=1e-7)


def test_line_search_brings_back_a_start_far_from_the_minimum():
    """From α 30 times the minimizer, full Newton steps overshoot (the loss is nearly flat far
    out); the line search keeps J decreasing and reaches the cold fit's minimum."""
    X, y = _data(2)
    params = dict(n_components=40, alpha=1e-3, tol=1e-12, kernel_params={"gamma": GAMMA})
    cold = NystromLogisticRegression(random_state=0, **params).fit(X, y)
    model = NystromLogisticRegression(warm_start=True, random_state=0, max_iter=100, **params)
    model.fit(X, y)
    model.dual_coef_ = 30.0 * model.dual_coef_
    model.fit(X, y)
    assert np.all(np.diff(model.objective_) <= 1e-15)
    np.testing.assert_allclose(model.decision_function(X), cold.decision_function(X), atol=1e-6)
