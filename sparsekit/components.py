"""From a name, a component object or a function to a component: the layer above the registry.

The registry (:mod:`sparsekit.registry`) manages plugins and names and imports no component
package. :func:`resolve` is the one place that turns what a user gives an estimator, a
statistics function, a Dask entry point or a task (a family's *spec*) into a component:

- a registered name (case-insensitive, ``-``/``_`` alike), built by the registry with the
  ``<family>_params``; an unknown name is answered with the closest known one
  (:mod:`sparsekit._names`) and the list of names;
- a component object, returned as a deep copy (the copy rule: fitting never changes the
  caller's object);
- for kernels only: a plain function ``k(X, Y, **kernel_params) -> Gram`` (wrapped in a
  :class:`~sparsekit.kernels.base.CallableKernel`) and ``"precomputed"`` (a
  :class:`~sparsekit.kernels.base.PrecomputedKernel`: the data is the Gram matrix).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from ._names import normalize_name
from .registry import Registry, _check_component_object, _is_function, default_registry

#: Families whose spec may be a plain function, wrapped in the family's adapter class.
FUNCTION_FAMILIES = ("kernel",)
#: Families whose spec may be ``"precomputed"``.
PRECOMPUTED_FAMILIES = ("kernel",)


def resolve(
    family: str,
    spec: Any,
    params: Mapping[str, Any] | None = None,
    *,
    registry: Registry | None = None,
) -> Any:
    """The component that ``spec`` names in ``family``.

    Estimators call this once, in ``fit`` (never inside a loop), with their ``registry``
    parameter.

    Parameters
    ----------
    family : str
        ``"kernel"``, ``"sampler"``, ``"solver"``, ``"projection"``, ``"task"``, ... (a family
        of ``sparsekit.hookspecs.FAMILIES``).
    spec : str, component object or function
        A registered name (built with ``params``); a component object (returned as a deep
        copy, so that fitting never changes the caller's object); for kernels, a function
        ``k(X, Y, **params) -> Gram`` (a :class:`~sparsekit.kernels.base.CallableKernel`
        calling it with ``params``) or ``"precomputed"``.
    params : dict, optional
        Keyword parameters of the named component (the estimator's ``<family>_params``), or of
        a kernel function.
    registry : Registry, optional
        Where names are looked up; default: the process-wide
        :func:`~sparsekit.registry.default_registry`.

    Returns
    -------
    object
        A new component object (never the caller's ``spec`` object itself).

    Raises
    ------
    UnknownComponentError
        An unknown name (the message names the closest registered one and lists them all).
    TypeError
        ``params`` with a component object, ``params`` not a dict, parameters the factory does
        not take, ``None``, a number, a class instead of an instance, or an object without the
        family's method (``sample`` for samplers, ``solve`` for solvers, ...).
    """
    fam = Registry._check_family(family)
    if params is not None and not isinstance(params, Mapping):
        raise TypeError(
            f"{fam}_params must be a dict of keyword parameters or None, got "
            f"{type(params).__name__}"
        )
    params = dict(params or {})
    if isinstance(spec, str):
        if fam in PRECOMPUTED_FAMILIES and normalize_name(spec) == "precomputed":
            if params:
                raise TypeError(f"{fam}_params cannot be given with {fam}='precomputed'")
            from .kernels.base import PrecomputedKernel

            return PrecomputedKernel()
        return (registry if registry is not None else default_registry()).get(fam, spec, **params)
    if fam in FUNCTION_FAMILIES and _is_function(spec):
        from .kernels.base import CallableKernel

        return CallableKernel(spec, params or None)
    if spec is None:
        raise TypeError(f"{fam} must be a registered {fam} name or a {fam} object, got None")
    if params and not isinstance(spec, type):
        function = " or a function" if fam in FUNCTION_FAMILIES else ""
        raise TypeError(
            f"{fam}_params can only be given with a {fam} name{function}, not with a "
            f"{type(spec).__name__} object (set the object's parameters on the object itself)"
        )
    _check_component_object(fam, spec)
    return copy.deepcopy(spec)


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


__all__ = ["get_kernel", "resolve"]
