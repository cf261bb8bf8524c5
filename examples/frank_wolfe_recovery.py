"""Frank–Wolfe for m-exact-sparse signals: the Chapter 5 experiment at a small scale.
==================================================================================

Reproduces Cherfaoui's Chapter 5 experiment (thesis §5.4) on random Gaussian dictionaries of
unit-norm atoms, with exactly m-sparse signals, m below (1/mu + 1)/2 and beta = 8 ||x*||_1:

1. every atom Frank–Wolfe (line-search steps) selects lies in the true support (Theorem 4);
2. log ||r_k|| against k, mean and max over the draws, beside the Theorem 5 bound
   ||y|| (1 - theta)^{k/2} and Gribonval–Vandergheynst's MP bound (as the thesis's Fig. 5.1a);
3. the same outside the hypotheses, m in {2, 5, 20} x m* (Fig. 5.1b);
4. OMP, MP and FW side by side on the same problems: residual against iteration and time
   (the comparison the thesis lists as future work).

The thesis uses d = 10,000, n = 20,000 (mu = 0.058, m* = 8) and 2,000 draws; the defaults here
(d = 1,000, n = 2,000, 4 dictionaries x 25 signals) run in a few minutes on two cores. Residuals
are shown relative to ||y|| so that draws can be averaged. The solves stop at
||r||^2 <= 1e-20 (far above rounding, where selection stays meaningful).

Parts 1-4 are the ``frank-wolfe-recovery`` task of ``sparsekit run`` (run here through
``sparsekit.run.run_task``; ``examples/specs/frank_wolfe_recovery.toml`` runs the same
experiment from a spec); this script formats its rows and draws the figures.

Run ``python examples/frank_wolfe_recovery.py [--quick] [--out DIR]`` (``--quick`` for a smaller
run); it writes ``frank_wolfe_recovery.png``, ``frank_wolfe_vs_greedy.png`` and
``frank_wolfe_recovery.md`` (the table) to ``DIR`` (default ``examples/output/``) and prints
where.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from sparsekit.run import run_task
from sparsekit.run.data import SOURCES

TOL = 1e-20


def stage(message):
    """Progress of the run, on stderr (stdout keeps the tables)."""
    print(message, file=sys.stderr, flush=True)


def inside_table_rows(rows):
    """The rows of part 1 as the table prints them."""
    return [
        dict(
            dictionary=r["dictionary"],
            mu=f"{r['mu']:.4f}",
            bound=f"{r['sparsity_bound']:.2f}",
            m=r["m"],
            babel_m1=f"{r['babel_m1']:.4f}",
            max_ERC=f"{r['max_erc']:.3f}",
            theta=f"{r['theta']:.2e}",
            bound_slope=f"{r['bound_slope']:.2e}",
            observed_slope=f"{r['observed_slope']:.2e} (worst)",
            iters=f"{r['iter_min']}-{r['iter_max']}",
            all_in_support="yes" if r["all_in_support"] else "NO",
        )
        for r in rows
    ]


def compare_table_rows(rows):
    """The rows of part 4 as the table prints them."""
    return [
        dict(
            solver=r["solver"],
            iterations=f"{r['median_iter']} (median)",
            stop=r["stop"],
            worst_final=f"{r['worst_final']:.1e}",
            seconds=f"{r['seconds']:.3f}",
            ms_per_iter=f"{r['ms_per_iter']:.3f}",
        )
        for r in rows
    ]


def trim(curves):
    """Drop the trailing iterations where every signal had stopped (all NaN)."""
    finite = np.flatnonzero(np.isfinite(curves).any(axis=1))
    return curves[: finite[-1] + 1]


def markdown(rows, columns):
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(str(r[c]) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=(__doc__ or " ").splitlines()[0])
    parser.add_argument("--n-features", type=int, default=1000)
    parser.add_argument("--n-atoms", type=int, default=2000)
    parser.add_argument("--dictionaries", type=int, default=4)
    parser.add_argument("--signals", type=int, default=25, help="signals per dictionary")
    parser.add_argument("--iters", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="d=400, n=800, 2 x 10 draws")
    # the gallery of the docs runs this file without __file__; sys.argv[0] is the file there
    parser.add_argument(
        "--out",
        "--out-dir",
        dest="out",
        default=str(Path(globals().get("__file__", sys.argv[0])).parent / "output"),
        help="folder for every file written (default: examples/output/)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.n_features, args.n_atoms, args.dictionaries, args.signals = 400, 800, 2, 10
        args.iters = min(args.iters, 1500)
    out_dir = Path(args.out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    stage(f"writing the files to {out_dir}")

    t0 = time.perf_counter()
    rows = run_task(
        "frank-wolfe-recovery",
        {
            "n_dictionaries": args.dictionaries,
            "n_signals": args.signals,
            "max_iter": args.iters,
            "beta_factor": 8.0,
            "tol": TOL,
            "return_curves": True,
            "verbose": True,
        },
        SOURCES["gaussian-dictionary"](n_features=args.n_features, n_atoms=args.n_atoms),
        seed=args.seed,
    )
    inside = [r for r in rows if r["part"] == "inside"]
    outside = {
        f"m = {r['factor']} m* = {r['m']}": r["curves"] for r in rows if r["part"] == "outside"
    }
    compare = [r for r in rows if r["part"] == "compare"]
    print(f"computed in {time.perf_counter() - t0:.1f} s")

    columns = [
        "dictionary",
        "mu",
        "bound",
        "m",
        "babel_m1",
        "max_ERC",
        "theta",
        "bound_slope",
        "observed_slope",
        "iters",
        "all_in_support",
    ]
    table = markdown(inside_table_rows(inside), columns)
    cmp_table = markdown(
        compare_table_rows(compare),
        ["solver", "iterations", "stop", "worst_final", "seconds", "ms_per_iter"],
    )
    header = (
        f"d = {args.n_features}, n = {args.n_atoms}, {args.dictionaries} dictionaries x "
        f"{args.signals} signals, beta = 8 ||x*||_1, line search, stop at ||r||^2 <= {TOL:g}"
    )
    text = (
        f"# Frank-Wolfe recovery ({header})\n\nSlopes are of ln ||r_k|| per iteration.\n\n"
        f"{table}\n\n## OMP, MP and FW on the signals of dictionary 0\n\n"
        f"worst_final: largest ||r|| / ||y|| at the end.\n\n{cmp_table}\n"
    )
    print(text)
    (out_dir / "frank_wolfe_recovery.md").write_text(text)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    warnings.simplefilter("ignore", RuntimeWarning)  # NaN after a signal stopped, log10(0)
    all_rel = trim(np.hstack([r["curves"] for r in inside]))
    k = np.arange(all_rel.shape[0])
    log_rel = np.log10(all_rel)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    ax = axes[0]
    ax.plot(k, np.nanmax(log_rel, axis=1), label="max over draws")
    ax.plot(k, np.nanmean(log_rel, axis=1), label="mean over draws")
    theta = min(r["theta"] for r in inside)
    ax.plot(k, 0.5 * k * np.log10(1 - theta), "--", label=f"Theorem 5 bound (theta = {theta:.1e})")
    rate = min(r["mp_rate"] for r in inside)
    ax.plot(k, 0.5 * k * np.log10(1 - rate), ":", label="MP bound (Gribonval-Vandergheynst)")
    ax.set_ylim(-11, 0.5)
    ax.set_xlabel("iteration k")
    ax.set_ylabel("log10 ||r_k|| / ||y||")
    ax.set_title("inside the hypotheses (m = m*, beta = 8 ||x*||_1)")
    ax.legend()
    ax = axes[1]
    for label, rel in outside.items():
        ax.plot(np.nanmean(np.log10(trim(rel)), axis=1), label=label)
    ax.set_ylim(-11, 0.5)
    ax.set_xlabel("iteration k")
    ax.set_title("outside the hypotheses (mean over signals)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out_dir / "frank_wolfe_recovery.png", dpi=120)

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for r in compare:
        name, per_iter = r["solver"], r["ms_per_iter"] * 1e-3
        mean = np.nanmean(np.log10(trim(r["curves"])), axis=1)
        steps = np.arange(mean.size)
        axes[0].plot(steps, mean, marker="o" if name == "OMP" else None, label=name)
        axes[1].plot(
            steps * per_iter * 1e3, mean, marker="o" if name == "OMP" else None, label=name
        )
    for ax, xlabel in zip(axes, ["iteration k", "time (ms, batch of signals)"]):
        ax.set_xlabel(xlabel)
        ax.set_ylabel("mean log10 ||r_k|| / ||y||")
        ax.set_xscale("symlog", linthresh=10)
        ax.legend()
    fig.suptitle("OMP, MP and Frank-Wolfe on the same m-sparse signals")
    fig.tight_layout()
    fig.savefig(out_dir / "frank_wolfe_vs_greedy.png", dpi=120)
    print(
        f"files written to {out_dir}: frank_wolfe_recovery.md, frank_wolfe_recovery.png, "
        "frank_wolfe_vs_greedy.png"
    )


if __name__ == "__main__":
    main()
