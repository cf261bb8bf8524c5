"""Pruning random forests with OMP: the protocol of Cherfaoui (2022, PhD thesis, §6.3).

For each data set — scikit-learn's diabetes (regression) and breast cancer (binary
classification), and a generated regression set the size of California housing (20,640 x 8,
Friedman #1 with 3 noise features) — and each of 10 repetitions:

1. split 60 % train / 20 % validation / 20 % test;
2. fit a random forest on train;
3. prune it on train + validation (the thesis' choice: the weights are learned on the union)
   with OMP (Algorithm 6), OMP without weights, NN-OMP (Algorithm 7, which stops by itself) and
   the random-selection baseline, one fit per method giving every forest size (staged
   predictions);
4. score every pruned size on test (R² for regression, accuracy for classification), and the
   full forest.

Printed: the mean ± standard deviation over the repetitions at a few sizes, NN-OMP's own forest
size and the share of negative OMP weights; written (under ``--out``): one PNG per data set,
test score against forest size, and ``omp_forest.csv`` with every value.

Run: ``python examples/omp_forest.py [--quick] [--out DIR]`` (``--quick``: 2 repetitions,
forests of 40 trees, sizes up to 20 and a 2,000-sample generated set).
"""
import argparse
import csv
import os
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_diabetes, make_friedman1  # noqa: E402
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor  # noqa: E402
from sklearn.metrics import accuracy_score, r2_score  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from sparsekit.ensemble import OMPForestClassifier, OMPForestRegressor  # noqa: E402
from sparsekit.run.tables import format_table  # noqa: E402

METHODS = (("OMP", "omp", "fitted"), ("OMP w/o weights", "omp", "uniform"),
           ("NN-OMP", "nn-omp", "fitted"), ("random", "random", "uniform"))


def datasets(quick):
    X, y = load_diabetes(return_X_y=True)
    yield "diabetes", X, y, "regression", 40 if quick else 100
    X, y = load_breast_cancer(return_X_y=True)
    yield "breast cancer", X, y, "classification", 40 if quick else 300
    n = 2_000 if quick else 20_640
    X, y = make_friedman1(n_samples=n, n_features=8, noise=1.0, random_state=0)
    yield f"Friedman #1 ({n:,} x 8)", X, y, "regression", 40 if quick else 300


def run_dataset(X, y, task, n_forest, sizes, repetitions):
    """Test scores, shape (n_methods + 1, repetitions, len(sizes)); NN-OMP sizes; negatives."""
    regression = task == "regression"
    score = r2_score if regression else accuracy_score
    Forest = RandomForestRegressor if regression else RandomForestClassifier
    Pruned = OMPForestRegressor if regression else OMPForestClassifier
    scores = np.full((len(METHODS) + 1, repetitions, len(sizes)), np.nan)
    nn_sizes, negatives = [], []
    for rep in range(repetitions):
        strat = None if regression else y
        X_rest, X_test, y_rest, y_test = train_test_split(X, y, test_size=0.2, random_state=rep,
                                                          stratify=strat)
        X_train, _, y_train, _ = train_test_split(
            X_rest, y_rest, test_size=0.25, random_state=rep,
            stratify=None if regression else y_rest)
        forest = Forest(n_estimators=n_forest, random_state=rep, n_jobs=-1).fit(X_train, y_train)
        scores[-1, rep, :] = score(y_test, forest.predict(X_test))
        for m, (_, solver, weights) in enumerate(METHODS):
            model = Pruned(n_trees=max(sizes), forest=forest, solver=solver, weights=weights,
                           random_state=rep).fit(X_rest, y_rest)
            staged = list(model.staged_predict(X_test))
            for j, size in enumerate(sizes):
                if size <= len(staged):
                    scores[m, rep, j] = score(y_test, staged[size - 1])
            if solver == "nn-omp":
                nn_sizes.append(model.n_trees_)
            if (solver, weights) == ("omp", "fitted"):
                negatives.append(model.negative_weight_fraction_)
    return scores, nn_sizes, negatives


def plot(name, sizes, scores, ylabel, path):
    fig, ax = plt.subplots(figsize=(6, 4))
    labels = [m[0] for m in METHODS] + ["full forest"]
    for label, s in zip(labels, scores):
        reached = ~np.all(np.isnan(s), axis=0)      # NN-OMP stops before the largest sizes
        x = np.asarray(sizes)[reached]
        mean, std = np.nanmean(s[:, reached], axis=0), np.nanstd(s[:, reached], axis=0)
        style = "--" if label == "full forest" else "-"
        ax.plot(x, mean, style, marker="" if style == "--" else "o", ms=3, label=label)
        ax.fill_between(x, mean - std, mean + std, alpha=0.15)
    ax.set_xscale("log")
    ax.set_xlabel("trees kept")
    ax.set_ylabel(ylabel)
    ax.set_title(name, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small and fast run")
    parser.add_argument("--out", default=os.path.join("examples", "output"),
                        help="directory for the figures and the CSV (default: examples/output)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    repetitions = 2 if args.quick else 10
    sizes = [1, 2, 5, 10, 20] if args.quick else [1, 2, 5, 10, 20, 30, 50, 75, 100]
    shown = [s for s in (2, 5, 20, 50, 100) if s in sizes]
    csv_rows = []
    for name, X, y, task, n_forest in datasets(args.quick):
        t0 = time.perf_counter()
        scores, nn_sizes, negatives = run_dataset(X, y, task, n_forest, sizes, repetitions)
        metric = "R²" if task == "regression" else "accuracy"
        header = ["method"] + [f"{s} trees" for s in shown]
        rows = []
        for label, s in zip([m[0] for m in METHODS] + ["full forest"], scores):
            cells = []
            for size in shown:
                col = s[:, sizes.index(size)]
                cells.append("—" if np.all(np.isnan(col)) else
                             f"{np.nanmean(col):.3f} ± {np.nanstd(col):.3f}")
            rows.append([label] + cells)
            for j, size in enumerate(sizes):
                for rep in range(repetitions):
                    csv_rows.append([name, label, size, rep, scores[len(rows) - 1, rep, j]])
        title = (f"\n{name}: test {metric} against trees kept ({len(y):,} samples, forest of "
                 f"{n_forest}, {repetitions} repetitions, {time.perf_counter() - t0:.0f} s)")
        print(format_table(header, rows, title=title))
        print(f"NN-OMP stopped by itself at {np.mean(nn_sizes):.1f} trees on average "
              f"(min {min(nn_sizes)}, max {max(nn_sizes)}); OMP at {max(sizes)} trees gave "
              f"{100 * np.mean(negatives):.0f} % negative weights.")
        png = os.path.join(args.out, "omp_forest_" + name.split(" (")[0].replace(" ", "_")
                           .replace("#", "").lower() + ".png")
        plot(name, sizes, scores, f"test {metric}", png)
        print(f"figure: {png}")
    path = os.path.join(args.out, "omp_forest.csv")
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["dataset", "method", "trees", "repetition", "score"])
        writer.writerows(csv_rows)
    print(f"\nall scores: {path}")


if __name__ == "__main__":
    main()
