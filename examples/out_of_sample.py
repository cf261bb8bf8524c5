"""Out-of-sample embeddings against training-set variability (Paiement 2003, Table 5.1).

For each method (classical MDS, Isomap, LLE, Ng–Jordan–Weiss spectral embedding, kernel PCA),
each data set (a swiss roll and scikit-learn's digits) and each substitution proportion
``p = |R1| / |F u R1|``:

1. split the data into F, R1 and R2 (|R1| = |R2| = p N, |F| = (1 - p) N);
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
from sklearn.datasets import load_digits, make_swiss_roll  # noqa: E402

from sparsekit.run.tables import format_table  # noqa: E402
from sparsekit.manifold import (MDS, Isomap, KernelPCA, LocallyLinearEmbedding,  # noqa: E402
                                SpectralEmbedding)


def methods(gamma):
    return {
        "MDS": lambda: MDS(2),
        "Isomap": lambda: Isomap(2, n_neighbors=10, disconnected="connect"),
        "LLE": lambda: LocallyLinearEmbedding(2, n_neighbors=10),
        "spectral": lambda: SpectralEmbedding(2, kernel_params={"gamma": gamma}),
        "kernel PCA": lambda: KernelPCA(2, kernel_params={"gamma": gamma}),
    }


def align(source, target):
    """Least-squares affine map of ``source`` onto ``target``; returns a function."""
    A = np.hstack([source, np.ones((len(source), 1))])
    coef = np.linalg.lstsq(A, target, rcond=None)[0]
    return lambda E: np.hstack([E, np.ones((len(E), 1))]) @ coef


def differences(X, make, p, n_train, n_probe, rng):
    """``(d_var - d_oos) / scale`` for ``n_probe`` points of F, one split."""
    n_r = max(1, int(round(p * n_train)))
    n_f = n_train - n_r
    perm = rng.permutation(len(X))[: n_f + 2 * n_r]
    F, R1, R2 = perm[:n_f], perm[n_f:n_f + n_r], perm[n_f + n_r:]
    train1 = np.concatenate([F, R1])
    e1 = make().fit(X[train1]).embedding_
    e2 = make().fit(X[np.concatenate([F, R2])]).embedding_
    scale = np.sqrt(np.mean(np.sum(e1 ** 2, axis=1)))
    e2_on_1 = align(e2[:n_f], e1[:n_f])(e2[:n_f])
    d_var = np.linalg.norm(e2_on_1 - e1[:n_f], axis=1)
    out = []
    for i in rng.choice(n_f, size=min(n_probe, n_f), replace=False):
        rest = np.delete(np.arange(len(train1)), i)
        model = make().fit(X[train1[rest]])
        to_1 = align(model.embedding_, e1[rest])
        pred = to_1(model.transform(X[train1[i]][None, :]))[0]
        d_oos = np.linalg.norm(pred - e1[i])
        out.append((d_var[i] - d_oos) / scale)
    return out


def datasets(quick):
    X, _ = make_swiss_roll(1500, noise=0.05, random_state=0)
    yield "swiss roll", X, 1.0 / (2 * 2.0 ** 2)
    digits = load_digits().data / 16.0
    yield "digits", digits, 1.0 / (2 * 2.5 ** 2)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small and fast run")
    parser.add_argument("--out", default=os.path.join("examples", "output"),
                        help="directory for the figures and the CSV (default: examples/output)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    proportions = [0.02, 0.1] if args.quick else [0.01, 0.02, 0.03, 0.05, 0.1, 0.2]
    n_train, n_probe, reps = (150, 4, 1) if args.quick else (400, 10, 5)
    rows_csv = []
    for name, X, gamma in datasets(args.quick):
        t0 = time.perf_counter()
        table, curves = [], {}
        for label, make in methods(gamma).items():
            cells, means, stds = [], [], []
            for p in proportions:
                rng = np.random.default_rng(0)
                diffs = [d for _ in range(reps)
                         for d in differences(X, make, p, n_train, n_probe, rng)]
                means.append(np.mean(diffs))
                stds.append(np.std(diffs))
                cells.append(f"{means[-1]:+.3f} ± {stds[-1]:.3f}")
                rows_csv += [[name, label, p, d] for d in diffs]
            table.append([label] + cells)
            curves[label] = (np.array(means), np.array(stds))
        header = ["method"] + [f"p = {p:.0%}" for p in proportions]
        print(format_table(header, table, title=(
            f"\n{name}: (d_var - d_oos) / RMS embedding norm, N = {n_train} training points, "
            f"{n_probe} probes x {reps} repetitions ({time.perf_counter() - t0:.0f} s)")))
        fig, ax = plt.subplots(figsize=(6, 4))
        for label, (m, s) in curves.items():
            ax.errorbar(np.array(proportions) * 100, m, yerr=s, marker="o", capsize=3,
                        label=label)
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
