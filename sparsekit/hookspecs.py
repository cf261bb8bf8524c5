"""Hook specifications: one hook per registry family (the component families and the tasks).

Every hook returns (or yields) an iterable of :class:`Registration` records (one per
component). Built-in components use exactly these hooks; third-party plugins register a module
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

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pluggy

from ._accepts import ACCEPTS, accepts_label
from ._names import did_you_mean

PROJECT = "sparsekit"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


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
    accepts : str, optional
        What the component takes as input data: ``"vectors"``, ``"graphs"`` or ``"any"``.
        Default: read from the factory's ``accepts`` attribute (a kind, ``"any"`` or a tuple of
        kinds: :mod:`sparsekit._accepts`), ``"vectors"`` when it has none.

    Raises
    ------
    TypeError, ValueError
        At construction, for an empty or non-string name, a factory that is not callable,
        aliases given as one string, or an ``accepts`` value outside ``sparsekit._accepts.ACCEPTS``.
    """

    name: str
    factory: Callable[..., Any]
    aliases: tuple = ()
    summary: str = ""
    accepts: str | None = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise TypeError(f"Registration name must be a non-empty str, got {self.name!r}")
        if not callable(self.factory):
            raise TypeError(
                f"Registration {self.name!r}: factory must be callable (a class or function "
                f"building the component), got {type(self.factory).__name__}"
            )
        if isinstance(self.aliases, str):
            raise TypeError(
                f"Registration {self.name!r}: aliases must be a tuple of str, got the string "
                f"{self.aliases!r} (write aliases=({self.aliases!r},))"
            )
        aliases = tuple(self.aliases)
        if not all(isinstance(a, str) and a.strip() for a in aliases):
            raise TypeError(
                f"Registration {self.name!r}: every alias must be a non-empty str, got {aliases!r}"
            )
        object.__setattr__(self, "aliases", aliases)
        if self.accepts is None:
            declared = getattr(self.factory, "accepts", "vectors")
            try:
                object.__setattr__(self, "accepts", accepts_label(declared))
            except (TypeError, ValueError):
                raise ValueError(
                    f"Registration {self.name!r}: the factory's accepts={declared!r} is not "
                    f"one of {list(ACCEPTS)} nor a tuple of kinds; pass accepts=... explicitly"
                ) from None
        if self.accepts not in ACCEPTS:
            raise ValueError(
                f"Registration {self.name!r}: unknown accepts={self.accepts!r}."
                f"{did_you_mean(self.accepts, ACCEPTS, cutoff=0.6)} "
                f"Choose one of {list(ACCEPTS)}."
            )


class Specs:
    """The hook specifications of sparsekit (one per family)."""

    @hookspec
    def sparsekit_kernels(self) -> Iterable[Registration]:
        """Declare kernels.

        Returns
        -------
        iterable of Registration
            The :class:`Registration` records (a generator may yield them).
        """

    @hookspec
    def sparsekit_samplers(self) -> Iterable[Registration]:
        """Declare landmark samplers.

        Returns
        -------
        iterable of Registration
            The :class:`Registration` records (a generator may yield them).
        """

    @hookspec
    def sparsekit_solvers(self) -> Iterable[Registration]:
        """Declare sparse solvers.

        Returns
        -------
        iterable of Registration
            The :class:`Registration` records (a generator may yield them).
        """

    @hookspec
    def sparsekit_factorizers(self) -> Iterable[Registration]:
        """Return the :class:`Registration` records of factorizers.

        Factorizers are components with ``factorize(M, constraints) -> FactorizationResult``
        (Palm4MSA and its hierarchical variant).

        Returns
        -------
        iterable of Registration
            The plugin's factorizers.
        """

    @hookspec
    def sparsekit_manifold_kernels(self) -> Iterable[Registration]:
        """Return the :class:`Registration` records of manifold kernels.

        Manifold kernels are the data-dependent kernels of the spectral embeddings (``fit(X)``,
        ``gram()``, ``kernel(X_new)`` against the fitted points only), which are not kernels
        ``k(X, Y)``.

        Returns
        -------
        iterable of Registration
            The plugin's manifold kernels.
        """

    @hookspec
    def sparsekit_projections(self) -> Iterable[Registration]:
        """Declare projections.

        Projections are the constraint sets of Palm4MSA factors.

        Returns
        -------
        iterable of Registration
            The :class:`Registration` records (a generator may yield them).
        """

    @hookspec
    def sparsekit_tasks(self) -> Iterable[Registration]:
        """Declare the tasks of ``sparsekit run``.

        Each record's factory, called without arguments, returns a
        :class:`sparsekit.run.tasks.Task` (:meth:`~sparsekit.run.tasks.Task.registration` builds
        the record).

        Returns
        -------
        iterable of Registration
            The :class:`Registration` records (a generator may yield them).
        """


__all__ = ["Registration", "Specs", "hookspec", "hookimpl"]
