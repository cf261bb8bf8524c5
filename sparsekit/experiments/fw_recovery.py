"""The task ``frank-wolfe-recovery``: Frank–Wolfe on m-exact-sparse signals, Cherfaoui thesis Ch. 5.

The protocol of Cherfaoui (2022, PhD thesis, §5.4), on random dictionaries of unit-norm Gaussian
atoms (the data's ``draw_dictionary``, e.g. the ``gaussian-dictionary`` source), with one random
generator (the run's seed) drawing every dictionary and signal in this order:

1. ``inside`` (one row per dictionary, ``n_dictionaries`` of them): the largest m with
   m < (1/μ + 1)/2 (μ the mutual coherence), ``n_signals`` m-sparse signals, Frank–Wolfe with
   line-search steps and radius β = ``beta_factor`` ‖x*‖₁ (the thesis uses 8). Reported: μ,
   the bound (1/μ + 1)/2, m, the babel function μ₁(m − 1), the largest exact recovery
   coefficient over the supports (Tropp 2004), θ of Theorem 5 and its bound on the slope of
   ln ‖r_k‖, ½ ln(1 − θ), the worst observed slope (least squares over each signal's curve),
   the iteration range, and whether every selected atom lies in the true support (Theorem 4);
2. ``outside`` (one row per factor of ``outside_factors`` with m < d): a new dictionary,
   m = factor · m* (m* the smallest m of part 1), Frank–Wolfe as above: the final relative
   residuals (mean, max) and the worst slope;
3. ``compare`` (with ``compare``; one row per solver): OMP (m atoms), MP, Frank–Wolfe with line
   search and with the 2/(k+2) step, on the signals of dictionary 0, after a warm-up on two
   signals: median iterations, stop reasons, the largest final ‖r‖/‖y‖, seconds and
   milliseconds per iteration. OMP and MP use the residual form (``precompute=False``), whose
   residual norms go down to rounding.

All solves stop at ‖r‖² ≤ ``tol`` or after ``max_iter`` iterations. With ``return_curves``, the
rows also hold ``curves``: ‖r_k‖/‖y‖ per iteration (rows) and signal (columns), NaN after a
signal stopped; ``inside`` rows add ``mp_rate``, the matching pursuit rate of Gribonval &
Vandergheynst (2006) for the plot beside Theorem 5's bound.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

import numpy as np

from ..run._rules import COUNT, NONNEGATIVE, POSITIVE, rules
from ..run.tasks import Task, TaskContext


def largest_m(mu):
    """The largest integer m with m < (1/μ + 1)/2."""
    from ..solvers.coherence import coherence_sparsity_bound

    return int(math.ceil(coherence_sparsity_bound(mu))) - 1


def relative_curves(res, Y):
    return res.residual_norms / np.linalg.norm(Y, axis=0)


def fit_slope(curve):
    """Least-squares slope of ln(curve) over its finite, positive entries (NaN under 3)."""
    ok = np.isfinite(curve) & (curve > 0)
    k = np.flatnonzero(ok)
    if k.size < 3:
        return float("nan")
    return float(np.polyfit(k, np.log(curve[ok]), 1)[0])


def worst_slope(curves):
    """The largest (slowest) :func:`fit_slope` over the signals (columns); NaN when no signal
    ran 3 iterations."""
    slopes = np.array([fit_slope(curves[:, j]) for j in range(curves.shape[1])])
    return float(np.nanmax(slopes)) if np.isfinite(slopes).any() else float("nan")


def _fw(beta, p, step="line-search"):
    from ..solvers.fw import FrankWolfe

    return FrankWolfe(beta=beta, step=step, max_iter=p["max_iter"], tol=p["tol"])


def _inside(draw, rng, p, stage):
    from ..solvers.coherence import (
        babel,
        coherence_sparsity_bound,
        exact_recovery_condition,
        mp_rate,
        mutual_coherence,
        theorem5_rate,
    )
    from ..solvers.dictionaries import sparse_signals

    rows, problems = [], []
    k = p["n_signals"]
    for t in range(p["n_dictionaries"]):
        stage(f"inside the hypotheses: dictionary {t + 1}/{p['n_dictionaries']}")
        D = draw(rng)
        mu = mutual_coherence(D)
        m = largest_m(mu)
        mu1 = babel(D, m - 1) if m > 1 else 0.0
        Y, X = sparse_signals(D, m, k, rng)
        l1 = np.abs(X).sum(axis=0)
        beta = p["beta_factor"] * l1
        res = _fw(beta, p).solve(D, Y)
        in_support = all(
            set(res.support[: res.n_iter[j], j].tolist()) <= set(np.flatnonzero(X[:, j]).tolist())
            for j in range(k)
        )
        erc = max(exact_recovery_condition(D, np.flatnonzero(X[:, j])) for j in range(k))
        theta = theorem5_rate(m, mu1, float(l1[0]), float(beta[0]))
        rel = relative_curves(res, Y)
        row = {
            "part": "inside",
            "dictionary": t,
            "mu": float(mu),
            "sparsity_bound": float(coherence_sparsity_bound(mu)),
            "m": m,
            "babel_m1": float(mu1),
            "max_erc": float(erc),
            "theta": float(theta),
            "bound_slope": 0.5 * math.log1p(-theta),
            "observed_slope": worst_slope(rel),
            "iter_min": int(res.n_iter.min()),
            "iter_max": int(res.n_iter.max()),
            "all_in_support": bool(in_support),
        }
        if p["return_curves"]:
            row.update(curves=rel, mp_rate=float(mp_rate(m, mu1)))
        rows.append(row)
        problems.append((D, Y, m, beta))
    return rows, problems


def _outside(draw, rng, p, m_star, stage):
    from ..solvers.dictionaries import sparse_signals

    D = draw(rng)
    rows = []
    for factor in p["outside_factors"]:
        stage(f"outside the hypotheses: m = {factor} m*")
        m = factor * m_star
        if m >= D.shape[0]:
            continue
        Y, X = sparse_signals(D, m, p["n_signals"], rng)
        res = _fw(p["beta_factor"] * np.abs(X).sum(axis=0), p).solve(D, Y)
        rel = relative_curves(res, Y)
        last = rel[res.n_iter, np.arange(rel.shape[1])]
        row = {
            "part": "outside",
            "factor": factor,
            "m": m,
            "mean_final": float(np.mean(last)),
            "worst_final": float(np.max(last)),
            "observed_slope": worst_slope(rel),
        }
        if p["return_curves"]:
            row["curves"] = rel
        rows.append(row)
    return rows


COMPARED = ("OMP", "MP", "FW (line search)", "FW (2/(k+2))")


def _solver(name, m, beta, p):
    from ..solvers.mp import MatchingPursuit
    from ..solvers.omp import OMP

    if name == "OMP":
        return OMP(n_nonzero_coefs=m, tol=p["tol"], precompute=False)
    if name == "MP":
        return MatchingPursuit(max_iter=p["max_iter"], tol=p["tol"], precompute=False)
    return _fw(beta, p, "line-search" if name == "FW (line search)" else "2/(k+2)")


def _compare(problem, p, stage):
    D, Y, m, beta = problem
    rows = []
    for name in COMPARED:
        stage(f"side by side: {name}")
        _solver(name, m, beta[:2], p).solve(D, Y[:, :2])  # compile / warm up the kernels
        t0 = time.perf_counter()
        res = _solver(name, m, beta, p).solve(D, Y)
        elapsed = time.perf_counter() - t0
        per_iter = elapsed / max(int(np.max(res.n_iter)), 1)
        rel = relative_curves(res, Y)
        reasons, counts = np.unique(res.stop_reason, return_counts=True)
        row = {
            "part": "compare",
            "solver": name,
            "median_iter": int(np.median(res.n_iter)),
            "stop": ", ".join(f"{r}: {c}" for r, c in zip(reasons, counts)),
            "worst_final": float(np.max(rel[res.n_iter, np.arange(rel.shape[1])])),
            "seconds": elapsed,
            "ms_per_iter": per_iter * 1e3,
        }
        if p["return_curves"]:
            row["curves"] = rel
        rows.append(row)
    return rows


def run_fw_recovery(ctx: TaskContext) -> list[dict[str, Any]]:
    """Run the Frank–Wolfe recovery experiment.

    Parameters
    ----------
    ctx : TaskContext
        The run's data, parameters (``ctx.params``) and seed.

    Returns
    -------
    list of dict
        The rows of parts 1-3 (module docstring), in that order.
    """
    (draw,) = ctx.need("draw_dictionary")
    p = ctx.params

    def stage(message):
        if p["verbose"]:
            print(message, file=sys.stderr, flush=True)

    rng = np.random.default_rng(ctx.seed)
    rows, problems = _inside(draw, rng, p, stage)
    m_star = min(r["m"] for r in rows)
    rows += _outside(draw, rng, p, m_star, stage)
    if p["compare"]:
        rows += _compare(problems[0], p, stage)
    return rows


TASK = Task(
    "frank-wolfe-recovery",
    run_fw_recovery,
    {
        "n_dictionaries": 4,
        "n_signals": 25,
        "max_iter": 3000,
        "beta_factor": 8.0,
        "tol": 1e-20,
        "outside_factors": [2, 5, 20],
        "compare": True,
        "return_curves": False,
        "verbose": False,
    },
    (),
    {},
    "Frank–Wolfe on m-sparse signals: recovery inside and outside the coherence "
    "hypotheses, against OMP and MP (a row per dictionary, sparsity and solver)",
    check=rules(
        {
            **dict.fromkeys(("n_dictionaries", "n_signals", "max_iter"), COUNT),
            **dict.fromkeys(("beta_factor", "outside_factors"), POSITIVE),
            "tol": NONNEGATIVE,
        }
    ),
)

__all__ = ["run_fw_recovery"]
