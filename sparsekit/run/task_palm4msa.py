"""The ``palm4msa`` task: a sparse factorization by (hierarchical) Palm4MSA."""
from __future__ import annotations

import time

from .tasks import Task, TaskContext


def run_palm4msa(ctx: TaskContext) -> dict:
    """Factorize X into ``n_factors`` sparse factors and measure the fit.

    The factors have ``sparsity`` non-zeros per row and column (the schedule of hierarchical
    Palm4MSA); the metrics are the relative error ‖X − λ∏S‖_F/‖X‖_F, the non-zeros of the factors
    and the time.

    Parameters
    ----------
    ctx : TaskContext
        The run's data, components, parameters (``ctx.params``) and seed.

    Returns
    -------
    dict
        ``‖X − λ∏S‖_F/‖X‖_F``, the non-zeros of the factors and the time.
    """
    from ..solvers.hierarchical import hierarchical_constraints

    (X,) = ctx.need("X")
    p = ctx.params
    solver = ctx.components["solver"]
    if not hasattr(solver, "factorize"):
        raise ValueError(f"palm4msa: solver {getattr(solver, 'name', solver)!r} is not a "
                         "factorization solver (use palm4msa or hierarchical-palm4msa)")
    t0 = time.perf_counter()
    if getattr(solver, "name", "") == "hierarchical-palm4msa":
        res = solver.factorize(X, p["sparsity"], n_factors=p["n_factors"])
    else:
        facts, _ = hierarchical_constraints(X.shape, p["n_factors"], p["sparsity"])
        res = solver.factorize(X, facts)
    return {"time": time.perf_counter() - t0, "rel_error": float(res.relative_error),
            "nnz": int(res.factors.nnz), "n_iter": int(res.n_iter),
            "stop_reason": str(res.stop_reason)}


TASK = Task("palm4msa", run_palm4msa, {"n_factors": 3, "sparsity": 2}, ("solver",),
            {"solver": "hierarchical-palm4msa"}, "sparse factorization: relative error, time")

__all__ = ["run_palm4msa"]
