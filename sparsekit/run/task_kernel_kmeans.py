"""The ``kernel-kmeans`` task: kernel k-means (exact or Nyström) against the labels."""

from __future__ import annotations

import time

from ._rules import COUNT, one_of, rules
from .tasks import Task, TaskContext, _fitted


def _ari(y, labels):
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score(y, labels))


def run_kernel_kmeans(ctx: TaskContext) -> dict:
    """Run kernel k-means (exact or Nyström) and report its metrics.

    The metrics: inertia, time, residual trace, landmarks kept (None when exact), and the adjusted
    Rand index and adjusted mutual information against y; with ``return_labels``, the cluster of
    every sample (``labels``).

    Parameters
    ----------
    ctx : TaskContext
        The run's data, components, parameters (``ctx.params``) and seed.

    Returns
    -------
    dict
        The metrics.
    """
    from ..cluster.kernel_kmeans import KernelKMeans

    X = ctx.samples()
    p = ctx.params
    kernel = _fitted(ctx.components["kernel"], X)
    t0 = time.perf_counter()
    km = KernelKMeans(
        p["n_clusters"],
        kernel=kernel,
        sampler=ctx.components["sampler"],
        n_landmarks=p["n_landmarks"],
        n_init=p["n_init"],
        method=p["method"],
        random_state=ctx.seed,
    ).fit(X)
    out = {
        "time": time.perf_counter() - t0,
        "inertia": float(km.inertia_),
        "method": km.method_,
        "residual_trace": float(km.residual_trace_),
        "n_landmarks": None if km.nystroem_ is None else int(km.nystroem_.n_components_),
    }
    if "y" in ctx.data:
        from sklearn.metrics import adjusted_mutual_info_score

        out["ari"] = _ari(ctx.data["y"], km.labels_)
        out["ami"] = float(adjusted_mutual_info_score(ctx.data["y"], km.labels_))
    if p["return_labels"]:
        out["labels"] = km.labels_
    return out


TASK = Task(
    "kernel-kmeans",
    run_kernel_kmeans,
    {"n_clusters": 2, "n_landmarks": None, "n_init": 3, "method": "auto", "return_labels": False},
    ("kernel", "sampler"),
    {"kernel": "rbf", "sampler": "uniform"},
    "kernel k-means: inertia, time, ARI",
    requires={"sklearn": "sparsekit[forest]"},
    check=rules(
        {
            "n_clusters": COUNT,
            "n_landmarks": COUNT,
            "n_init": (lambda v: v == "auto" or COUNT[0](v), 'an integer >= 1 or "auto"'),
            "method": one_of("auto", "exact", "nystrom"),
        }
    ),
    metrics=("time", "inertia", "method", "residual_trace", "n_landmarks", "ari", "ami", "labels"),
)

__all__ = ["run_kernel_kmeans"]
