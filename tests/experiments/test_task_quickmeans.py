"""The ``quickmeans`` task: K-means and QuicK-means from the same start, and every metric of
a row against a direct computation."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist, pdist

from sparsekit.run import data as data_mod, run_task


@pytest.fixture(scope="module")
def digits():
    return data_mod.SOURCES["digits"](n_samples=200, scale=16.0, seed=0)


@pytest.mark.parametrize("K", [4, 6])
def test_unconstrained_factors_give_kmeans_from_the_same_start(digits, K):
    """With unconstrained factors QuicK-means is Lloyd's K-means: from the same start the two
    objectives agree (ratio 1); K-means from another start ends ~1 % away on these data."""
    km, qk = run_task(
        "quickmeans",
        {"n_clusters": K, "projection": "identity", "max_iter": 20, "palm_iter": 300, "n_eval": 0},
        digits,
        seed=1,
    )
    assert (km["algorithm"], qk["algorithm"]) == ("K-means", "QuicK-means")
    assert qk["objective"] / km["objective"] == pytest.approx(1.0, abs=1e-9)
    assert qk["nn1_accuracy"] == km["nn1_accuracy"]
    assert np.isnan(km["nystrom_error"]) and np.isnan(qk["nystrom_error"])


def test_rows_match_a_direct_computation(digits):
    from sklearn.cluster import KMeans

    from sparsekit import QuicKMeans
    from sparsekit.cluster.quickmeans import kmeans_plusplus

    X, y = digits["X"], digits["y"]
    K, seed, n_eval = 5, 3, 100
    params = {
        "n_clusters": K,
        "max_iter": 3,
        "palm_iter": 10,
        "n_eval": n_eval,
        "return_history": True,
    }
    km_row, qk_row = run_task("quickmeans", params, digits, seed=seed)
    perm = np.random.default_rng(seed).permutation(len(X))
    te, tr = perm[:40], perm[40:]  # 20 % of 200 points for the test set
    Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
    init = Xtr[kmeans_plusplus(Xtr, K, np.random.default_rng(seed))]
    km = KMeans(K, init=init, n_init=1, max_iter=3, tol=0, algorithm="lloyd").fit(Xtr)
    qk = QuicKMeans(K, init=init, max_iter=3, palm_iter=10, random_state=seed).fit(Xtr)

    def nn1(assign, labels):
        hits = 0
        for i, c in enumerate(assign):
            pool = np.flatnonzero(labels == c)
            hits += ytr[pool[cdist(Xte[i : i + 1], Xtr[pool]).argmin()]] == yte[i]
        return hits / len(te)

    def nystrom(landmarks):
        rng = np.random.default_rng(seed + 1)
        S = Xtr[rng.choice(len(Xtr), n_eval, replace=False)]
        gamma = 1.0 / np.mean(pdist(S[rng.choice(n_eval, n_eval, replace=False)], "sqeuclidean"))
        k = lambda A, B: np.exp(-gamma * cdist(A, B, "sqeuclidean"))  # noqa: E731
        G = k(S, S)
        approx = (
            k(S, landmarks)
            @ np.linalg.pinv(k(landmarks, landmarks), hermitian=True)
            @ k(landmarks, S)
        )
        return np.linalg.norm(G - approx) / np.linalg.norm(G)

    V = qk.cluster_centers_
    d = X.shape[1]
    assert km_row["objective"] == pytest.approx(km.inertia_, rel=1e-12)
    assert qk_row["objective"] == pytest.approx(qk.inertia_, rel=1e-12)
    assert qk_row["objective_history"] == pytest.approx(list(qk.objective_history_), rel=1e-12)
    assert (km_row["nnz"], km_row["flops"], km_row["compression"]) == (K * d, 2 * K * d, 1.0)
    assert (qk_row["nnz"], qk_row["flops"]) == (V.nnz, 2 * V.nnz)
    assert qk_row["compression"] == pytest.approx(K * d / V.nnz, rel=1e-12)
    assert km_row["nn1_accuracy"] == pytest.approx(nn1(km.predict(Xte), km.labels_), abs=1e-12)
    assert qk_row["nn1_accuracy"] == pytest.approx(nn1(qk.predict(Xte), qk.labels_), abs=1e-12)
    assert km_row["nystrom_error"] == pytest.approx(nystrom(km.cluster_centers_), rel=1e-6)
    assert qk_row["nystrom_error"] == pytest.approx(nystrom(qk.mean_ + V.toarray()), rel=1e-6)
    alone = run_task("quickmeans", {**params, "compare": False}, digits, seed=seed)
    assert [r["algorithm"] for r in alone] == ["QuicK-means"]
    assert alone[0]["objective"] == qk_row["objective"]


def test_isotropic_mixture_source():
    d = data_mod.load({"source": "isotropic-mixture", "n_samples": 2000, "n_features": 5}, seed=4)
    X, y = d["X"], d["y"]
    assert X.shape == (2000, 5) and set(y.tolist()) == set(range(10))
    centers = np.array([X[y == c].mean(axis=0) for c in range(10)])
    within = X - centers[y]
    assert within.var() == pytest.approx(1.0, rel=0.1)  # unit noise around the centers
    assert centers.std() == pytest.approx(3.0, rel=0.3)
    again = data_mod.isotropic_mixture(2000, 5, seed=4)
    assert np.array_equal(again["X"], X)


def test_more_clusters_than_training_points_is_a_clear_error(digits):
    with pytest.raises(ValueError, match="n_clusters=190 is more than the 160 training points"):
        run_task("quickmeans", {"n_clusters": 190}, digits)


def test_split_keeps_at_least_one_test_point():
    """Oracle: the protocol's rule recomputed with NumPy: the permutation of ``default_rng(s)``,
    its first max(1, ⌊f n⌋) indices for the test set (⌊0.05 · 10⌋ = 0 gives 1 point)."""
    from sparsekit.experiments.quickmeans import split

    X, y = np.arange(20.0).reshape(10, 2), np.arange(10)
    for fraction, n_test in ((0.05, 1), (0.2, 2), (0.5, 5)):
        Xtr, ytr, Xte, yte = split(X, y, np.random.default_rng(7), fraction)
        perm = np.random.default_rng(7).permutation(10)
        np.testing.assert_array_equal(yte, perm[:n_test])
        np.testing.assert_array_equal(ytr, perm[n_test:])
        np.testing.assert_array_equal(Xte, X[perm[:n_test]])
