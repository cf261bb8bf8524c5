"""NystromRidge and NystromRidgeClassifier against outside oracles.

Oracles: scikit-learn's ``KernelRidge`` (every sample a landmark), ``Nystroem`` + ``Ridge`` /
``RidgeClassifier`` with the same landmarks, the closed form of the normal equations in dense
NumPy (pseudo-inverse), and a conjugate gradient written here on the dense preconditioned
matrix.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import cholesky, solve_triangular
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV

from sparsekit import NystromRidge, NystromRidgeClassifier, UnknownComponentError
from sparsekit.exceptions import NotPositiveDefiniteError
from sparsekit.samplers.base import Landmarks

GAMMA = 0.3


def _data(n=240, d=4, seed=0, outputs=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    if outputs:
        y = np.column_stack([y * (j + 1) + j for j in range(outputs)])
    return X, y


def _closed_form(X, y, indices, lam, gamma=GAMMA):
    """α = (K_nmᵀ K_nm + λ n K_mm)⁺ K_nmᵀ y (Rudi et al. 2017, Eq. 6), in dense NumPy."""
    L = X[indices]
    K_nm, K_mm = rbf_kernel(X, L, gamma=gamma), rbf_kernel(L, L, gamma=gamma)
    H = K_nm.T @ K_nm + lam * len(X) * K_mm
    return np.linalg.pinv(H, hermitian=True) @ (K_nm.T @ y), L


def _model(**params):
    base = dict(kernel_params={"gamma": GAMMA}, tol=1e-12, max_iter=500, random_state=0)
    base.update(params)
    return NystromRidge(**base)


class _FixedSampler:
    """A sampler object returning given positions (duplicates allowed)."""

    def __init__(self, indices):
        self.indices = np.asarray(indices)

    def sample(self, X, kernel, n_landmarks, random_state=None):
        return Landmarks(self.indices, X[self.indices], np.ones(len(self.indices)))


@pytest.mark.parametrize("solver", ["pcg", "direct"])
def test_every_sample_a_landmark_is_sklearn_kernel_ridge(solver):
    """m = n: KernelRidge(alpha = λ n) (scikit-learn), to 1e-6."""
    X, y = _data()
    lam = 1e-3
    model = _model(n_components=len(X), alpha=lam, solver=solver).fit(X, y)
    ref = KernelRidge(alpha=lam * len(X), kernel="rbf", gamma=GAMMA).fit(X, y)
    X_test, _ = _data(n=50, seed=1)
    np.testing.assert_allclose(model.predict(X_test), ref.predict(X_test), atol=1e-6)


@pytest.mark.parametrize("solver", ["pcg", "direct"])
@pytest.mark.parametrize("lam", [1e-6, 1e-3, 1.0])
def test_fewer_landmarks_is_the_closed_form_and_nystroem_plus_ridge(solver, lam):
    """m < n: the dense closed form, and scikit-learn's Nystroem + Ridge(alpha = λ n,
    fit_intercept=False) on the same landmarks, to 1e-6."""
    X, y = _data()
    model = _model(n_components=40, alpha=lam, solver=solver).fit(X, y)
    coef, L = _closed_form(X, y, model.component_indices_, lam)
    X_test, _ = _data(n=60, seed=2)
    expected = rbf_kernel(X_test, L, gamma=GAMMA) @ coef
    np.testing.assert_allclose(model.predict(X_test), expected, atol=1e-6)
    features = SkNystroem(kernel="rbf", gamma=GAMMA, n_components=len(L)).fit(L)
    ridge = Ridge(alpha=lam * len(X), fit_intercept=False).fit(features.transform(X), y)
    np.testing.assert_allclose(
        model.predict(X_test), ridge.predict(features.transform(X_test)), atol=1e-6
    )


@pytest.mark.parametrize("solver", ["pcg", "direct"])
def test_several_outputs_are_the_single_output_fits(solver):
    """Invariance: a column of a multi-output fit is the fit of that column alone."""
    X, Y = _data(outputs=3)
    multi = _model(n_components=30, alpha=1e-4, solver=solver).fit(X, Y)
    assert multi.dual_coef_.shape == (30, 3)
    assert multi.predict(X).shape == (len(X), 3)
    for j in range(3):
        single = _model(n_components=30, alpha=1e-4, solver=solver).fit(X, Y[:, j])
        assert single.dual_coef_.shape == (30,)
        np.testing.assert_allclose(multi.predict(X)[:, j], single.predict(X), atol=1e-7)


def _reference_pcg(X, y, indices, lam, tol, max_iter):
    """FALKON's preconditioned CG written densely (Rudi et al. 2017, Alg. 1): W and b formed
    as matrices, plain Hestenes-Stiefel CG; iterations to reach ``tol`` and α."""
    n, L = len(X), X[indices]
    K_nm, K_mm = rbf_kernel(X, L, gamma=GAMMA), rbf_kernel(L, L, gamma=GAMMA)
    m = len(L)
    T = cholesky(K_mm + m * np.finfo(float).eps * np.eye(m))
    A = cholesky(T @ T.T / m + lam * np.eye(m))
    B = solve_triangular(T, solve_triangular(A, np.eye(m)))  # T⁻¹ A⁻¹
    W = B.T @ (K_nm.T @ K_nm / n + lam * K_mm + lam * m * np.finfo(float).eps * np.eye(m)) @ B
    b = B.T @ K_nm.T @ y / n
    x, r = np.zeros(m), b.copy()
    p, rs = r.copy(), r @ r
    for it in range(1, max_iter + 1):
        Wp = W @ p
        a = rs / (p @ Wp)
        x, r = x + a * p, r - a * Wp
        rs, rs_old = r @ r, rs
        if np.sqrt(rs) <= tol * np.linalg.norm(b):
            return it, B @ x
        p = r + rs / rs_old * p
    return max_iter, B @ x


@pytest.mark.parametrize("lam", [1e-2, 1e-3, 1.0 / 240])
def test_iterations_match_a_dense_preconditioned_cg(lam):
    """The number of iterations to reach tol equals that of the same preconditioned CG on the
    dense W (written here), within one, and stays <= 30 for λ >= 1/n."""
    X, y = _data()
    tol = 1e-6
    model = _model(n_components=60, alpha=lam, tol=tol).fit(X, y)
    iterations, coef = _reference_pcg(X, y, model.component_indices_, lam, tol, 500)
    assert abs(model.n_iter_ - iterations) <= 1
    assert model.n_iter_ <= 30
    assert model.residuals_[-1] <= tol < model.residuals_[-2]
    assert len(model.residuals_) == model.n_iter_ + 1
    np.testing.assert_allclose(model.dual_coef_, coef, rtol=1e-4, atol=1e-6 * np.abs(coef).max())


def test_duplicate_landmarks_predict_as_the_pseudo_inverse_solution():
    """K_mm singular (a landmark repeated): predictions of the pinv closed form."""
    X, y = _data()
    indices = np.r_[np.arange(20), [3, 3, 7]]
    for solver in ("pcg", "direct"):
        model = _model(sampler=_FixedSampler(indices), alpha=1e-3, solver=solver).fit(X, y)
        assert model.jitter_ > 0
        coef, L = _closed_form(X, y, indices, 1e-3)
        np.testing.assert_allclose(
            model.predict(X), rbf_kernel(X, L, gamma=GAMMA) @ coef, atol=1e-6
        )


def test_an_indefinite_kernel_is_refused():
    """The sigmoid kernel's landmark Gram has negative eigenvalues far below rounding."""
    X, y = _data()
    model = NystromRidge(
        kernel="sigmoid", kernel_params={"gamma": 2.0, "coef0": -1.0}, n_components=40
    )
    with pytest.raises(NotPositiveDefiniteError, match="not positive semi-definite"):
        model.fit(X, y)


def test_max_iter_is_a_bound_and_warns_as_sklearn():
    """max_iter caps the iterations; unconverged CG warns with scikit-learn's class."""
    X, y = _data()
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        model = _model(n_components=60, alpha=1e-6, max_iter=3).fit(X, y)
    assert model.n_iter_ == 3
    assert len(model.residuals_) == 4


def test_tol_is_obeyed():
    """A looser tol stops earlier, at a residual below it."""
    X, y = _data()
    loose = _model(n_components=60, alpha=1e-4, tol=1e-3).fit(X, y)
    tight = _model(n_components=60, alpha=1e-4, tol=1e-10).fit(X, y)
    assert loose.n_iter_ < tight.n_iter_
    assert loose.residuals_[-1] <= 1e-3
    assert tight.residuals_[-1] <= 1e-10


def test_warm_start_starts_from_the_previous_solution():
    """A refit with warm_start from the converged solution needs no iteration; without
    warm_start it starts over."""
    X, y = _data()
    model = _model(n_components=60, alpha=1e-4, tol=1e-8, warm_start=True).fit(X, y)
    first = model.dual_coef_.copy()
    assert model.n_iter_ > 3
    model.fit(X, y)
    assert model.n_iter_ <= 1
    np.testing.assert_allclose(model.dual_coef_, first, rtol=1e-6, atol=1e-9)
    model.set_params(warm_start=False).fit(X, y)
    assert model.n_iter_ > 3


def test_callback_sees_every_iterate():
    """callback(iteration, dual_coef) runs once per iteration; its last α is dual_coef_."""
    X, y = _data()
    seen = []
    model = _model(
        n_components=60, alpha=1e-4, tol=1e-8, callback=lambda it, c: seen.append((it, c.copy()))
    ).fit(X, y)
    assert [it for it, _ in seen] == list(range(1, model.n_iter_ + 1))
    np.testing.assert_allclose(seen[-1][1][:, 0], model.dual_coef_)
    errors = [
        np.mean((rbf_kernel(X, model.components_, gamma=GAMMA) @ c - y[:, None]) ** 2)
        for _, c in seen
    ]
    assert errors[-1] < errors[0]


def test_float32_sparse_and_pandas_inputs():
    """float32 predictions stay float32 (close to float64); scipy.sparse and pandas inputs give
    the dense answer."""
    X, y = _data()
    ref = _model(n_components=40, alpha=1e-3).fit(X, y)
    m32 = _model(n_components=40, alpha=1e-3, tol=1e-6).fit(X.astype(np.float32), y)
    pred = m32.predict(X.astype(np.float32))
    assert pred.dtype == np.float32
    np.testing.assert_allclose(pred, ref.predict(X), atol=2e-3)
    sparse = _model(n_components=40, alpha=1e-3).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.predict(sp.csr_matrix(X)), ref.predict(X), atol=1e-8)
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=list("abcd"))
    named = _model(n_components=40, alpha=1e-3).fit(frame, pd.Series(y))
    np.testing.assert_allclose(named.predict(frame), ref.predict(X), atol=1e-8)
    assert list(named.feature_names_in_) == list("abcd")
    with pytest.raises(ValueError, match="feature names"):
        named.predict(frame[list("dcba")])


@pytest.mark.parametrize(
    "sampler", ["uniform", "rls", "dac-rls", "recursive-rls", "greedy-trace", "kmeans-pp", "bless"]
)
def test_every_sampler_gives_the_closed_form_on_its_landmarks(sampler):
    """Whatever sampler chose the landmarks, the fit is the closed form on them."""
    X, y = _data(n=200)
    params = {} if sampler in ("uniform", "greedy-trace", "kmeans-pp") else {"lam": 1e-2}
    model = _model(n_components=30, alpha=1e-3, sampler=sampler, sampler_params=params)
    model.fit(X, y)
    assert len(model.component_indices_) <= 30
    coef, L = _closed_form(X, y, model.component_indices_, 1e-3)
    np.testing.assert_allclose(model.predict(X), rbf_kernel(X, L, gamma=GAMMA) @ coef, atol=1e-6)


def test_classifier_is_ridge_classifier_on_the_same_features():
    """Two and three classes of string labels: decision values of scikit-learn's
    RidgeClassifier(alpha = λ n, fit_intercept=False) on Nystroem features of the landmarks."""
    X, _ = _data(n=300)
    lam = 1e-3
    for labels in (np.array(["no", "yes"]), np.array(["a", "b", "c"])):
        codes = (X[:, 0] > 0).astype(int) + (len(labels) == 3) * (X[:, 1] > 0.5)
        y = labels[codes]
        clf = NystromRidgeClassifier(
            n_components=50,
            alpha=lam,
            tol=1e-12,
            max_iter=500,
            kernel_params={"gamma": GAMMA},
            random_state=0,
        ).fit(X, y)
        L = clf.components_
        features = SkNystroem(kernel="rbf", gamma=GAMMA, n_components=len(L)).fit(L)
        ref = RidgeClassifier(alpha=lam * len(X), fit_intercept=False)
        ref.fit(features.transform(X), y)
        np.testing.assert_array_equal(clf.classes_, ref.classes_)
        np.testing.assert_allclose(
            clf.decision_function(X), ref.decision_function(features.transform(X)), atol=1e-6
        )
        np.testing.assert_array_equal(clf.predict(X), ref.predict(features.transform(X)))
        assert clf.score(X, y) == pytest.approx(ref.score(features.transform(X), y))


def test_grid_search_over_alpha_kernel_and_sampler():
    """GridSearchCV clones and refits over λ, the kernel's gamma and the sampler by name."""
    X, _ = _data(n=200, d=2)
    y = np.sin(2.0 * X[:, 0])  # far from linear: the wide kernel (gamma 0.01) underfits
    search = GridSearchCV(
        NystromRidge(n_components=30, random_state=0),
        {
            "alpha": [1e-6, 1e-2],
            "kernel_params": [{"gamma": 0.01}, {"gamma": GAMMA}],
            "sampler": ["uniform", "kmeans-pp"],
        },
        cv=3,
    ).fit(X, y)
    assert search.best_params_["kernel_params"] == {"gamma": GAMMA}
    assert search.best_score_ > 0.8
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert len(search.cv_results_["params"]) == 8


@pytest.mark.parametrize(
    "params, X_bad, y_bad, match",
    [
        ({"alpha": 0.0}, None, None, "alpha"),
        ({"alpha": -1.0}, None, None, "alpha"),
        ({"solver": "cholesky"}, None, None, "solver"),
        ({"max_iter": 0}, None, None, "max_iter"),
        ({"tol": -1.0}, None, None, "tol"),
        ({"sampler": "unifrom"}, None, None, "uniform"),
        ({}, "nan", None, "NaN"),
        ({}, None, "short", "y has 239 samples but X has 240"),
        ({}, None, "inf", "y"),
    ],
)
def test_bad_input_names_the_argument(params, X_bad, y_bad, match):
    X, y = _data()
    if X_bad == "nan":
        X = X.copy()
        X[3, 1] = np.nan
    if y_bad == "short":
        y = y[:-1]
    if y_bad == "inf":
        y = y.copy()
        y[0] = np.inf
    with pytest.raises((ValueError, TypeError, UnknownComponentError), match=match):
        NystromRidge(n_components=20, **params).fit(X, y)


def test_predict_refuses_other_widths_and_unfitted_use():
    X, y = _data()
    model = NystromRidge(n_components=20)
    with pytest.raises(ValueError, match="not fitted"):
        model.predict(X)
    model.fit(X, y)
    with pytest.raises(ValueError, match="3 features"):
        model.predict(X[:, :3])


def test_more_landmarks_than_samples_warns_and_uses_them_all():
    X, y = _data(n=30)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = _model(n_components=50, alpha=1e-3).fit(X, y)
    (warning,) = [w for w in caught if "larger than the number of samples" in str(w.message)]
    assert warning.filename == __file__  # it points at the caller's line
    assert sorted(model.component_indices_) == list(range(30))


def test_given_landmark_points_are_the_sampler_fit_on_the_same_points():
    """landmarks= rows of X: the fit of a sampler choosing those rows (closed form); no
    indices."""
    X, y = _data()
    idx = np.arange(0, 240, 8)
    given = _model(landmarks=X[idx], alpha=1e-3).fit(X, y)
    assert given.component_indices_ is None
    coef, L = _closed_form(X, y, idx, 1e-3)
    np.testing.assert_allclose(given.predict(X), rbf_kernel(X, L, gamma=GAMMA) @ coef, atol=1e-6)
    with pytest.raises(ValueError, match="landmarks has 3 features but X has 4"):
        _model(landmarks=X[idx, :3]).fit(X, y)
    with pytest.raises(ValueError, match="kmeans"):
        _model(landmarks="kmean").fit(X, y)


def test_kmeans_centroid_landmarks_are_sklearn_kmeans_centroids():
    """landmarks="kmeans": the centroids of scikit-learn's KMeans (one k-means++ start, seed
    drawn from random_state), then the closed form on them; on clustered data they approximate
    the kernel better than uniform landmarks (Giffon 2020, Table 3.3)."""
    from sklearn.cluster import KMeans
    from sklearn.datasets import make_blobs

    X, labels = make_blobs(600, n_features=4, centers=12, cluster_std=0.6, random_state=0)
    y = np.sin(X[:, 0]) + labels % 3
    y = y - y.mean()
    model = _model(landmarks="kmeans", n_components=12, alpha=1e-4, random_state=3).fit(X, y)
    seed = int(np.random.default_rng(3).integers(2**31))
    centres = KMeans(12, n_init=1, random_state=seed).fit(X).cluster_centers_
    np.testing.assert_allclose(model.components_, centres, atol=1e-10)
    K_nm, K_mm = rbf_kernel(X, centres, gamma=GAMMA), rbf_kernel(centres, centres, gamma=GAMMA)
    coef = np.linalg.pinv(K_nm.T @ K_nm + 1e-4 * len(X) * K_mm) @ (K_nm.T @ y)
    np.testing.assert_allclose(model.predict(X), K_nm @ coef, atol=1e-6)

    def nystrom_error(L):
        K = rbf_kernel(X, X, gamma=GAMMA)
        K_nL = rbf_kernel(X, L, gamma=GAMMA)
        return np.linalg.norm(K - K_nL @ np.linalg.pinv(rbf_kernel(L, L, gamma=GAMMA)) @ K_nL.T)

    uniform = [
        nystrom_error(X[np.random.default_rng(s).choice(600, 12, replace=False)]) for s in range(5)
    ]
    assert nystrom_error(model.components_) < min(uniform)


def test_quickmeans_centroid_landmarks():
    """landmarks="quickmeans": QuicKMeans' centroids (mean_ + the factored centres)."""
    from sparsekit import QuicKMeans

    X, y = _data()
    model = _model(landmarks="quickmeans", n_components=8, alpha=1e-3, random_state=0).fit(X, y)
    km = QuicKMeans(8, random_state=0).fit(X)
    np.testing.assert_allclose(model.components_, km.mean_ + km.cluster_centers_.toarray())
    assert model.component_indices_ is None and model.dual_coef_.shape == (8,)


def test_warm_start_with_given_landmarks():
    """warm_start compares the landmark points when they are not samples."""
    X, y = _data()
    model = _model(landmarks=X[::6], alpha=1e-4, tol=1e-8, warm_start=True).fit(X, y)
    assert model.n_iter_ > 3
    model.fit(X, y)
    assert model.n_iter_ <= 1
    model.set_params(landmarks=X[1::6]).fit(X, y)
    assert model.n_iter_ > 3


def test_precomputed_kernel_is_the_fit_on_the_vectors():
    """kernel="precomputed": fit on the training Gram matrix, predict from the test-by-training
    kernel; equal to the fit on the vectors with the same landmarks (scikit-learn's rbf_kernel
    gives both Gram matrices)."""
    X, y = _data()
    X_test, _ = _data(n=50, seed=3)
    K, K_test = rbf_kernel(X, X, gamma=GAMMA), rbf_kernel(X_test, X, gamma=GAMMA)
    pre = NystromRidge(
        kernel="precomputed", n_components=40, alpha=1e-3, tol=1e-10, random_state=0
    ).fit(K, y)
    vec = _model(landmarks=X[pre.component_indices_], alpha=1e-3, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(pre.predict(K_test), vec.predict(X_test), atol=1e-8)
    with pytest.raises(ValueError, match="square"):
        NystromRidge(kernel="precomputed", n_components=10).fit(K[:, :100], y)


@pytest.mark.parametrize("kernel", ["rbf", "function"])
@pytest.mark.parametrize("solver", ["pcg", "direct"])
def test_many_small_blocks_give_the_closed_form(monkeypatch, kernel, solver):
    """Row blocks of 7 rows (a short last one) written into one reused buffer (kernel objects
    take out=, a function kernel through its wrapper too): the closed form, and predictions in
    blocks."""
    from sparsekit.learning import _passes, ridge as ridge_module

    X, y = _data()
    monkeypatch.setattr(_passes, "BLOCK_BYTES", 8 * 30 * 7)
    monkeypatch.setattr(ridge_module, "DIRECT_BLOCK_BYTES", 8 * 30 * 9)
    spec = "rbf" if kernel == "rbf" else (lambda A, B: rbf_kernel(A, B, gamma=GAMMA))
    model = NystromRidge(
        kernel=spec,
        kernel_params={"gamma": GAMMA} if kernel == "rbf" else None,
        n_components=30,
        alpha=1e-3,
        solver=solver,
        tol=1e-12,
        max_iter=500,
        random_state=0,
    ).fit(X, y)
    coef, L = _closed_form(X, y, model.component_indices_, 1e-3)
    np.testing.assert_allclose(model.predict(X), rbf_kernel(X, L, gamma=GAMMA) @ coef, atol=1e-6)
