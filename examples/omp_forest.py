"""Pruning random forests with OMP: the protocol of Cherfaoui (2022, PhD thesis, §6.3).
====================================================================================

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

Each method and repetition is one run of the ``omp-forest`` task of ``sparsekit run``
(:mod:`sparsekit.run.task_omp_forest`); ``examples/specs/omp_forest.toml`` runs the same grid
as a spec.

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

from sparsekit.run import data, run_task  # noqa: E402
from sparsekit.run.tables import format_table  # noqa: E402

#: (label, method, weights) of the ``omp-forest`` task
METHODS = (
    ("OMP", "omp", "fitted"),
    ("OMP w/o weights", "omp", "uniform"),
    ("NN-OMP", "nn-omp", "fitted"),
    ("random", "random", "uniform"),
)


def datasets(quick):
    """(name, data, problem, forest size): the sources of ``examples/specs/omp_forest.toml``."""
    yield "diabetes", data.SOURCES["diabetes"](), "regression", 40 if quick else 100
    yield "breast cancer", data.SOURCES["breast-cancer"](), "classification", 40 if quick else 300
    n = 2_000 if quick else 20_640
    yield (
        f"Friedman #1 ({n:,} x 8)",
        data.friedman1(n_samples=n, n_features=8, noise=1.0, seed=0),
        "regression",
        40 if quick else 300,
    )


def run_dataset(points, problem, n_forest, sizes, repetitions):
    """Test scores, shape (n_methods + 1, repetitions, len(sizes)); NN-OMP sizes; negatives.

    One ``omp-forest`` task run per method and repetition (the repetition is the seed; the
    methods of one repetition share its forest)."""
    scores = np.full((len(METHODS) + 1, repetitions, len(sizes)), np.nan)
    nn_sizes, negatives = [], []
    for rep in range(repetitions):
        for m, (_, method, weights) in enumerate(METHODS):
            row = run_task(
                "omp-forest",
                {
                    "method": method,
                    "weights": weights,
                    "n_estimators": n_forest,
                    "sizes": sizes,
                    "problem": problem,
                },
                points,
                seed=rep,
            )
            scores[m, rep, :] = [np.nan if s is None else s for s in row["scores"]]
            scores[-1, rep, :] = row["full_forest"]
            if method == "nn-omp":
                nn_sizes.append(row["n_trees"])
            if (method, weights) == ("omp", "fitted"):
                negatives.append(row["negative_weight_fraction"])
    return scores, nn_sizes, negatives


def plot(name, sizes, scores, ylabel, path):
    fig, ax = plt.subplots(figsize=(6, 4))
    labels = [m[0] for m in METHODS] + ["full forest"]
    for label, s in zip(labels, scores):
        reached = ~np.all(np.isnan(s), axis=0)  # NN-OMP stops before the largest sizes
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
    parser = argparse.ArgumentParser(description=(__doc__ or " ").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small and fast run")
    parser.add_argument(
        "--out",
        default=os.path.join("examples", "output"),
        help="directory for the figures and the CSV (default: examples/output)",
    )
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    repetitions = 2 if args.quick else 10
    sizes = [1, 2, 5, 10, 20] if args.quick else [1, 2, 5, 10, 20, 30, 50, 75, 100]
    shown = [s for s in (2, 5, 20, 50, 100) if s in sizes]
    csv_rows = []
    for name, points, task, n_forest in datasets(args.quick):
        t0 = time.perf_counter()
        scores, nn_sizes, negatives = run_dataset(points, task, n_forest, sizes, repetitions)
        metric = "R²" if task == "regression" else "accuracy"
        header = ["method"] + [f"{s} trees" for s in shown]
        rows = []
        for label, s in zip([m[0] for m in METHODS] + ["full forest"], scores):
            cells = []
            for size in shown:
                col = s[:, sizes.index(size)]
                cells.append(
                    "—"
                    if np.all(np.isnan(col))
                    else f"{np.nanmean(col):.3f} ± {np.nanstd(col):.3f}"
                )
            rows.append([label] + cells)
            for j, size in enumerate(sizes):
                for rep in range(repetitions):
                    csv_rows.append([name, label, size, rep, scores[len(rows) - 1, rep, j]])
        title = (
            f"\n{name}: test {metric} against trees kept ({len(points['y']):,} samples, forest of "
            f"{n_forest}, {repetitions} repetitions, {time.perf_counter() - t0:.0f} s)"
        )
        print(format_table(header, rows, title=title))
        print(
            f"NN-OMP stopped by itself at {np.mean(nn_sizes):.1f} trees on average "
            f"(min {min(nn_sizes)}, max {max(nn_sizes)}); OMP at {max(sizes)} trees gave "
            f"{100 * np.mean(negatives):.0f} % negative weights."
        )
        png = os.path.join(
            args.out,
            "omp_forest_" + name.split(" (")[0].replace(" ", "_").replace("#", "").lower() + ".png",
        )
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
