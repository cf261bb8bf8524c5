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

# Estimators and transforms are imported on first use, so that ``import sparsekit`` stays light.
_LAZY = {
    "Nystroem": "sparsekit.features.nystrom",
    "RandomFourierFeatures": "sparsekit.features.rff",
    "Fastfood": "sparsekit.features.fastfood",
    "SparseCoder": "sparsekit.solvers.coder",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sparsekit' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = list(_LAZY) + [
    "__version__", "hookimpl", "Registration", "Registry", "UnknownComponentError",
    "ComponentConflictError", "PluginLoadWarning", "default_registry", "get_kernel",
    "get_sampler", "get_solver", "list_components",
]
