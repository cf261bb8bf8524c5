"""Hook specifications: one hook per component family.

Every hook returns (or yields) an iterable of :class:`sparsekit.registry.Registration`
records. Built-in components use exactly these hooks; third-party plugins register a module
or object with ``@hookimpl``-decorated functions under the ``sparsekit`` entry-point group.

Example
-------
>>> from sparsekit import Registry, Registration, hookimpl
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

#: The component families, in the order they are listed.
FAMILIES = ("kernel", "sampler", "solver", "projection")


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
    def sparsekit_projections(self):
        """Return an iterable of :class:`Registration` records for projections (the constraint
        sets of Palm4MSA factors)."""


HOOK_OF_FAMILY = {
    "kernel": "sparsekit_kernels",
    "sampler": "sparsekit_samplers",
    "solver": "sparsekit_solvers",
    "projection": "sparsekit_projections",
}
