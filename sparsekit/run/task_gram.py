"""Task ``gram``: the Gram matrix of a kernel on the samples, timed and checked.

Metrics: ``time`` (seconds for the whole n x n matrix, compiled beforehand on 8 samples when
``warm_up``), and the ``checks`` asked for (default all): ``max_asym`` = ``max |K − Kᵀ|`` (0 up
to round-off for a symmetric kernel), ``median`` (the median entry) and ``min_eig``, the
smallest eigenvalue of the leading ``n_eig`` x ``n_eig`` block: ≥ 0 up to round-off for a
positive semi-definite kernel (Schölkopf & Smola 2002, *Learning with Kernels*, Def. 2.5),
negative for kernels that are not (additive χ², sigmoid). ``dtype`` casts vector samples
before the call (graphs ignore it). It forms the n x n matrix on purpose: this task measures it.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .._names import did_you_mean
from .._runtime.memory import check_allocation
from ._rules import COUNT, one_of, rules
from .tasks import Task, TaskContext

#: the checks the task can compute on the Gram matrix
CHECKS = ("max_asym", "median", "min_eig")


def run_gram(ctx: TaskContext) -> dict[str, Any]:
    """Compute, time and check the Gram matrix of the kernel on the samples.

    Parameters
    ----------
    ctx : TaskContext
        The run's data, components, parameters (``ctx.params``) and seed.

    Returns
    -------
    dict
        The metrics of the module docstring: ``time`` and the ``checks`` asked for.
    """
    samples = ctx.samples()
    p = ctx.params
    if isinstance(samples, np.ndarray):
        samples = np.ascontiguousarray(samples, dtype=np.dtype(p["dtype"]))
    itemsize = samples.dtype.itemsize if isinstance(samples, np.ndarray) else 8
    # K and the two temporaries of max |K - K^T|
    check_allocation(
        3 * itemsize * len(samples) ** 2,
        f"the gram task on {len(samples)} samples",
        "it forms the whole matrix on purpose: use fewer samples (e.g. --set data.n_samples=N)",
        matrices="its n x n matrices",
    )
    kernel = ctx.components["kernel"]
    kernel = kernel.fit(samples) if hasattr(kernel, "fit") else kernel
    if p["warm_up"]:
        kernel(samples[:8])
    t0 = time.perf_counter()
    K = np.asarray(kernel(samples))
    elapsed = time.perf_counter() - t0
    checks = [p["checks"]] if isinstance(p["checks"], str) else list(p["checks"])
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise ValueError(
            f"gram: unknown check {unknown[0]!r}.{did_you_mean(unknown[0], CHECKS)} "
            f"Checks: {', '.join(CHECKS)}"
        )
    out = {"time": elapsed}
    if "max_asym" in checks:
        out["max_asym"] = float(np.abs(K - K.T).max())
    if "median" in checks:
        out["median"] = float(np.median(K))
    if "min_eig" in checks:
        m = min(int(p["n_eig"]), K.shape[0])
        out["min_eig"] = float(np.linalg.eigvalsh(K[:m, :m]).min())
    return out


TASK = Task(
    "gram",
    run_gram,
    {
        "dtype": "float64",
        "warm_up": True,
        "n_eig": 300,
        "checks": ["max_asym", "median", "min_eig"],
    },
    ("kernel",),
    {"kernel": "rbf"},
    "Gram matrix: time, symmetry error, median, smallest eigenvalue",
    check=rules({"n_eig": COUNT, "checks": one_of(*CHECKS)}),
    metrics=("time", "max_asym", "median", "min_eig"),
)

__all__ = ["run_gram"]
