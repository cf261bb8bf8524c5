"""The three-sample test with exact, linear, block, random-feature and Nyström MMD.
================================================================================

Reproduces the experiments of Chapter 4 of the Cherfaoui thesis (Fig. 4.2–4.5): X ~ P_X,
Z ~ P_Z and W ~ P_X, each of n points; the test decides W ~ P_X iff D(X, W) ≤ D(Z, W).
For every estimator and n (Algorithm 3S-eval): the error rate over the repetitions, the mean
distance ``Δ = |D̂(X, Z) − MMD(X, Z)|`` to the exact MMD (where it is affordable) and the time.

Data sets:

- Gaussians: P_X = N(0, 1), P_Z = N(0, 1.001) in 1-D (1.001 read as the variance), n up to
  100,000 per sample;
- digits: scikit-learn's 8×8 digits, P_X = digits 0–4, P_Z = digits 5–9 (drawn without
  replacement from each half);
- graphs: random labelled graphs (10–14 nodes, 3 labels) of edge density 0.3 (P_X) or 0.4
  (P_Z), shortest-path kernel (normalized); random Fourier features do not apply.

Vector data use the Gaussian kernel with γ = 1 / (2 · mean ‖x − x'‖²) resolved on X ∪ Z ∪ W
(the "mean-sq-dist" bandwidth rule); the approximations use s = max(1, round(ln n)) landmarks,
frequencies or points per block (thesis §4.6).

Each data set is one run of the ``three-sample`` task of ``sparsekit run`` (through
``sparsekit.run.run_task``; ``examples/specs/three_sample_{gaussians,digits,graphs}.toml`` run
the same experiments from specs), which calls ``sparsekit.stats.three_sample_error``.

Run: ``python examples/three_sample_test.py [--quick] [--out DIR]``. Tables are printed,
figures written as PNG files under ``--out`` (default ``examples/output``). The full run takes
tens of minutes on 2 cores (the Gaussians at n = 100,000 dominate); ``--quick`` takes seconds.
"""

import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from sparsekit.run import run_task  # noqa: E402
from sparsekit.run.data import SOURCES  # noqa: E402
from sparsekit.stats import METHODS  # noqa: E402

# the gallery of the docs runs this file without __file__; sys.argv[0] is the file there
DEFAULT_OUT = os.path.join(
    os.path.dirname(os.path.abspath(globals().get("__file__", sys.argv[0]))), "output"
)
ALL_VECTOR = ["exact", "linear", "block", "rff", "nystrom"]
RBF = {"name": "rbf", "bandwidth": "mean-sq-dist"}
SHORTEST_PATH = {"name": "shortest-path", "normalize": True}


def digits_halves():
    """The digits (pixels / 16) with their labels, and the largest n of the full run (a third
    of the smaller half)."""
    data = SOURCES["digits"](scale=16.0)
    low = int(np.sum(data["y"] <= 4))
    return data, min(low, len(data["y"]) - low) // 3


def experiments(quick):
    """(name, data, components, params) of the three-sample task for each data set."""
    digits, digits_max = digits_halves()
    halves = {"classes": [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]}
    gaussians = SOURCES["gaussian-pair"](var_x=1.0, var_z=1.001)
    graphs = SOURCES["graph-pair"](p_x=0.3, p_z=0.4, min_nodes=10, max_nodes=14, n_labels=3)
    graph_methods = ["exact", "linear", "block", "nystrom"]
    if quick:
        sizes = {"gaussians": ([50, 200], 4), "digits": ([20, 60], 4), "graphs": ([10, 20], 3)}
    else:
        sizes = {
            "gaussians": ([100, 1000, 10_000, 100_000], 50),
            "digits": ([10, 25, 50, 100, 200, digits_max], 100),
            "graphs": ([10, 20, 40, 80, 160], 50),
        }
    settings = [
        ("gaussians", gaussians, RBF, {"methods": ALL_VECTOR}),
        ("digits", digits, RBF, {"methods": ALL_VECTOR, **halves}),
        ("graphs", graphs, SHORTEST_PATH, {"methods": graph_methods}),
    ]
    out = []
    for name, data, kernel, params in settings:
        n, reps = sizes[name]
        out.append(
            (
                name,
                data,
                {"kernel": kernel},
                {**params, "n": n, "n_repetitions": reps, "exact_max_n": 5000},
            )
        )
    return out


def format_table(rows):
    lines = [
        "| method | n | error | ± s.e. | Δ to exact MMD | time (s) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        delta = "—" if np.isnan(r["delta"]) else f"{r['delta']:.2e}"
        lines.append(
            f"| {r['method']} | {r['n']} | {r['error_rate']:.3f} | {r['error_se']:.3f} | "
            f"{delta} | {r['time']:.2e} |"
        )
    return "\n".join(lines)


def plot(rows, title, path):
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for method in dict.fromkeys(r["method"] for r in rows):
        style = dict(marker="o", label=method, color=f"C{METHODS.index(method)}")
        mine = [r for r in rows if r["method"] == method]
        ns = [r["n"] for r in mine]
        axes[0].errorbar(
            ns,
            [r["error_rate"] for r in mine],
            yerr=[r["error_se"] for r in mine],
            capsize=3,
            **style,
        )
        with_delta = [r for r in mine if not np.isnan(r["delta"]) and r["delta"] > 0]
        if with_delta:
            axes[1].plot([r["n"] for r in with_delta], [r["delta"] for r in with_delta], **style)
        axes[2].plot(ns, [r["time"] for r in mine], **style)
    for ax, label in zip(axes, ["error rate", "Δ = |D̂ − MMD| (X vs Z)", "time per test (s)"]):
        ax.set_xscale("log")
        ax.set_xlabel("n (points per sample)")
        ax.set_ylabel(label)
    axes[1].set_yscale("log")
    axes[2].set_yscale("log")
    axes[0].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(quick=False, out=DEFAULT_OUT, seed=0):
    os.makedirs(out, exist_ok=True)
    written = []
    for name, data, components, params in experiments(quick):
        reps = params["n_repetitions"]
        rows = run_task("three-sample", params, data, components, seed=seed)
        print(f"## {name} ({reps} repetitions)\n\n{format_table(rows)}\n", flush=True)
        path = os.path.join(out, f"three_sample_{name}.png")
        plot(rows, f"three-sample test, {name} ({reps} repetitions)", path)
        written.append(path)
    print("figures written:", *written, sep="\n  ")
    return written


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or " ").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few repetitions")
    parser.add_argument("--out", default=DEFAULT_OUT, help="folder for the PNG files")
    args = parser.parse_args()
    main(quick=args.quick, out=args.out)
