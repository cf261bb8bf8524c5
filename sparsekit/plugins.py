"""The plugin-author API: everything a plugin imports, in one namespace.

::

    from sparsekit.plugins import Registration, Sampler, hookimpl, check_n_landmarks

- the hook marker and the record: :data:`hookimpl`, :class:`Registration` (one per component,
  yielded from the family's hook: ``sparsekit_kernels``, ``sparsekit_samplers``,
  ``sparsekit_solvers``, ``sparsekit_factorizers``, ``sparsekit_projections``,
  ``sparsekit_manifold_kernels``, ``sparsekit_tasks``; :data:`HOOKS` maps family to hook);
- the base classes: :class:`Kernel`, :class:`VectorKernel`, :class:`Sampler`,
  :class:`ScoreSampler` (and :class:`ChunkedData`, what a sampler's optional ``sample_chunked``
  receives), :class:`Solver`, :class:`Factorizer`, :class:`Projection`,
  :class:`ManifoldKernel`, and :class:`Task` / :class:`TaskContext` for the tasks of
  ``sparsekit run``;
- the protocols (:mod:`sparsekit.protocols`, one per family) and the result types
  :class:`Landmarks`, :class:`SparseResult`, :class:`FactorizationResult`, and :class:`Codes`
  (what a :class:`Solver` subclass's ``_solve_residual`` / ``_solve_gram`` returns);
- what input a component takes: :data:`INPUT_KINDS`, :func:`input_kinds`;
- the input checks (:mod:`sparsekit.validation`): ``check_array``, ``check_pair``, ...,
  and ``check_constraints`` (a factorizer's projections, resolved and checked to chain);
- the registry's records, errors and warnings: :class:`Registry` (to test a plugin without
  installing it), :class:`SkippedPlugin`, :class:`ComponentInfo`, :func:`check_result`,
  :class:`ComponentResultError`, :class:`ComponentConflictError`, :class:`PluginWarning` and
  its subclasses.

Every name is imported on first use, so ``from sparsekit.plugins import hookimpl`` costs no
more than the module that defines it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

#: name -> the module that defines it.
_SOURCES = {
    "hookimpl": "sparsekit.hookspecs",
    "HOOKS": "sparsekit._families",
    "Registration": "sparsekit.hookspecs",
    "Registry": "sparsekit.registry",
    "ComponentInfo": "sparsekit.registry",
    "SkippedPlugin": "sparsekit.registry",
    "check_result": "sparsekit.components",
    "UnknownComponentError": "sparsekit.exceptions",
    "ComponentConflictError": "sparsekit.exceptions",
    "ComponentResultError": "sparsekit.exceptions",
    "PluginWarning": "sparsekit.exceptions",
    "PluginLoadWarning": "sparsekit.exceptions",
    "ComponentConflictWarning": "sparsekit.exceptions",
    "UnknownHookWarning": "sparsekit.exceptions",
    "INPUT_KINDS": "sparsekit._accepts",
    "input_kinds": "sparsekit._accepts",
    "Kernel": "sparsekit.kernels.base",
    "VectorKernel": "sparsekit.kernels.base",
    "Sampler": "sparsekit.samplers.base",
    "ScoreSampler": "sparsekit.samplers.base",
    "Landmarks": "sparsekit.samplers.base",
    "ChunkedData": "sparsekit.samplers.chunked",
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
    **{
        name: "sparsekit.protocols"
        for name in (
            "KernelProtocol",
            "SamplerProtocol",
            "SolverProtocol",
            "FactorizerProtocol",
            "ProjectionProtocol",
            "ManifoldKernelProtocol",
            "TaskProtocol",
            "PROTOCOLS",
        )
    },
    **{
        name: "sparsekit.validation"
        for name in (
            "check_array",
            "check_pair",
            "check_scalar",
            "check_positive",
            "check_option",
            "check_random_state",
            "check_n_landmarks",
            "check_dictionary",
            "check_signals",
            "check_tol",
            "check_n_nonzero",
        )
    },
}

#: Names whose object has another name in its module.
_RENAMED = {"ManifoldKernel": "DataDependentKernel"}

__all__ = [
    "hookimpl",
    "HOOKS",
    "Registration",
    "Registry",
    "ComponentInfo",
    "SkippedPlugin",
    "check_result",
    "UnknownComponentError",
    "ComponentConflictError",
    "ComponentResultError",
    "PluginWarning",
    "PluginLoadWarning",
    "ComponentConflictWarning",
    "UnknownHookWarning",
    "INPUT_KINDS",
    "input_kinds",
    "Kernel",
    "VectorKernel",
    "Sampler",
    "ScoreSampler",
    "Landmarks",
    "Solver",
    "SparseResult",
    "Factorizer",
    "FactorizationResult",
    "Projection",
    "ManifoldKernel",
    "Task",
    "TaskContext",
    "KernelProtocol",
    "SamplerProtocol",
    "SolverProtocol",
    "FactorizerProtocol",
    "ProjectionProtocol",
    "ManifoldKernelProtocol",
    "TaskProtocol",
    "PROTOCOLS",
    "check_array",
    "check_pair",
    "check_scalar",
    "check_positive",
    "check_option",
    "check_random_state",
    "check_n_landmarks",
    "check_dictionary",
    "check_signals",
    "check_tol",
    "check_n_nonzero",
    "check_constraints",
    "ChunkedData",
    "Codes",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from ._accepts import INPUT_KINDS, input_kinds
    from ._families import HOOKS
    from .components import check_result
    from .exceptions import (
        ComponentConflictError,
        ComponentConflictWarning,
        ComponentResultError,
        PluginLoadWarning,
        PluginWarning,
        UnknownComponentError,
        UnknownHookWarning,
    )
    from .factorizers.base import FactorizationResult, Factorizer, check_constraints
    from .hookspecs import Registration, hookimpl
    from .kernels.base import Kernel, VectorKernel
    from .manifold.kernels import DataDependentKernel as ManifoldKernel
    from .projections.base import Projection
    from .protocols import (
        PROTOCOLS,
        FactorizerProtocol,
        KernelProtocol,
        ManifoldKernelProtocol,
        ProjectionProtocol,
        SamplerProtocol,
        SolverProtocol,
        TaskProtocol,
    )
    from .registry import ComponentInfo, Registry, SkippedPlugin
    from .run.tasks import Task, TaskContext
    from .samplers.base import Landmarks, Sampler, ScoreSampler
    from .samplers.chunked import ChunkedData
    from .solvers.base import Codes, Solver, SparseResult
    from .validation import (
        check_array,
        check_dictionary,
        check_n_landmarks,
        check_n_nonzero,
        check_option,
        check_pair,
        check_positive,
        check_random_state,
        check_scalar,
        check_signals,
        check_tol,
    )


def __getattr__(name):
    module = _SOURCES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), _RENAMED.get(name, name))
    globals()[name] = value  # later reads skip __getattr__
    return value


def __dir__():
    return sorted(set(globals()) | set(_SOURCES))
