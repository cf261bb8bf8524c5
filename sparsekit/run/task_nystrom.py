"""The ``nystrom`` task: Nyström error, fit time and downstream ridge accuracy."""

from __future__ import annotations

import time

import numpy as np

from ._rules import COUNT, FRACTION, NONNEGATIVE, NONNEGATIVE_INT, rules
from .tasks import Task, TaskContext, _fitted, _sampler


def _split(n, test_fraction, seed):
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    n_test = max(1, int(round(test_fraction * n)))
    return perm[n_test:], perm[:n_test]


def _ridge_accuracy(Z, y, alpha, test_fraction, seed):
    """Test accuracy of a ridge classifier on features Z (classes) or R² (continuous y)."""
    from sklearn.linear_model import Ridge, RidgeClassifier

    train, test = _split(len(y), test_fraction, seed)
    if np.issubdtype(np.asarray(y).dtype, np.floating) and len(np.unique(y)) > 20:
        return "ridge_r2", float(Ridge(alpha=alpha).fit(Z[train], y[train]).score(Z[test], y[test]))
    return "ridge_accuracy", float(
        RidgeClassifier(alpha=alpha).fit(Z[train], y[train]).score(Z[test], y[test])
    )


def run_nystrom(ctx: TaskContext) -> dict:
    """Fit a Nyström approximation and measure it.

    The metrics: ‖K_E − K̂_E‖_F (absolute and, with ``relative_error``, relative) on ``n_eval``
    points, fit time, and the test accuracy of a ridge classifier on the features (when y is given
    and ``ridge_alpha`` is not None).

    The landmarks are drawn with ``ctx.seed``, the evaluation subset E with ``eval_seed``
    (default ``seed + 1``): one ``eval_seed`` for every run of a table compares all samplers
    on the same E (Cherfaoui thesis §3.3). ``lam`` sets λ of the RLS samplers that the
    ``[sampler]`` section leaves unset (:func:`~sparsekit.run.tasks.make_sampler`).

    Parameters
    ----------
    ctx : TaskContext
        The run's data, components, parameters (``ctx.params``) and seed.

    Returns
    -------
    dict
        The errors, the fit time and (when computed) the test accuracy.
    """
    from ..features.nystrom import Nystroem

    X = ctx.samples()
    p = ctx.params
    kernel = _fitted(ctx.components["kernel"], X)
    t0 = time.perf_counter()
    ny = Nystroem(
        kernel, sampler=_sampler(ctx), n_components=p["n_components"], random_state=ctx.seed
    ).fit(X)
    fit_time = time.perf_counter() - t0
    eval_seed = ctx.seed + 1 if p["eval_seed"] is None else p["eval_seed"]
    out = {"n_landmarks": int(ny.n_components_), "fit_time": fit_time}
    out["error_fro"] = float(
        ny.approximation_error(X, norm="fro", n_eval=p["n_eval"], random_state=eval_seed)
    )
    if p["relative_error"]:
        out["rel_error_fro"] = float(
            ny.approximation_error(
                X, norm="fro", n_eval=p["n_eval"], relative=True, random_state=eval_seed
            )
        )
    if "y" in ctx.data and p["ridge_alpha"] is not None:
        key, value = _ridge_accuracy(
            ny.transform(X), ctx.data["y"], p["ridge_alpha"], p["test_fraction"], ctx.seed
        )
        out[key] = value
    return out


TASK = Task(
    "nystrom",
    run_nystrom,
    {
        "n_components": 100,
        "n_eval": 2000,
        "ridge_alpha": 1e-3,
        "test_fraction": 0.25,
        "lam": None,
        "eval_seed": None,
        "relative_error": True,
    },
    ("kernel", "sampler"),
    {"kernel": "rbf", "sampler": "uniform"},
    "Nyström error, fit time, downstream ridge accuracy",
    requires={"sklearn": "sparsekit[forest]"},
    check=rules(
        {
            "n_components": COUNT,
            "n_eval": COUNT,
            "ridge_alpha": NONNEGATIVE,
            "test_fraction": FRACTION,
            "eval_seed": NONNEGATIVE_INT,
        }
    ),
    metrics=("n_landmarks", "fit_time", "error_fro", "rel_error_fro", "ridge_accuracy", "ridge_r2"),
)

__all__ = ["run_nystrom"]
