"""The plugin-author API: what a plugin subclasses, yields and returns, in one namespace.

::

    from sparsekit.plugins import Landmarks, Registration, Sampler, hookimpl
    from sparsekit.validation import check_n_landmarks, check_random_state

- the hook marker and the record: :data:`hookimpl`, :class:`Registration` (one per component,
  yielded from the family's hook: ``sparsekit_kernels``, ``sparsekit_samplers``,
  ``sparsekit_solvers``, ``sparsekit_factorizers``, ``sparsekit_projections``,
  ``sparsekit_manifold_kernels``, ``sparsekit_tasks``; :data:`HOOKS` maps family to hook), and
  :class:`Registry` (to test a plugin without installing it);
- the base classes: :class:`Kernel`, :class:`VectorKernel`, :class:`Sampler`,
  :class:`ScoreSampler`, :class:`Solver`, :class:`Factorizer`, :class:`Projection`,
  :class:`ManifoldKernel`, and :class:`Task` for the tasks of ``sparsekit run``;
- what they receive and return: :class:`ChunkedData` (a sampler's optional
  ``sample_chunked``), :class:`TaskContext`, :class:`Landmarks`, :class:`SparseResult`,
  :class:`Codes` (what a :class:`Solver` subclass's ``_solve_residual`` / ``_solve_gram``
  returns), :class:`FactorizationResult`, and :func:`check_constraints` (a factorizer's
  projections, resolved and checked to chain).

Elsewhere, each in its own module: the input checks in :mod:`sparsekit.validation`
(``check_array``, ``check_scalar``, ``check_n_landmarks``, ...), the protocols in
:mod:`sparsekit.protocols`, the errors and warnings in :mod:`sparsekit.exceptions`, the registry's
records (``ComponentInfo``, ``SkippedPlugin``) in :mod:`sparsekit.registry` and
:func:`sparsekit.components.check_result`.

Every name is imported on first use, so ``from sparsekit.plugins import hookimpl`` costs no
more than the module that defines it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

#: name -> the module that defines it.
_SOURCES = {
    "hookimpl": "sparsekit.hookspecs",
    "Registration": "sparsekit.hookspecs",
    "HOOKS": "sparsekit._families",
    "Registry": "sparsekit.registry",
    "Kernel": "sparsekit.kernels.base",
    "VectorKernel": "sparsekit.kernels.base",
    "Sampler": "sparsekit.samplers.base",
    "ScoreSampler": "sparsekit.samplers.base",
    "ChunkedData": "sparsekit.samplers.chunked",
    "Landmarks": "sparsekit.samplers.base",
    "Solver": "sparsekit.solvers.base",
    "SparseResult": "sparsekit.solvers.base",
    "Codes": "sparsekit.solvers.base",
    "Factorizer": "sparsekit.factorizers.base",
    "FactorizationResult": "sparsekit.factorizers.base",
    "check_constraints": "sparsekit.factorizers.base",
    "Projection": "sparsekit.projections.base",
    "ManifoldKernel": "sparsekit.manifold.kernels",
    "Task": "sparsekit.run.tasks",
    "TaskContext": "sparsekit.run.tasks",
}

#: Names whose object has another name in its module.
_RENAMED = {"ManifoldKernel": "DataDependentKernel"}

__all__ = [
    "hookimpl",
    "Registration",
    "HOOKS",
    "Registry",
    "Kernel",
    "VectorKernel",
    "Sampler",
    "ScoreSampler",
    "ChunkedData",
    "Landmarks",
    "Solver",
    "SparseResult",
    "Codes",
    "Factorizer",
    "FactorizationResult",
    "check_constraints",
    "Projection",
    "ManifoldKernel",
    "Task",
    "TaskContext",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from ._families import HOOKS
    from .factorizers.base import FactorizationResult, Factorizer, check_constraints
    from .hookspecs import Registration, hookimpl
    from .kernels.base import Kernel, VectorKernel
    from .manifold.kernels import DataDependentKernel as ManifoldKernel
    from .projections.base import Projection
    from .registry import Registry
    from .run.tasks import Task, TaskContext
    from .samplers.base import Landmarks, Sampler, ScoreSampler
    from .samplers.chunked import ChunkedData
    from .solvers.base import Codes, Solver, SparseResult


def __getattr__(name):
    module = _SOURCES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), _RENAMED.get(name, name))
    globals()[name] = value  # later reads skip __getattr__
    return value


def __dir__():
    return sorted(set(globals()) | set(_SOURCES))
