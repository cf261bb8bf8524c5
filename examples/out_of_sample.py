"""Out-of-sample embeddings against training-set variability (Paiement 2003, Table 5.1).
=====================================================================================

For each method (classical MDS, Isomap, LLE, Ng–Jordan–Weiss spectral embedding, kernel PCA),
each data set (a swiss roll and scikit-learn's digits) and each substitution proportion
``p = |R1| / |F u R1|``:

1. split the data into F, R1 and R2 (``|R1| = |R2| = p N``, ``|F| = (1 - p) N``);
2. train on F u R1 and on F u R2, align the second embedding on the first over F (least-squares
   affine map) and measure, for the points of F, the distance between the two: the training-set
   variability ``d_var``;
3. for some points x of F, train on (F u R1) minus x, embed x by the Nyström formula, align that
   model on the F u R1 model over the other training points, and measure the distance between
   x's predicted and trained embeddings: the out-of-sample error ``d_oos``;
4. report ``d_var - d_oos`` (mean ± std over the points and repetitions), both distances divided
   by the RMS norm of the F u R1 embedding so that methods share one scale.

A positive difference means that embedding a point by the Nyström formula moves it less than
substituting ``p`` of the training set does. The thesis reports crossings near 2 % for MDS and
LLE, 3 % for Isomap, and a positive difference throughout for spectral clustering (on its faces
data; the shape, not the values, is what transfers). Printed: one table per data set; written
under ``--out``: ``out_of_sample_<data>.png`` and ``out_of_sample.csv``.

Each cell is one run of the ``out-of-sample`` task of ``sparsekit run``
(:mod:`sparsekit.run.task_out_of_sample`); ``examples/specs/out_of_sample.toml`` runs the same
grid as a spec.

Run: ``python examples/out_of_sample.py [--quick] [--out DIR]``.
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

#: table label -> method of the ``out-of-sample`` task
METHODS = {
    "MDS": "mds",
    "Isomap": "isomap",
    "LLE": "lle",
    "spectral": "spectral",
    "kernel PCA": "kernel-pca",
}


def datasets(quick):
    """(name, data, γ of the spectral and kernel PCA methods): the sources of the spec."""
    yield "swiss roll", data.swiss_roll(1500, noise=0.05, seed=0), 1.0 / (2 * 2.0**2)
    yield "digits", data.SOURCES["digits"](scale=16.0), 1.0 / (2 * 2.5**2)


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
    proportions = [0.02, 0.1] if args.quick else [0.01, 0.02, 0.03, 0.05, 0.1, 0.2]
    n_train, n_probe, reps = (150, 4, 1) if args.quick else (400, 10, 5)
    rows_csv = []
    for name, points, gamma in datasets(args.quick):
        t0 = time.perf_counter()
        table, curves = [], {}
        for label, method in METHODS.items():
            cells, means, stds = [], [], []
            for p in proportions:
                row = run_task(
                    "out-of-sample",
                    {
                        "method": method,
                        "proportion": p,
                        "n_train": n_train,
                        "n_probe": n_probe,
                        "n_repetitions": reps,
                        "gamma": gamma,
                    },
                    points,
                    seed=0,
                )
                means.append(row["mean_difference"])
                stds.append(row["std_difference"])
                cells.append(f"{means[-1]:+.3f} ± {stds[-1]:.3f}")
                rows_csv += [[name, label, p, d] for d in row["differences"]]
            table.append([label] + cells)
            curves[label] = (np.array(means), np.array(stds))
        header = ["method"] + [f"p = {p:.0%}" for p in proportions]
        print(
            format_table(
                header,
                table,
                title=(
                    f"\n{name}: (d_var - d_oos) / RMS embedding norm, "
                    f"N = {n_train} training points, {n_probe} probes x {reps} repetitions "
                    f"({time.perf_counter() - t0:.0f} s)"
                ),
            )
        )
        fig, ax = plt.subplots(figsize=(6, 4))
        for label, (m, s) in curves.items():
            ax.errorbar(np.array(proportions) * 100, m, yerr=s, marker="o", capsize=3, label=label)
        ax.axhline(0.0, color="k", lw=0.8)
        ax.set_xlabel("training points substituted (%)")
        ax.set_ylabel("variability - out-of-sample error")
        ax.set_title(name, fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        png = os.path.join(args.out, f"out_of_sample_{name.replace(' ', '_')}.png")
        fig.savefig(png, dpi=120)
        plt.close(fig)
        print(f"figure: {png}")
    path = os.path.join(args.out, "out_of_sample.csv")
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["dataset", "method", "proportion", "difference"])
        writer.writerows(rows_csv)
    print(f"\nall differences: {path}")


if __name__ == "__main__":
    main()
