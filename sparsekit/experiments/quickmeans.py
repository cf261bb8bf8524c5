"""The task ``quickmeans``: QuicK-means against K-means from the same start (Giffon, PhD thesis,
Aix-Marseille Université 2020, §3.3.5, Table 3.3).

The protocol for one data set ``(X, y)`` and the run's seed ``s``:

1. split: a permutation drawn from ``default_rng(s)`` puts ``test_fraction`` of the points
   (at least one) in the test set, the rest in the training set;
2. start: K-means++ centroids on the training points, drawn from ``default_rng(s)``
   (:func:`sparsekit.cluster.quickmeans.kmeans_plusplus`); K-means (scikit-learn, Lloyd,
   ``tol = 0``, ``max_iter`` iterations) and QuicK-means both start from them, so the two
   objectives compare the algorithms, not two draws of the start;
3. objective: the final K-means objective ``Σ_i min_k ‖x_i − u_k‖²`` on the training points
   (``inertia_`` of each estimator);
4. cost of the centroid operator: non-zeros ``nnz`` (``K·D`` for K-means' dense centroids,
   the factors' non-zeros for QuicK-means), FLOPs of one product (``2 nnz``) and the
   compression rate ``K·D / nnz``;
5. 1-NN accuracy with cluster-partitioned search: a test point goes to its nearest centroid,
   then takes the label of its nearest training point of that cluster (of all training points
   when the cluster has none);
6. Nyström error: ``‖K − C W⁺ Cᵀ‖_F / ‖K‖_F`` of the RBF kernel with the K centroids
   (``mean_ + cluster_centers_`` for QuicK-means) as landmarks, on ``n_eval`` training points
   drawn from ``default_rng(s + 1)``; ``γ = 1 / mean ‖x − x'‖²`` over the pairs of 1,000 of
   them; ``W⁺`` keeps the eigenvalues above ``λ_max · K · ε``;
7. fit time of each estimator.

One row per algorithm (``algorithm``: ``"K-means"``, ``"QuicK-means"``; ``compare = false``
leaves out the K-means row) with ``objective``, ``nnz``, ``flops``, ``compression``,
``nn1_accuracy``, ``nystrom_error`` (NaN with ``n_eval = 0``), ``fit_time``, ``n_iter`` and,
with ``return_history``, QuicK-means' ``objective_history`` (the objective after each
iteration).

Parameters ``sparsity``, ``n_factors``, ``projection`` (``"identity"``: unconstrained factors,
with which QuicK-means is Lloyd's K-means up to the refit's error), ``max_iter``,
``palm_iter`` and ``refit_iter`` go to :class:`sparsekit.QuicKMeans`; ``refit_iter`` defaults
to ``None`` here, the thesis' schedule (``palm_iter`` iterations at every refit).

Each run draws its split from its own seed, so a run does not depend on the runs before it
(a spec's runs are independent and resumable).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..run._rules import COUNT, FRACTION, NONNEGATIVE_INT, rules
from ..run.tasks import Task, TaskContext

#: points over which the RBF bandwidth of the Nyström error is measured
BANDWIDTH_SAMPLE = 1000


def split(X, y, rng, test_fraction):
    """``(X_train, y_train, X_test, y_test)``: a random permutation, the first
    ``max(1, int(test_fraction · n))`` points for the test set."""
    idx = rng.permutation(len(X))
    n_test = max(1, int(test_fraction * len(X)))
    return X[idx[n_test:]], y[idx[n_test:]], X[idx[:n_test]], y[idx[:n_test]]


def _sq_dist(A, B):
    d = np.einsum("ij,ij->i", A, A)[:, None] - 2.0 * (A @ B.T) + np.einsum("ij,ij->i", B, B)
    return np.maximum(d, 0.0, out=d)


def partitioned_1nn(assign_test, labels_train, X_train, y_train, X_test):
    """Labels of 1-NN restricted to the test point's cluster (step 5)."""
    pred = np.empty(len(X_test), dtype=y_train.dtype)
    for c in np.unique(assign_test):
        te = np.flatnonzero(assign_test == c)
        tr = np.flatnonzero(labels_train == c)
        if tr.size == 0:  # no training point in that cluster: nearest overall
            tr = np.arange(len(X_train))
        pred[te] = y_train[tr[_sq_dist(X_test[te], X_train[tr]).argmin(axis=1)]]
    return pred


def nystrom_error(X, landmarks, n_eval, rng):
    """Relative Frobenius error of the RBF Nyström approximation with ``landmarks`` on
    ``n_eval`` points of ``X`` (step 6)."""
    from ..components import get_kernel

    S = X[rng.choice(len(X), min(n_eval, len(X)), replace=False)]
    sub = S[rng.choice(len(S), min(len(S), BANDWIDTH_SAMPLE), replace=False)]
    sq = _sq_dist(sub, sub)
    gamma = 1.0 / sq[np.triu_indices(len(sub), 1)].mean()
    k = get_kernel("rbf", gamma=gamma)
    K = k(S)
    C = k(S, landmarks)
    w, U = np.linalg.eigh(k(landmarks))
    keep = w > w.max() * len(w) * np.finfo(float).eps
    Phi = C @ (U[:, keep] / np.sqrt(w[keep]))
    return float(np.linalg.norm(K - Phi @ Phi.T) / np.linalg.norm(K))


def _row(algorithm, est, centroids, nnz, fit_time, data, p, seed):
    X_train, y_train, X_test, y_test = data
    K, d = centroids.shape
    pred = partitioned_1nn(est.predict(X_test), est.labels_, X_train, y_train, X_test)
    err = (
        nystrom_error(X_train, centroids, p["n_eval"], np.random.default_rng(seed + 1))
        if p["n_eval"]
        else float("nan")
    )
    return {
        "algorithm": algorithm,
        "objective": float(est.inertia_),
        "nnz": int(nnz),
        "flops": 2 * int(nnz),
        "compression": K * d / nnz,
        "nn1_accuracy": float(np.mean(pred == y_test)),
        "nystrom_error": err,
        "fit_time": fit_time,
        "n_iter": int(est.n_iter_),
    }


def run_quickmeans(ctx: TaskContext) -> list[dict[str, Any]]:
    """Compare QuicK-means with K-means from the same start (the protocol above).

    Parameters
    ----------
    ctx : TaskContext
        The run's data (``X``, ``y``), parameters (``ctx.params``) and seed.

    Returns
    -------
    list of dict
        One row per algorithm (module docstring).
    """
    from sklearn.cluster import KMeans

    from ..cluster.quickmeans import QuicKMeans, kmeans_plusplus

    X, y = ctx.need("X", "y")
    p = ctx.params
    K = p["n_clusters"]
    X_train, y_train, X_test, y_test = data = split(
        X, np.asarray(y), np.random.default_rng(ctx.seed), p["test_fraction"]
    )
    if K > len(X_train):
        raise ValueError(
            f"quickmeans: n_clusters={K} is more than the {len(X_train)} training "
            "points; lower n_clusters or use more samples"
        )
    init = X_train[kmeans_plusplus(X_train, K, np.random.default_rng(ctx.seed))]
    rows = []
    if p["compare"]:
        t0 = time.perf_counter()
        km = KMeans(K, init=init, n_init=1, max_iter=p["max_iter"], tol=0, algorithm="lloyd").fit(
            X_train
        )
        t_km = time.perf_counter() - t0
        rows.append(
            _row("K-means", km, km.cluster_centers_, K * X.shape[1], t_km, data, p, ctx.seed)
        )
    t0 = time.perf_counter()
    qk = QuicKMeans(
        K,
        n_factors=p["n_factors"],
        sparsity=p["sparsity"],
        projection=p["projection"],
        init=init,
        max_iter=p["max_iter"],
        palm_iter=p["palm_iter"],
        refit_iter=p["refit_iter"],
        random_state=ctx.seed,
    ).fit(X_train)
    t_qk = time.perf_counter() - t0
    V = qk.cluster_centers_
    row = _row("QuicK-means", qk, qk.mean_ + V.toarray(), V.nnz, t_qk, data, p, ctx.seed)
    if p["return_history"]:
        row["objective_history"] = [float(g) for g in qk.objective_history_]
    rows.append(row)
    return rows


#: the task's parameters and their defaults (Table 3.3's settings)
PARAMS = {
    "n_clusters": 64,
    "sparsity": 3,
    "n_factors": None,
    "projection": "splincol",
    "max_iter": 50,
    "palm_iter": 300,
    "refit_iter": None,
    "test_fraction": 0.2,
    "n_eval": 5000,
    "compare": True,
    "return_history": False,
}


TASK = Task(
    "quickmeans",
    run_quickmeans,
    PARAMS,
    (),
    {},
    "QuicK-means against K-means from the same K-means++ start: objective, nnz, FLOPs, "
    "compression, 1-NN accuracy, Nyström error, fit time (a row per algorithm)",
    requires={"sklearn": "sparsekit[forest]"},
    check=rules(
        {
            **dict.fromkeys(
                ("n_clusters", "sparsity", "n_factors", "max_iter", "palm_iter", "refit_iter"),
                COUNT,
            ),
            "test_fraction": FRACTION,
            "n_eval": NONNEGATIVE_INT,
        }
    ),
)

__all__ = ["run_quickmeans"]
