"""``sparsekit run SPEC.toml``: declarative experiment runs from a spec file.

- :mod:`sparsekit.run.spec`: TOML parsing, validation (errors name the line and the closest
  valid name), sweep expansion (product and ``zip``);
- :mod:`sparsekit.run.data`: data sources (toy sets, generated sets, files, graph folders);
- :mod:`sparsekit.run.tasks`: :class:`Task` (a registry family: plugins yield their tasks from
  the ``sparsekit_tasks`` hook) and :func:`run_task`, which runs one task on data in memory
  (``sparsekit demo`` and the examples compute their tables through it); the built-in tasks,
  one module each (``sparsekit.run.task_<name>``), registered by ``sparsekit.run._plugin``;
- :mod:`sparsekit.run.runner`: execution (here or on a Dask cluster), output and resume;
- :mod:`sparsekit.run.results`: the result files (written so that a crash loses nothing that
  finished, one outcome per run id) and the lock on the output folder;
- :mod:`sparsekit.run.tables`: Markdown tables; :mod:`sparsekit.run.plots`: the spec's plots.

The theses' protocols (the ``quickmeans``, ``frank-wolfe-recovery``, ``label-cost`` and
``nystrom-classifier`` tasks, the Nyström tables, ``sparsekit demo``) are in
:mod:`sparsekit.experiments`.
"""

import importlib

#: The public names, each imported from its module at first use: the registry imports this
#: package for its built-in tasks (``sparsekit.run._plugin``), and a lookup of a kernel must not
#: pay for the spec parser and the runner.
_NAMES = {
    "dry_run": "runner",
    "execute_point": "runner",
    "plan": "runner",
    "run_spec": "runner",
    "Spec": "spec",
    "SpecError": "spec",
    "expand": "spec",
    "load_spec": "spec",
    "Task": "tasks",
    "TaskContext": "tasks",
    "get_task": "tasks",
    "run_task": "tasks",
    "task_names": "tasks",
}

__all__ = [
    "Spec",
    "SpecError",
    "load_spec",
    "expand",
    "plan",
    "run_spec",
    "dry_run",
    "execute_point",
    "Task",
    "TaskContext",
    "get_task",
    "task_names",
    "run_task",
]


def __getattr__(name):
    if name in _NAMES:
        value = getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_NAMES))
