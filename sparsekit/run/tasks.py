"""Tasks of ``sparsekit run``: what one run of a spec computes, and the metrics it reports.

A task is a :class:`Task`: a function ``run(ctx) -> dict`` of metrics (or a list of such dicts,
one row each, when one run measures several things on the same draws), the component families it
takes (``[kernel]``, ``[sampler]``, ``[solver]`` sections of the spec, built through the registry),
and its parameters with their defaults (the spec's ``[params]``).

Tasks are a registry family
---------------------------
Tasks are registered like kernels and samplers: a plugin implements the ``sparsekit_tasks``
hook and yields one :class:`~sparsekit.hookspecs.Registration` per task
(:meth:`Task.registration` builds it), so that the registry's rules hold for tasks too (names
case- and ``-``/``_``-insensitive, built-ins win a name, a plugin that claims a taken name is
skipped with a warning, ``SPARSEKIT_DISABLE_PLUGINS``,
:meth:`~sparsekit.registry.Registry.skipped`, ``sparsekit
list --family task``)::

    # in the plugin module named by the distribution's "sparsekit" entry point
    import numpy as np
    from sparsekit.plugins import Task, hookimpl

    def run(ctx):
        X = ctx.data["X"]
        return {"mean_norm": float(np.linalg.norm(X, axis=1).mean())}

    MY_TASK = Task("my-task", run, params={"scale": 1.0})

    @hookimpl
    def sparsekit_tasks():
        yield MY_TASK.registration()

The built-in tasks are registered through the same hook, one module each
(``sparsekit.run.task_<name>``; the theses' protocols ``quickmeans``,
``frank-wolfe-recovery``, ``label-cost`` and ``nystrom-classifier`` in
:mod:`sparsekit.experiments`): ``nystrom``, ``sampler``,
``sparse-coding``, ``kernel-kmeans``, ``mmd``, ``three-sample``, ``quickmeans``, ``palm4msa``,
``gram``, ``out-of-sample``, ``omp-forest``, ``frank-wolfe-recovery``, ``label-cost``,
``nystrom-classifier``.

One implementation per protocol
-------------------------------
:func:`run_task` runs one task on data in memory (no spec, no output files). ``sparsekit demo``
and the example scripts call it, so a table of the demo, an example's figure and a row of
``sparsekit run`` come from the same code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._names import did_you_mean
from .._required_params import factory_signature
from ..components import resolve
from ..hookspecs import Registration
from ..registry import Registry, default_registry

if TYPE_CHECKING:
    from ..protocols import SamplerProtocol


@dataclass(frozen=True)
class Task:
    """A runnable task.

    Parameters
    ----------
    name : str
        The name specs use (``task = "<name>"``).
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
        One line that ``sparsekit list`` and the documentation show.
    build_components : bool, default True
        ``False``: the task builds its components itself from ``ctx.component_params`` (when a
        parameter depends on the data, as Frank–Wolfe's radius on the signals).
    families : dict, optional
        ``{section: family}`` where a section's components are looked up in another registry
        family than the section's name (default: none).
    requires : dict, optional
        ``{module: pip requirement}``: the optional packages the task imports (e.g.
        ``{"sklearn": "sparsekit[forest]"}``), checked when a spec is loaded so that a
        missing one is named with its ``pip install`` line before any run.
    metrics : tuple of str, optional
        Every metric column the task may report; when given, a spec's ``[[plot]]`` columns
        are checked against them (and the spec's own columns) when it is loaded. ``None``
        (default): not declared, and only the spec's dotted columns are checked.
    check : callable, optional
        ``check(params)``, called when a spec is loaded with the parameters of a grid point
        (defaults filled in; once per value of the spec, not per point): raises
        :class:`ValueError` naming the parameter for a value the task cannot run with
        (``"n_components must be an integer >= 1, got -3"``). Before it, a value whose type
        differs from its default's (bool, int, float, str; an int passes for a float) is
        refused; a parameter whose default is None or a list is left to ``check``, and so
        is one that ``check.names`` lists (a hook made by ``sparsekit.run._rules.rules``
        lists the parameters it has a rule for).
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
    #: ``{section: family}``: the registry family a component section is resolved in, where it
    #: is not the section's name (the ``palm4msa`` task's ``[solver]`` names a factorizer)
    families: dict = field(default_factory=dict)
    #: ``{module: pip requirement}``: optional packages the task imports
    requires: dict = field(default_factory=dict)
    #: every metric column the task may report (``None``: not declared)
    metrics: tuple | None = None
    #: ``check(params)`` raises ValueError for a value the task cannot run with
    check: Callable | None = None

    def family_of(self, section: str) -> str:
        """The registry family in which the component of ``section`` is looked up.

        Parameters
        ----------
        section : str
            A component section of the spec (one of ``components``).

        Returns
        -------
        str
            ``families[section]``, else ``section`` itself.
        """
        return self.families.get(section, section)

    def registration(self, aliases: tuple = ()) -> Registration:
        """Build the record that registers this task.

        What a ``sparsekit_tasks`` hook yields.

        Parameters
        ----------
        aliases : tuple of str, default ()
            Other names of the task.

        Returns
        -------
        Registration
            The record; its factory, called without arguments, returns this task.
        """
        return Registration(
            self.name,
            functools.partial(_the_task, self),
            aliases=aliases,
            summary=self.summary,
            accepts="any",
        )


def _the_task(task: Task) -> Task:
    return task


@dataclass
class TaskContext:
    """What a task's ``run`` receives: data, built components, parameters and the seed.

    Parameters
    ----------
    data : dict
        What the data source returned (``X``, ``y``, ``graphs``, ``D``, ``Y``, ...).
    components : dict
        ``{family: component}``, built from the spec's sections.
    params : dict
        The task's parameters, defaults filled in.
    seed : int
        The run's seed.
    component_params : dict, optional
        ``{family: section}``: the sections the components were built from (``{"name": ...,
        **parameters}``).
    registry : Registry, optional
        Where the task resolves the component names it builds itself (``None``: the
        process-wide registry), the one :func:`run_task` was given.
    """

    data: dict
    components: dict
    params: dict
    seed: int
    component_params: dict = field(default_factory=dict)
    registry: Registry | None = None

    def samples(self) -> Any:
        """Return the samples: vectors ``X``, or the ``graphs`` of a graph collection.

        Returns
        -------
        array-like or sequence of graphs
            ``data["X"]``, else ``data["graphs"]``.

        Raises
        ------
        ValueError
            The data has neither.
        """
        if "X" in self.data:
            return self.data["X"]
        if "graphs" in self.data:
            return self.data["graphs"]
        return self.need("X")[0]

    def need(self, *keys: str) -> list[Any]:
        """Return the data items ``keys``, or say which are missing.

        Parameters
        ----------
        *keys : str
            The keys of ``data`` the task needs.

        Returns
        -------
        list
            ``[data[key] for key in keys]``.

        Raises
        ------
        ValueError
            A key is missing: the message names it and the keys the data source gave.
        """
        missing = [k for k in keys if k not in self.data]
        if missing:
            raise ValueError(
                f"this task needs data with {', '.join(missing)}; the data source "
                f"gave {', '.join(sorted(self.data))}"
            )
        return [self.data[k] for k in keys]


def get_task(name: str, registry: Registry | None = None) -> Task:
    """Return the task registered as ``name`` (case- and ``-``/``_``-insensitive).

    Parameters
    ----------
    name : str
        A task name or alias.
    registry : Registry, optional
        Where to look; the default registry when omitted.

    Returns
    -------
    Task
        The task.

    Raises
    ------
    ValueError
        Unknown task (:class:`~sparsekit.exceptions.UnknownComponentError`: the message names the
        closest task and lists them all).
    """
    return (registry or default_registry()).get("task", name)


def task_names(registry: Registry | None = None) -> list[str]:
    """Return the names of the registered tasks.

    Parameters
    ----------
    registry : Registry, optional
        Where to look; the default registry when omitted.

    Returns
    -------
    list of str
        The names, sorted.
    """
    return (registry or default_registry()).names("task")


def run_task(
    name: str,
    params: dict[str, Any] | None = None,
    data: dict[str, Any] | None = None,
    components: dict[str, Any] | None = None,
    seed: int = 0,
    registry: Registry | None = None,
) -> dict[str, Any] | list[dict[str, Any]]:
    """Run the task ``name`` once on ``data`` and return its metrics.

    The metrics are a dict (the row of a spec run), or a list of dicts for a task that reports
    several rows per run.

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
        name takes the task's default), ``{family: "name"}`` for a registered name with its
        default parameters, or ``{family: object}`` for a component built already (copied,
        as estimators copy theirs; a kernel may also be a function ``k(X, Y) -> Gram``),
        except for tasks that build their components from the data, as ``sparse-coding``.
        Each is resolved by :func:`sparsekit.components.resolve`.
    seed : int, default 0
        The run's seed (``ctx.seed``).
    registry : Registry, optional
        Where the task and component names are resolved (default: the process-wide registry);
        the task receives it as ``ctx.registry``.

    Returns
    -------
    dict or list of dict
        Metric name to number (or short string): one row, or one dict per row.

    Raises
    ------
    ValueError
        Unknown task, or a parameter the task does not take (the closest name is suggested).
    """
    registry = registry or default_registry()
    task = get_task(name, registry)
    params = dict(params or {})
    unknown = [k for k in params if k not in task.params]
    if unknown:
        raise ValueError(
            f"task {task.name!r} has no parameter {unknown[0]!r}."
            f"{did_you_mean(unknown[0], task.params)} Parameters: "
            f"{', '.join(sorted(task.params))}"
        )
    merged = {**task.params, **params}
    components = dict(components or {})
    built, sections = {}, {}
    for family in task.components:
        value = components.get(family, {})
        if isinstance(value, str):  # a registered name alone, as a spec's ``kernel = "rbf"``
            value = {"name": value}
        if task.build_components and isinstance(value, dict):
            section = dict(value)
            name = section.pop("name", task.default_components.get(family))
            built[family] = resolve(task.family_of(family), name, section, registry=registry)
            sections[family] = {"name": name, **section}
        elif task.build_components:
            built[family] = resolve(task.family_of(family), value, registry=registry)
            sections[family] = {}
        elif isinstance(value, dict):
            sections[family] = dict(value)
        else:  # the task builds it from its parameters, which may depend on the data
            raise TypeError(
                f"task {task.name!r} builds its {family} itself: give "
                f"components={{{family!r}: {{'name': ..., **parameters}}}}, not "
                f"a {type(value).__name__} object"
            )
    ctx = TaskContext(
        data=dict(data or {}),
        components=built,
        params=merged,
        seed=seed,
        component_params=sections,
        registry=registry,
    )
    return task.run(ctx)


def _fitted(kernel, X):
    return kernel.fit(X) if hasattr(kernel, "fit") else kernel


def make_sampler(
    name: str, lam: float | str | None = None, registry: Registry | None = None, **params: Any
) -> SamplerProtocol:
    """Build the registered sampler ``name`` with ``params``.

    The sampler is built by :func:`sparsekit.components.resolve`, through ``registry``. ``lam``
    (when not None) goes to the samplers that take a λ, except recursive RLS.

    The Chapter 3 protocol of the Cherfaoui thesis (§3.3) sets λ = (mean ‖x_i‖)⁻¹
    (``lam="inverse-mean-norm"``) for the ridge-leverage-score samplers and lets recursive RLS
    keep its adaptive λ, as the authors' code the thesis used as baseline does (thesis §3.1.2;
    Musco & Musco 2017).

    Parameters
    ----------
    name : str
        A registered sampler name.
    lam : float or str, optional
        The regularization λ for the samplers that take one (a number or a rule such as
        ``"inverse-mean-norm"``); ignored by recursive RLS.
    registry : Registry, optional
        Where to look; the default registry when omitted.
    **params
        The sampler's other parameters.

    Returns
    -------
    Sampler
        The sampler.
    """
    info = (registry or default_registry()).lookup("sampler", name)
    if (
        lam is not None
        and "lam" in factory_signature(info.registration.factory).names
        and info.name != "recursive-rls"
    ):
        params["lam"] = lam
    return resolve("sampler", name, params, registry=registry)


def _sampler(ctx):
    """The task's sampler, with the task parameter ``lam`` applied (see :func:`make_sampler`)
    when the sampler came from a section that sets no λ of its own."""
    section = ctx.component_params.get("sampler") or {}
    lam = ctx.params.get("lam")
    if lam is None or "name" not in section or "lam" in section:
        return ctx.components["sampler"]
    params = dict(section)
    return make_sampler(params.pop("name"), lam=lam, registry=ctx.registry, **params)


__all__ = [
    "Task",
    "TaskContext",
    "get_task",
    "task_names",
    "run_task",
    "make_sampler",
]
