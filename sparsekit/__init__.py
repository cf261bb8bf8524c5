"""sparsekit: large-scale kernel methods and sparse approximation on Numba.

Components (kernels, landmark samplers, sparse solvers) are looked up by name in a pluggy
registry::

    import sparsekit
    k = sparsekit.get_kernel("rbf", gamma=0.5)
    K = k(X, Y)
"""
__version__ = "0.1.0"

from .hookspecs import hookimpl
from .registry import (
    ComponentConflictError,
    PluginLoadWarning,
    Registration,
    Registry,
    UnknownComponentError,
    default_registry,
    get_kernel,
    get_sampler,
    get_solver,
    list_components,
)

__all__ = [
    "__version__", "hookimpl", "Registration", "Registry", "UnknownComponentError",
    "ComponentConflictError", "PluginLoadWarning", "default_registry", "get_kernel",
    "get_sampler", "get_solver", "list_components",
]
