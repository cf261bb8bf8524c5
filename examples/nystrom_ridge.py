"""Kernel ridge regression and classification at scale: NystromRidge, its classifiers, samplers.
==============================================================================================

Nyström kernel ridge regression solved FALKON's way (Rudi, Carratino & Rosasco, NeurIPS 2017):
landmarks from a named sampler, a Cholesky preconditioner on the landmarks, then conjugate
gradient with one pass over the data per iteration and no n × m matrix.

1. Regression on Friedman's #1 problem (scikit-learn's ``make_friedman1``, 10 features, noise
   1): test error of ``NystromRidge`` against the number of landmarks for several samplers,
   next to scikit-learn's ``Nystroem`` + ``Ridge`` pipeline on the same landmarks (its error
   must be the same; its time and memory are not).
2. The test error after each conjugate gradient iteration (the ``callback`` argument), as
   FALKON's ``error_fn``: a handful of iterations reach the final error.
3. Classification of scikit-learn's digits: ``NystromRidgeClassifier`` (one-vs-rest ridge on
   ±1 targets) and ``NystromLogisticRegression`` (Newton steps on the same solver).
4. Giffon 2020 (PhD thesis), Table 3.3, "Nyström + SVM" on breast cancer (K = 64 landmarks):
   uniform landmarks against k-means and QuicK-means centroids (``landmarks=``), with
   ``NystromRidgeClassifier`` in place of the thesis' linear SVM on Nyström features.

Tables are printed; PNG figures go to ``--out`` (default ``examples/output``).

Run: ``python examples/nystrom_ridge.py [--quick] [--out DIR]``.
"""

import argparse
import os
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits, make_friedman1  # noqa: E402
from sklearn.kernel_approximation import Nystroem as SkNystroem  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from sparsekit import NystromLogisticRegression, NystromRidge, NystromRidgeClassifier  # noqa: E402

# the gallery of the docs runs this file without __file__; sys.argv[0] is the file there
DEFAULT_OUT = os.path.join(
    os.path.dirname(os.path.abspath(globals().get("__file__", sys.argv[0]))), "output"
)

SAMPLERS = {
    "uniform": {},
    "dac-rls": {"lam": 1e-3},
    "recursive-rls": {},
    "kmeans-pp": {},
}


def _table(rows, columns):
    widths = [max(len(c), *(len(str(r[c])) for r in rows)) for c in columns]
    print(" | ".join(c.ljust(w) for c, w in zip(columns, widths)))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(" | ".join(str(r[c]).ljust(w) for c, w in zip(columns, widths)))
    print()


def regression(n, sizes, out, seed=0):
    X, y = make_friedman1(n + 5000, noise=1.0, random_state=seed)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=5000, random_state=seed)
    y_mean = y_tr.mean()  # no intercept in kernel ridge: centre the targets
    gamma, lam = 0.5, 1e-6
    rows, curves = [], {}
    for name, params in SAMPLERS.items():
        curves[name] = []
        for m in sizes:
            model = NystromRidge(
                sampler=name,
                sampler_params=params,
                n_components=m,
                alpha=lam,
                kernel_params={"gamma": gamma},
                random_state=seed,
            )
            t0 = time.perf_counter()
            model.fit(X_tr, y_tr - y_mean)
            seconds = time.perf_counter() - t0
            mse = float(np.mean((model.predict(X_te) + y_mean - y_te) ** 2))
            curves[name].append(mse)
            rows.append(
                {
                    "sampler": name,
                    "m": m,
                    "test MSE": f"{mse:.3f}",
                    "CG iterations": model.n_iter_,
                    "fit (s)": f"{seconds:.2f}",
                }
            )
    m = sizes[-1]
    uniform = NystromRidge(
        n_components=m, alpha=lam, kernel_params={"gamma": gamma}, random_state=seed
    ).fit(X_tr, y_tr - y_mean)
    pipe = make_pipeline(
        SkNystroem(kernel="rbf", gamma=gamma, n_components=m),
        Ridge(alpha=lam * len(X_tr), fit_intercept=False),
    )
    t0 = time.perf_counter()
    pipe[0].fit(uniform.components_)  # every one of the same landmarks, in another order
    pipe[1].fit(pipe[0].transform(X_tr), y_tr - y_mean)
    seconds = time.perf_counter() - t0
    mse = float(np.mean((pipe.predict(X_te) + y_mean - y_te) ** 2))
    rows.append(
        {
            "sampler": "scikit-learn Nystroem + Ridge (uniform's landmarks)",
            "m": m,
            "test MSE": f"{mse:.3f}",
            "CG iterations": "-",
            "fit (s)": f"{seconds:.2f}",
        }
    )
    print(f"Friedman #1, n = {len(X_tr):,} training points, 5,000 test points, RBF gamma 0.5")
    _table(rows, ["sampler", "m", "test MSE", "CG iterations", "fit (s)"])

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for name, errors in curves.items():
        ax.plot(sizes, errors, marker="o", label=name)
    ax.axhline(1.0, color="gray", linestyle=":", label="noise variance")
    ax.set_xlabel("landmarks m")
    ax.set_ylabel("test MSE")
    ax.set_xscale("log")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "nystrom_ridge_samplers.png"), dpi=120)
    plt.close(fig)
    return X_tr, y_tr - y_mean, X_te, y_te - y_mean


def error_per_iteration(X_tr, y_tr, X_te, y_te, m, out):
    errors = []

    def record(iteration, dual_coef):
        pred = model.kernel_(X_te, model.components_) @ dual_coef[:, 0]
        errors.append(float(np.mean((pred - y_te) ** 2)))

    model = NystromRidge(
        n_components=m, alpha=1e-6, tol=1e-9, kernel_params={"gamma": 0.5}, random_state=0
    )
    model.set_params(callback=record).fit(X_tr, y_tr)  # record reads the landmarks of model
    print("test MSE after each conjugate gradient iteration:")
    print(", ".join(f"{e:.3f}" for e in errors[:12]), "..." if len(errors) > 12 else "")
    print()
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(np.arange(1, len(errors) + 1), errors, marker=".")
    ax.set_xlabel("conjugate gradient iteration")
    ax.set_ylabel("test MSE")
    ax.set_yscale("log")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "nystrom_ridge_iterations.png"), dpi=120)
    plt.close(fig)


def classification(m, seed=0):
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed)
    rows = []
    for model in (
        NystromRidgeClassifier(n_components=m, alpha=1e-6, kernel_params={"gamma": 0.01}),
        NystromLogisticRegression(n_components=m, alpha=1e-4, kernel_params={"gamma": 0.01}),
    ):
        model.set_params(random_state=seed)
        t0 = time.perf_counter()
        model.fit(X_tr, y_tr)
        rows.append(
            {
                "model": type(model).__name__,
                "m": m,
                "test accuracy": f"{model.score(X_te, y_te):.3f}",
                "fit (s)": f"{time.perf_counter() - t0:.2f}",
            }
        )
    print("digits (10 classes), 70 / 30 split, RBF gamma 0.01 on standardized pixels")
    _table(rows, ["model", "m", "test accuracy", "fit (s)"])


#: Table 3.3 of Giffon 2020, breast cancer, "Nyström + SVM accuracy" (K = 64)
THESIS_BREAST_CANCER = {"uniform": 0.9340, "kmeans": 0.914, "quickmeans": 0.914}


def centroid_landmarks(seeds):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    rows = []
    for name in ("uniform", "kmeans", "quickmeans"):
        accuracies = []
        for seed in range(seeds):
            X_tr, X_te, y_tr, y_te = train_test_split(
                X, y, test_size=0.3, random_state=seed, stratify=y
            )
            scaler = StandardScaler().fit(X_tr)
            clf = NystromRidgeClassifier(
                n_components=64,
                landmarks=None if name == "uniform" else name,
                alpha=1e-6,
                kernel_params={"bandwidth": "mean-sq-dist"},
                random_state=seed,
            ).fit(scaler.transform(X_tr), y_tr)
            accuracies.append(clf.score(scaler.transform(X_te), y_te))
        rows.append(
            {
                "landmarks": name,
                "test accuracy": f"{np.mean(accuracies):.4f} ± {np.std(accuracies):.4f}",
                "thesis (SVM)": THESIS_BREAST_CANCER[name],
            }
        )
    print(f"breast cancer, K = 64 landmarks, {seeds} stratified 70 / 30 splits")
    _table(rows, ["landmarks", "test accuracy", "thesis (SVM)"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    parser.add_argument("--out", default=DEFAULT_OUT, help="folder of the figures")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    n, sizes = (4000, [50, 100, 200]) if args.quick else (50_000, [100, 200, 400, 800, 1600])
    X_tr, y_tr, X_te, y_te = regression(n, sizes, args.out)
    error_per_iteration(X_tr, y_tr, X_te, y_te, sizes[-1], args.out)
    classification(200 if args.quick else 500)
    centroid_landmarks(2 if args.quick else 10)
    print(f"figures written to {args.out}")


if __name__ == "__main__":
    main()
