"""The ``kernel-ridge`` task: Nyström kernel ridge regression or classification, test error."""

from __future__ import annotations

import time

import numpy as np

from ._rules import COUNT, FRACTION, NONNEGATIVE, POSITIVE, rules
from .tasks import Task, TaskContext, _fitted, _sampler


def _is_regression(y):
    return np.issubdtype(np.asarray(y).dtype, np.floating) and len(np.unique(y)) > 20


def run_kernel_ridge(ctx: TaskContext) -> dict:
    """Fit a Nyström kernel ridge model on a random split and score it on the held-out part.

    :class:`~sparsekit.NystromRidge` for continuous ``y``,
    :class:`~sparsekit.NystromRidgeClassifier` for class labels. The split is drawn with
    ``ctx.seed`` (``test_fraction`` of the samples for the test), the landmarks with
    ``ctx.seed`` too. Regression targets are centred on the training mean (the model has no
    intercept). ``lam`` sets λ of the RLS samplers that the ``[sampler]`` section leaves unset,
    as in the ``nystrom`` task.

    Parameters
    ----------
    ctx : TaskContext
        The run's data (``X`` and ``y``), kernel, sampler, parameters and seed.

    Returns
    -------
    dict
        ``test_mse`` and ``test_r2`` (regression) or ``test_accuracy`` (classification),
        ``n_iter``, ``fit_time``, ``n_landmarks``.
    """
    from ..learning.ridge import NystromRidge, NystromRidgeClassifier

    if "y" not in ctx.data:
        raise ValueError("the kernel-ridge task needs targets: a data source with y")
    X, y = ctx.samples(), np.asarray(ctx.data["y"])
    p = ctx.params
    rng = np.random.default_rng(ctx.seed)
    perm = rng.permutation(len(y))
    n_test = max(1, int(round(p["test_fraction"] * len(y))))
    test, train = perm[:n_test], perm[n_test:]
    regression = _is_regression(y)
    model = (NystromRidge if regression else NystromRidgeClassifier)(
        kernel=_fitted(ctx.components["kernel"], X[train]),
        sampler=_sampler(ctx),
        n_components=p["n_components"],
        alpha=p["alpha"],
        solver=p["solver"],
        tol=p["tol"],
        max_iter=p["max_iter"],
        random_state=ctx.seed,
    )
    offset = float(np.mean(y[train])) if regression else 0.0
    t0 = time.perf_counter()
    model.fit(X[train], y[train] - offset if regression else y[train])
    out = {
        "fit_time": time.perf_counter() - t0,
        "n_iter": int(model.n_iter_),
        "n_landmarks": len(model.components_),
    }
    if regression:
        pred = model.predict(X[test]) + offset
        out["test_mse"] = float(np.mean((pred - y[test]) ** 2))
        out["test_r2"] = float(model.score(X[test], y[test] - offset))
    else:
        out["test_accuracy"] = float(model.score(X[test], y[test]))
    return out


TASK = Task(
    "kernel-ridge",
    run_kernel_ridge,
    {
        "n_components": 100,
        "alpha": 1e-6,
        "solver": "pcg",
        "tol": 1e-4,
        "max_iter": 200,
        "test_fraction": 0.25,
        "lam": None,
    },
    ("kernel", "sampler"),
    {"kernel": "rbf", "sampler": "uniform"},
    "Nyström kernel ridge regression / classification (FALKON's solver), test error",
    check=rules(
        {
            "n_components": COUNT,
            "alpha": POSITIVE,
            "tol": NONNEGATIVE,
            "max_iter": COUNT,
            "test_fraction": FRACTION,
        }
    ),
    metrics=("fit_time", "n_iter", "n_landmarks", "test_mse", "test_r2", "test_accuracy"),
)

__all__ = ["run_kernel_ridge"]
