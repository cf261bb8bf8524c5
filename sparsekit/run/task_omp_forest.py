"""Task ``omp-forest``: a random forest pruned by a sparse solver, scored against its size.

The protocol of Cherfaoui (2022, PhD thesis, §6.3), for one pruning method and one repetition
(the run's seed):

1. split the data 60 % train / 20 % validation / 20 % test (``test_size`` of the whole, then
   ``validation_size`` of the rest; stratified for classification), with the seed;
2. fit a random forest of ``n_estimators`` trees on train (``random_state`` = the seed);
3. prune it on train + validation (the thesis' choice: the weights are learned on the union)
   with ``method`` (``omp``, ``nn-omp`` or the ``random`` baseline) and ``weights``
   (``fitted`` or ``uniform``), one fit giving every forest size up to ``max(sizes)`` (staged
   predictions);
4. score every size of ``sizes`` on test: R² for regression, accuracy for classification
   (``problem = "auto"``: classification when y holds integers).

Metrics: ``scores`` (one per size, None where the method stopped earlier, as NN-OMP does by
itself), ``score`` (at the largest size reached), ``full_forest`` (the unpruned forest's score),
``n_trees`` (trees selected) and ``negative_weight_fraction``. The forest of step 2 depends on
the data and the seed only, so runs that differ in the method alone share it (kept in memory
for the last data and seed).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from .._names import did_you_mean
from ._rules import COUNT, FRACTION, one_of, rules
from .tasks import Task, TaskContext

_FOREST_CACHE: dict = {}
#: a split's size as scikit-learn's train_test_split takes it: a fraction or a count
_SIZE = (lambda v: FRACTION[0](v) or COUNT[0](v), "a number in (0, 1) or an integer >= 1")


def _is_classification(y, problem):
    if problem not in ("auto", "regression", "classification"):
        raise ValueError(
            f"omp-forest: problem must be 'auto', 'regression' or "
            f"'classification', got {problem!r}."
            f"{did_you_mean(problem, ['auto', 'regression', 'classification'])}"
        )
    if problem == "auto":
        return np.issubdtype(np.asarray(y).dtype, np.integer)
    return problem == "classification"


def _split(X, y, classification, p, seed):
    from sklearn.model_selection import train_test_split

    X_rest, X_test, y_rest, y_test = train_test_split(
        X, y, test_size=p["test_size"], random_state=seed, stratify=y if classification else None
    )
    X_train, _, y_train, _ = train_test_split(
        X_rest,
        y_rest,
        test_size=p["validation_size"],
        random_state=seed,
        stratify=y_rest if classification else None,
    )
    return X_train, y_train, X_rest, y_rest, X_test, y_test


def _forest(X_train, y_train, classification, n_estimators, seed):
    """The random forest of step 2, fitted once per (data, size, seed)."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    key = (
        hashlib.sha1(
            np.ascontiguousarray(X_train).tobytes() + np.ascontiguousarray(y_train).tobytes()
        ).hexdigest(),
        classification,
        n_estimators,
        seed,
    )
    if key not in _FOREST_CACHE:
        Forest = RandomForestClassifier if classification else RandomForestRegressor
        _FOREST_CACHE.clear()
        _FOREST_CACHE[key] = Forest(n_estimators=n_estimators, random_state=seed, n_jobs=-1).fit(
            X_train, y_train
        )
    return _FOREST_CACHE[key]


def run_omp_forest(ctx: TaskContext) -> dict[str, Any]:
    """Prune a random forest with the task's method and score it against its size.

    Parameters
    ----------
    ctx : TaskContext
        The run's data, components, parameters (``ctx.params``) and seed.

    Returns
    -------
    dict
        ``score``, ``scores``, ``full_forest``, ``n_trees`` and ``negative_weight_fraction``.
    """
    from sklearn.metrics import accuracy_score, r2_score

    from ..ensemble import OMPForestClassifier, OMPForestRegressor

    X, y = ctx.need("X", "y")
    p = ctx.params
    sizes = [int(s) for s in np.atleast_1d(p["sizes"])]
    if not sizes or min(sizes) < 1:
        raise ValueError(f"omp-forest: sizes must be forest sizes >= 1, got {p['sizes']!r}")
    classification = _is_classification(y, p["problem"])
    score = accuracy_score if classification else r2_score
    X_train, y_train, X_rest, y_rest, X_test, y_test = _split(X, y, classification, p, ctx.seed)
    forest = _forest(X_train, y_train, classification, p["n_estimators"], ctx.seed)
    Pruned = OMPForestClassifier if classification else OMPForestRegressor
    model = Pruned(
        n_trees=max(sizes),
        forest=forest,
        solver=p["method"],
        weights=p["weights"],
        random_state=ctx.seed,
        registry=ctx.registry,
    ).fit(X_rest, y_rest)
    staged = list(model.staged_predict(X_test))
    scores = [float(score(y_test, staged[s - 1])) if s <= len(staged) else None for s in sizes]
    reached = [s for s in scores if s is not None]
    return {
        "score": reached[-1] if reached else None,
        "scores": scores,
        "full_forest": float(score(y_test, forest.predict(X_test))),
        "n_trees": int(model.n_trees_),
        "negative_weight_fraction": float(model.negative_weight_fraction_),
    }


TASK = Task(
    "omp-forest",
    run_omp_forest,
    {
        "method": "omp",
        "weights": "fitted",
        "n_estimators": 100,
        "sizes": [1, 2, 5, 10, 20],
        "problem": "auto",
        "test_size": 0.2,
        "validation_size": 0.25,
    },
    (),
    {},
    "random forest pruned by OMP / NN-OMP / random: test score per size",
    requires={"sklearn": "sparsekit[forest]"},
    check=rules(
        {
            "weights": one_of("fitted", "uniform"),
            "n_estimators": COUNT,
            "sizes": COUNT,
            "problem": one_of("auto", "regression", "classification"),
            **dict.fromkeys(("test_size", "validation_size"), _SIZE),
        }
    ),
    metrics=("score", "scores", "full_forest", "n_trees", "negative_weight_fraction"),
)

__all__ = ["run_omp_forest"]
