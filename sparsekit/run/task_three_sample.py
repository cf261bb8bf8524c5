"""The ``three-sample`` task: the three-sample test (Algorithm 3S-eval)."""

from __future__ import annotations

import numpy as np

from ..stats.three_sample import METHODS
from ._rules import COUNT, NONNEGATIVE_INT, one_of, rules
from .task_mmd import _method_options
from .tasks import Task, TaskContext


def _labels(value):
    return {value} if np.ndim(value) == 0 else set(np.ravel(value).tolist())


def _class_draws(ctx):
    """Draws ``(n, rng) -> n points`` without replacement from the samples whose label is in
    each of ``classes`` (a label, or a list of labels pooled into one distribution)."""
    X, y = ctx.need("X", "y")
    pools = []
    for value in ctx.params["classes"]:
        pool = X[np.isin(y, list(_labels(value)))]
        if not len(pool):
            raise ValueError(
                f"three-sample: class {value!r} has no sample (labels: "
                f"{sorted(set(np.asarray(y).tolist()))[:10]})"
            )
        pools.append(pool)
    if len(pools) != 2:
        raise ValueError(
            f"three-sample: classes names two classes (P_X, P_Z), got {ctx.params['classes']!r}"
        )

    def draw(pool):
        def sample(n, rng):
            if n > len(pool):
                raise ValueError(
                    f"three-sample: n={n} is more than the {len(pool)} samples of "
                    "a class (draws are without replacement)"
                )
            return pool[rng.choice(len(pool), n, replace=False)]

        return sample

    return draw(pools[0]), draw(pools[1])


def run_three_sample(ctx: TaskContext) -> list:
    """Run Algorithm 3S-eval of the Cherfaoui thesis (§4.6).

    Through :func:`sparsekit.stats.three_sample_error`: one row per (method, n) with the error rate
    (``error_rate``: ``error`` of that function, renamed apart from the runner's ``error`` column
    of failed runs), its standard error ``error_se``, Δ to the exact MMD ``delta`` (NaN beyond
    ``exact_max_n``) and the mean ``time``, every method seeing the same draws.

    The distributions: ``sample_x``/``sample_z`` draws of the data (``gaussian-pair``,
    ``graph-pair``), else the two ``classes`` of labelled data (each a label or a list of
    labels), drawn without replacement. ``methods`` is a method or a list; ``n`` a size or a
    list. The method options (``n_landmarks``, ``sampler``, ``lam``, ``n_frequencies``,
    ``block_size``) go to the methods that take them.

    Parameters
    ----------
    ctx : TaskContext
        The run's data, components, parameters (``ctx.params``) and seed.

    Returns
    -------
    list of dict
        One row per (method, n).
    """
    from ..stats import three_sample_error
    from ..stats.three_sample import METHOD_OPTIONS

    p = ctx.params
    if "sample_x" in ctx.data and "sample_z" in ctx.data:
        sample_x, sample_z = ctx.data["sample_x"], ctx.data["sample_z"]
    else:
        sample_x, sample_z = _class_draws(ctx)
    methods = [p["methods"]] if isinstance(p["methods"], str) else list(p["methods"])
    sizes = [int(n) for n in np.atleast_1d(p["n"])]
    options = {m: _method_options(p, m) for m in methods if m in METHOD_OPTIONS}
    rows = three_sample_error(
        sample_x,
        sample_z,
        sizes,
        methods=methods,
        n_repetitions=p["n_repetitions"],
        kernel=ctx.components["kernel"],
        method_options={m: o for m, o in options.items() if o},
        exact_max_n=p["exact_max_n"],
        random_state=ctx.seed,
        registry=ctx.registry,
    )
    return [{("error_rate" if k == "error" else k): v for k, v in r.items()} for r in rows]


TASK = Task(
    "three-sample",
    run_three_sample,
    {
        "classes": [0, 1],
        "methods": "nystrom",
        "n": 100,
        "n_repetitions": 10,
        "exact_max_n": 5000,
        "n_landmarks": None,
        "sampler": None,
        "lam": None,
        "n_frequencies": None,
        "block_size": None,
    },
    ("kernel",),
    {"kernel": "rbf"},
    "three-sample test: error rate, Δ to exact MMD, time (a row per method and n)",
    check=rules(
        {
            "methods": one_of(*METHODS),
            "n": COUNT,
            "n_repetitions": COUNT,
            "exact_max_n": NONNEGATIVE_INT,
            "n_landmarks": COUNT,
            "n_frequencies": COUNT,
            "block_size": COUNT,
        }
    ),
)

__all__ = ["run_three_sample"]
