"""Frank–Wolfe for m-exact-sparse signals: the Chapter 5 experiment at a small scale.

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

Run ``python examples/frank_wolfe_recovery.py [--quick] [--out DIR]`` (``--quick`` for a smaller
run); it writes ``frank_wolfe_recovery.png``, ``frank_wolfe_vs_greedy.png`` and
``frank_wolfe_recovery.md`` (the table) to ``DIR`` (default ``examples/output/``) and prints
where.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from sparsekit.solvers.coherence import (
    babel,
    coherence_sparsity_bound,
    exact_recovery_condition,
    mp_rate,
    mutual_coherence,
    theorem5_rate,
)
from sparsekit.solvers.dictionaries import gaussian_dictionary, sparse_signals
from sparsekit.solvers.fw import FrankWolfe
from sparsekit.solvers.mp import MatchingPursuit
from sparsekit.solvers.omp import OMP

TOL = 1e-20


def largest_m(mu):
    """The largest integer m with m < (1/mu + 1)/2."""
    return int(math.ceil(coherence_sparsity_bound(mu))) - 1


def relative_curves(res, Y):
    return res.residual_norms / np.linalg.norm(Y, axis=0)


def fit_slope(curve):
    """Least-squares slope of ln(curve) over its finite, positive entries."""
    ok = np.isfinite(curve) & (curve > 0)
    k = np.flatnonzero(ok)
    if k.size < 3:
        return float("nan")
    return float(np.polyfit(k, np.log(curve[ok]), 1)[0])


def stage(message):
    """Progress of the run, on stderr (stdout keeps the tables)."""
    print(message, file=sys.stderr, flush=True)


def inside_hypotheses(args, rng):
    rows, curves, thetas, mp_rates, problems = [], [], [], [], []
    for t in range(args.dictionaries):
        stage(f"inside the hypotheses: dictionary {t + 1}/{args.dictionaries}")
        D = gaussian_dictionary(args.n_features, args.n_atoms, rng)
        mu = mutual_coherence(D)
        m = largest_m(mu)
        mu1 = babel(D, m - 1) if m > 1 else 0.0
        Y, X = sparse_signals(D, m, args.signals, rng)
        l1 = np.abs(X).sum(axis=0)
        beta = 8.0 * l1
        res = FrankWolfe(beta=beta, max_iter=args.iters, tol=TOL).solve(D, Y)
        in_support = all(
            set(res.support[: res.n_iter[j], j].tolist()) <= set(np.flatnonzero(X[:, j]).tolist())
            for j in range(args.signals)
        )
        erc = max(exact_recovery_condition(D, np.flatnonzero(X[:, j])) for j in range(args.signals))
        theta = theorem5_rate(m, mu1, float(l1[0]), float(beta[0]))
        rel = relative_curves(res, Y)
        slopes = [fit_slope(rel[:, j]) for j in range(args.signals)]
        rows.append(dict(
            dictionary=t, mu=f"{mu:.4f}", bound=f"{coherence_sparsity_bound(mu):.2f}", m=m,
            babel_m1=f"{mu1:.4f}", max_ERC=f"{erc:.3f}", theta=f"{theta:.2e}",
            bound_slope=f"{0.5 * math.log1p(-theta):.2e}",
            observed_slope=f"{np.nanmax(slopes):.2e} (worst)",
            iters=f"{int(res.n_iter.min())}-{int(res.n_iter.max())}",
            all_in_support="yes" if in_support else "NO",
        ))
        curves.append(rel)
        thetas.append(theta)
        mp_rates.append(mp_rate(m, mu1))
        problems.append((D, Y, X, m, beta))
    return rows, curves, thetas, mp_rates, problems


def outside_hypotheses(args, rng, m_star):
    D = gaussian_dictionary(args.n_features, args.n_atoms, rng)
    out = {}
    for factor in (2, 5, 20):
        stage(f"outside the hypotheses: m = {factor} m*")
        m = factor * m_star
        if m >= args.n_features:
            continue
        Y, X = sparse_signals(D, m, args.signals, rng)
        res = FrankWolfe(beta=8.0 * np.abs(X).sum(axis=0), max_iter=args.iters, tol=TOL).solve(D, Y)
        out[f"m = {factor} m* = {m}"] = relative_curves(res, Y)
    return out


def side_by_side(problem, args):
    """OMP, MP and FW on the same signals: relative residual per iteration and seconds/iteration."""
    D, Y, X, m, beta = problem
    # the residual form (precompute=False) reports residuals down to rounding; the Gram form's
    # norms come from ||y||^2 - sum of decreases and bottom out near sqrt(eps) ||y||
    def make(name, beta):
        return {
            "OMP": lambda: OMP(n_nonzero_coefs=m, tol=TOL, precompute=False),
            "MP": lambda: MatchingPursuit(max_iter=args.iters, tol=TOL, precompute=False),
            "FW (line search)": lambda: FrankWolfe(beta=beta, max_iter=args.iters, tol=TOL),
            "FW (2/(k+2))": lambda: FrankWolfe(beta=beta, step="2/(k+2)", max_iter=args.iters,
                                               tol=TOL),
        }[name]()

    names = ["OMP", "MP", "FW (line search)", "FW (2/(k+2))"]
    out = {}
    for name in names:
        stage(f"side by side: {name}")
        make(name, beta[:2]).solve(D, Y[:, :2])  # compile / warm up the kernels
        t0 = time.perf_counter()
        res = make(name, beta).solve(D, Y)
        elapsed = time.perf_counter() - t0
        n = max(int(np.max(res.n_iter)), 1)
        out[name] = (relative_curves(res, Y), elapsed / n, elapsed, res)
    return out


def trim(curves):
    """Drop the trailing iterations where every signal had stopped (all NaN)."""
    finite = np.flatnonzero(np.isfinite(curves).any(axis=1))
    return curves[: finite[-1] + 1]


def markdown(rows, columns):
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(str(r[c]) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-features", type=int, default=1000)
    parser.add_argument("--n-atoms", type=int, default=2000)
    parser.add_argument("--dictionaries", type=int, default=4)
    parser.add_argument("--signals", type=int, default=25, help="signals per dictionary")
    parser.add_argument("--iters", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="d=400, n=800, 2 x 10 draws")
    parser.add_argument("--out", "--out-dir", dest="out", default=str(Path(__file__).parent / "output"),
                        help="folder for every file written (default: examples/output/)")
    args = parser.parse_args(argv)
    if args.quick:
        args.n_features, args.n_atoms, args.dictionaries, args.signals = 400, 800, 2, 10
        args.iters = min(args.iters, 1500)
    out_dir = Path(args.out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    stage(f"writing the files to {out_dir}")
    rng = np.random.default_rng(args.seed)

    t0 = time.perf_counter()
    rows, curves, thetas, rates, problems = inside_hypotheses(args, rng)
    m_star = min(int(r["m"]) for r in rows)
    outside = outside_hypotheses(args, rng, m_star)
    compare = side_by_side(problems[0], args)
    print(f"computed in {time.perf_counter() - t0:.1f} s")

    columns = ["dictionary", "mu", "bound", "m", "babel_m1", "max_ERC", "theta", "bound_slope",
               "observed_slope", "iters", "all_in_support"]
    table = markdown(rows, columns)
    cmp_rows = []
    for name, (rel, per_iter, elapsed, res) in compare.items():
        reasons = ", ".join(f"{r}: {c}" for r, c in zip(*np.unique(res.stop_reason,
                                                                    return_counts=True)))
        last = rel[res.n_iter, np.arange(rel.shape[1])]
        cmp_rows.append(dict(solver=name, iterations=f"{int(np.median(res.n_iter))} (median)",
                             stop=reasons, worst_final=f"{np.max(last):.1e}",
                             seconds=f"{elapsed:.3f}", ms_per_iter=f"{per_iter * 1e3:.3f}"))
    cmp_table = markdown(cmp_rows, ["solver", "iterations", "stop", "worst_final", "seconds",
                                    "ms_per_iter"])
    header = (f"d = {args.n_features}, n = {args.n_atoms}, {args.dictionaries} dictionaries x "
              f"{args.signals} signals, beta = 8 ||x*||_1, line search, stop at ||r||^2 <= {TOL:g}")
    text = (f"# Frank-Wolfe recovery ({header})\n\nSlopes are of ln ||r_k|| per iteration.\n\n"
            f"{table}\n\n## OMP, MP and FW on the signals of dictionary 0\n\n"
            f"worst_final: largest ||r|| / ||y|| at the end.\n\n{cmp_table}\n")
    print(text)
    (out_dir / "frank_wolfe_recovery.md").write_text(text)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    warnings.simplefilter("ignore", RuntimeWarning)  # NaN after a signal stopped, log10(0)
    all_rel = trim(np.hstack(curves))
    k = np.arange(all_rel.shape[0])
    log_rel = np.log10(all_rel)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    ax = axes[0]
    ax.plot(k, np.nanmax(log_rel, axis=1), label="max over draws")
    ax.plot(k, np.nanmean(log_rel, axis=1), label="mean over draws")
    theta = min(thetas)
    ax.plot(k, 0.5 * k * np.log10(1 - theta), "--", label=f"Theorem 5 bound (theta = {theta:.1e})")
    rate = min(rates)
    ax.plot(k, 0.5 * k * np.log10(1 - rate), ":", label="MP bound (Gribonval-Vandergheynst)")
    ax.set_ylim(-11, 0.5)
    ax.set_xlabel("iteration k")
    ax.set_ylabel("log10 ||r_k|| / ||y||")
    ax.set_title(f"inside the hypotheses (m = m*, beta = 8 ||x*||_1)")
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
    for name, (rel, per_iter, _, _) in compare.items():
        mean = np.nanmean(np.log10(trim(rel)), axis=1)
        steps = np.arange(mean.size)
        axes[0].plot(steps, mean, marker="o" if name == "OMP" else None, label=name)
        axes[1].plot(steps * per_iter * 1e3, mean, marker="o" if name == "OMP" else None,
                     label=name)
    for ax, xlabel in zip(axes, ["iteration k", "time (ms, batch of signals)"]):
        ax.set_xlabel(xlabel)
        ax.set_ylabel("mean log10 ||r_k|| / ||y||")
        ax.set_xscale("symlog", linthresh=10)
        ax.legend()
    fig.suptitle("OMP, MP and Frank-Wolfe on the same m-sparse signals")
    fig.tight_layout()
    fig.savefig(out_dir / "frank_wolfe_vs_greedy.png", dpi=120)
    print(f"files written to {out_dir}: frank_wolfe_recovery.md, frank_wolfe_recovery.png, "
          "frank_wolfe_vs_greedy.png")


if __name__ == "__main__":
    main()
