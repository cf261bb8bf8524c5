"""The sections of ``sparsekit demo``: tables computed by the tasks of ``sparsekit run``.

Each section builds its data with a data source of :mod:`sparsekit.run.data`, runs one task
per row through :func:`sparsekit.run.tasks.run_task` (the code behind every row of
``sparsekit run``) and only formats the results:

- ``kernels``: the ``gram`` task for every registered vector kernel, float64 and float32;
- ``graphs``: the ``gram`` task for the shortest-path kernel on random labelled graphs;
- ``nystrom``: the ``nystrom`` and ``sampler`` tasks (:mod:`sparsekit.experiments.nystrom_tables`);
- ``solvers``: the ``sparse-coding`` task for MP, OMP, NN-OMP and Frank–Wolfe.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..registry import default_registry
from ..run import data as sources
from ..run.data import generated_dataset
from ..run.tables import format_table
from ..run.tasks import make_sampler, run_task
from .nystrom_tables import (
    EXACT_RLS_MAX_N,
    LAM,
    ErrorTable,
    experiment_kernel,
    frobenius_error_table,
    score_timing_table,
)


def _one_row(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """:func:`run_task` for the tasks that report one row (``gram``, ``sparse-coding``)."""
    row = run_task(*args, **kwargs)
    if not isinstance(row, dict):
        raise TypeError(f"task {args[0]!r} reported {len(row)} rows where one was expected")
    return row


#: One line per kernel whose row needs reading (printed under the table when it appears).
KERNEL_NOTES = {
    "additive-chi2": "additive-chi2: -Σ (x-z)²/(x+z) is minus a distance, only conditionally "
    "positive definite, so large negative eigenvalues are expected; exp(γ times "
    "it), the chi2 row, is PSD",
    "sigmoid": "sigmoid: tanh(γ<x, z> + c0) is not PSD in general, so a negative eigenvalue is "
    "expected",
}


def kernel_table(n: int = 2000, d: int = 64, random_state: int = 0) -> str:
    """Time the n x n Gram matrix of each registered vector kernel and check its properties.

    The data are non-negative (uniform on [0, 1]^d) so the chi2 kernels apply. Columns: time,
    symmetry error, smallest eigenvalue of a 300 x 300 sub-block (>= 0 up to round-off for PSD
    kernels; the additive chi2 and sigmoid kernels are not PSD).

    Parameters
    ----------
    n : int, default 2000
        Number of points.
    d : int, default 64
        Their dimension.
    random_state : int, default 0
        Seeds the data.

    Returns
    -------
    str
        The table, as text.
    """
    data = sources.uniform(n_samples=n, n_features=d, seed=random_state)
    rows = []
    for info in default_registry().list("kernel"):
        if info.registration.accepts != "vectors":
            continue  # graph kernels: the graphs section (manifold kernels are another family)
        kernel = {"name": info.name}
        f64 = _one_row(
            "gram",
            {"dtype": "float64", "checks": ["max_asym", "min_eig"]},
            data,
            {"kernel": kernel},
            seed=random_state,
        )
        f32 = _one_row(
            "gram", {"dtype": "float32", "checks": []}, data, {"kernel": kernel}, seed=random_state
        )
        rows.append(
            [
                info.name,
                "sparsekit" if info.plugin.startswith("sparsekit.") else info.plugin,
                f"{f64['time'] * 1e3:.0f}",
                f"{f32['time'] * 1e3:.0f}",
                f"{f64['max_asym']:.1e}",
                f"{f64['min_eig']:.2e}",
            ]
        )
    table = format_table(
        [
            "kernel",
            "plugin",
            f"f64 {n}x{n} (ms)",
            "f32 (ms)",
            "max abs(K - K^T)",
            "min eig (300x300)",
        ],
        rows,
        title=f"Gram matrices of {n} points in [0, 1]^{d}",
    )
    notes = [
        f"times: the whole {n} x {n} Gram matrix in float64 and float32, compiled beforehand",
        "min eig: smallest eigenvalue of a 300 x 300 block; >= 0 up to round-off (about 1e-13 "
        "here) for a positive semi-definite (PSD) kernel",
    ] + [KERNEL_NOTES[r[0]] for r in rows if r[0] in KERNEL_NOTES]
    return table + "\n" + "\n".join(f"- {line}" for line in notes)


def graph_kernel_table(n_graphs: int = 2000, random_state: int = 0) -> str:
    """Time the shortest-path kernel Gram matrices of random labelled graphs.

    The graphs have 30 nodes and edge probability p = 0.15.

    Parameters
    ----------
    n_graphs : int, default 2000
        Number of random graphs.
    random_state : int, default 0
        Seeds the data.

    Returns
    -------
    str
        The table, as text.
    """
    data = sources.random_graphs(n_graphs=n_graphs, seed=random_state)
    rows = []
    for with_labels in (True, False):
        for normalize in (False, True):
            kernel = {"name": "shortest-path", "with_labels": with_labels, "normalize": normalize}
            row = _one_row(
                "gram",
                {"checks": ["median", "min_eig"]},
                data,
                {"kernel": kernel},
                seed=random_state,
            )
            rows.append(
                [
                    str(with_labels),
                    str(normalize),
                    f"{row['time'] * 1e3:.0f}",
                    f"{row['median']:.3g}",
                    f"{row['min_eig']:.2e}",
                ]
            )
    return format_table(
        [
            "with_labels",
            "normalize",
            f"Gram {n_graphs}x{n_graphs} (ms)",
            "median k",
            "min eig (300x300)",
        ],
        rows,
        title=f"Shortest-path kernel on {n_graphs} random labelled graphs (30 nodes, p = 0.15)",
    )


def nystrom_table(quick: bool = True) -> str:
    """Run the Chapter 3 experiment on generated data: the error and timing tables.

    The tables come with reading notes.

    ``quick=True`` (``sparsekit demo``): n = 1,000 points in 20 dimensions, ``|S|`` at 2% and 5% of
    n, 3 draws, scores timed at n = 250, 500, 1,000 — about 10-20 seconds on two cores.
    ``quick=False``: n = 20,000 in 54 dimensions, ``|S|`` at 1%, 2%, 5%, 10 draws on 5,000
    evaluation points, timing up to n = 20,000.

    Parameters
    ----------
    quick : bool, default True
        The quick sizes (``sparsekit demo``) or the full ones.

    Returns
    -------
    str
        The error and timing tables with their reading notes, as text.
    """
    if quick:
        n, d, counts, draws, n_eval, sizes = 1000, 20, (20, 50), 3, 1000, (250, 500, 1000)
    else:
        n, d, counts, draws, n_eval, sizes = (
            20_000,
            54,
            (200, 400, 1000),
            10,
            5000,
            (1000, 2000, 5000, 10_000, 20_000),
        )
    X = generated_dataset(n=n, d=d, random_state=0)
    name = f"generated Gaussian mixture, d = {d}"
    errors = frobenius_error_table(
        X, landmark_counts=counts, n_draws=draws, n_eval=n_eval, dataset=name, random_state=0
    )
    timing = score_timing_table(X, sizes=sizes, dataset=name, random_state=0)
    notes = "\n".join(f"- {line}" for line in [*reading_notes(errors, X), TIMING_NOTE])
    return errors.format() + "\n\n" + timing.format() + "\n" + notes


#: RLS samplers, whose guarantees need about d_eff log d_eff landmarks.
RLS_SAMPLERS = ("rls", "two-pass-rls", "dac-rls", "recursive-rls")

TIMING_NOTE = (
    "score time: seconds of sampler.scores on the first n points, compiled "
    "beforehand; exact rls forms the n x n Gram matrix and factors it (n^3), the "
    "others grow about linearly with n"
)


def reading_notes(errors: ErrorTable, X: np.ndarray) -> list[str]:
    """Write the notes on what a newcomer may misread in the error table.

    Parameters
    ----------
    errors : ErrorTable
        The error table.
    X : ndarray of shape (n, d)
        The data it was computed on.

    Returns
    -------
    list of str
        One line for each thing of the table a newcomer may misread.
    """
    lines = [
        f"error: ‖K - K̂‖_F on {errors.n_eval} points, mean ± std over draws of the "
        "landmarks; lower is better"
    ]
    if "greedy-trace" in errors.samplers:
        lines.append(
            "greedy-trace: deterministic (std 0); it adds the point that lowers "
            "tr(K - K̂) the most, which bounds ‖K - K̂‖_F"
        )
    smallest = min(errors.landmark_counts)
    if ("uniform", smallest) not in errors.errors:
        return lines
    uniform = errors.mean_std("uniform", smallest)[0]
    losers = [
        s
        for s in RLS_SAMPLERS
        if (s, smallest) in errors.errors and errors.mean_std(s, smallest)[0] > uniform
    ]
    if losers:
        d_eff = ""
        if errors.n_samples <= EXACT_RLS_MAX_N:
            sampler: Any = make_sampler("rls", lam=LAM)  # effective_dimension: rls only
            d_eff = (
                f" (d_eff = {sampler.effective_dimension(X, experiment_kernel().fit(X)):.0f} here)"
            )
        lines.append(
            f"{', '.join(losers)} lose to uniform at |S| = {smallest}: ridge leverage scores "
            f"carry guarantees from about d_eff log d_eff landmarks on{d_eff}; below that, "
            "drawing by score favours isolated points over the dense clusters that hold most "
            "of ‖K‖_F"
        )
    return lines


def solver_table(
    n_features: int = 256,
    n_atoms: int = 1024,
    n_nonzero: int = 8,
    n_signals: int = 200,
    random_state: int = 0,
) -> str:
    """Recover ``n_signals`` exactly ``n_nonzero``-sparse signals with MP, OMP, NN-OMP and FW.

    One ``sparse-coding`` task run per solver, with the task's protocol: OMP and NN-OMP stop
    at m atoms, MP runs 4 m steps, Frank–Wolfe gets the radius beta = 2 ||x*||_1 per signal
    and 100 line-search iterations; NN-OMP gets the non-negative version of the same signals
    (``|x|``). Columns: time for the batch, support recovery rate (the true support equals the
    atoms with the ``n_nonzero`` largest ``|coefficients|``), median relative residual
    ||y - D x|| / ||y||.

    Parameters
    ----------
    n_features : int, default 256
        The dimension of the atoms and signals.
    n_atoms : int, default 1024
        The number of atoms.
    n_nonzero : int, default 8
        Non-zeros per signal (m).
    n_signals : int, default 200
        The number of signals.
    random_state : int, default 0
        Seeds the data.

    Returns
    -------
    str
        The table, as text.
    """
    from ..solvers.coherence import coherence_sparsity_bound, mutual_coherence

    problem = sources.sparse_signals(n_features, n_atoms, n_nonzero, n_signals, seed=random_state)
    rows = []
    for name in ("omp", "mp", "nn-omp", "frank-wolfe"):
        row = _one_row(
            "sparse-coding",
            {"nonnegative": name == "nn-omp"},
            problem,
            {"solver": {"name": name}},
            seed=random_state,
        )
        rows.append(
            [
                name,
                f"{row['time'] * 1e3:.0f}",
                f"{100 * row['support_recovery']:.1f}%",
                f"{row['median_rel_residual']:.1e}",
            ]
        )
    mu = mutual_coherence(problem["D"])
    bound = coherence_sparsity_bound(mu)
    title = (
        f"Sparse recovery: D {n_features}x{n_atoms} Gaussian, {n_signals} signals with "
        f"{n_nonzero} atoms (coherence {mu:.3f}; guaranteed recovery below m = "
        f"{bound:.1f})"
    )
    table = format_table(
        ["solver", "batch (ms)", "support recovered", "median ‖r‖/‖y‖"], rows, title=title
    )
    notes = [
        f"guaranteed recovery below m = {bound:.1f}: for m < (1 + 1/coherence)/2 OMP recovers "
        "every m-sparse signal, whatever its support (Tropp 2004, Thm 3.5), a worst-case bound",
        f"support recovered: the {n_nonzero} atoms of each random signal found again; random "
        f"supports are recovered far above the worst-case bound, typically but not for all",
        "median ‖r‖/‖y‖: omp and nn-omp solve least squares on the found support (round-off "
        f"left); mp re-projects one atom at a time for {4 * n_nonzero} steps and frank-wolfe "
        "converges as O(1/k), so both leave a small residual",
    ]
    return table + "\n" + "\n".join(f"- {line}" for line in notes)


#: Demo sections: name -> function returning a printable table.
SECTIONS = {
    "kernels": kernel_table,
    "graphs": graph_kernel_table,
    "nystrom": nystrom_table,
    "solvers": solver_table,
}

__all__ = ["kernel_table", "graph_kernel_table", "nystrom_table", "solver_table", "reading_notes"]
