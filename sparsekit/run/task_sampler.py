"""The ``sampler`` task: score time, effective dimension and residual trace of a landmark
sampler."""

from __future__ import annotations

import time

import numpy as np

from ._rules import COUNT, NONNEGATIVE_INT, rules
from .tasks import Task, TaskContext, _fitted, _sampler


def run_sampler(ctx: TaskContext) -> dict:
    """Measure the landmark quality of a sampler.

    The metrics: score time and effective dimension Σ scores (samplers with scores), and the
    relative residual trace tr(K − K̂)/tr(K) of ``n_landmarks`` drawn landmarks
    (``n_landmarks = 0``: scores only).

    With ``warm_up``, the scores are computed once on the first 200 samples before the timed
    call, so that compilation is not timed. ``lam`` as in
    :func:`~sparsekit.run.task_nystrom.run_nystrom`.

    Parameters
    ----------
    ctx : TaskContext
        The run's data, components, parameters (``ctx.params``) and seed.

    Returns
    -------
    dict
        The score time, effective dimension and relative residual trace.
    """
    from ..features.nystrom import Nystroem

    X = ctx.samples()
    p = ctx.params
    kernel = _fitted(ctx.components["kernel"], X)
    sampler = _sampler(ctx)
    out = {}
    if hasattr(sampler, "scores"):
        if p["warm_up"]:
            sampler.scores(X[: min(200, len(X))], kernel, random_state=ctx.seed)
        t0 = time.perf_counter()
        scores = np.asarray(sampler.scores(X, kernel, random_state=ctx.seed))
        out["score_time"] = time.perf_counter() - t0
        out["sum_scores"] = float(scores.sum())
        out["max_score"] = float(scores.max())
    if not p["n_landmarks"]:
        return out
    t0 = time.perf_counter()
    ny = Nystroem(
        kernel, sampler=sampler, n_components=p["n_landmarks"], random_state=ctx.seed
    ).fit(X)
    out["sample_time"] = time.perf_counter() - t0
    out["n_landmarks"] = int(len(ny.component_indices_))
    out["rel_residual_trace"] = float(
        ny.approximation_error(
            X, norm="trace", relative=True, n_eval=p["n_eval"], random_state=ctx.seed + 1
        )
    )
    return out


TASK = Task(
    "sampler",
    run_sampler,
    {"n_landmarks": 100, "n_eval": 2000, "lam": None, "warm_up": True},
    ("kernel", "sampler"),
    {"kernel": "rbf", "sampler": "uniform"},
    "score time, effective dimension, residual trace",
    check=rules({"n_landmarks": NONNEGATIVE_INT, "n_eval": COUNT}),
    metrics=(
        "score_time",
        "sum_scores",
        "max_score",
        "sample_time",
        "n_landmarks",
        "rel_residual_trace",
    ),
)

__all__ = ["run_sampler"]
