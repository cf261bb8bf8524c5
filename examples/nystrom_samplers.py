"""Nyström landmark samplers compared: the Chapter 3 experiment of the Cherfaoui thesis.
=====================================================================================

For every sampler (uniform, diagonal, two-pass RLS, DAC-RLS, recursive RLS, greedy residual
trace, and exact RLS where n is small enough) and several landmark counts ``|S|``:

- Frobenius error ‖K_E − K̂_E‖_F of the Nyström approximation on E = 10,000 random points (all
  points when fewer), mean ± std over 10 draws, on scikit-learn's digits (n = 1,797) and on a
  generated 50,000-point Gaussian mixture in 54 dimensions (Covertype's dimension);
- time to compute the sampler's scores against n.

Kernel: Gaussian with σ² = mean pairwise squared distance, λ = (mean ‖x‖)⁻¹ (thesis §3.3).
The tables are printed; the figures are written as PNG files to ``DIR`` (default
``examples/output/``), and the run prints where.

Every error is one run of the ``nystrom`` task of ``sparsekit run`` and every time one run of
the ``sampler`` task (through :mod:`sparsekit.experiments.nystrom_tables`);
``examples/specs/nystrom_samplers.toml`` runs the same task as a spec.

Run: ``python examples/nystrom_samplers.py [--quick] [--out DIR]``. The full run takes a long
time on a laptop (greedy-trace and the 10,000-point error dominate); ``--quick`` uses 10,000
generated points, 3 draws and 2,000 evaluation points.
"""

import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

from sparsekit.experiments import nystrom_tables as exp  # noqa: E402
from sparsekit.run.data import generated_dataset  # noqa: E402


def plot_errors(table, path):
    fig, ax = plt.subplots(figsize=(6, 4))
    for s in table.samplers:
        counts = [c for c in table.landmark_counts if (s, c) in table.errors]  # some are capped
        stats = np.array([table.mean_std(s, c) for c in counts])
        ax.errorbar(counts, stats[:, 0], yerr=stats[:, 1], marker="o", capsize=3, label=s)
    ax.set_xlabel("number of landmarks |S|")
    ax.set_ylabel(r"$\|K - \hat K\|_F$")
    ax.set_yscale("log")
    ax.set_title(
        f"{table.dataset} (n = {table.n_samples}, error on {table.n_eval} points)", fontsize=9
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_timing(table, path):
    fig, ax = plt.subplots(figsize=(6, 4))
    for s in table.samplers:
        ns = [n for n in table.sizes if (s, n) in table.seconds]
        ax.plot(ns, [table.seconds[(s, n)] for n in ns], marker="o", label=s)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n")
    ax.set_ylabel("score computation time (s)")
    ax.set_title(table.dataset, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# the gallery of the docs runs this file without __file__; sys.argv[0] is the file there
DEFAULT_OUT = os.path.join(
    os.path.dirname(os.path.abspath(globals().get("__file__", sys.argv[0]))), "output"
)


def main(quick=False, out=DEFAULT_OUT):
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    print(f"writing the figures to {out}", file=sys.stderr, flush=True)
    n_gen = 10_000 if quick else 50_000
    n_draws = 3 if quick else 10
    n_eval = 2000 if quick else 10_000
    datasets = [
        ("digits", load_digits().data / 16.0),
        ("generated mixture, d = 54", generated_dataset(n=n_gen, d=54, random_state=0)),
    ]
    for k, (slug, (name, X)) in enumerate(zip(("digits", "generated"), datasets), 1):
        n = X.shape[0]
        print(
            f"[{k}/{len(datasets)}] {name}: errors, then score times", file=sys.stderr, flush=True
        )
        counts = sorted({max(2, round(p * n)) for p in (0.01, 0.02, 0.03, 0.05)})
        # greedy-trace is O(n |S|^2): on the large set use its random-feature approximation,
        # with more random features than landmarks (it cannot select more points than that),
        # and only up to 1% of n (Theta(n |S| (f + |S|)) with f = 2 |S| grows as |S|^2)
        greedy_cap = None if n <= 5000 else max(2, round(0.01 * n))
        params = (
            {}
            if n <= 5000
            else {"greedy-trace": {"approximate": True, "n_features": 2 * greedy_cap}}
        )
        errors = exp.frobenius_error_table(
            X,
            landmark_counts=counts,
            n_draws=n_draws,
            n_eval=n_eval,
            dataset=name,
            random_state=0,
            sampler_params=params,
            max_landmarks=None if greedy_cap is None else {"greedy-trace": greedy_cap},
        )
        print(errors.format(), "\n", flush=True)
        plot_errors(errors, os.path.join(out, f"nystrom_error_{slug}.png"))
        sizes = [s for s in (500, 1000, 2000, 5000, 10_000, 20_000, 50_000) if s <= n]
        timing = exp.score_timing_table(
            X, sizes=sizes, dataset=name, random_state=0, sampler_params=params
        )
        print(timing.format(), "\n", flush=True)
        plot_timing(timing, os.path.join(out, f"nystrom_score_time_{slug}.png"))
    print(f"figures written to {out}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or " ").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller run (a few minutes)")
    parser.add_argument(
        "--out", default=DEFAULT_OUT, help="folder for the PNG files (default: examples/output/)"
    )
    args = parser.parse_args()
    main(quick=args.quick, out=args.out)
