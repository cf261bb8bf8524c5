"""The task ``nn``: the neural-network experiments of Giffon (2020, PhD thesis), one task with a
parameter ``experiment`` that picks one of :data:`EXPERIMENTS`.

- ``"parameters"``: accuracy against the number of learned parameters, dense layer vs adaptive
  and non-adaptive Nyström layers (Fig. 2.2; :mod:`sparsekit.experiments.nn_nystrom`);
- ``"few-shot"``: accuracy with 5 and 20 labelled points per class (Table 2.2; same module);
- ``"compress"``: a LeNet-style network compressed by products of sparse factors, Palm4MSA's
  initialisation against re-initialised values and random supports, after fine-tuning
  (Table 3.6; :mod:`sparsekit.experiments.nn_compress`).

Each entry of :data:`EXPERIMENTS` is a :class:`~sparsekit.run.tasks.Task` record (not
registered itself): its ``run(ctx)`` and its parameters with their defaults. The task ``nn``
takes ``experiment`` and the union of the experiments' parameters; a parameter left at ``None``
takes the chosen experiment's default, and setting one that the chosen experiment does not take
is an error. Adding an experiment is adding an entry. Keras (the ``nn`` extra) is imported
only when a run starts.
"""

from __future__ import annotations

from typing import Any

from .._names import did_you_mean, normalize_name
from ..run.tasks import Task, TaskContext
from . import nn_compress, nn_nystrom

#: experiment name -> Task record (its ``run`` and ``params``)
EXPERIMENTS = {
    "parameters": nn_nystrom.PARAMETERS,
    "few-shot": nn_nystrom.FEW_SHOT,
    "compress": nn_compress.COMPRESS,
}


def experiment(name: str) -> Task:
    """Look up the entry of ``EXPERIMENTS`` named ``name`` (case- and ``-``/``_``-insensitive).

    Parameters
    ----------
    name : str
        ``"parameters"`` or ``"few-shot"``.

    Returns
    -------
    Task
        The experiment's task (its ``run`` and default parameters).

    Raises
    ------
    TypeError
        ``name`` is not a string.
    ValueError
        Unknown name (the closest one is suggested).
    """
    if not isinstance(name, str):
        raise TypeError(
            f"experiment must be a string, one of {', '.join(EXPERIMENTS)}; got {name!r}"
        )
    for key, entry in EXPERIMENTS.items():
        if normalize_name(key) == normalize_name(name):
            return entry
    raise ValueError(
        f"unknown nn experiment {name!r}.{did_you_mean(name, list(EXPERIMENTS))} "
        f"Experiments: {', '.join(EXPERIMENTS)}"
    )


def run_nn(ctx: TaskContext) -> list[dict[str, Any]]:
    """Run the chosen experiment with its defaults and the parameters the spec sets.

    Parameters
    ----------
    ctx : TaskContext
        The run's data, parameters (``ctx.params["experiment"]`` names the experiment) and seed.

    Returns
    -------
    list of dict
        The experiment's rows of results.

    Raises
    ------
    ValueError
        A parameter the chosen experiment does not have.
    """
    entry = experiment(ctx.params["experiment"])
    given = {k: v for k, v in ctx.params.items() if k != "experiment" and v is not None}
    foreign = sorted(k for k in given if k not in entry.params)
    if foreign:
        raise ValueError(
            f"nn experiment {entry.name!r} has no parameter {foreign[0]!r}; its "
            f"parameters: {', '.join(sorted(entry.params))}"
        )
    sub = TaskContext(
        data=ctx.data,
        components=ctx.components,
        params={**entry.params, **given},
        seed=ctx.seed,
        component_params=ctx.component_params,
    )
    return entry.run(sub)


def _params() -> dict:
    params: dict = {"experiment": "parameters"}
    for entry in EXPERIMENTS.values():
        params.update((k, None) for k in entry.params)
    return params


#: the task's parameters: ``experiment`` and every experiment's (``None``: its default)
PARAMS = _params()

TASK = Task(
    "nn",
    run_nn,
    PARAMS,
    (),
    {},
    "neural-network experiments (Giffon 2020): experiment = "
    + " | ".join(f'"{k}"' for k in EXPERIMENTS)
    + " (needs the nn extra)",
    requires={"keras": "sparsekit[nn]"},
)

__all__ = ["run_nn", "experiment", "EXPERIMENTS"]
