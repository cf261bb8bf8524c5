"""QuicK-means against K-means: the rows of Table 3.3 of Giffon's thesis (§3.3.5).

For each dataset (scikit-learn's breast cancer and digits, and a generated Gaussian mixture
with N >= 100,000 points), K-means (scikit-learn, Lloyd) and QuicK-means start from the same
K-means++ centroids and report:

- the final K-means objective;
- the non-zeros and FLOPs (2 · nnz) of the centroid operator and the compression rate
  (K-means' K·D over QuicK-means' nnz);
- 1-NN accuracy with cluster-partitioned search: a test point goes to its nearest centroid
  (through the operator), then to its nearest training point of that cluster;
- the Nyström relative Frobenius error ``‖K − K̃‖_F / ‖K‖_F`` of the RBF kernel
  (γ = 1 / mean squared distance) with the K centroids as landmarks, on 5,000 training points.

It writes ``quickmeans_objective.png`` (objective against iteration), ``quickmeans_flops.png``
(FLOPs against K) and ``quickmeans.md`` (the table) to ``--out`` (default
``examples/output/``). ``--quick`` runs tiny sizes.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import sparsekit
from sparsekit.cluster.quickmeans import kmeans_plusplus


def datasets(quick):
    from sklearn.datasets import load_breast_cancer, load_digits

    rng = np.random.default_rng(0)
    X, y = load_breast_cancer(return_X_y=True)
    Xd, yd = load_digits(return_X_y=True)
    n_gen = 3_000 if quick else 120_000
    centers = rng.standard_normal((10, 54)) * 3
    yg = rng.integers(10, size=n_gen)
    Xg = centers[yg] + rng.standard_normal((n_gen, 54))
    out = [("breast cancer", X, y, 64), ("digits", Xd, yd, 64), (f"mixture N={n_gen:,}", Xg, yg, 64)]
    if quick:
        out = [(name, X[:300], y[:300], 8) for name, X, y, _ in out]
    return out


def split(X, y, rng, test=0.2):
    idx = rng.permutation(len(X))
    n_test = max(1, int(test * len(X)))
    return X[idx[n_test:]], y[idx[n_test:]], X[idx[:n_test]], y[idx[:n_test]]


def partitioned_1nn(assign_test, train_labels, Xtr, ytr, Xte):
    """Accuracy-ready predictions of 1-NN restricted to the test point's cluster."""
    pred = np.empty(len(Xte), dtype=ytr.dtype)
    for c in np.unique(assign_test):
        te = np.flatnonzero(assign_test == c)
        tr = np.flatnonzero(train_labels == c)
        if tr.size == 0:  # no training point in that cluster: nearest overall
            tr = np.arange(len(Xtr))
        d = ((Xte[te, None, :] - Xtr[None, tr, :]) ** 2).sum(-1)
        pred[te] = ytr[tr[d.argmin(1)]]
    return pred


def nystrom_error(X, landmarks, n_eval, rng):
    S = X[rng.choice(len(X), min(n_eval, len(X)), replace=False)]
    sub = S[rng.choice(len(S), min(len(S), 1000), replace=False)]
    sq = ((sub[:, None, :] - sub[None]) ** 2).sum(-1)
    gamma = 1.0 / sq[np.triu_indices(len(sub), 1)].mean()
    k = sparsekit.get_kernel("rbf", gamma=gamma)
    K = k(S)
    C = k(S, landmarks)
    W = k(landmarks)
    w, U = np.linalg.eigh(W)
    keep = w > w.max() * len(w) * np.finfo(float).eps
    Phi = C @ (U[:, keep] / np.sqrt(w[keep]))
    return float(np.linalg.norm(K - Phi @ Phi.T) / np.linalg.norm(K))


def run_dataset(name, X, y, K, args, rng):
    from sklearn.cluster import KMeans

    Xtr, ytr, Xte, yte = split(X, y, rng)
    init = Xtr[kmeans_plusplus(Xtr, K, np.random.default_rng(0))]
    t0 = time.perf_counter()
    km = KMeans(K, init=init, n_init=1, max_iter=args.max_iter, tol=0, algorithm="lloyd").fit(Xtr)
    t_km = time.perf_counter() - t0
    t0 = time.perf_counter()
    qk = sparsekit.QuicKMeans(K, sparsity=args.sparsity, init=init, max_iter=args.max_iter,
                              palm_iter=args.palm_iter).fit(Xtr)
    t_qk = time.perf_counter() - t0
    V = qk.cluster_centers_
    d = X.shape[1]
    acc_km = np.mean(partitioned_1nn(km.predict(Xte), km.labels_, Xtr, ytr, Xte) == yte)
    acc_qk = np.mean(partitioned_1nn(qk.predict(Xte), qk.labels_, Xtr, ytr, Xte) == yte)
    n_eval = 500 if args.quick else 5_000
    err_km = nystrom_error(Xtr, km.cluster_centers_, n_eval, np.random.default_rng(1))
    err_qk = nystrom_error(Xtr, qk.mean_ + V.toarray(), n_eval, np.random.default_rng(1))
    rows = [
        dict(dataset=name, algorithm="K-means", objective=f"{km.inertia_:.4e}",
             nnz=f"{K * d:,}", flops=f"{2 * K * d:,}", compression="1.0", nn1=f"{acc_km:.4f}",
             nystrom=f"{err_km:.2e}", fit_s=f"{t_km:.2f}"),
        dict(dataset=name, algorithm="QuicK-means", objective=f"{qk.inertia_:.4e}",
             nnz=f"{V.nnz:,}", flops=f"{V.flops:,}", compression=f"{K * d / V.nnz:.1f}",
             nn1=f"{acc_qk:.4f}", nystrom=f"{err_qk:.2e}", fit_s=f"{t_qk:.2f}"),
    ]
    return rows, qk, km


COLUMNS = ["dataset", "algorithm", "objective", "nnz", "flops", "compression", "nn1", "nystrom",
           "fit_s"]


def markdown(rows):
    head = "| " + " | ".join(COLUMNS) + " |"
    sep = "|" + "|".join("---" for _ in COLUMNS) + "|"
    body = ["| " + " | ".join(str(r[c]) for c in COLUMNS) + " |" for r in rows]
    return "\n".join([head, sep, *body])


def plot_objective(curves, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(4 * len(curves), 3.2))
    for ax, (name, hist, km_obj) in zip(np.atleast_1d(axes), curves):
        ax.plot(np.arange(1, len(hist) + 1), hist, "o-", ms=3, label="QuicK-means")
        ax.axhline(km_obj, color="k", ls="--", lw=1, label="K-means (final)")
        ax.set_title(name)
        ax.set_xlabel("iteration")
        ax.set_ylabel("objective")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_flops(ks, qk_flops, d, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    ax.plot(ks, [2 * k * d for k in ks], "s-", label="K-means (2KD)")
    ax.plot(ks, qk_flops, "o-", label="QuicK-means (2 nnz)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("K")
    ax.set_ylabel("FLOPs per point")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "output"),
                    help="directory for the PNG figures and the table")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (seconds)")
    args = ap.parse_args(argv)
    args.sparsity = 3
    args.max_iter = 3 if args.quick else 50
    args.palm_iter = 10 if args.quick else 300
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    rows, curves = [], []
    data = datasets(args.quick)
    for name, X, y, K in data:
        r, qk, km = run_dataset(name, X, y, K, args, rng)
        rows += r
        curves.append((name, qk.objective_history_, km.inertia_))
    table = markdown(rows)
    print(table)
    (out / "quickmeans.md").write_text(table + "\n")
    plot_objective(curves, out / "quickmeans_objective.png")
    # FLOPs against K on the generated mixture
    name, X, _, _ = data[-1]
    ks = [2, 4, 8] if args.quick else [8, 16, 32, 64, 128, 256]
    sub = X[: (300 if args.quick else 20_000)]
    flops = [sparsekit.QuicKMeans(k, sparsity=args.sparsity, max_iter=min(args.max_iter, 10),
                                  palm_iter=args.palm_iter, random_state=0).fit(sub)
             .cluster_centers_.flops for k in ks]
    plot_flops(ks, flops, X.shape[1], out / "quickmeans_flops.png")
    for f in ("quickmeans.md", "quickmeans_objective.png", "quickmeans_flops.png"):
        print(f"wrote {out / f}")
    return rows


if __name__ == "__main__":
    main()
