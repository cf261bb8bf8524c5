"""Hook specifications: one hook per registry family (the component families and the tasks).

Every hook returns (or yields) an iterable of :class:`sparsekit.plugins.Registration`
records. Built-in components use exactly these hooks; third-party plugins register a module
or object with ``@hookimpl``-decorated functions under the ``sparsekit`` entry-point group.

Example
-------
>>> from sparsekit.plugins import Registry, Registration, hookimpl
>>> from sparsekit.samplers import UniformSampler
>>> class MySamplers:
...     @hookimpl
...     def sparsekit_samplers(self):
...         yield Registration(name="my-sampler", factory=UniformSampler, summary="uniform")
>>> reg = Registry(entry_points=False, plugins=[MySamplers()])
>>> type(reg.get("sampler", "my-sampler")).__name__
'UniformSampler'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pluggy

PROJECT = "sparsekit"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

# The records the hooks return are sparsekit.registry.Registration, which cannot be imported
# here, not even under TYPE_CHECKING: the registry imports this module and tests/test_layers.py
# forbids the cycle.
_Registration = Any

#: Every registry family (components and tasks), in the order they are listed.
FAMILIES = ("kernel", "sampler", "solver", "factorizer", "projection", "manifold-kernel", "task")
#: The families of components (what estimators and tasks take); tasks (what one run of
#: ``sparsekit run`` computes) are listed apart: ``Registry.list()`` lists these families,
#: ``Registry.list("task")`` the tasks.
COMPONENT_FAMILIES = ("kernel", "sampler", "solver", "factorizer", "projection", "manifold-kernel")


class Specs:
    """The hook specifications of sparsekit (one per family)."""

    @hookspec
    def sparsekit_kernels(self) -> Iterable[_Registration]:
        """Declare kernels.

        Returns
        -------
        iterable of Registration
            The :class:`~sparsekit.registry.Registration` records (a generator may yield them).
        """

    @hookspec
    def sparsekit_samplers(self) -> Iterable[_Registration]:
        """Declare landmark samplers.

        Returns
        -------
        iterable of Registration
            The :class:`~sparsekit.registry.Registration` records (a generator may yield them).
        """

    @hookspec
    def sparsekit_solvers(self) -> Iterable[_Registration]:
        """Declare sparse solvers.

        Returns
        -------
        iterable of Registration
            The :class:`~sparsekit.registry.Registration` records (a generator may yield them).
        """

    @hookspec
    def sparsekit_factorizers(self) -> Iterable[_Registration]:
        """Return the :class:`~sparsekit.registry.Registration` records of factorizers.

        Factorizers are components with ``factorize(M, constraints) -> FactorizationResult``
        (Palm4MSA and its hierarchical variant).

        Returns
        -------
        iterable of Registration
            The plugin's factorizers.
        """

    @hookspec
    def sparsekit_manifold_kernels(self) -> Iterable[_Registration]:
        """Return the :class:`~sparsekit.registry.Registration` records of manifold kernels.

        Manifold kernels are the data-dependent kernels of the spectral embeddings (``fit(X)``,
        ``gram()``, ``kernel(X_new)`` against the fitted points only), which are not kernels
        ``k(X, Y)``.

        Returns
        -------
        iterable of Registration
            The plugin's manifold kernels.
        """

    @hookspec
    def sparsekit_projections(self) -> Iterable[_Registration]:
        """Declare projections.

        Projections are the constraint sets of Palm4MSA factors.

        Returns
        -------
        iterable of Registration
            The :class:`~sparsekit.registry.Registration` records (a generator may yield them).
        """

    @hookspec
    def sparsekit_tasks(self) -> Iterable[_Registration]:
        """Declare the tasks of ``sparsekit run``.

        Each record's factory, called without arguments, returns a
        :class:`sparsekit.run.tasks.Task` (:meth:`~sparsekit.run.tasks.Task.registration` builds
        the record).

        Returns
        -------
        iterable of Registration
            The :class:`~sparsekit.registry.Registration` records (a generator may yield them).
        """


HOOK_OF_FAMILY = {
    "kernel": "sparsekit_kernels",
    "sampler": "sparsekit_samplers",
    "solver": "sparsekit_solvers",
    "factorizer": "sparsekit_factorizers",
    "manifold-kernel": "sparsekit_manifold_kernels",
    "projection": "sparsekit_projections",
    "task": "sparsekit_tasks",
}

__all__ = ["Specs", "hookspec", "hookimpl"]
