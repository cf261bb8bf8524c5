"""The component registry: names to factories, through pluggy hooks and entry points.

A :class:`Registry` owns a :class:`pluggy.PluginManager`. Built-in components are provided by
the plugin modules of :data:`BUILTIN_PLUGINS` (``sparsekit.kernels._plugin``, ...,
``sparsekit.run._plugin`` for the tasks of ``sparsekit run``); third-party distributions add
theirs through the ``sparsekit`` entry-point group. Entry points are loaded once, lazily, at the
first lookup, under a lock that the lookups of other threads wait for (a registry can be shared
between threads; once the tables are built, lookups read them without the lock). The registry
manages plugins and names only: it imports no component package (:mod:`sparsekit.components` is
the layer above it).

Names are case-insensitive and treat ``-`` and ``_`` alike (``"DAC_RLS"`` is ``"dac-rls"``).

A third-party plugin that fails to import, raises in a hook (``SystemExit`` and other
``BaseException`` subclasses included: only ``KeyboardInterrupt`` goes through), yields more than
:data:`MAX_REGISTRATIONS_PER_HOOK` records from one hook (a hook that yields forever is cut there),
yields something other than a :class:`~sparsekit.plugins.Registration`, implements a hook that does
not exist (``sparsekit_sampler`` for ``sparsekit_samplers``) or claims a name that is already taken
is skipped with a :class:`~sparsekit.PluginWarning` naming it (the control characters of the
plugin's strings escaped), and :meth:`Registry.skipped` (and ``sparsekit list``) say what was
skipped and why. Built-in components always win a name. The user blocks a plugin with
``SPARSEKIT_DISABLE_PLUGINS=name,...`` or ``Registry(disable=[...])``. A plugin runs in the process:
one that hangs at import or in a hook hangs the first lookup, and one that calls ``os._exit`` ends
the process (install only plugins you trust).
"""

from __future__ import annotations

import builtins
import importlib
import os
import threading
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pluggy

from ._families import COMPONENT_NAMES, FAMILIES, NAMES, family as _family
from ._names import closest_match, normalize_name
from .exceptions import (
    ComponentConflictError,
    ComponentConflictWarning,
    PluginLoadWarning,
    UnknownComponentError,
    UnknownHookWarning,
    WrongFamilyError,
)
from .hookspecs import PROJECT, Registration, Specs

ENTRY_POINT_GROUP = "sparsekit"

#: Environment variable: comma-separated plugin names (entry-point or distribution names) that
#: the registries of this process do not load.
DISABLE_ENV = "SPARSEKIT_DISABLE_PLUGINS"

#: The most records one plugin's hook may yield. A hook that yields more (one that yields
#: forever would hang every lookup while its list grows) is cut after this many and the plugin's
#: records of that family are skipped with a warning.
MAX_REGISTRATIONS_PER_HOOK = 10_000

#: The modules of the built-in plugins, in family order (the families' ``plugins``).
BUILTIN_PLUGINS = tuple(module for fam in FAMILIES for module in fam.plugins)


@dataclass(frozen=True)
class SkippedPlugin:
    """What a registry skipped (a whole plugin, or one of its components), and why.

    Parameters
    ----------
    plugin : str
        The plugin's name (entry-point name for installed plugins).
    reason : str
        One line: why it was skipped.
    family, name : str or None
        The family and component name, when one component (not the whole plugin) was skipped.
    """

    plugin: str
    reason: str
    family: str | None = None
    name: str | None = None


def _disabled_from_env() -> set:
    raw = os.environ.get(DISABLE_ENV, "")
    return {normalize_name(part) for part in raw.split(",") if part.strip()}


def _sparsekit_entry_points():
    """The installed entry points of the ``sparsekit`` group."""
    return metadata.entry_points(group=ENTRY_POINT_GROUP)


@dataclass(frozen=True)
class ComponentInfo:
    """Describe a registration as a registry sees it: with its family and plugin.

    Parameters
    ----------
    family : str
        The family.
    name : str
        The canonical name.
    aliases : tuple of str
        Its other names.
    plugin : str
        The name of the plugin that provides it.
    summary : str
        One line on what it is.
    registration : Registration
        The record the plugin's hook yielded.
    """

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
    disable : iterable of str, optional
        Plugins not to load: entry-point names (``"extra-kernels"``), distribution names
        (``"sparsekit-extra-kernels"``) or the names given to :meth:`register`. Added to the
        names in the ``SPARSEKIT_DISABLE_PLUGINS`` environment variable (comma-separated).
        Built-in components cannot be disabled (use ``builtins=False``).

    Examples
    --------
    >>> reg = Registry(entry_points=False)
    >>> reg.get("kernel", "RBF", gamma=0.5)
    RBFKernel(backend='auto', bandwidth=None, gamma=0.5, sigma=None)
    >>> "cosine" in Registry(disable=["extra-kernels"]).names("kernel")
    False
    """

    def __init__(
        self,
        *,
        builtins: bool = True,
        entry_points: bool = True,
        plugins: Iterable = (),
        disable: Iterable[str] = (),
    ):
        if isinstance(disable, str):
            disable = [disable]
        self._pm = pluggy.PluginManager(PROJECT)
        self._pm.add_hookspecs(Specs)
        # held while plugins are loaded, registered or removed and while the tables are built:
        # a lookup on another thread waits for them instead of seeing them half done
        self._lock = threading.RLock()
        self._use_entry_points = entry_points
        self._entry_points_loaded = False
        self._tables: dict[str, dict[str, ComponentInfo]] | None = None
        self._disabled_by_arg = {normalize_name(n) for n in disable}
        self._disabled_by_env = _disabled_from_env()
        self._skipped_plugins: list[SkippedPlugin] = []  # whole plugins (load time)
        self._skipped_records: list[SkippedPlugin] = []  # components (table build time)
        self._warned: set[str] = set()
        self._providers: dict[type, ComponentInfo] = {}
        # what rebuilds this registry when it is unpickled: see __reduce__
        self._recipe: dict[str, Any] = {
            "builtins": builtins,
            "entry_points": entry_points,
            "disable": sorted(self._disabled_by_arg),
            "plugins": [],
            "blocked": [],
        }
        if builtins:
            for modname in BUILTIN_PLUGINS:
                self._pm.register(importlib.import_module(modname), name=modname)
        for plugin in plugins:
            self.register(plugin)

    # -- plugins -------------------------------------------------------------------------
    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register a plugin object or module.

        A disabled name is not registered.

        Parameters
        ----------
        plugin : object or module
            An object or module with ``@hookimpl`` functions.
        name : str, optional
            The name to register it under (default: derived by pluggy).

        Returns
        -------
        str or None
            The name it is registered under; None when that name is disabled (``disable=`` or
            ``SPARSEKIT_DISABLE_PLUGINS``: the plugin is listed in :meth:`skipped`).
        """
        if name is None:
            name = getattr(plugin, "__name__", None) or f"{type(plugin).__name__}@{id(plugin):x}"
        with self._lock:
            if self._disabled_reason(name):
                self._skip_plugin(name, self._disabled_reason(name), warn=False)
                return None
            registered = self._pm.register(plugin, name=name)
            if registered is None:
                raise ValueError(f"plugin {name!r} is already registered or blocked")
            self._recipe["plugins"].append((plugin, registered))
            self._check_hook_names(plugin, registered)
            self._tables = None
        return registered

    def unregister(self, name: str) -> None:
        """Remove the plugin registered under ``name``.

        Parameters
        ----------
        name : str
            The plugin's name.
        """
        with self._lock:
            self._pm.unregister(name=name)
            self._recipe["plugins"] = [(p, n) for p, n in self._recipe["plugins"] if n != name]
            self._tables = None

    # -- copies: estimators hold a registry as a parameter ---------------------------------
    def __deepcopy__(self, memo):
        """The registry itself: a registry is shared, not copied (scikit-learn's ``clone``
        deep-copies the parameters of an estimator, ``registry=`` among them)."""
        return self

    def __reduce__(self):
        """Pickled as the recipe that rebuilds it: the default registry unpickles as the
        default registry of the new process; plugin modules travel by name."""
        if self is _default:
            return (default_registry, ())
        plugins = [
            (_ModuleRef(p.__name__) if isinstance(p, type(importlib)) else p, n)
            for p, n in self._recipe["plugins"]
        ]
        return (_rebuild, ({**self._recipe, "plugins": plugins},))

    @property
    def plugins(self) -> list[str]:
        """Names of the registered plugins."""
        self._load_entry_points()
        return [self._pm.get_name(p) for p in self._pm.get_plugins()]

    def skipped(self) -> list[SkippedPlugin]:
        """List the plugins and components that were not registered, each with the reason.

        Returns
        -------
        list of SkippedPlugin
            Disabled plugins, plugins that failed to import, raised in a hook, or implement an
            unknown hook, and components whose name was already taken.
        """
        self._build_tables()
        by_family = sorted(self._skipped_records, key=lambda s: NAMES.index(s.family))
        return list(self._skipped_plugins) + by_family

    def _disabled_reason(self, *names) -> str | None:
        keys = {normalize_name(n) for n in names if n}
        if keys & self._disabled_by_arg:
            return "disabled by Registry(disable=...)"
        if keys & self._disabled_by_env:
            return f"disabled by {DISABLE_ENV}"
        return None

    def _warn(self, message: str, category) -> None:
        """Warn once per message, its non-printable characters escaped: the message holds
        strings a plugin chose (its name, an exception's text), which reach the terminal."""
        from ._terminal import printable  # on first use: "import sparsekit" does not load it

        message = printable(message)
        if message not in self._warned:  # a table rebuild must not repeat a warning
            self._warned.add(message)
            warnings.warn(message, category, stacklevel=4)

    def _skip_plugin(self, plugin: str, reason: str, category=PluginLoadWarning, warn=True) -> None:
        self._skipped_plugins.append(SkippedPlugin(plugin, reason))
        if warn:
            self._warn(f"sparsekit plugin {plugin!r} is skipped: {reason}", category)

    def _check_hook_names(self, plugin, name: str) -> None:
        """Warn about hook implementations that match no hook spec (typos) and about
        ``sparsekit_*`` hook functions that lack the ``@hookimpl`` marker (never called)."""
        hooks = {fam.hook for fam in FAMILIES}
        for caller in self._pm.get_hookcallers(plugin) or ():
            if not caller.has_spec():
                close = closest_match(caller.name, sorted(hooks), cutoff=0.6)
                hint = f"did you mean {close!r}? " if close else ""
                reason = (
                    f"it implements {caller.name!r}, which is not a sparsekit hook; {hint}"
                    f"the hooks are {sorted(hooks)}"
                )
                self._skipped_plugins.append(SkippedPlugin(name, reason))
                self._warn(
                    f"sparsekit plugin {name!r}: {reason} (that function is ignored)",
                    UnknownHookWarning,
                )
        for hook in sorted(hooks):
            func = getattr(plugin, hook, None)
            if callable(func) and self._pm.parse_hookimpl_opts(plugin, hook) is None:
                reason = (
                    f"{hook} is not decorated with @sparsekit.plugins.hookimpl and is never called"
                )
                self._skipped_plugins.append(SkippedPlugin(name, reason))
                self._warn(f"sparsekit plugin {name!r}: {reason}", UnknownHookWarning)

    def _load_entry_points(self) -> None:
        with self._lock:
            if not self._use_entry_points or self._entry_points_loaded:
                return
            self._entry_points_loaded = True  # first: a plugin may look a name up at import
            # sorted by name: when two plugins claim one name, the same one wins on every machine
            for ep in sorted(_sparsekit_entry_points(), key=lambda e: e.name):
                if self._pm.has_plugin(ep.name) or self._pm.is_blocked(ep.name):
                    continue
                dist = getattr(getattr(ep, "dist", None), "name", None)
                reason = self._disabled_reason(ep.name, dist)
                if reason:
                    self._skip_plugin(ep.name, reason, warn=False)
                    continue
                # A broken plugin must not break the others, nor end the process: SystemExit (a
                # plugin calling sys.exit at import) and the other BaseExceptions skip it too.
                try:
                    plugin = ep.load()
                except KeyboardInterrupt:
                    raise
                except BaseException as exc:
                    self._skip_plugin(
                        ep.name, f"failed to load ({ep.value}): {type(exc).__name__}: {exc}"
                    )
                    continue
                try:
                    self._pm.register(plugin, name=ep.name)  # pluggy validates the hooks' arguments
                    self._check_hook_names(plugin, ep.name)
                except KeyboardInterrupt:
                    raise
                except BaseException as exc:
                    if self._pm.has_plugin(ep.name):
                        self._pm.unregister(name=ep.name)
                    self._skip_plugin(
                        ep.name, f"could not be registered: {type(exc).__name__}: {exc}"
                    )
                    continue
            self._tables = None

    # -- tables ----------------------------------------------------------------------------
    def _ordered_impls(self, hook):
        """Built-in implementations first, then the others in registration order."""
        impls = list(hook.get_hookimpls())
        return sorted(impls, key=lambda impl: impl.plugin_name not in BUILTIN_PLUGINS)

    def _build_tables(self, families=NAMES) -> dict[str, dict[str, ComponentInfo]]:
        """The tables of ``families`` (others may be missing). The component families are built
        together, at the first lookup of any of them; the tasks at the first task lookup (a
        kernel lookup does not import the tasks)."""
        if any(f in COMPONENT_NAMES for f in families):
            families = tuple(dict.fromkeys((*COMPONENT_NAMES, *families)))
        tables = self._tables
        if tables is not None and all(f in tables for f in families):
            return tables  # a family enters the tables when its table is complete
        with self._lock:
            self._load_entry_points()
            if self._tables is None:
                self._tables = {}
                self._skipped_records = []
            for family in families:
                if family not in self._tables:
                    self._tables[family] = self._build_table(family)
            return self._tables

    def _build_table(self, family: str) -> dict[str, ComponentInfo]:
        table: dict[str, ComponentInfo] = {}
        hook_name = _family(family).hook
        # one implementation at a time, so that each record knows its plugin
        for impl in self._ordered_impls(getattr(self._pm.hook, hook_name)):
            plugin_name = impl.plugin_name
            records, reason = _hook_records(impl.function, hook_name)
            if reason is not None:
                self._skip_record(plugin_name, family, None, reason, PluginLoadWarning)
                continue
            for rec in records:
                if not isinstance(rec, Registration):
                    self._skip_record(
                        plugin_name,
                        family,
                        None,
                        f"yielded {type(rec).__name__} {rec!r} from {hook_name}; expected "
                        "sparsekit.plugins.Registration",
                        PluginLoadWarning,
                    )
                    continue
                self._add(table, family, plugin_name, rec)
        return table

    def _skip_record(self, plugin, family, name, reason, category) -> None:
        self._skipped_records.append(SkippedPlugin(plugin, reason, family, name))
        what = f"{family} {name!r} of plugin {plugin!r}" if name else f"plugin {plugin!r}"
        self._warn(f"sparsekit {what} is skipped: {reason}", category)

    def _add(self, table, family, plugin_name, rec) -> None:
        """Enter one record in ``table``; a taken name skips the record (built-ins win)."""
        info = ComponentInfo(
            family=family,
            name=normalize_name(rec.name),
            aliases=tuple(
                dict.fromkeys(
                    a for a in map(normalize_name, rec.aliases) if a != normalize_name(rec.name)
                )
            ),
            plugin=plugin_name,
            summary=rec.summary,
            registration=rec,
        )
        for key in (info.name, *info.aliases):
            other = table.get(key)
            if other is None:
                continue
            if other.plugin in BUILTIN_PLUGINS and plugin_name in BUILTIN_PLUGINS:
                raise ComponentConflictError(
                    f"{family} name {key!r} is registered twice by built-in plugins "
                    f"{other.plugin!r} (as {other.name!r}) and {plugin_name!r} (as {info.name!r})"
                )
            owner = "built-in " if other.plugin in BUILTIN_PLUGINS else ""
            self._skip_record(
                plugin_name,
                family,
                info.name,
                f"the name {key!r} is already taken by {owner}plugin {other.plugin!r} "
                f"({family} {other.name!r}); rename the component, or disable one plugin "
                f"({DISABLE_ENV}={plugin_name} or Registry(disable=[{plugin_name!r}]))",
                ComponentConflictWarning,
            )
            return
        for key in (info.name, *info.aliases):
            table[key] = info

    def block(self, plugin_name: str) -> None:
        """Block a plugin by name (unregister it now and refuse it later).

        Parameters
        ----------
        plugin_name : str
            The plugin's name.
        """
        with self._lock:
            if self._pm.has_plugin(plugin_name):
                self._pm.unregister(name=plugin_name)
            self._pm.set_blocked(plugin_name)
            self._recipe["plugins"] = [
                (p, n) for p, n in self._recipe["plugins"] if n != plugin_name
            ]
            self._recipe["blocked"].append(plugin_name)
            self._tables = None

    # -- lookup ----------------------------------------------------------------------------
    def lookup(self, family: str, name: str) -> ComponentInfo:
        """Find the :class:`ComponentInfo` registered under ``name`` (or an alias) in ``family``.

        Parameters
        ----------
        family : str
            A family of :mod:`sparsekit._families` (``"kernel"``, ``"sampler"``, ...).
        name : str
            A name or alias (case- and ``-``/``_``-insensitive).

        Returns
        -------
        ComponentInfo
            The registration.

        Raises
        ------
        WrongFamilyError
            ``name`` is a component of other families: the message says, for each, what it is
            and where it is used (the ``uses`` of its family, :mod:`sparsekit._families`).
        UnknownComponentError
            No component of that name: the message names the closest one (of this family, else
            of another) and lists them all.
        """
        family = _family(family).name
        table = self._build_tables((family,))[family]
        key = normalize_name(name)
        try:
            return table[key]
        except KeyError:
            pass
        # the name of another family: say what it is and where it is used
        others = {fam: self._build_tables((fam,))[fam] for fam in NAMES if fam != family}
        found = [other[key] for other in others.values() if key in other]
        if found:
            raise WrongFamilyError(
                f"unknown {family} {name!r}: " + " ".join(_where_used(name, i) for i in found),
                family=found[0].family,
            )
        available = sorted({info.name for info in table.values()})
        close = closest_match(key, table)
        hint = f" Did you mean {table[close].name!r}?" if close else ""
        if not close:
            for fam, other in others.items():
                close = closest_match(key, other)
                if close:
                    hint = f" Did you mean {other[close].name!r} (a {fam})?"
                    break
        skipped = [s for s in self._skipped_records if s.family == family and s.name == key]
        why = (
            f" ({skipped[0].plugin!r} provides one but it was skipped: {skipped[0].reason})"
            if skipped
            else ""
        )
        raise UnknownComponentError(
            f"unknown {family} {name!r}.{hint} Available {family}s: {', '.join(available)}.{why}"
        )

    def get(self, family: str, name: str, **params: Any) -> Any:
        """Build the component ``name`` of ``family`` with ``params``.

        The registry builds components from names only: :func:`sparsekit.components.resolve`
        also takes component objects and, for kernels, functions.

        Parameters
        ----------
        family : str
            A family of :mod:`sparsekit._families` (``"kernel"``, ``"sampler"``, ...).
        name : str
            A registered name or alias (case- and ``-``/``_``-insensitive).
        **params
            The component's parameters.

        Returns
        -------
        object
            The component.

        Raises
        ------
        UnknownComponentError
            An unknown name.
        TypeError
            ``name`` is not a str, or ``params`` the factory does not take.
        """
        if not isinstance(name, str):
            fam = _family(family).name
            raise TypeError(
                f"Registry.get builds a {fam} from a registered name (str), got "
                f"{type(name).__name__}; sparsekit.components.resolve({fam!r}, spec) also "
                "takes component objects and functions"
            )
        info = self.lookup(family, name)
        from ._required_params import check_unknown_params, missing_params_error  # as _terminal

        check_unknown_params(info.family, info.name, info.registration.factory, params)
        missing = missing_params_error(info.family, info.name, info.registration.factory, params)
        if missing is not None:
            raise missing
        component = info.registration.factory(**params)
        self._providers[type(component)] = info
        return component

    def provider(self, component: object) -> ComponentInfo | None:
        """Find the registration that built ``component``.

        Parameters
        ----------
        component : object
            A component.

        Returns
        -------
        ComponentInfo or None
            The registration that built ``component`` (or registers its class), if any.
        """
        info = self._providers.get(type(component))
        if info is not None:
            return info
        for info in self.list():
            if info.registration.factory is type(component):
                return info
        return None

    def list(self, family: str | None = None) -> list[ComponentInfo]:
        """List the registered components.

        Parameters
        ----------
        family : str, optional
            One family; default every component family (the tasks, family ``"task"``, are listed
            only when asked for).

        Returns
        -------
        list of ComponentInfo
            Sorted by family and name.
        """
        families = COMPONENT_NAMES if family is None else (_family(family).name,)
        tables = self._build_tables(families)
        out: list[ComponentInfo] = []
        for fam in families:
            seen = {info.name: info for info in tables[fam].values()}
            out.extend(seen[k] for k in sorted(seen))
        return out

    def names(self, family: str) -> builtins.list[str]:  # "list" is the method above
        """List the canonical names of one family.

        Parameters
        ----------
        family : str
            A family of :mod:`sparsekit._families` (``"kernel"``, ``"sampler"``, ...).

        Returns
        -------
        list of str
            The canonical names, sorted.
        """
        return [info.name for info in self.list(family)]


def _hook_records(hook, hook_name: str):
    """Call one plugin's hook and collect what it yields: ``(records, None)``, or
    ``(None, reason)`` when the hook raised (any ``BaseException`` but ``KeyboardInterrupt``:
    a plugin's ``sys.exit`` must not end the process) or yielded more than
    :data:`MAX_REGISTRATIONS_PER_HOOK` records (it is cut there, so one that yields forever
    cannot hang the lookup)."""
    records, iterator, reason = [], None, None
    try:
        result = hook()
        if result is not None:
            iterator = iter(result)
            for rec in iterator:
                if len(records) == MAX_REGISTRATIONS_PER_HOOK:
                    reason = (
                        f"yielded more than {MAX_REGISTRATIONS_PER_HOOK:,} registrations "
                        f"from {hook_name} (cut there)"
                    )
                    break
                records.append(rec)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        reason = f"raised in {hook_name}: {type(exc).__name__}: {exc}"
    if iterator is not None and callable(getattr(iterator, "close", None)):
        try:
            iterator.close()  # runs a cut generator's cleanup now, not at garbage collection
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            reason = reason or f"raised in {hook_name}: {type(exc).__name__}: {exc}"
    return (None, reason) if reason is not None else (records, None)


def _where_used(name: str, info: ComponentInfo) -> str:
    """``"'x' is a F; use it where a F is expected: <uses of F>."`` for the name ``name``
    of the component ``info`` (an alias is followed by the canonical name)."""
    what = info.family.replace("-", " ")
    alias = f" (alias of {info.name!r})" if normalize_name(name) != info.name else ""
    return (
        f"{name!r} is a {what}{alias}; use it where a {what} is expected: "
        + _family(info.family).uses.format(name=info.name)
        + "."
    )


class _ModuleRef(str):
    """A plugin module in a pickled registry, by name: imported again (a ``str``, not a
    dataclass, so that ``import sparsekit`` does not pay for generating one)."""


def _rebuild(recipe) -> Registry:
    reg = Registry(
        builtins=recipe["builtins"], entry_points=recipe["entry_points"], disable=recipe["disable"]
    )
    for name in recipe["blocked"]:
        reg.block(name)
    for plugin, name in recipe["plugins"]:
        if isinstance(plugin, _ModuleRef):
            plugin = importlib.import_module(plugin)
        reg.register(plugin, name=name)
    return reg


_default: Registry | None = None
_default_lock = threading.RLock()


def default_registry() -> Registry:
    """Return the process-wide registry.

    Returns
    -------
    Registry
        The process-wide registry (built-ins plus installed entry-point plugins).
    """
    global _default
    if _default is None:
        with _default_lock:  # one registry, also when threads ask for it first at once
            if _default is None:
                _default = Registry()
    return _default


def list_components(family: str | None = None) -> list[ComponentInfo]:
    """List the components of the default registry.

    Parameters
    ----------
    family : str, optional
        ``"kernel"``, ``"sampler"``, ``"solver"``, ``"factorizer"``, ``"projection"``,
        ``"manifold-kernel"`` or ``"task"``: one family; default every component family
        (tasks apart).

    Returns
    -------
    list of ComponentInfo
        Sorted by family and name.
    """
    return default_registry().list(family)


__all__ = [
    "Registry",
    "ComponentInfo",
    "SkippedPlugin",
    "default_registry",
    "list_components",
    "BUILTIN_PLUGINS",
    "MAX_REGISTRATIONS_PER_HOOK",
]
