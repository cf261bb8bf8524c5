"""Tasks of ``sparsekit run``: what one run of a spec computes, and the metrics it reports.

A task is a :class:`Task`: a function ``run(ctx) -> dict`` of metrics (or a list of such dicts,
one row each, when one run measures several things on the same draws), the component families it
takes (``[kernel]``, ``[sampler]``, ``[solver]`` sections of the spec, built through the registry),
and its parameters with their defaults (the spec's ``[params]``).

Extension point
---------------
A third-party package adds a task with :func:`register_task`, either when it is imported or
through an entry point of the group ``sparsekit.tasks`` whose object is a :class:`Task` (loaded
at the first lookup)::

    # in the plugin's pyproject.toml: [project.entry-points."sparsekit.tasks"]
    # my-task = "my_package.tasks:MY_TASK"
    from sparsekit.run.tasks import Task, register_task

    def run(ctx):
        X = ctx.data["X"]
        return {"mean_norm": float(np.linalg.norm(X, axis=1).mean())}

    MY_TASK = Task("my-task", run, params={"scale": 1.0})
    register_task(MY_TASK)

Built-in tasks: ``nystrom``, ``sampler``, ``sparse-coding``, ``kernel-kmeans``, ``mmd``,
``three-sample``, ``quickmeans``, ``palm4msa``, ``gram``, ``out-of-sample``, ``omp-forest``,
``frank-wolfe-recovery``.

One implementation per protocol
-------------------------------
:func:`run_task` runs one task on data in memory (no spec, no output files). ``sparsekit demo``
and the example scripts call it, so a table of the demo, an example's figure and a row of
``sparsekit run`` come from the same code.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from importlib import metadata
from typing import Callable

import numpy as np

ENTRY_POINT_GROUP = "sparsekit.tasks"


@dataclass(frozen=True)
class Task:
    """A runnable task.

    Parameters
    ----------
    name : str
    run : callable
        ``run(ctx: TaskContext) -> dict`` of metric name to number (or short string), or a
        list of such dicts (one row of results each).
    params : dict
        The task's parameters and their defaults (the only keys ``[params]`` accepts).
    components : tuple of str
        Families the task takes (``"kernel"``, ``"sampler"``, ``"solver"``).
    default_components : dict
        ``{family: name}`` used when the spec's section gives no ``name``.
    summary : str
    """

    name: str
    run: Callable
    params: dict = field(default_factory=dict)
    components: tuple = ()
    default_components: dict = field(default_factory=dict)
    summary: str = ""
    #: ``False``: the task builds its components itself from ``ctx.component_params`` (when a
    #: parameter depends on the data, as Frank–Wolfe's radius on the signals)
    build_components: bool = True


@dataclass
class TaskContext:
    """What a task's ``run`` receives: data, built components, parameters and the seed."""

    data: dict
    components: dict
    params: dict
    seed: int
    component_params: dict = field(default_factory=dict)

    def samples(self):
        """The samples: vectors ``X``, or the ``graphs`` of a graph collection."""
        if "X" in self.data:
            return self.data["X"]
        if "graphs" in self.data:
            return self.data["graphs"]
        return self.need("X")[0]

    def need(self, *keys):
        missing = [k for k in keys if k not in self.data]
        if missing:
            raise ValueError(f"this task needs data with {', '.join(missing)}; the data source "
                             f"gave {', '.join(sorted(self.data))}")
        return [self.data[k] for k in keys]


_TASKS: dict = {}
_ENTRY_POINTS_LOADED = False


def register_task(task: Task, *, replace: bool = False) -> Task:
    """Make ``task`` available to specs (``task = "<name>"``). Returns it (usable as a decorator
    result). A name already taken raises ``ValueError`` unless ``replace=True``."""
    if not isinstance(task, Task):
        raise TypeError(f"register_task takes a sparsekit.run.tasks.Task, got {type(task).__name__}")
    if task.name in _TASKS and not replace:
        raise ValueError(f"a task named {task.name!r} is already registered")
    _TASKS[task.name] = task
    return task


def unregister_task(name: str) -> None:
    _TASKS.pop(name, None)


def _load_entry_points():
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            task = ep.load()
            if task.name not in _TASKS:
                register_task(task)
        except Exception as exc:  # a broken plugin must not break the runner
            warnings.warn(f"task plugin {ep.name!r} skipped: {exc}", UserWarning, stacklevel=2)


def task_names() -> list[str]:
    _load_entry_points()
    return list(_TASKS)


def get_task(name: str) -> Task:
    _load_entry_points()
    if name not in _TASKS:
        from .spec import closest

        raise ValueError(f"unknown task {name!r}.{closest(name, _TASKS)}")
    return _TASKS[name]


def _component(task, family, value, registry):
    """``(object, section)`` of one component: a section ``{"name": ..., **params}`` is built
    through the registry; anything else is an object used as given (section ``{}``)."""
    if not isinstance(value, dict):
        return value, {}
    params = dict(value)
    name = params.pop("name", task.default_components.get(family))
    return registry.get(family, name, **params), {"name": name, **params}


def run_task(name: str, params=None, data=None, components=None, seed: int = 0,
             registry=None):
    """Run the task ``name`` once on ``data`` and return its metrics: a dict (the row of a
    spec run), or a list of dicts for a task that reports several rows per run.

    Parameters
    ----------
    name : str
        A registered task (:func:`task_names`).
    params : dict, optional
        The task's parameters (the spec's ``[params]``); missing ones take the task's defaults.
    data : dict
        What a data source returns: ``X`` (and ``y``), ``graphs``, or ``D``/``Y``/``coef``
        (see :mod:`sparsekit.run.data`).
    components : dict, optional
        ``{family: section}`` with ``section = {"name": ..., **parameters}`` as a spec's
        ``[kernel]``/``[sampler]``/``[solver]`` table (built through the registry; a missing
        name takes the task's default), or ``{family: object}`` for a component built already
        (except for tasks that build their components from the data, as ``sparse-coding``).
    seed : int
    registry : Registry, optional
        Default: the default registry.

    Returns
    -------
    dict or list of dict

    Raises
    ------
    ValueError
        Unknown task, or a parameter the task does not take (the closest name is suggested).
    """
    from ..registry import default_registry

    task = get_task(name)
    registry = registry or default_registry()
    params = dict(params or {})
    unknown = [k for k in params if k not in task.params]
    if unknown:
        from .spec import closest

        raise ValueError(f"task {task.name!r} has no parameter {unknown[0]!r}."
                         f"{closest(unknown[0], task.params)} Parameters: "
                         f"{', '.join(sorted(task.params))}")
    merged = {**task.params, **params}
    components = dict(components or {})
    built, sections = {}, {}
    for family in task.components:
        value = components.get(family, {})
        if task.build_components:
            built[family], sections[family] = _component(task, family, value, registry)
        elif isinstance(value, dict):
            sections[family] = dict(value)
        else:  # the task builds it from its parameters, which may depend on the data
            raise TypeError(f"task {task.name!r} builds its {family} itself: give "
                            f"components={{{family!r}: {{'name': ..., **parameters}}}}, not "
                            f"a {type(value).__name__} object")
    ctx = TaskContext(data=dict(data or {}), components=built, params=merged, seed=seed,
                      component_params=sections)
    return task.run(ctx)


# -- helpers ---------------------------------------------------------------------------------
def _fitted(kernel, X):
    return kernel.fit(X) if hasattr(kernel, "fit") else kernel


def make_sampler(name, lam=None, registry=None, **params):
    """The registered sampler ``name`` built with ``params``; ``lam`` (when not None) goes to
    the samplers that take a λ, except recursive RLS.

    The Chapter 3 protocol of the Cherfaoui thesis (§3.3) sets λ = (mean ‖x_i‖)⁻¹
    (``lam="inverse-mean-norm"``) for the ridge-leverage-score samplers and lets recursive RLS
    keep its adaptive λ, as the authors' code the thesis used as baseline does (thesis §3.1.2;
    Musco & Musco 2017).
    """
    from ..registry import default_registry
    from .spec import factory_parameters

    info = (registry or default_registry()).lookup("sampler", name)
    accepted, _ = factory_parameters(info.registration.factory)
    if lam is not None and "lam" in accepted and info.name != "recursive-rls":
        params["lam"] = lam
    return info.registration.factory(**params)


def _sampler(ctx):
    """The task's sampler, with the task parameter ``lam`` applied (see :func:`make_sampler`)
    when the sampler came from a section that sets no λ of its own."""
    section = ctx.component_params.get("sampler") or {}
    lam = ctx.params.get("lam")
    if lam is None or "name" not in section or "lam" in section:
        return ctx.components["sampler"]
    params = dict(section)
    return make_sampler(params.pop("name"), lam=lam, **params)


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
    return "ridge_accuracy", float(RidgeClassifier(alpha=alpha).fit(Z[train], y[train]).score(Z[test], y[test]))


def _ari(y, labels):
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score(y, labels))


# -- built-in tasks --------------------------------------------------------------------------
def run_nystrom(ctx: TaskContext) -> dict:
    """Nyström approximation: ‖K_E − K̂_E‖_F (absolute and, with ``relative_error``, relative)
    on ``n_eval`` points, fit time, and the test accuracy of a ridge classifier on the features
    (when y is given and ``ridge_alpha`` is not None).

    The landmarks are drawn with ``ctx.seed``, the evaluation subset E with ``eval_seed``
    (default ``seed + 1``): one ``eval_seed`` for every run of a table compares all samplers
    on the same E (Cherfaoui thesis §3.3). ``lam`` sets λ of the RLS samplers that the
    ``[sampler]`` section leaves unset (:func:`make_sampler`).
    """
    from ..features.nystrom import Nystroem

    X = ctx.samples()
    p = ctx.params
    kernel = _fitted(ctx.components["kernel"], X)
    t0 = time.perf_counter()
    ny = Nystroem(kernel, sampler=_sampler(ctx), n_components=p["n_components"],
                  random_state=ctx.seed).fit(X)
    fit_time = time.perf_counter() - t0
    eval_seed = ctx.seed + 1 if p["eval_seed"] is None else p["eval_seed"]
    out = {"n_landmarks": int(ny.n_components_), "fit_time": fit_time}
    out["error_fro"] = float(ny.approximation_error(X, norm="fro", n_eval=p["n_eval"],
                                                    random_state=eval_seed))
    if p["relative_error"]:
        out["rel_error_fro"] = float(ny.approximation_error(X, norm="fro", n_eval=p["n_eval"],
                                                            relative=True, random_state=eval_seed))
    if "y" in ctx.data and p["ridge_alpha"] is not None:
        key, value = _ridge_accuracy(ny.transform(X), ctx.data["y"], p["ridge_alpha"],
                                     p["test_fraction"], ctx.seed)
        out[key] = value
    return out


def run_sampler(ctx: TaskContext) -> dict:
    """Landmark quality of a sampler: score time and effective dimension Σ scores (samplers
    with scores), and the relative residual trace tr(K − K̂)/tr(K) of ``n_landmarks`` drawn
    landmarks (``n_landmarks = 0``: scores only).

    With ``warm_up``, the scores are computed once on the first 200 samples before the timed
    call, so that compilation is not timed. ``lam`` as in :func:`run_nystrom`.
    """
    from ..features.nystrom import Nystroem

    X = ctx.samples()
    p = ctx.params
    kernel = _fitted(ctx.components["kernel"], X)
    sampler = _sampler(ctx)
    out = {}
    if hasattr(sampler, "scores"):
        if p["warm_up"]:
            sampler.scores(X[:min(200, len(X))], kernel, random_state=ctx.seed)
        t0 = time.perf_counter()
        scores = np.asarray(sampler.scores(X, kernel, random_state=ctx.seed))
        out["score_time"] = time.perf_counter() - t0
        out["sum_scores"] = float(scores.sum())
        out["max_score"] = float(scores.max())
    if not p["n_landmarks"]:
        return out
    t0 = time.perf_counter()
    ny = Nystroem(kernel, sampler=sampler, n_components=p["n_landmarks"], random_state=ctx.seed).fit(X)
    out["sample_time"] = time.perf_counter() - t0
    out["n_landmarks"] = int(len(ny.component_indices_))
    out["rel_residual_trace"] = float(ny.approximation_error(X, norm="trace", relative=True,
                                                             n_eval=p["n_eval"], random_state=ctx.seed + 1))
    return out


def run_sparse_coding(ctx: TaskContext) -> dict:
    """A solver on a dictionary and signals: time, support recovery (the true support equals
    the atoms of the ``m`` largest |coefficients|), median and max relative residual.

    Parameters the solver section leaves out follow the protocol of the solver demo: OMP and
    NN-OMP stop at ``m`` atoms, MP runs ``4 m`` steps (``max_iter`` overrides both), Frank–Wolfe
    gets the radius ``beta = beta_factor · ‖x*‖₁`` per signal (Cherfaoui thesis §5.4 uses 8)
    and ``max_iter`` (default 100) line-search steps.
    """
    from ..registry import default_registry
    from .spec import factory_parameters

    D, Y, coef = ctx.need("D", "Y", "coef")
    p = ctx.params
    if p["nonnegative"]:
        coef = np.abs(coef)
        Y = D @ coef
    m = int(np.count_nonzero(coef[:, 0]))
    table = dict(ctx.component_params.get("solver", {}))
    name = table.pop("name", "omp")
    info = default_registry().lookup("solver", name)
    accepted, _ = factory_parameters(info.registration.factory)
    defaults = {"n_nonzero_coefs": p["max_iter"] or m,
                "max_iter": p["max_iter"] or (100 if "beta" in accepted else 4 * m),
                "beta": p["beta_factor"] * np.abs(coef).sum(axis=0)}
    for key, value in defaults.items():
        if key in accepted and key not in table:
            table[key] = value
    solver = info.registration.factory(**table)
    if p["warm_up"]:
        # the whole batch: a solver may pick its kernel from the batch size (OMP's "auto"
        # precompute takes the Gram path only for enough signals), so one signal could compile
        # another kernel than the timed call runs
        solver.solve(D, Y)
    t0 = time.perf_counter()
    result = solver.solve(D, Y)
    elapsed = time.perf_counter() - t0
    m = int(np.count_nonzero(coef[:, 0]))
    top = np.argsort(-np.abs(result.coef), axis=0)[:m]
    recovered = np.mean([set(top[:, j]) == set(np.flatnonzero(coef[:, j])) for j in range(Y.shape[1])])
    rel = np.linalg.norm(Y - D @ result.coef, axis=0) / np.linalg.norm(Y, axis=0)
    return {"time": elapsed, "support_recovery": float(recovered),
            "median_rel_residual": float(np.median(rel)), "max_rel_residual": float(rel.max()),
            "mean_nnz": float(np.mean(np.count_nonzero(result.coef, axis=0)))}


def run_kernel_kmeans(ctx: TaskContext) -> dict:
    """Kernel k-means (exact or Nyström): inertia, time, residual trace, landmarks kept
    (None when exact), and the adjusted Rand index and adjusted mutual information against y;
    with ``return_labels``, the cluster of every sample (``labels``)."""
    from ..cluster.kernel_kmeans import KernelKMeans

    X = ctx.samples()
    p = ctx.params
    kernel = _fitted(ctx.components["kernel"], X)
    t0 = time.perf_counter()
    km = KernelKMeans(p["n_clusters"], kernel=kernel, sampler=ctx.components["sampler"],
                      n_landmarks=p["n_landmarks"], n_init=p["n_init"], method=p["method"],
                      random_state=ctx.seed).fit(X)
    out = {"time": time.perf_counter() - t0, "inertia": float(km.inertia_), "method": km.method_,
           "residual_trace": float(km.residual_trace_),
           "n_landmarks": None if km.nystroem_ is None else int(km.nystroem_.n_components_)}
    if "y" in ctx.data:
        from sklearn.metrics import adjusted_mutual_info_score

        out["ari"] = _ari(ctx.data["y"], km.labels_)
        out["ami"] = float(adjusted_mutual_info_score(ctx.data["y"], km.labels_))
    if p["return_labels"]:
        out["labels"] = km.labels_
    return out


def _two_classes(ctx):
    X, y = ctx.need("X", "y")
    a, b = ctx.params["classes"]
    Xa, Xb = X[y == a], X[y == b]
    if not len(Xa) or not len(Xb):
        raise ValueError(f"classes {a!r} and {b!r}: one of them has no sample (labels: "
                         f"{sorted(set(np.asarray(y).tolist()))[:10]})")
    return Xa, Xb


def _method_options(p, method):
    from ..stats.three_sample import METHOD_OPTIONS

    return {k: p[k] for k in METHOD_OPTIONS[method] if k in p and p[k] is not None}


def run_mmd(ctx: TaskContext) -> dict:
    """MMD² between the samples of two classes (``classes``), by ``method``, with its time and
    the difference to the exact (biased) MMD² when ``n`` ≤ ``exact_max_n``."""
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
        value = stats.mmd2_nystrom(Xa, Xb, kernel, random_state=ctx.seed, **opts)
    else:
        from .spec import closest

        raise ValueError(f"mmd: unknown method {method!r}.{closest(method, ['exact', 'unbiased', 'linear', 'block', 'rff', 'nystrom'])}")
    out = {"mmd2": float(value), "time": time.perf_counter() - t0}
    if len(Xa) + len(Xb) <= p["exact_max_n"]:
        out["delta_exact"] = float(value - stats.mmd2_biased(Xa, Xb, kernel))
    return out


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
            raise ValueError(f"three-sample: class {value!r} has no sample (labels: "
                             f"{sorted(set(np.asarray(y).tolist()))[:10]})")
        pools.append(pool)
    if len(pools) != 2:
        raise ValueError(f"three-sample: classes names two classes (P_X, P_Z), got "
                         f"{ctx.params['classes']!r}")

    def draw(pool):
        def sample(n, rng):
            if n > len(pool):
                raise ValueError(f"three-sample: n={n} is more than the {len(pool)} samples of "
                                 "a class (draws are without replacement)")
            return pool[rng.choice(len(pool), n, replace=False)]

        return sample

    return draw(pools[0]), draw(pools[1])


def run_three_sample(ctx: TaskContext) -> list:
    """Algorithm 3S-eval of the Cherfaoui thesis (§4.6) through
    :func:`sparsekit.stats.three_sample_error`: one row per (method, n) with the error rate
    (``error_rate``: ``error`` of that function, renamed apart from the runner's ``error``
    column of failed runs), its standard error ``error_se``, Δ to the exact MMD ``delta``
    (NaN beyond ``exact_max_n``) and the mean ``time``, every method seeing the same draws.

    The distributions: ``sample_x``/``sample_z`` draws of the data (``gaussian-pair``,
    ``graph-pair``), else the two ``classes`` of labelled data (each a label or a list of
    labels), drawn without replacement. ``methods`` is a method or a list; ``n`` a size or a
    list. The method options (``n_landmarks``, ``sampler``, ``lam``, ``n_frequencies``,
    ``block_size``) go to the methods that take them.
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
    rows = three_sample_error(sample_x, sample_z, sizes, methods=methods,
                              n_repetitions=p["n_repetitions"], kernel=ctx.components["kernel"],
                              method_options={m: o for m, o in options.items() if o},
                              exact_max_n=p["exact_max_n"], random_state=ctx.seed)
    return [{("error_rate" if k == "error" else k): v for k, v in r.items()} for r in rows]


def run_palm4msa(ctx: TaskContext) -> dict:
    """Factorize X into ``n_factors`` sparse factors (``sparsity`` non-zeros per row and column,
    the schedule of hierarchical Palm4MSA): relative error ‖X − λ∏S‖_F/‖X‖_F, non-zeros of
    the factors, time."""
    from ..solvers.hierarchical import hierarchical_constraints

    (X,) = ctx.need("X")
    p = ctx.params
    solver = ctx.components["solver"]
    if not hasattr(solver, "factorize"):
        raise ValueError(f"palm4msa: solver {getattr(solver, 'name', solver)!r} is not a "
                         "factorization solver (use palm4msa or hierarchical-palm4msa)")
    t0 = time.perf_counter()
    if getattr(solver, "name", "") == "hierarchical-palm4msa":
        res = solver.factorize(X, p["sparsity"], n_factors=p["n_factors"])
    else:
        facts, _ = hierarchical_constraints(X.shape, p["n_factors"], p["sparsity"])
        res = solver.factorize(X, facts)
    return {"time": time.perf_counter() - t0, "rel_error": float(res.relative_error),
            "nnz": int(res.factors.nnz), "n_iter": int(res.n_iter),
            "stop_reason": str(res.stop_reason)}


from .task_fw_recovery import run_fw_recovery  # noqa: E402
from .task_gram import run_gram  # noqa: E402  (task bodies in modules of their own)
from .task_omp_forest import run_omp_forest  # noqa: E402
from .task_out_of_sample import run_out_of_sample  # noqa: E402
from .task_quickmeans import PARAMS as QUICKMEANS_PARAMS  # noqa: E402
from .task_quickmeans import run_quickmeans  # noqa: E402

for _task in (
    Task("nystrom", run_nystrom, {"n_components": 100, "n_eval": 2000, "ridge_alpha": 1e-3,
                                  "test_fraction": 0.25, "lam": None, "eval_seed": None,
                                  "relative_error": True},
         ("kernel", "sampler"), {"kernel": "rbf", "sampler": "uniform"},
         "Nyström error, fit time, downstream ridge accuracy"),
    Task("sampler", run_sampler, {"n_landmarks": 100, "n_eval": 2000, "lam": None,
                                  "warm_up": True}, ("kernel", "sampler"),
         {"kernel": "rbf", "sampler": "uniform"}, "score time, effective dimension, residual trace"),
    Task("sparse-coding", run_sparse_coding, {"nonnegative": False, "warm_up": True,
                                              "max_iter": None, "beta_factor": 2.0}, ("solver",),
         {"solver": "omp"}, "solver on m-sparse signals: time, support recovery, residuals",
         build_components=False),
    Task("kernel-kmeans", run_kernel_kmeans, {"n_clusters": 2, "n_landmarks": None, "n_init": 3,
                                              "method": "auto", "return_labels": False},
         ("kernel", "sampler"), {"kernel": "rbf", "sampler": "uniform"},
         "kernel k-means: inertia, time, ARI"),
    Task("mmd", run_mmd, {"classes": [0, 1], "method": "nystrom", "n_landmarks": None,
                          "sampler": None, "lam": None, "n_frequencies": None, "block_size": None,
                          "exact_max_n": 4000},
         ("kernel",), {"kernel": "rbf"}, "MMD² between two classes, time, Δ to exact"),
    Task("three-sample", run_three_sample, {"classes": [0, 1], "methods": "nystrom", "n": 100,
                                            "n_repetitions": 10, "exact_max_n": 5000,
                                            "n_landmarks": None, "sampler": None, "lam": None,
                                            "n_frequencies": None, "block_size": None},
         ("kernel",), {"kernel": "rbf"},
         "three-sample test: error rate, Δ to exact MMD, time (a row per method and n)"),
    Task("quickmeans", run_quickmeans, QUICKMEANS_PARAMS, (), {},
         "QuicK-means against K-means from the same K-means++ start: objective, nnz, FLOPs, "
         "compression, 1-NN accuracy, Nyström error, fit time (a row per algorithm)"),
    Task("gram", run_gram, {"dtype": "float64", "warm_up": True, "n_eig": 300,
                            "checks": ["max_asym", "median", "min_eig"]}, ("kernel",),
         {"kernel": "rbf"}, "Gram matrix: time, symmetry error, median, smallest eigenvalue"),
    Task("out-of-sample", run_out_of_sample, {"method": "mds", "proportion": 0.05,
                                              "n_train": 400, "n_probe": 10, "n_repetitions": 1,
                                              "n_components": 2, "n_neighbors": 10, "gamma": None},
         (), {}, "embedding: out-of-sample error against training-set variability"),
    Task("omp-forest", run_omp_forest, {"method": "omp", "weights": "fitted", "n_estimators": 100,
                                        "sizes": [1, 2, 5, 10, 20], "problem": "auto",
                                        "test_size": 0.2, "validation_size": 0.25},
         (), {}, "random forest pruned by OMP / NN-OMP / random: test score per size"),
    Task("frank-wolfe-recovery", run_fw_recovery,
         {"n_dictionaries": 4, "n_signals": 25, "max_iter": 3000, "beta_factor": 8.0,
          "tol": 1e-20, "outside_factors": [2, 5, 20], "compare": True, "return_curves": False,
          "verbose": False},
         (), {}, "Frank–Wolfe on m-sparse signals: recovery inside and outside the coherence "
                 "hypotheses, against OMP and MP (a row per dictionary, sparsity and solver)"),
    Task("palm4msa", run_palm4msa, {"n_factors": 3, "sparsity": 2}, ("solver",),
         {"solver": "hierarchical-palm4msa"}, "sparse factorization: relative error, time"),
):
    register_task(_task)
