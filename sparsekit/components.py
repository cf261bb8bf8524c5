"""From a name, a component object or a function to a component: the layer above the registry.

The registry (:mod:`sparsekit.registry`) manages plugins and names and imports no component
package; what needs a component class (wrapping a plain kernel function in a
:class:`~sparsekit.kernels.base.CallableKernel`) happens here.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .registry import (  # noqa: F401  (the shortcuts that need no component class)
    _is_function,
    default_registry,
    get_projection,
    get_sampler,
    get_solver,
    list_components,
    resolve,
)


def get_kernel(name: str | Callable[..., Any] | object, **params: Any) -> Any:
    """Build a kernel by name, e.g. ``get_kernel("rbf", gamma=0.5)``, or from a function.

    Parameters
    ----------
    name : str, callable or kernel object
        A registered kernel name or alias, a function ``k(X, Y) -> Gram`` (wrapped in a
        :class:`~sparsekit.kernels.base.CallableKernel`), or a kernel object.
    **params
        The kernel's parameters (for a function: passed to each call).

    Returns
    -------
    Kernel
        The kernel.
    """
    if _is_function(name):
        from .kernels.base import CallableKernel

        return CallableKernel(name, dict(params) if params else None)
    return default_registry().get("kernel", name, **params)

__all__ = [
    "get_kernel", "get_sampler", "get_solver", "get_projection", "list_components", "resolve",
    "default_registry",
]
