"""The ``palm4msa`` task: a sparse factorization by a registered factorizer (Palm4MSA or its
hierarchical variant by default)."""

from __future__ import annotations

import time

from ._rules import COUNT, rules
from .tasks import Task, TaskContext


def run_palm4msa(ctx: TaskContext) -> dict:
    """Factorize X into ``n_factors`` sparse factors and measure the fit.

    The factors have ``sparsity`` non-zeros per row and column (the schedule of hierarchical
    Palm4MSA); the metrics are the relative error ‖X − λ∏S‖_F/‖X‖_F, the non-zeros of the factors
    and the time.

    The spec's ``[solver]`` section names the factorizer (family ``"factorizer"``). One that
    builds its own schedule (``takes_sparsity_level``, as hierarchical Palm4MSA) gets the
    sparsity level and ``n_factors``; any other gets the schedule's factor constraints.

    Parameters
    ----------
    ctx : TaskContext
        The run's data, components, parameters (``ctx.params``) and seed.

    Returns
    -------
    dict
        ``‖X − λ∏S‖_F/‖X‖_F``, the non-zeros of the factors and the time.
    """
    from ..factorizers.hierarchical import hierarchical_constraints

    (X,) = ctx.need("X")
    p = ctx.params
    factorizer = ctx.components["solver"]
    t0 = time.perf_counter()
    if getattr(factorizer, "takes_sparsity_level", False):
        res = factorizer.factorize(X, p["sparsity"], n_factors=p["n_factors"])
    else:
        facts, _ = hierarchical_constraints(X.shape, p["n_factors"], p["sparsity"])
        res = factorizer.factorize(X, facts)
    return {
        "time": time.perf_counter() - t0,
        "rel_error": float(res.relative_error),
        "nnz": int(res.factors.nnz),
        "n_iter": int(res.n_iter),
        "stop_reason": str(res.stop_reason),
    }


#: The spec section keeps the name ``[solver]`` (specs written before factorizers had a family
#: of their own run unchanged); it is resolved in the factorizer family.
TASK = Task(
    "palm4msa",
    run_palm4msa,
    {"n_factors": 3, "sparsity": 2},
    ("solver",),
    {"solver": "hierarchical-palm4msa"},
    "sparse factorization: relative error, time",
    families={"solver": "factorizer"},
    check=rules({"n_factors": COUNT, "sparsity": COUNT}),
    metrics=("time", "rel_error", "nnz", "n_iter", "stop_reason"),
)

__all__ = ["run_palm4msa"]
