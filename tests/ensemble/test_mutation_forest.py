"""OMP forests: value tests for the parameters and rules a mutation run found unchecked.

Oracles: scikit-learn's forests (the same seeded forest refitted), ``orthogonal_mp`` on the
centred, normalised tree dictionary, ``LinearRegression`` on all trees (the least-squares limit,
with its intercept) and held-out samples, where the intercept changes predictions."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, make_classification
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LinearRegression, orthogonal_mp

from sparsekit.ensemble import OMPForestClassifier, OMPForestRegressor


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    forest = RandomForestRegressor(n_estimators=30, max_depth=5, random_state=0).fit(X, y)
    return X, y, forest


def _omp_weights(T, y, k):
    Tc = T - T.mean(0)
    norms = np.linalg.norm(Tc, axis=0)
    alpha = orthogonal_mp(Tc / norms, y - y.mean(), n_nonzero_coefs=k)
    return alpha / norms


def test_default_n_trees_is_ten_omp_selected_trees(diabetes):
    X, y, forest = diabetes
    model = OMPForestRegressor(forest=forest).fit(X, y)
    assert model.n_trees_ == 10
    T = np.column_stack([t.predict(X) for t in forest.estimators_])
    w = _omp_weights(T, y, 10)
    np.testing.assert_allclose(model.coef_, w, rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize(
    "Pruned, Forest, data",
    [
        (OMPForestRegressor, RandomForestRegressor, "reg"),
        (OMPForestClassifier, RandomForestClassifier, "clf"),
    ],
)
def test_fitted_forest_is_sklearns_with_n_estimators_and_random_state(Pruned, Forest, data):
    if data == "reg":
        X, y = load_diabetes(return_X_y=True)
    else:
        X, y = make_classification(n_samples=150, n_features=6, random_state=0)
    model = Pruned(n_trees=3, n_estimators=7, random_state=4, forest_params={"max_depth": 3}).fit(
        X, y
    )
    assert len(model.forest_.estimators_) == 7
    ref = Forest(n_estimators=7, max_depth=3, random_state=4).fit(X, y)
    for ours, theirs in zip(model.forest_.estimators_, ref.estimators_):
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    # another seed gives another forest
    other = Pruned(n_trees=3, n_estimators=7, random_state=5, forest_params={"max_depth": 3}).fit(
        X, y
    )
    assert any(
        not np.array_equal(a.predict(X), b.predict(X))
        for a, b in zip(model.forest_.estimators_, other.forest_.estimators_)
    )


def test_given_forest_is_kept_as_forest_(diabetes):
    X, y, forest = diabetes
    model = OMPForestRegressor(n_trees=4, forest=forest).fit(X, y)
    assert model.forest_ is forest
    assert all(
        model.forest_.estimators_[i] is t for i, t in zip(model.selected_trees_, model.estimators_)
    )


@pytest.mark.parametrize("n_estimators", [0, -3])
def test_n_estimators_below_one_is_refused_by_name(diabetes, n_estimators):
    X, y, _ = diabetes
    with pytest.raises(ValueError, match="n_estimators must be an integer >= 1"):
        OMPForestRegressor(n_trees=1, n_estimators=n_estimators).fit(X, y)


def test_n_trees_equal_to_the_forest_size_does_not_warn(diabetes):
    X, y, forest = diabetes
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = OMPForestRegressor(n_trees=30, forest=forest).fit(X, y)
    assert model.n_trees_ == 30


def test_predict_checks_the_feature_count_against_fit(diabetes):
    X, y, forest = diabetes
    model = OMPForestRegressor(n_trees=3, forest=forest).fit(X, y)
    with pytest.raises(ValueError, match="OMPForestRegressor is expecting 10 features"):
        model.predict(X[:, :5])
    assert model.n_features_in_ == 10


def test_regressor_with_every_tree_is_least_squares_on_held_out_samples(diabetes):
    X, y, _ = diabetes
    forest = RandomForestRegressor(n_estimators=12, max_depth=3, random_state=2).fit(
        X[:300], y[:300]
    )
    model = OMPForestRegressor(n_trees=12, forest=forest).fit(X[:300], y[:300])
    T = np.column_stack([t.predict(X) for t in forest.estimators_])
    ls = LinearRegression().fit(T[:300], y[:300])
    np.testing.assert_allclose(model.predict(X[300:]), ls.predict(T[300:]), rtol=1e-7)
    assert model.intercept_ == pytest.approx(ls.intercept_, rel=1e-6)
    staged = list(model.staged_predict(X[300:]))
    np.testing.assert_allclose(staged[-1], ls.predict(T[300:]), rtol=1e-7)


def test_binary_classifier_intercept_on_held_out_samples():
    """With every tree selected the binary score is the least-squares fit of the +-1 labels on
    ``2 P_i(1 | x) - 1`` with an intercept; on held-out samples (and for a forest fitted on
    other data) the intercept moves the decision, so it is checked there."""
    X, y = make_classification(
        n_samples=400, n_features=8, weights=[0.75], flip_y=0.1, random_state=1
    )
    forest = RandomForestClassifier(n_estimators=10, max_depth=1, random_state=0).fit(
        X[:100], y[:100]
    )
    model = OMPForestClassifier(n_trees=10, forest=forest).fit(X[100:300], y[100:300])
    T = np.column_stack([2 * t.predict_proba(X)[:, 1] - 1 for t in forest.estimators_])
    ys = np.where(y == 1, 1.0, -1.0)
    ls = LinearRegression().fit(T[100:300], ys[100:300])
    score = ls.predict(T[300:])
    np.testing.assert_allclose(model.decision_function(X[300:]), score, rtol=1e-7, atol=1e-10)
    np.testing.assert_array_equal(model.predict(X[300:]), np.where(score > 0, 1, 0))
    np.testing.assert_allclose(model.intercept_, [-ls.intercept_, ls.intercept_], rtol=1e-7)
    staged = list(model.staged_predict(X[300:]))
    np.testing.assert_array_equal(staged[-1], np.where(score > 0, 1, 0))
    # a classifier without intercept would differ on some held-out sample
    assert np.any((score > 0) != (score - ls.intercept_ > 0))


def test_binary_classifier_with_string_labels_keeps_the_label_order():
    X, y = make_classification(n_samples=200, n_features=6, random_state=3)
    labels = np.array(["no", "yes"])[y]
    forest = RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0).fit(X, labels)
    model = OMPForestClassifier(n_trees=8, forest=forest).fit(X, labels)
    T = np.column_stack([2 * t.predict_proba(X)[:, 1] - 1 for t in forest.estimators_])
    score = LinearRegression().fit(T, np.where(labels == "yes", 1.0, -1.0)).predict(T)
    np.testing.assert_array_equal(model.predict(X), np.where(score > 0, "yes", "no"))


def test_random_baseline_draws_with_random_state(diabetes):
    """``solver="random"`` draws its trees with ``check_random_state(random_state)``."""
    X, y, forest = diabetes
    for seed in (3, 4):
        model = OMPForestRegressor(
            n_trees=5, forest=forest, solver="random", random_state=seed
        ).fit(X, y)
        expected = np.random.RandomState(seed).choice(30, size=5, replace=False)
        np.testing.assert_array_equal(model.selected_trees_, expected)
