"""Kernel k-means on Nyström features: landmark samplers compared on clustering quality.
=====================================================================================

After the poster "k-means à noyau" (greedy residual-trace landmarks): kernel k-means is run
exactly (through the Gram matrix) and on Nyström features P_S φ(x) with landmarks from every
registered sampler (uniform, diagonal, DAC-RLS, recursive RLS, greedy residual trace — exact
and with the poster's random-feature sketch), on

- two concentric rings (scikit-learn's ``make_circles``, factor 0.3, noise 0.04; Gaussian
  kernel γ = 5), where linear k-means cannot split the rings;
- scikit-learn's digits (10 clusters; Gaussian kernel, σ = median pairwise distance as in the
  poster).

For each: adjusted mutual information (AMI) with the true classes, inertia Σ‖φ(x_i) − c‖² in
the kernel feature space, residual trace ‖P_S^⊥Φ‖²_HS (the poster's bound on the excess risk)
and time, against the number of landmarks on digits. Tables are printed; PNG figures go to
``--out`` (default ``examples/output``).

Run: ``python examples/kernel_kmeans.py [--quick] [--out DIR]``.
"""

import argparse
import os
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.cluster import KMeans  # noqa: E402
from sklearn.metrics import adjusted_mutual_info_score  # noqa: E402

from sparsekit.run import data, run_task  # noqa: E402

# sphinx_gallery_thumbnail_number = 2

# the gallery of the docs runs this file without __file__; sys.argv[0] is the file there
DEFAULT_OUT = os.path.join(
    os.path.dirname(os.path.abspath(globals().get("__file__", sys.argv[0]))), "output"
)

SAMPLERS = {
    "uniform": ("uniform", None),
    "diagonal": ("diagonal", None),
    "dac-rls": ("dac-rls", {"lam": 1e-2}),
    "recursive-rls": ("recursive-rls", None),
    "greedy-trace": ("greedy-trace", None),
    "greedy-trace (sketch)": ("greedy-trace", {"approximate": True}),
}


def section(name):
    """The ``[sampler]`` section of a row label (name and parameters)."""
    sampler, params = SAMPLERS[name]
    return {"name": sampler, **(params or {})}


def run(X, y, k, kernel_params, n_landmarks, samplers, seed, n_init):
    """Linear k-means (scikit-learn), then one ``kernel-kmeans`` task run per method: exact and
    Nyström with each sampler (``examples/specs/kernel_kmeans.toml`` as a spec)."""
    rows, models = [], {}
    t0 = time.perf_counter()
    km = KMeans(k, n_init=n_init, random_state=seed).fit(X)
    rows.append(
        {
            "method": "linear k-means",
            "landmarks": "—",
            "AMI": adjusted_mutual_info_score(y, km.labels_),
            "inertia": np.nan,
            "residual trace": np.nan,
            "time": time.perf_counter() - t0,
        }
    )
    models["linear k-means"] = km.labels_
    configs = [("exact", "exact", {"name": "uniform"})] + [
        (f"Nyström {name}", "nystrom", section(name)) for name in samplers
    ]
    kernel = {"name": "rbf", **kernel_params}
    for label, method, sampler in configs:
        row = run_task(
            "kernel-kmeans",
            {
                "n_clusters": k,
                "method": method,
                "n_landmarks": n_landmarks,
                "n_init": n_init,
                "return_labels": True,
            },
            {"X": X, "y": y},
            {"kernel": kernel, "sampler": sampler},
            seed=seed,
        )
        rows.append(
            {
                "method": label,
                "landmarks": row["n_landmarks"] or "all",
                "AMI": row["ami"],
                "inertia": row["inertia"],
                "residual trace": row["residual_trace"],
                "time": row["time"],
            }
        )
        models[label] = row["labels"]
    return rows, models


def format_table(rows):
    lines = [
        "| method | landmarks | AMI | inertia (feature space) | residual trace | time (s) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        inertia = "—" if np.isnan(r["inertia"]) else f"{r['inertia']:.5g}"
        trace = "—" if np.isnan(r["residual trace"]) else f"{r['residual trace']:.4g}"
        lines.append(
            f"| {r['method']} | {r['landmarks']} | {r['AMI']:.3f} | {inertia} | "
            f"{trace} | {r['time']:.3f} |"
        )
    return "\n".join(lines)


def plot_rings(X, models, path):
    names = ["exact", "Nyström greedy-trace", "linear k-means"]
    names = [n for n in names if n in models]
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 4))
    for ax, name in zip(np.atleast_1d(axes), names):
        ax.scatter(X[:, 0], X[:, 1], c=models[name], s=6, cmap="coolwarm")
        ax.set_title(name, fontsize=9)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_sweep(sweep, path):
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for name, rows in sweep.items():
        counts = [r["n_landmarks"] for r in rows]
        for ax, key in zip(axes, ["residual trace", "AMI", "time"]):
            ax.plot(counts, [r[key] for r in rows], marker="o", label=name)
    for ax, label in zip(axes, ["residual trace tr(K − K̃)", "AMI", "time (s)"]):
        ax.set_xlabel("number of landmarks")
        ax.set_ylabel(label)
        ax.set_xscale("log")
    axes[0].set_yscale("log")
    axes[0].legend(fontsize=8)
    fig.suptitle("kernel k-means on digits, Nyström features", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(quick=False, out=DEFAULT_OUT, seed=0):
    os.makedirs(out, exist_ok=True)
    samplers = ["uniform", "greedy-trace", "greedy-trace (sketch)"] if quick else list(SAMPLERS)
    n_init = 1 if quick else 3

    rings = data.circles(400 if quick else 2000, factor=0.3, noise=0.04, seed=seed)
    X, y = rings["X"], rings["y"]
    rows, models = run(X, y, 2, {"gamma": 5.0}, 30 if quick else 100, samplers, seed, n_init)
    print(f"## two rings (n = {len(X)})\n\n{format_table(rows)}\n", flush=True)
    rings_png = os.path.join(out, "kernel_kmeans_rings.png")
    plot_rings(X, models, rings_png)

    digits = data.SOURCES["digits"](scale=16.0)
    X, y = digits["X"], digits["y"]
    if quick:
        X, y = X[:500], y[:500]
    sq = (X**2).sum(1)
    sub = X[:1000]
    d2 = np.maximum(sq[:1000, None] + sq[None, :1000] - 2 * sub @ sub.T, 0)
    sigma = np.median(np.sqrt(d2[np.triu_indices(len(sub), 1)]))
    kp = {"gamma": 1.0 / (2 * sigma**2)}
    rows, _ = run(X, y, 10, kp, 50 if quick else 200, samplers, seed, n_init)
    print(f"## digits (n = {len(X)}, σ = {sigma:.3f})\n\n{format_table(rows)}\n", flush=True)

    counts = [10, 30] if quick else [10, 20, 50, 100, 200, 400]
    sweep = {}
    for name in samplers:
        sweep[name] = []
        for m in counts:
            row = run_task(
                "kernel-kmeans",
                {"n_clusters": 10, "method": "nystrom", "n_landmarks": m, "n_init": n_init},
                {"X": X, "y": y},
                {"kernel": {"name": "rbf", **kp}, "sampler": section(name)},
                seed=seed,
            )
            sweep[name].append(
                {
                    "n_landmarks": m,
                    "residual trace": row["residual_trace"],
                    "AMI": row["ami"],
                    "time": row["time"],
                }
            )
    lines = ["| sampler | landmarks | residual trace | AMI | time (s) |", "|---|---|---|---|---|"]
    for name, rs in sweep.items():
        lines += [
            f"| {name} | {r['n_landmarks']} | {r['residual trace']:.4g} | {r['AMI']:.3f} | "
            f"{r['time']:.3f} |"
            for r in rs
        ]
    print("## digits, landmarks sweep\n\n" + "\n".join(lines) + "\n")
    sweep_png = os.path.join(out, "kernel_kmeans_digits_sweep.png")
    plot_sweep(sweep, sweep_png)
    print("figures written:", rings_png, sweep_png, sep="\n  ")
    return [rings_png, sweep_png]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or " ").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, three samplers")
    parser.add_argument("--out", default=DEFAULT_OUT, help="folder for the PNG files")
    args = parser.parse_args()
    main(quick=args.quick, out=args.out)
