"""``sparsekit run SPEC.toml``: declarative experiment runs from a spec file.

- :mod:`sparsekit.run.spec`: TOML parsing, validation (errors name the line and the closest
  valid name), sweep expansion (product and ``zip``);
- :mod:`sparsekit.run.data`: data sources (toy sets, generated sets, files, graph folders);
- :mod:`sparsekit.run.tasks`: the tasks, their extension point :func:`register_task`, and
  :func:`run_task`, which runs one task on data in memory (``sparsekit demo`` and the
  examples compute their tables through it);
- :mod:`sparsekit.run.runner`: execution (here or on a Dask cluster), output and resume;
- :mod:`sparsekit.run.results`: the result files (written so that a crash loses nothing that
  finished, one outcome per run id) and the lock on the output folder;
- :mod:`sparsekit.run.demo` (the sections of ``sparsekit demo``),
  :mod:`sparsekit.run.nystrom_tables` (the Nyström error and score-time tables) and
  :mod:`sparsekit.run.tables` (Markdown tables): formatting around :func:`run_task`.
"""
from .runner import dry_run, execute_point, plan, run_spec
from .spec import Spec, SpecError, expand, load_spec
from .tasks import (Task, TaskContext, get_task, register_task, run_task, task_names,
                    unregister_task)

__all__ = ["Spec", "SpecError", "load_spec", "expand", "plan", "run_spec", "dry_run",
           "execute_point", "Task", "TaskContext", "register_task", "unregister_task",
           "get_task", "task_names", "run_task"]
