"""From a name, a component object or a function to a component: the layer above the registry.

The registry (:mod:`sparsekit.registry`) manages plugins and names and imports no component
package. :func:`resolve` is the one place that turns what a user gives an estimator, a
statistics function, a Dask entry point or a task (a family's *spec*) into a component:

- a registered name (case-insensitive, ``-``/``_`` alike), built by the registry with the
  ``<family>_params``; an unknown name is answered with the closest known one
  (:mod:`sparsekit._names`) and the list of names;
- a component object, returned as a deep copy (the copy rule: fitting never changes the
  caller's object);
- where the family's ``inputs`` (:mod:`sparsekit._families`) say so, kernels today: a plain
  function ``k(X, Y, **kernel_params) -> Gram`` (wrapped in a
  :class:`~sparsekit.kernels.base.CallableKernel`) and ``"precomputed"`` (a
  :class:`~sparsekit.kernels.base.PrecomputedKernel`: the data is the Gram matrix).

The shortcuts ``get_kernel``, ``get_sampler``, ... (one per family with a ``getter``) call
:func:`resolve` with the process-wide registry; :func:`check_result` checks what a component
returned against its family's result type.
"""

from __future__ import annotations

import copy
import functools
import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard, TypeVar

from ._families import FAMILIES, Family, family as _family
from ._names import normalize_name
from .exceptions import ComponentResultError
from .registry import Registry, default_registry

_R = TypeVar("_R")


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
        of ``sparsekit._families.FAMILIES``).
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
    record = _family(family)
    fam = record.name
    if params is not None and not isinstance(params, Mapping):
        raise TypeError(
            f"{fam}_params must be a dict of keyword parameters or None, got "
            f"{type(params).__name__}"
        )
    params = dict(params or {})
    if isinstance(spec, str):
        if "precomputed" in record.inputs and normalize_name(spec) == "precomputed":
            if params:
                raise TypeError(f"{fam}_params cannot be given with {fam}='precomputed'")
            from .kernels.base import PrecomputedKernel

            return PrecomputedKernel()
        return (registry if registry is not None else default_registry()).get(fam, spec, **params)
    if "function" in record.inputs and _is_function(spec):
        from .kernels.base import CallableKernel

        return CallableKernel(spec, params or None)
    if spec is None:
        raise TypeError(f"{fam} must be a registered {fam} name or a {fam} object, got None")
    if params and not isinstance(spec, type):
        function = " or a function" if "function" in record.inputs else ""
        raise TypeError(
            f"{fam}_params can only be given with a {fam} name{function}, not with a "
            f"{type(spec).__name__} object (set the object's parameters on the object itself)"
        )
    _check_component_object(record, spec)
    return copy.deepcopy(spec)


def _is_function(obj: object) -> TypeGuard[Callable[..., Any]]:
    """A plain function (not a component object), e.g. a kernel ``k(X, Y) -> Gram``."""
    return (
        inspect.isfunction(obj)
        or inspect.isbuiltin(obj)
        or inspect.ismethod(obj)
        or isinstance(obj, functools.partial)
    )


def _check_component_object(record: Family, obj: object) -> None:
    """A ``TypeError`` saying what is expected when ``obj`` cannot be a component of
    ``record``'s family."""
    family, method = record.name, record.method
    if "function" in record.inputs:
        what = f"a registered {family} name (str), a {family} object or a function k(X, Y) -> Gram"
    else:
        what = f"a registered {family} name (str) or a {family} object" + (
            f" with {method}(...)" if method else ""
        )
    if obj is None or isinstance(obj, (int, float, complex)):
        raise TypeError(f"{family} must be {what}; got {obj!r}")
    if isinstance(obj, type):
        raise TypeError(
            f"{family} must be {what}; got the class {obj.__name__}: pass an instance, "
            f"e.g. {obj.__name__}()"
        )
    if family == "kernel" and getattr(obj, "data_dependent", False):
        name = getattr(obj, "name", type(obj).__name__)
        uses = _family("manifold-kernel").uses.format(name=name)
        raise TypeError(
            f"kernel must be {what}; got the manifold kernel {type(obj).__name__}: use it where a "
            f"manifold kernel is expected: {uses}."
        )
    if method and not callable(getattr(obj, method, None)):
        raise TypeError(f"{family} must be {what}; got {type(obj).__name__}")


def check_result(
    family: str, component: object, result: _R, *, registry: Registry | None = None
) -> _R:
    """Return ``result`` if it has the type ``family``'s protocol promises, else raise.

    The family's ``result`` (:mod:`sparsekit._families`): ``"sampler"``: ``sample`` returns
    :class:`sparsekit.samplers.Landmarks`; ``"solver"``: ``solve`` returns
    :class:`sparsekit.solvers.base.SparseResult`; ``"factorizer"``: ``factorize`` returns
    :class:`sparsekit.factorizers.FactorizationResult`. Other families are not checked.

    Parameters
    ----------
    family : str
        The component's family.
    component : object
        The component that returned ``result`` (named in the error).
    result : object
        What the component returned.
    registry : Registry, optional
        Where the component's plugin is looked up for the error message (default: the
        process-wide registry).

    Returns
    -------
    object
        ``result``, unchanged.

    Raises
    ------
    ComponentResultError
        Naming the component, the plugin that provides it and the expected type.
    """
    record = _family(family)
    if record.result is None:
        return result
    module, cls_name = record.result
    expected = getattr(importlib.import_module(module), cls_name)
    if isinstance(result, expected):
        return result
    info = (registry or default_registry()).provider(component)
    if info is not None:
        who = f"{info.family} {info.name!r} of plugin {info.plugin!r}"
    else:
        who = f"{family} {type(component).__name__} (module {type(component).__module__!r})"
    raise ComponentResultError(
        f"{who} returned {type(result).__name__} from {record.method}(); expected "
        f"{module}.{cls_name} (see docs/plugins.md)"
    )


def _shortcut(family: str) -> Callable[..., Any]:
    """The ``get_<family>`` function of ``family``: :func:`resolve` with the default registry,
    named and documented from the family's record."""
    record = _family(family)

    def get(name: Any, **params: Any) -> Any:
        return resolve(record.name, name, params)

    forms = f"A registered {record.name} name or alias, or a {record.name} object (returned as a"
    forms += " deep copy)"
    if "function" in record.inputs:
        forms = forms.replace(", or a", ", a") + ",\n        or a function k(X, Y) -> Gram"
    get.__name__ = get.__qualname__ = str(record.getter)
    get.__doc__ = f"""Build a {record.label} by name, e.g. ``{record.example}``.

    :func:`resolve` with the process-wide registry.

    Parameters
    ----------
    name : str or object
        {forms}.
    **params
        The component's parameters.

    Returns
    -------
    object
        The {record.name}.

    Raises
    ------
    UnknownComponentError
        An unknown name (the closest one is suggested, another family's included).
    """
    return get


# one per family with a getter (tests/test_families.py checks that none is missing)
get_kernel = _shortcut("kernel")
get_sampler = _shortcut("sampler")
get_solver = _shortcut("solver")
get_factorizer = _shortcut("factorizer")
get_projection = _shortcut("projection")
get_manifold_kernel = _shortcut("manifold-kernel")

__all__ = ["check_result", "resolve", *(f.getter for f in FAMILIES if f.getter)]
