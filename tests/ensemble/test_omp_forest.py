"""OMP forests: parity with scikit-learn's OMP on the tree dictionary, the least-squares limit,
NN-OMP's signs, staged predictions, the binary formulation, bad input, estimator checks.

Oracles: scikit-learn's forests (the same seeded forest refitted), ``orthogonal_mp`` on the
centred, normalised tree dictionary, ``LinearRegression`` on all trees (the least-squares limit,
with its intercept) and held-out samples, where the intercept changes predictions."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, make_classification
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, orthogonal_mp
from sklearn.utils.estimator_checks import parametrize_with_checks

from sparsekit.ensemble import OMPForestClassifier, OMPForestRegressor
from sparsekit.exceptions import UnknownComponentError


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    forest = RandomForestRegressor(n_estimators=60, max_depth=6, random_state=0).fit(X, y)
    return X, y, forest


@pytest.fixture(scope="module")
def diabetes_30_trees():
    X, y = load_diabetes(return_X_y=True)
    forest = RandomForestRegressor(n_estimators=30, max_depth=5, random_state=0).fit(X, y)
    return X, y, forest


def tree_matrix(forest, X):
    return np.column_stack([t.predict(X) for t in forest.estimators_])


def normalized_centred(T, y):
    Tc = T - T.mean(0)
    norms = np.linalg.norm(Tc, axis=0)
    return Tc / norms, y - y.mean(), norms


def test_regressor_matches_sklearn_omp_on_the_tree_dictionary(diabetes):
    X, y, forest = diabetes
    model = OMPForestRegressor(n_trees=12, forest=forest).fit(X, y)
    T = tree_matrix(forest, X)
    D, yc, norms = normalized_centred(T, y)
    alpha = orthogonal_mp(D, yc, n_nonzero_coefs=12)
    assert set(np.flatnonzero(alpha)) == set(model.selected_trees_.tolist())
    w = alpha / norms
    np.testing.assert_allclose(model.coef_, w, rtol=1e-7, atol=1e-12)
    expected = T @ w + (y.mean() - T.mean(0) @ w)
    np.testing.assert_allclose(model.predict(X), expected, rtol=1e-8)


def test_all_trees_selected_equals_least_squares_weighting(diabetes):
    X, y, _ = diabetes
    forest = RandomForestRegressor(n_estimators=15, max_depth=4, random_state=1).fit(X, y)
    model = OMPForestRegressor(n_trees=15, forest=forest).fit(X, y)
    assert model.n_trees_ == 15
    T = tree_matrix(forest, X)
    ls = LinearRegression().fit(T, y)
    np.testing.assert_allclose(model.predict(X), ls.predict(X[:, :0] if False else T), rtol=1e-7)
    np.testing.assert_allclose(model.coef_, ls.coef_, rtol=1e-6)


def test_nn_omp_weights_are_non_negative_where_omp_has_negative_ones(diabetes):
    X, y, forest = diabetes
    omp = OMPForestRegressor(n_trees=60, forest=forest).fit(X, y)
    nn = OMPForestRegressor(n_trees=60, forest=forest, solver="nn-omp").fit(X, y)
    assert omp.negative_weight_fraction_ > 0
    assert nn.negative_weight_fraction_ == 0
    assert np.all(nn.coef_ >= 0)
    assert nn.n_trees_ < 60  # the natural stop picks a smaller forest
    # every prefix solution is a non-negative least squares (Algorithm 7's k-step iterate)
    assert np.all(nn.path_coef_ >= 0)
    assert np.any(np.tril(omp.path_coef_) < 0)


def test_staged_predict_matches_refits_of_each_size(diabetes):
    X, y, forest = diabetes
    for solver in ("omp", "nn-omp"):
        model = OMPForestRegressor(n_trees=6, forest=forest, solver=solver).fit(X, y)
        staged = list(model.staged_predict(X[:50]))
        assert len(staged) == model.n_trees_
        for k in (1, 3, model.n_trees_):
            small = OMPForestRegressor(n_trees=k, forest=forest, solver=solver).fit(X, y)
            np.testing.assert_array_equal(small.selected_trees_, model.selected_trees_[:k])
            np.testing.assert_allclose(staged[k - 1], small.predict(X[:50]), rtol=1e-7)


def test_uniform_weights_average_the_selected_trees(diabetes):
    X, y, forest = diabetes
    model = OMPForestRegressor(n_trees=7, forest=forest, weights="uniform").fit(X, y)
    fitted = OMPForestRegressor(n_trees=7, forest=forest).fit(X, y)
    np.testing.assert_array_equal(model.selected_trees_, fitted.selected_trees_)
    mean = np.mean([t.predict(X) for t in model.estimators_], axis=0)
    np.testing.assert_allclose(model.predict(X), mean, rtol=1e-12)


def test_random_baseline_is_seeded_and_least_squares_weighted(diabetes):
    X, y, forest = diabetes
    a = OMPForestRegressor(n_trees=5, forest=forest, solver="random", random_state=3).fit(X, y)
    b = OMPForestRegressor(n_trees=5, forest=forest, solver="random", random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.selected_trees_, b.selected_trees_)
    T = tree_matrix(forest, X)[:, a.selected_trees_]
    np.testing.assert_allclose(a.predict(X), LinearRegression().fit(T, y).predict(T), rtol=1e-8)


def test_binary_classifier_is_the_signed_formulation():
    X, y = make_classification(n_samples=300, n_features=8, random_state=0)
    forest = RandomForestClassifier(n_estimators=40, max_depth=4, random_state=0).fit(X, y)
    model = OMPForestClassifier(n_trees=8, forest=forest).fit(X, y)
    T = np.column_stack([2 * t.predict_proba(X)[:, 1] - 1 for t in forest.estimators_])
    ys = np.where(y == 1, 1.0, -1.0)
    D, yc, norms = normalized_centred(T, ys)
    alpha = orthogonal_mp(D, yc, n_nonzero_coefs=8)
    w = alpha / norms
    score = T @ w + ys.mean() - T.mean(0) @ w
    np.testing.assert_allclose(model.decision_function(X), score, rtol=1e-7, atol=1e-10)
    np.testing.assert_array_equal(model.predict(X), np.where(score > 0, 1, 0))


def test_multiclass_shares_one_weight_per_tree():
    X, y = make_classification(
        n_samples=300, n_features=8, n_informative=5, n_classes=3, random_state=0
    )
    model = OMPForestClassifier(n_trees=10, n_estimators=40, random_state=0).fit(X, y)
    assert model.decision_function(X).shape == (300, 3)
    assert model.score(X, y) > 0.9
    assert np.count_nonzero(model.coef_) <= 10


def test_float32_input_and_prefit_forest_untouched(diabetes):
    X, y, forest = diabetes
    before = [t.tree_.value.copy() for t in forest.estimators_[:3]]
    model = OMPForestRegressor(n_trees=5, forest=FrozenEstimator(forest)).fit(
        X.astype(np.float32), y
    )
    assert model.predict(X.astype(np.float32)).shape == (X.shape[0],)
    for t, v in zip(forest.estimators_[:3], before):
        np.testing.assert_array_equal(t.tree_.value, v)


def test_bad_input(diabetes):
    X, y, forest = diabetes
    with pytest.raises(ValueError, match="not fitted"):
        OMPForestRegressor(forest=RandomForestRegressor()).fit(X, y)
    with pytest.raises(TypeError, match="forest"):
        OMPForestRegressor(forest=123).fit(X, y)
    with pytest.raises(ValueError, match="n_trees"):
        OMPForestRegressor(n_trees=0, forest=forest).fit(X, y)
    with pytest.raises(ValueError, match="weights"):
        OMPForestRegressor(weights="equal", forest=forest).fit(X, y)
    with pytest.raises(UnknownComponentError, match="nn-omp"):
        OMPForestRegressor(solver="nnomp_", forest=forest).fit(X, y)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        OMPForestRegressor().predict(X)
    model = OMPForestRegressor(n_trees=3, forest=forest).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :5])
    with pytest.raises(ValueError, match="features"):
        OMPForestRegressor(forest=forest).fit(X[:, :5], y)
    with pytest.raises(ValueError, match="single class"):
        OMPForestClassifier(n_trees=3, n_estimators=3).fit(X[:20], np.zeros(20))


@pytest.mark.parametrize("Pruned", [OMPForestRegressor, OMPForestClassifier])
def test_n_trees_larger_than_n_estimators_raises(Pruned):
    X, y = make_classification(80, 6, random_state=0)
    with pytest.raises(ValueError, match=r"n_trees=50 must be <= n_estimators=10"):
        Pruned(n_trees=50, n_estimators=10, random_state=0).fit(X, y)
    assert Pruned(n_trees=10, n_estimators=10, random_state=0).fit(X, y).n_trees_ <= 10


def test_n_trees_larger_than_a_given_forest_warns_and_clips(diabetes):
    X, y, forest = diabetes  # 60 trees
    with pytest.warns(UserWarning, match=r"n_trees=80 is larger than the given forest's 60"):
        model = OMPForestRegressor(n_trees=80, forest=forest).fit(X, y)
    assert model.n_trees_ == 60


@parametrize_with_checks(
    [
        OMPForestRegressor(n_trees=3, n_estimators=5, random_state=0),
        OMPForestClassifier(n_trees=3, n_estimators=5, random_state=0),
    ]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_solver_params_reach_the_solver_and_weights_refit_on_the_support(diabetes):
    """``solver_params`` are the solver's, not ignored: a user's ``n_nonzero_coefs`` wins over
    ``n_trees``. Oracle: scikit-learn's ``orthogonal_mp`` with 3 atoms on the centred,
    normalised tree dictionary; the weights are the least-squares refit (with intercept) of
    ``y`` on the selected trees' raw predictions (``LinearRegression``)."""
    X, y, forest = diabetes
    model = OMPForestRegressor(n_trees=10, forest=forest, solver_params={"n_nonzero_coefs": 3})
    model.fit(X, y)
    T = tree_matrix(forest, X)
    D, yc, _ = normalized_centred(T, y)
    support = np.flatnonzero(orthogonal_mp(D, yc, n_nonzero_coefs=3))
    assert model.n_trees_ == 3 and set(model.selected_trees_.tolist()) == set(support)
    ls = LinearRegression().fit(T[:, support], y)
    np.testing.assert_allclose(model.coef_[support], ls.coef_, rtol=1e-6)
    assert model.intercept_ == pytest.approx(ls.intercept_, rel=1e-6)


def test_negative_weight_fraction_is_over_the_selected_trees(diabetes):
    """``negative_weight_fraction_`` counts the selected trees only (dropped trees weigh 0).
    Oracle: the signs of scikit-learn's ``orthogonal_mp`` weights on the support."""
    X, y, forest = diabetes
    model = OMPForestRegressor(n_trees=30, forest=forest).fit(X, y)
    D, yc, _ = normalized_centred(tree_matrix(forest, X), y)
    alpha = orthogonal_mp(D, yc, n_nonzero_coefs=30)
    on_support = alpha[alpha != 0]
    assert on_support.size == 30 and 0 < np.mean(on_support < 0) < 1
    assert model.negative_weight_fraction_ == pytest.approx(np.mean(on_support < 0))


def test_random_baseline_name_is_case_insensitive(diabetes):
    """``"Random"`` names the baseline as ``"random"`` does (registry names are case- and
    blank-insensitive, DESIGN.md "The registry contract"). Oracle: the lower-case run."""
    X, y, forest = diabetes
    a = OMPForestRegressor(n_trees=5, forest=forest, solver="random", random_state=3).fit(X, y)
    b = OMPForestRegressor(n_trees=5, forest=forest, solver=" Random", random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.selected_trees_, b.selected_trees_)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-12)


def test_classes_are_the_forests_when_y_lacks_one():
    """A forest fitted on three classes keeps them all when the weights are learned on data of
    two: ``classes_`` and the scores are the forest's. Oracle: scikit-learn's forest
    ``classes_`` and ``predict_proba`` width."""
    X, y = make_classification(
        n_samples=300, n_features=8, n_informative=5, n_classes=3, random_state=0
    )
    forest = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0).fit(X, y)
    two = y != 2
    model = OMPForestClassifier(n_trees=5, forest=forest).fit(X[two], y[two])
    np.testing.assert_array_equal(model.classes_, forest.classes_)
    assert model.decision_function(X).shape == forest.predict_proba(X).shape
    assert set(model.predict(X)) <= set(forest.classes_.tolist())


def _omp_weights(T, y, k):
    Tc = T - T.mean(0)
    norms = np.linalg.norm(Tc, axis=0)
    alpha = orthogonal_mp(Tc / norms, y - y.mean(), n_nonzero_coefs=k)
    return alpha / norms


def test_default_n_trees_is_ten_omp_selected_trees(diabetes_30_trees):
    X, y, forest = diabetes_30_trees
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


def test_given_forest_is_kept_as_forest_(diabetes_30_trees):
    X, y, forest = diabetes_30_trees
    model = OMPForestRegressor(n_trees=4, forest=forest).fit(X, y)
    assert model.forest_ is forest
    assert all(
        model.forest_.estimators_[i] is t for i, t in zip(model.selected_trees_, model.estimators_)
    )


@pytest.mark.parametrize("n_estimators", [0, -3])
def test_n_estimators_below_one_is_refused_by_name(diabetes_30_trees, n_estimators):
    X, y, _ = diabetes_30_trees
    with pytest.raises(ValueError, match="n_estimators must be an integer >= 1"):
        OMPForestRegressor(n_trees=1, n_estimators=n_estimators).fit(X, y)


def test_n_trees_equal_to_the_forest_size_does_not_warn(diabetes_30_trees):
    X, y, forest = diabetes_30_trees
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = OMPForestRegressor(n_trees=30, forest=forest).fit(X, y)
    assert model.n_trees_ == 30


def test_predict_checks_the_feature_count_against_fit(diabetes_30_trees):
    X, y, forest = diabetes_30_trees
    model = OMPForestRegressor(n_trees=3, forest=forest).fit(X, y)
    with pytest.raises(ValueError, match="OMPForestRegressor is expecting 10 features"):
        model.predict(X[:, :5])
    assert model.n_features_in_ == 10


def test_regressor_with_every_tree_is_least_squares_on_held_out_samples(diabetes_30_trees):
    X, y, _ = diabetes_30_trees
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


def test_random_baseline_draws_with_random_state(diabetes_30_trees):
    """``solver="random"`` draws its trees with ``check_random_state(random_state)``."""
    X, y, forest = diabetes_30_trees
    for seed in (3, 4):
        model = OMPForestRegressor(
            n_trees=5, forest=forest, solver="random", random_state=seed
        ).fit(X, y)
        expected = np.random.RandomState(seed).choice(30, size=5, replace=False)
        np.testing.assert_array_equal(model.selected_trees_, expected)
