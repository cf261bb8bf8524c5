"""The ``sparse-coding`` task: a sparse solver on m-sparse signals."""

from __future__ import annotations

import time

import numpy as np

from ._rules import COUNT, POSITIVE, rules
from .tasks import Task, TaskContext


def run_sparse_coding(ctx: TaskContext) -> dict:
    """Run a solver on a dictionary and signals and measure the codes.

    The metrics: time, support recovery (the true support equals the atoms of the ``m`` largest
    ``|coefficients|``), median and max relative residual.

    Parameters the solver section leaves out follow the protocol of the solver demo: OMP and
    NN-OMP stop at ``m`` atoms, MP runs ``4 m`` steps (``max_iter`` overrides both), Frank–Wolfe
    gets the radius ``beta = beta_factor · ‖x*‖₁`` per signal (Cherfaoui thesis §5.4 uses 8)
    and ``max_iter`` (default 100) line-search steps.

    Parameters
    ----------
    ctx : TaskContext
        The run's data, components, parameters (``ctx.params``) and seed.

    Returns
    -------
    dict
        The time, the support recovery rate and the median and max relative residual.
    """
    from .._required_params import factory_signature
    from ..components import resolve
    from ..registry import default_registry

    D, Y, coef = ctx.need("D", "Y", "coef")
    p = ctx.params
    if p["nonnegative"]:
        coef = np.abs(coef)
        Y = D @ coef
    m = int(np.count_nonzero(coef[:, 0]))
    table = dict(ctx.component_params.get("solver", {}))
    name = table.pop("name", "omp")
    info = (ctx.registry or default_registry()).lookup("solver", name)
    accepted = factory_signature(info.registration.factory).names
    defaults = {
        "n_nonzero_coefs": p["max_iter"] or m,
        "max_iter": p["max_iter"] or (100 if "beta" in accepted else 4 * m),
        "beta": p["beta_factor"] * np.abs(coef).sum(axis=0),
    }
    for key, value in defaults.items():
        if key in accepted and key not in table:
            table[key] = value
    solver = resolve("solver", name, table, registry=ctx.registry)
    if p["warm_up"]:
        # the whole batch: a solver may pick its kernel from the batch size (OMP's "auto"
        # precompute takes the Gram path only for enough signals), so one signal could compile
        # another kernel than the timed call runs
        solver.solve(D, Y)
    t0 = time.perf_counter()
    result = solver.solve(D, Y)
    elapsed = time.perf_counter() - t0
    m = int(np.count_nonzero(coef[:, 0]))
    top = np.argsort(-np.abs(result.coef), axis=0)[:m]
    recovered = np.mean(
        [set(top[:, j]) == set(np.flatnonzero(coef[:, j])) for j in range(Y.shape[1])]
    )
    rel = np.linalg.norm(Y - D @ result.coef, axis=0) / np.linalg.norm(Y, axis=0)
    return {
        "time": elapsed,
        "support_recovery": float(recovered),
        "median_rel_residual": float(np.median(rel)),
        "max_rel_residual": float(rel.max()),
        "mean_nnz": float(np.mean(np.count_nonzero(result.coef, axis=0))),
    }


TASK = Task(
    "sparse-coding",
    run_sparse_coding,
    {"nonnegative": False, "warm_up": True, "max_iter": None, "beta_factor": 2.0},
    ("solver",),
    {"solver": "omp"},
    "solver on m-sparse signals: time, support recovery, residuals",
    build_components=False,
    check=rules({"max_iter": COUNT, "beta_factor": POSITIVE}),
    metrics=("time", "support_recovery", "median_rel_residual", "max_rel_residual", "mean_nnz"),
)

__all__ = ["run_sparse_coding"]
