"""The ``mmd`` task: MMD² between two classes."""

from __future__ import annotations

import time

import numpy as np

from .._names import did_you_mean
from ._rules import COUNT, NONNEGATIVE_INT, one_of, rules
from .tasks import Task, TaskContext, _fitted

#: the estimators of the MMD² that ``method`` names
METHODS = ("exact", "unbiased", "linear", "block", "rff", "nystrom")


def _two_classes(ctx):
    X, y = ctx.need("X", "y")
    a, b = ctx.params["classes"]
    Xa, Xb = X[y == a], X[y == b]
    if not len(Xa) or not len(Xb):
        raise ValueError(
            f"classes {a!r} and {b!r}: one of them has no sample (labels: "
            f"{sorted(set(np.asarray(y).tolist()))[:10]})"
        )
    return Xa, Xb


def _method_options(p, method):
    from ..stats.three_sample import METHOD_OPTIONS

    return {k: p[k] for k in METHOD_OPTIONS[method] if k in p and p[k] is not None}


def run_mmd(ctx: TaskContext) -> dict:
    """Estimate the MMD² between the samples of two classes (``classes``) by ``method``.

    With its time and the difference to the exact (biased) MMD² when ``n`` ≤ ``exact_max_n``.

    Parameters
    ----------
    ctx : TaskContext
        The run's data, components, parameters (``ctx.params``) and seed.

    Returns
    -------
    dict
        The MMD², its time and, when computed, the difference to the exact MMD².
    """
    from .. import stats

    Xa, Xb = _two_classes(ctx)
    p = ctx.params
    kernel = ctx.components["kernel"]
    kernel = _fitted(kernel, np.vstack([Xa, Xb]))
    method = p["method"]
    opts = _method_options(p, method)
    t0 = time.perf_counter()
    if method == "exact":
        value = stats.mmd2_biased(Xa, Xb, kernel)
    elif method == "unbiased":
        value = stats.mmd2_unbiased(Xa, Xb, kernel)
    elif method == "linear":
        value = stats.mmd2_linear(Xa, Xb, kernel, random_state=ctx.seed)
    elif method == "block":
        value = stats.mmd2_block(Xa, Xb, kernel, **opts)
    elif method == "rff":
        value = stats.mmd2_rff(Xa, Xb, kernel, random_state=ctx.seed, **opts)
    elif method == "nystrom":
        value = stats.mmd2_nystrom(
            Xa, Xb, kernel, random_state=ctx.seed, registry=ctx.registry, **opts
        )
    else:
        raise ValueError(f"mmd: unknown method {method!r}.{did_you_mean(method, METHODS)}")
    out = {"mmd2": float(value), "time": time.perf_counter() - t0}
    if len(Xa) + len(Xb) <= p["exact_max_n"]:
        out["delta_exact"] = float(value - stats.mmd2_biased(Xa, Xb, kernel))
    return out


TASK = Task(
    "mmd",
    run_mmd,
    {
        "classes": [0, 1],
        "method": "nystrom",
        "n_landmarks": None,
        "sampler": None,
        "lam": None,
        "n_frequencies": None,
        "block_size": None,
        "exact_max_n": 4000,
    },
    ("kernel",),
    {"kernel": "rbf"},
    "MMD² between two classes, time, Δ to exact",
    check=rules(
        {
            "method": one_of(*METHODS),
            "exact_max_n": NONNEGATIVE_INT,
            "n_landmarks": COUNT,
            "n_frequencies": COUNT,
            "block_size": COUNT,
        }
    ),
    metrics=("mmd2", "time", "delta_exact"),
)

__all__ = ["run_mmd"]
