"""Demo section: sparse recovery with every registered solver on one generated problem."""
from __future__ import annotations

import time

import numpy as np

from ..registry import default_registry
from ..solvers.coherence import coherence_sparsity_bound, mutual_coherence
from ..solvers.dictionaries import make_sparse_coding_problem
from .table import format_table


def solver_table(n_features: int = 256, n_atoms: int = 1024, n_nonzero: int = 8,
                 n_signals: int = 200, random_state: int = 0) -> str:
    """Recover ``n_signals`` exactly ``n_nonzero``-sparse signals with MP, OMP, NN-OMP and FW.

    Columns: time for the batch, support recovery rate (the true support equals the atoms with
    the ``n_nonzero`` largest |coefficients|), median relative residual ||y - D x|| / ||y||.
    NN-OMP gets the non-negative version of the same signals (|x|); Frank–Wolfe gets the radius
    beta = 2 ||x*||_1 per signal and 100 line-search iterations.
    """
    D, Y, X = make_sparse_coding_problem(n_features, n_atoms, n_nonzero, n_signals, random_state)
    Xpos = np.abs(X)
    Ypos = D @ Xpos
    reg = default_registry()
    configs = [
        ("omp", {"n_nonzero_coefs": n_nonzero}, Y, X),
        ("mp", {"max_iter": 4 * n_nonzero}, Y, X),
        ("nn-omp", {"n_nonzero_coefs": n_nonzero}, Ypos, Xpos),
        ("frank-wolfe", {"beta": 2 * np.abs(X).sum(0), "max_iter": 100}, Y, X),
    ]
    rows = []
    for name, params, targets, truth in configs:
        solver = reg.get("solver", name, **params)
        solver.solve(D, targets)  # compile outside the timing
        t0 = time.perf_counter()
        result = solver.solve(D, targets)
        elapsed = time.perf_counter() - t0
        top = np.argsort(-np.abs(result.coef), axis=0)[:n_nonzero]
        recovered = np.mean([set(top[:, j]) == set(np.flatnonzero(truth[:, j])) for j in range(n_signals)])
        rel = np.linalg.norm(targets - D @ result.coef, axis=0) / np.linalg.norm(targets, axis=0)
        rows.append([name, f"{elapsed * 1e3:.0f}", f"{100 * recovered:.1f}%", f"{np.median(rel):.1e}"])
    mu = mutual_coherence(D)
    title = (f"Sparse recovery: D {n_features}x{n_atoms} Gaussian, {n_signals} signals with "
             f"{n_nonzero} atoms (coherence {mu:.3f}; guaranteed recovery below m = "
             f"{coherence_sparsity_bound(mu):.1f})")
    table = format_table(["solver", "batch (ms)", "support recovered", "median ‖r‖/‖y‖"],
                         rows, title=title)
    bound = coherence_sparsity_bound(mu)
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
