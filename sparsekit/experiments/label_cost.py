"""The task ``label-cost``: which points to label, chosen ∝ ridge leverage scores (Cherfaoui,
PhD thesis, 2022, §3.3, Exp. 3.C, Fig. 3.5), and the ``nystrom-classifier`` task: a Nyström
classifier on sampled points or k-means / QuicK-means centroids (Giffon, PhD thesis, 2020,
Table 3.3, "Nyström + SVM").

``label-cost``, one run per repetition j (the run's seed):

1. split: scikit-learn's ``train_test_split(X, y, test_size=test_fraction, random_state=j)``
   (70/30 by default, the authors' code); with ``standardize``, every feature centred and
   scaled by its mean and standard deviation on the training split;
2. kernel: the ``[kernel]`` section fitted on the training split (a bandwidth rule is resolved
   there once) and then held fixed;
3. scores: the ``[sampler]``'s ``scores`` on the training split (``lam`` as in
   :func:`~sparsekit.run.tasks.make_sampler`; DAC, two-pass and recursive RLS use their
   default ⌈√n_train⌉ block, first-pass or level size, the authors' ``sample_size``); a
   sampler without scores (``uniform``) gives every point the same;
4. for each budget b of ``budgets`` (fractions of the training split, in order): the
   ``round(b · n_train)`` points to label drawn ∝ the normalised scores without replacement
   (:func:`sparsekit.samplers._draw.fixed_size`; one generator, ``default_rng(j)``, draws the
   scores of step 3 when they are random, then every budget in turn);
5. model: kernel ridge on the labelled points alone, every labelled point a landmark
   (:class:`~sparsekit.NystromRidge`, ``solver="direct"``, with ``m = n`` it is
   ``KernelRidge(alpha = λ n)``) on y minus its mean over the labelled points, or
   :class:`~sparsekit.NystromRidgeClassifier` for class labels;
6. score on the test split: ``mse`` (scikit-learn's ``mean_squared_error``) for a regression
   target, ``accuracy`` (``accuracy_score``) for classes.

One row per budget: ``budget``, ``n_labels``, ``n_train``, ``mse`` or ``accuracy``,
``score_time`` (seconds of step 3). :func:`label_cost_table` runs every sampler and
repetition and holds the mean and standard deviation per sampler and budget.

``nystrom-classifier``, one run per seed s: the split of the ``quickmeans`` task
(``sparsekit.experiments.quickmeans.split``, a permutation from ``default_rng(s)``,
``test_fraction`` of the points for the test set), the kernel fitted on the training split,
then for each entry of ``landmarks`` a :class:`~sparsekit.NystromRidgeClassifier` with
``n_components`` landmarks: ``"uniform"`` training points, or the centroids of scikit-learn's
``KMeans`` (``"kmeans"``) or of :class:`~sparsekit.QuicKMeans` (``"quickmeans"``, sparsity 3)
through the estimator's ``landmarks=`` option. One row per entry: ``landmarks``,
``accuracy`` on the test split, ``fit_time``, ``n_landmarks``.

``budgets`` and ``landmarks`` take a list (a row per item in each run; a spec writes it
inside a list, ``[[...]]``, as a spec's lists are swept) or one item (a run per item of a
sweep).

Notes
-----
The thesis trains an SVM (``SVC(kernel="rbf", gamma=1)`` in the authors' code) in Exp. 3.C,
and Table 3.3 a linear SVM on Nyström features of the whole training set; here both are the
kernel ridge classifier of :mod:`sparsekit.learning` (one-vs-rest ±1 targets), so the
absolute accuracies differ from the theses' while the order of the samplers is what is
compared. Houses and KC1 do not ship with scikit-learn: the regression set is ``diabetes``
and the classification set ``breast-cancer`` (binary, as KC1). When a budget labels points of
a single class, the classifier predicts that class (no fit). Features are standardized by
default because the raw breast-cancer features span five orders of magnitude, where one
Gaussian bandwidth sees only the largest.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..run._rules import COUNT, FRACTION, POSITIVE, one_of, rules
from ..run.tasks import Task, TaskContext, _fitted, _sampler
from ..samplers._draw import fixed_size

if TYPE_CHECKING:
    from ..kernels.base import Kernel

#: the label budgets of the authors' code, fractions of the training split
BUDGETS = [0.05, 0.07, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]

#: the sampler families of Exp. 3.C, in the order of the tables ("rls": exact, small sets)
SAMPLERS = ("dac-rls", "recursive-rls", "two-pass-rls", "uniform", "rls")

#: the landmark choices of Table 3.3's "Nyström + SVM" row
LANDMARKS = ["uniform", "kmeans", "quickmeans"]

#: the Gaussian kernel of the Chapter 3 experiments (bandwidth rule ``mean-sq-dist``)
KERNEL = {"name": "rbf", "bandwidth": "mean-sq-dist"}

BUDGET = (lambda v: FRACTION[0](v) or v == 1, "a fraction in (0, 1]")


def is_regression(y: np.ndarray, target: str) -> bool:
    """Whether ``y`` is a regression target: ``target``, or with ``"auto"`` a float ``y`` with
    more than 20 distinct values (the rule of the ``nystrom`` task)."""
    if target != "auto":
        return target == "regression"
    return bool(np.issubdtype(y.dtype, np.floating) and len(np.unique(y)) > 20)


def _standardized(X_train, X_test):
    mean, std = X_train.mean(axis=0), X_train.std(axis=0)
    std[std == 0] = 1.0
    return (X_train - mean) / std, (X_test - mean) / std


def _as_list(value):
    """A list parameter, or one value of it (a spec that sweeps the parameter)."""
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _fixed_kernel(kernel):
    """The fitted ``kernel`` as a function of two row blocks: an estimator given it does not
    resolve a bandwidth rule again on the points it is fitted on."""
    return lambda A, B: kernel(A, B)


def label_draws(X, kernel, sampler, budgets, seed):
    """The points to label for each budget (steps 3 and 4): ``(draws, score_time)``, the
    sorted indices into ``X`` per budget and the seconds the scores took. One generator,
    ``default_rng(seed)``, draws the scores (when they are random) and then the budgets."""
    n = len(X)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    scores = (
        np.asarray(sampler.scores(X, kernel, random_state=rng))
        if hasattr(sampler, "scores")
        else np.ones(n)
    )
    score_time = time.perf_counter() - t0
    draws = [fixed_size(scores, min(n, max(1, int(round(b * n)))), rng)[0] for b in budgets]
    return draws, score_time


def labelled_score(X, y, X_test, y_test, kernel, alpha, regression):
    """Test score of kernel ridge on the labelled points ``(X, y)`` (steps 5 and 6)."""
    from sklearn.metrics import accuracy_score, mean_squared_error

    from ..learning import NystromRidge, NystromRidgeClassifier

    params = dict(kernel=_fixed_kernel(kernel), landmarks=X, n_components=len(X), alpha=alpha)
    if regression:
        shift = float(np.mean(y))
        model = NystromRidge(solver="direct", **params).fit(X, y - shift)
        return float(mean_squared_error(y_test, model.predict(X_test) + shift))
    if len(np.unique(y)) == 1:
        return float(accuracy_score(y_test, np.full(len(y_test), y[0])))
    model = NystromRidgeClassifier(solver="direct", **params).fit(X, y)
    return float(accuracy_score(y_test, model.predict(X_test)))


def run_label_cost(ctx: TaskContext) -> list[dict[str, Any]]:
    """Score kernel ridge trained on the points a sampler chooses to label, per budget.

    Parameters
    ----------
    ctx : TaskContext
        The run's data (``X``, ``y``), kernel and sampler, parameters (``ctx.params``) and seed
        (the repetition j).

    Returns
    -------
    list of dict
        One row per budget (module docstring).
    """
    from sklearn.model_selection import train_test_split

    X, y = ctx.need("X", "y")
    y = np.asarray(y)
    p = ctx.params
    regression = is_regression(y, p["target"])
    X_train, X_test, y_train, y_test = train_test_split(
        np.asarray(X, dtype=np.float64), y, test_size=p["test_fraction"], random_state=ctx.seed
    )
    if p["standardize"]:
        X_train, X_test = _standardized(X_train, X_test)
    kernel = _fitted(ctx.components["kernel"], X_train)
    budgets = _as_list(p["budgets"])
    draws, score_time = label_draws(X_train, kernel, _sampler(ctx), budgets, ctx.seed)
    metric = "mse" if regression else "accuracy"
    rows = []
    for budget, idx in zip(budgets, draws):
        value = labelled_score(
            X_train[idx], y_train[idx], X_test, y_test, kernel, p["alpha"], regression
        )
        rows.append(
            {
                "budget": float(budget),
                "n_labels": len(idx),
                "n_train": len(X_train),
                metric: value,
                "score_time": score_time,
            }
        )
    return rows


def run_nystrom_classifier(ctx: TaskContext) -> list[dict[str, Any]]:
    """Test accuracy of the Nyström ridge classifier per landmark choice.

    Parameters
    ----------
    ctx : TaskContext
        The run's data (``X``, ``y``), kernel, parameters (``ctx.params``) and seed.

    Returns
    -------
    list of dict
        One row per entry of ``landmarks`` (module docstring).
    """
    from ..learning import NystromRidgeClassifier
    from .quickmeans import split

    X, y = ctx.need("X", "y")
    p = ctx.params
    X_train, y_train, X_test, y_test = split(
        np.asarray(X, dtype=np.float64),
        np.asarray(y),
        np.random.default_rng(ctx.seed),
        p["test_fraction"],
    )
    if p["standardize"]:
        X_train, X_test = _standardized(X_train, X_test)
    kernel = _fixed_kernel(_fitted(ctx.components["kernel"], X_train))
    rows = []
    for name in _as_list(p["landmarks"]):
        t0 = time.perf_counter()
        clf = NystromRidgeClassifier(
            kernel=kernel,
            sampler="uniform",
            landmarks=None if name == "uniform" else name,
            n_components=p["n_components"],
            alpha=p["alpha"],
            solver="direct",
            random_state=ctx.seed,
        ).fit(X_train, y_train)
        rows.append(
            {
                "landmarks": name,
                "accuracy": float(clf.score(X_test, y_test)),
                "fit_time": time.perf_counter() - t0,
                "n_landmarks": len(clf.components_),
            }
        )
    return rows


@dataclass
class LabelCostTable:
    """Test scores per sampler and budget: ``scores[(sampler, budget)]`` over the repetitions.

    Parameters
    ----------
    dataset : str
        The data set's name, for the title.
    metric : str
        ``"mse"`` (lower is better) or ``"accuracy"`` (higher is better).
    budgets : list of float
        The label budgets (the columns).
    samplers : list of str
        The samplers (the rows).
    scores : dict, optional
        ``{(sampler, budget): array of scores over repetitions}``.
    skipped : dict, optional
        ``{sampler: reason}`` for the samplers left out.
    """

    dataset: str
    metric: str
    budgets: list
    samplers: list
    scores: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)

    def best(self, budget: float) -> str:
        """The sampler of the best mean score at ``budget``.

        Parameters
        ----------
        budget : float
            One of ``budgets``.

        Returns
        -------
        str
            The sampler's name.
        """
        means = {s: float(np.mean(self.scores[(s, budget)])) for s in self.samplers}
        pick = min if self.metric == "mse" else max
        return pick(means, key=means.__getitem__)

    def format(self) -> str:
        """Format the table as Markdown: ``mean ± std`` per sampler and budget, and the best.

        Returns
        -------
        str
            The table.
        """
        from ..run.tables import format_table

        n_rep = len(next(iter(self.scores.values()))) if self.scores else 0
        rows = [
            [s]
            + [
                f"{np.mean(self.scores[(s, b)]):.4g} ± {np.std(self.scores[(s, b)]):.2g}"
                for b in self.budgets
            ]
            for s in self.samplers
        ]
        rows.append(["best"] + [self.best(b) for b in self.budgets])
        text = format_table(
            ["sampler"] + [f"{100 * b:g}%" for b in self.budgets],
            rows,
            title=f"test {self.metric} against the label budget — {self.dataset} "
            f"({n_rep} repetitions)",
        )
        return text + "".join(f"\n  ({s}: {why})" for s, why in self.skipped.items())


def label_cost_table(
    X: Any,
    y: Any,
    samplers: Sequence[str] = SAMPLERS,
    budgets: Sequence[float] = tuple(BUDGETS),
    repetitions: int = 20,
    kernel: Mapping[str, Any] | Kernel | None = None,
    alpha: float = 1e-3,
    dataset: str = "data",
    **params: Any,
) -> LabelCostTable:
    """Run the ``label-cost`` task for every sampler and repetition j = 0 … repetitions − 1.

    Parameters
    ----------
    X, y : array-like
        The data and its targets.
    samplers : sequence of str, default SAMPLERS
        Registered sampler names; exact ``"rls"`` is skipped above
        ``sparsekit.experiments.nystrom_tables.EXACT_RLS_MAX_N`` training points.
    budgets : sequence of float, default BUDGETS
        Label budgets, fractions of the training split.
    repetitions : int, default 20
        Repetitions; repetition j splits and draws with seed j.
    kernel : dict or kernel object, optional
        A kernel section or a kernel; default :data:`KERNEL`.
    alpha : float, default 1e-3
        The ridge parameter λ of the kernel ridge models.
    dataset : str, default "data"
        The data set's name, for the title.
    **params
        Other parameters of the task (``test_fraction``, ``lam``, ``target``, ``standardize``).

    Returns
    -------
    LabelCostTable
        The scores of every sampler and budget over the repetitions.
    """
    from ..run.tasks import run_task
    from .nystrom_tables import EXACT_RLS_MAX_N

    if repetitions < 1:
        raise ValueError(f"repetitions must be an integer >= 1, got {repetitions!r}")
    budgets = [float(b) for b in budgets]
    kernel = dict(KERNEL) if kernel is None else kernel
    data = {"X": X, "y": y}
    n_train = len(X) - int(np.ceil(params.get("test_fraction", 0.3) * len(X)))
    table = LabelCostTable(dataset, "", budgets, [])
    for name in samplers:
        if name == "rls" and n_train > EXACT_RLS_MAX_N:
            table.skipped[name] = f"exact RLS not computed for n > {EXACT_RLS_MAX_N}"
            continue
        table.samplers.append(name)
        runs = [
            cast(
                "list[dict[str, Any]]",
                run_task(
                    "label-cost",
                    {**params, "budgets": budgets, "alpha": alpha},
                    data,
                    {"kernel": kernel, "sampler": {"name": name}},
                    seed=j,
                ),
            )
            for j in range(repetitions)
        ]
        table.metric = "mse" if "mse" in runs[0][0] else "accuracy"
        for k, b in enumerate(budgets):
            table.scores[(name, b)] = np.array([rows[k][table.metric] for rows in runs])
    return table


LABEL_COST = Task(
    "label-cost",
    run_label_cost,
    {
        "budgets": list(BUDGETS),
        "test_fraction": 0.3,
        "alpha": 1e-3,
        "lam": "inverse-mean-norm",
        "target": "auto",
        "standardize": True,
    },
    ("kernel", "sampler"),
    {"kernel": "rbf", "sampler": "uniform"},
    "points to label drawn ∝ a sampler's scores, kernel ridge on them: test MSE or "
    "accuracy per label budget (a row per budget)",
    requires={"sklearn": "sparsekit[forest]"},
    check=rules(
        {
            "budgets": BUDGET,
            "test_fraction": FRACTION,
            "alpha": POSITIVE,
            "target": one_of("auto", "regression", "classification"),
        }
    ),
    metrics=("budget", "n_labels", "n_train", "mse", "accuracy", "score_time"),
)

NYSTROM_CLASSIFIER = Task(
    "nystrom-classifier",
    run_nystrom_classifier,
    {
        "landmarks": list(LANDMARKS),
        "n_components": 64,
        "test_fraction": 0.2,
        "alpha": 1e-6,
        "standardize": True,
    },
    ("kernel",),
    {"kernel": "rbf"},
    "Nyström ridge classifier on uniform landmarks or k-means / QuicK-means centroids: "
    "test accuracy (a row per landmark choice)",
    requires={"sklearn": "sparsekit[forest]"},
    check=rules(
        {
            "landmarks": one_of(*LANDMARKS),
            "n_components": COUNT,
            "test_fraction": FRACTION,
            "alpha": POSITIVE,
        }
    ),
    metrics=("landmarks", "accuracy", "fit_time", "n_landmarks"),
)

__all__ = [
    "run_label_cost",
    "run_nystrom_classifier",
    "label_cost_table",
    "LabelCostTable",
    "BUDGETS",
    "SAMPLERS",
    "LANDMARKS",
    "KERNEL",
]
