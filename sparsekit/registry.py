"""The component registry: names to factories, through pluggy hooks and entry points.

A :class:`Registry` owns a :class:`pluggy.PluginManager`. Built-in components are provided by
the plugin modules ``sparsekit.kernels._plugin``, ``sparsekit.samplers._plugin`` and
``sparsekit.solvers._plugin``; third-party distributions add theirs through the ``sparsekit``
entry-point group. Entry points are loaded once, lazily, at the first lookup.

Names are case-insensitive and treat ``-`` and ``_`` alike (``"DAC_RLS"`` is ``"dac-rls"``).
"""
from __future__ import annotations

import difflib
import importlib
import warnings
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Callable, Iterable

import pluggy

from .hookspecs import FAMILIES, HOOK_OF_FAMILY, PROJECT, Specs

ENTRY_POINT_GROUP = "sparsekit"

BUILTIN_PLUGINS = (
    "sparsekit.kernels._plugin",
    "sparsekit.samplers._plugin",
    "sparsekit.solvers._plugin",
)


class UnknownComponentError(ValueError, KeyError):
    """A component name that no plugin registered."""

    def __str__(self):  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


class ComponentConflictError(RuntimeError):
    """Two plugins registered the same name (or alias) in one family."""


class PluginLoadWarning(UserWarning):
    """A plugin (entry point) could not be loaded; the other plugins keep working."""


def _sparsekit_entry_points():
    """The installed entry points of the ``sparsekit`` group."""
    return metadata.entry_points(group=ENTRY_POINT_GROUP)


def normalize_name(name: str) -> str:
    """Canonical form of a component name: lower case, ``_`` and spaces read as ``-``."""
    if not isinstance(name, str):
        raise TypeError(f"component name must be a str, got {type(name).__name__}")
    return name.strip().lower().replace("_", "-").replace(" ", "-")


@dataclass(frozen=True)
class Registration:
    """One registered component.

    Parameters
    ----------
    name : str
        The canonical name (normalized on lookup).
    factory : callable
        Called with the user's keyword parameters; returns the component object.
    aliases : tuple of str
        Other names that resolve to this component.
    summary : str
        One line shown by ``sparsekit list``.
    accepts : str
        What the component takes as input data: ``"vectors"`` or ``"graphs"`` (kernels), or
        ``"any"``.
    """

    name: str
    factory: Callable[..., Any]
    aliases: tuple = ()
    summary: str = ""
    accepts: str = "vectors"


@dataclass(frozen=True)
class ComponentInfo:
    """A registration as seen in a registry: with its family and providing plugin."""

    family: str
    name: str
    aliases: tuple
    plugin: str
    summary: str
    registration: Registration = field(repr=False)


class Registry:
    """A set of components, looked up by family and name.

    Parameters
    ----------
    builtins : bool, default True
        Register sparsekit's own components.
    entry_points : bool, default True
        Load third-party plugins from the ``sparsekit`` entry-point group (once, at first use).
    plugins : iterable, optional
        Extra plugin objects or modules (holding ``@hookimpl`` functions) to register now.

    Examples
    --------
    >>> reg = Registry(entry_points=False)
    >>> reg.get("kernel", "RBF", gamma=0.5)           # doctest: +SKIP
    """

    def __init__(self, *, builtins: bool = True, entry_points: bool = True, plugins: Iterable = ()):
        self._pm = pluggy.PluginManager(PROJECT)
        self._pm.add_hookspecs(Specs)
        self._use_entry_points = entry_points
        self._entry_points_loaded = False
        self._tables: dict[str, dict[str, ComponentInfo]] | None = None
        if builtins:
            for modname in BUILTIN_PLUGINS:
                self._pm.register(importlib.import_module(modname), name=modname)
        for plugin in plugins:
            self.register(plugin)

    # -- plugins -------------------------------------------------------------------------
    def register(self, plugin, name: str | None = None) -> str:
        """Register a plugin object or module; returns the name it is registered under."""
        if name is None:
            name = getattr(plugin, "__name__", None) or f"{type(plugin).__name__}@{id(plugin):x}"
        registered = self._pm.register(plugin, name=name)
        if registered is None:
            raise ValueError(f"plugin {name!r} is already registered or blocked")
        self._tables = None
        return registered

    def unregister(self, name: str) -> None:
        """Remove the plugin registered under ``name``."""
        self._pm.unregister(name=name)
        self._tables = None

    @property
    def plugins(self) -> list[str]:
        """Names of the registered plugins."""
        self._load_entry_points()
        return [self._pm.get_name(p) for p in self._pm.get_plugins()]

    def _load_entry_points(self) -> None:
        if not self._use_entry_points or self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        for ep in _sparsekit_entry_points():
            if self._pm.has_plugin(ep.name) or self._pm.is_blocked(ep.name):
                continue
            try:
                plugin = ep.load()
            except Exception as exc:  # a broken plugin must not break the others
                warnings.warn(
                    f"sparsekit plugin {ep.name!r} ({ep.value}) failed to load and is skipped: "
                    f"{type(exc).__name__}: {exc}",
                    PluginLoadWarning,
                    stacklevel=3,
                )
                continue
            self._pm.register(plugin, name=ep.name)
        self._tables = None

    # -- tables ----------------------------------------------------------------------------
    def _build_tables(self) -> dict[str, dict[str, ComponentInfo]]:
        self._load_entry_points()
        if self._tables is not None:
            return self._tables
        tables: dict[str, dict[str, ComponentInfo]] = {}
        for family in FAMILIES:
            table: dict[str, ComponentInfo] = {}
            hook = getattr(self._pm.hook, HOOK_OF_FAMILY[family])
            # one implementation at a time, so that each record knows its plugin
            for impl in reversed(hook.get_hookimpls()):
                plugin_name = impl.plugin_name
                try:
                    records = list(impl.function() or ())
                except Exception as exc:
                    warnings.warn(
                        f"sparsekit plugin {plugin_name!r} raised in {HOOK_OF_FAMILY[family]} "
                        f"and is skipped: {type(exc).__name__}: {exc}",
                        PluginLoadWarning,
                        stacklevel=3,
                    )
                    continue
                for rec in records:
                    if not isinstance(rec, Registration):
                        raise TypeError(
                            f"plugin {plugin_name!r} yielded {type(rec).__name__} from "
                            f"{HOOK_OF_FAMILY[family]}; expected sparsekit.Registration"
                        )
                    info = ComponentInfo(
                        family=family,
                        name=normalize_name(rec.name),
                        aliases=tuple(normalize_name(a) for a in rec.aliases),
                        plugin=plugin_name,
                        summary=rec.summary,
                        registration=rec,
                    )
                    for key in (info.name, *info.aliases):
                        other = table.get(key)
                        if other is not None:
                            raise ComponentConflictError(
                                f"{family} name {key!r} is registered twice: by plugin "
                                f"{other.plugin!r} (as {other.name!r}) and by plugin "
                                f"{plugin_name!r} (as {info.name!r}); uninstall or block one "
                                f"of them (Registry.block)"
                            )
                        table[key] = info
            tables[family] = table
        self._tables = tables
        return tables

    def block(self, plugin_name: str) -> None:
        """Block a plugin by name (e.g. to settle a name conflict)."""
        if self._pm.has_plugin(plugin_name):
            self._pm.unregister(name=plugin_name)
        self._pm.set_blocked(plugin_name)
        self._tables = None

    @staticmethod
    def _check_family(family: str) -> str:
        fam = normalize_name(family).rstrip("s")
        if fam not in FAMILIES:
            raise ValueError(f"family must be one of {list(FAMILIES)}, got {family!r}")
        return fam

    # -- lookup ----------------------------------------------------------------------------
    def lookup(self, family: str, name: str) -> ComponentInfo:
        """The :class:`ComponentInfo` registered under ``name`` (or an alias) in ``family``."""
        family = self._check_family(family)
        table = self._build_tables()[family]
        key = normalize_name(name)
        try:
            return table[key]
        except KeyError:
            pass
        available = sorted({info.name for info in table.values()})
        close = difflib.get_close_matches(key, list(table), n=1, cutoff=0.5)
        hint = f" Did you mean {table[close[0]].name!r}?" if close else ""
        raise UnknownComponentError(
            f"unknown {family} {name!r}.{hint} Available {family}s: {', '.join(available)}."
        )

    def get(self, family: str, name_or_object, **params):
        """Build the component ``name`` of ``family`` with ``params``.

        A component object (not a string) is returned as is when no params are given; for
        kernels a plain function ``k(X, Y) -> Gram`` is wrapped in a ``CallableKernel``.
        ``None``, numbers, classes and objects without the family's method raise ``TypeError``.
        """
        if not isinstance(name_or_object, str):
            fam = self._check_family(family)
            if fam == "kernel" and _is_function(name_or_object):
                from .kernels.base import CallableKernel

                return CallableKernel(name_or_object, dict(params) if params else None)
            _check_component_object(fam, name_or_object)
            if params:
                raise TypeError(
                    f"parameters {sorted(params)} can only be given with a {family} name, "
                    f"not with a {type(name_or_object).__name__} object"
                )
            return name_or_object
        info = self.lookup(family, name_or_object)
        _check_params_accepted(info, params)
        return info.registration.factory(**params)

    def list(self, family: str | None = None) -> list[ComponentInfo]:
        """Every registered component (of one family, or all), sorted by family and name."""
        tables = self._build_tables()
        families = FAMILIES if family is None else (self._check_family(family),)
        out = []
        for fam in families:
            seen = {}
            for info in tables[fam].values():
                seen[info.name] = info
            out.extend(seen[k] for k in sorted(seen))
        return out

    def names(self, family: str) -> list[str]:
        """The canonical names of one family."""
        return [info.name for info in self.list(family)]


_REQUIRED_METHOD = {"kernel": "__call__", "sampler": "sample", "solver": "solve"}


def _is_function(obj) -> bool:
    """A plain function (not a component object), e.g. a kernel ``k(X, Y) -> Gram``."""
    import functools
    import inspect

    return (inspect.isfunction(obj) or inspect.isbuiltin(obj) or inspect.ismethod(obj)
            or isinstance(obj, functools.partial))


def _check_component_object(family: str, obj) -> None:
    """A ``TypeError`` saying what is expected when ``obj`` cannot be a ``family`` component."""
    method = _REQUIRED_METHOD.get(family)
    if family == "kernel":
        what = "a registered kernel name (str), a kernel object or a function k(X, Y) -> Gram"
    else:
        what = f"a registered {family} name (str) or a {family} object" + (
            f" with {method}(...)" if method else "")
    if obj is None or isinstance(obj, (int, float, complex)):
        raise TypeError(f"{family} must be {what}; got {obj!r}")
    if isinstance(obj, type):
        raise TypeError(
            f"{family} must be {what}; got the class {obj.__name__}: pass an instance, "
            f"e.g. {obj.__name__}()"
        )
    if method and not callable(getattr(obj, method, None)):
        raise TypeError(f"{family} must be {what}; got {type(obj).__name__}")


def _check_params_accepted(info: ComponentInfo, params: dict) -> None:
    """Name the component and its parameters when a keyword is not accepted by its factory."""
    import inspect

    try:
        sig = inspect.signature(info.registration.factory)
    except (TypeError, ValueError):  # builtins without a signature: let the call decide
        return
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return
    accepted = [p.name for p in sig.parameters.values()
                if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise TypeError(
            f"{info.family} {info.name!r} got unknown parameter(s) {unknown}; "
            f"its parameters are {accepted}"
        )


_default: Registry | None = None


def default_registry() -> Registry:
    """The process-wide registry (built-ins plus installed entry-point plugins)."""
    global _default
    if _default is None:
        _default = Registry()
    return _default


def get_kernel(name, **params):
    """Build a kernel by name, e.g. ``get_kernel("rbf", gamma=0.5)``."""
    return default_registry().get("kernel", name, **params)


def get_sampler(name, **params):
    """Build a landmark sampler by name, e.g. ``get_sampler("dac-rls", lam=1.0)``."""
    return default_registry().get("sampler", name, **params)


def get_solver(name, **params):
    """Build a sparse solver by name, e.g. ``get_solver("omp")``."""
    return default_registry().get("solver", name, **params)


def list_components(family: str | None = None) -> list[ComponentInfo]:
    """Every component of ``family`` (``"kernel"``, ``"sampler"``, ``"solver"``) or of all."""
    return default_registry().list(family)
