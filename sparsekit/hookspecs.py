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
import pluggy

PROJECT = "sparsekit"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

#: Every registry family (components and tasks), in the order they are listed.
FAMILIES = ("kernel", "sampler", "solver", "factorizer", "projection", "manifold-kernel", "task")
#: The families of components (what estimators and tasks take); tasks (what one run of
#: ``sparsekit run`` computes) are listed apart: ``Registry.list()`` lists these families,
#: ``Registry.list("task")`` the tasks.
COMPONENT_FAMILIES = ("kernel", "sampler", "solver", "factorizer", "projection", "manifold-kernel")


class Specs:
    """The hook specifications of sparsekit (one per family)."""

    @hookspec
    def sparsekit_kernels(self):
        """Return an iterable of :class:`Registration` records for kernels."""

    @hookspec
    def sparsekit_samplers(self):
        """Return an iterable of :class:`Registration` records for landmark samplers."""

    @hookspec
    def sparsekit_solvers(self):
        """Return an iterable of :class:`Registration` records for sparse solvers."""

    @hookspec
    def sparsekit_factorizers(self):
        """Return an iterable of :class:`Registration` records for factorizers: components with
        ``factorize(M, constraints) -> FactorizationResult`` (Palm4MSA and its hierarchical
        variant)."""

    @hookspec
    def sparsekit_manifold_kernels(self):
        """Return an iterable of :class:`Registration` records for manifold kernels: the
        data-dependent kernels of the spectral embeddings (``fit(X)``, ``gram()``,
        ``kernel(X_new)`` against the fitted points only), which are not kernels ``k(X, Y)``."""

    @hookspec
    def sparsekit_projections(self):
        """Return an iterable of :class:`Registration` records for projections (the constraint
        sets of Palm4MSA factors)."""

    @hookspec
    def sparsekit_tasks(self):
        """Return an iterable of :class:`Registration` records for the tasks of ``sparsekit
        run``: each record's factory, called without arguments, returns a
        :class:`sparsekit.run.tasks.Task` (:meth:`Task.registration` builds the record)."""


HOOK_OF_FAMILY = {
    "kernel": "sparsekit_kernels",
    "sampler": "sparsekit_samplers",
    "solver": "sparsekit_solvers",
    "factorizer": "sparsekit_factorizers",
    "manifold-kernel": "sparsekit_manifold_kernels",
    "projection": "sparsekit_projections",
    "task": "sparsekit_tasks",
}
