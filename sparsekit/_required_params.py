"""What a component factory's signature says, and the errors for a missing or unknown parameter.

:func:`factory_signature` is the one place that reads a factory's signature (the registry's
check of keyword parameters, the spec parser, the tasks and the estimators that fill in
defaults all ask it); it is cached, since ``inspect.signature`` costs about 0.1 ms.

Python's own ``TypeError: __init__() missing 1 required positional argument: 'beta'`` names
neither the component nor what ``beta`` is. :func:`missing_params_error` is checked before the
factory is called (so that a ``TypeError`` raised inside a factory is never re-labelled): it
names the component, each missing parameter with the first sentence of its description in the
factory's NumPy-style docstring, and the call that supplies it (the family's shortcut,
:mod:`sparsekit._families`); :func:`check_unknown_params` names the parameters a factory takes.
"""

from __future__ import annotations

import functools
import inspect
import re
from typing import Any, NamedTuple

from ._families import family as _family

_SECTIONS = ("Parameters", "Attributes", "Other Parameters")


def missing_params_error(family: str, name: str, factory, params: dict) -> TypeError | None:
    """A ``TypeError`` naming the required parameters of ``factory`` absent from ``params``,
    or None when none is missing (or the factory has no inspectable signature)."""
    missing = [p for p in factory_signature(factory).required if p not in params]
    if not missing:
        return None
    lines = [
        f"{family} {name!r} needs the parameter{'s' if len(missing) > 1 else ''} "
        f"{', '.join(missing)}, which {'have' if len(missing) > 1 else 'has'} no default:"
    ]
    for p in missing:
        kind, what = _described(factory, p)
        lines.append(f"  {p}" + (f" : {kind}" if kind else "") + (f" -- {what}" if what else ""))
    given = "".join(f", {k}={v!r}" for k, v in params.items())
    needed = "".join(f", {p}=..." for p in missing)
    record = _family(family)
    call = (
        f"sparsekit.{record.getter}({name!r}{given}{needed})"
        if record.getter
        else f"default_registry().get({family!r}, {name!r}{given}{needed})"
    )
    hint = f"Pass {'them' if len(missing) > 1 else 'it'} by name, e.g. {call}"
    if record.section:
        as_dict = ", ".join(f"{p!r}: ..." for p in missing)
        hint += f"; to an estimator, as {family}_params={{{as_dict}}}"
    lines.append(hint + ".")
    return TypeError("\n".join(lines))


def check_unknown_params(family: str, name: str, factory, params: dict) -> None:
    """Raise a ``TypeError`` naming the component and its parameters when a keyword of
    ``params`` is not one that ``factory`` takes."""
    signature = factory_signature(factory)
    unknown = sorted(set(params) - set(signature.names))
    if unknown and not signature.var_keyword:
        raise TypeError(
            f"{family} {name!r} got unknown parameter(s) {unknown}; "
            f"its parameters are {list(signature.names)}"
        )


class FactorySignature(NamedTuple):
    """The keyword parameters of a component factory.

    Attributes
    ----------
    names : tuple of str
        The parameters that can be passed by keyword, in signature order.
    required : tuple of str
        Those of ``names`` without a default.
    var_keyword : bool
        The factory takes ``**kwargs``; also True when its signature cannot be read (a builtin:
        the call decides).
    """

    names: tuple[str, ...]
    required: tuple[str, ...]
    var_keyword: bool


@functools.lru_cache(maxsize=512)
def _cached_signature(factory) -> FactorySignature:
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return FactorySignature((), (), True)
    params = [
        p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    return FactorySignature(
        tuple(p.name for p in params),
        tuple(p.name for p in params if p.default is p.empty),
        any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()),
    )


def factory_signature(factory: Any) -> FactorySignature:
    """The :class:`FactorySignature` of ``factory`` (a class or function); cached per factory."""
    try:
        return _cached_signature(factory)
    except TypeError:  # an unhashable factory object
        return _cached_signature.__wrapped__(factory)


def _described(factory, param: str) -> tuple[str, str]:
    """``(type, first sentence of the description)`` of ``param`` in the NumPy-style docstring
    of ``factory`` or of a class it derives from; empty strings where not documented."""
    kind = ""
    for owner in getattr(factory, "__mro__", (factory,)):
        found = _from_docstring(inspect.getdoc(owner) or "", param)
        if found:
            kind = kind or found[0]
            if found[1]:
                return kind, found[1]
    return kind, ""


def _from_docstring(doc: str, param: str) -> tuple[str, str] | None:
    lines = doc.splitlines()
    in_section = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
            in_section = stripped in _SECTIONS
            continue
        if not in_section or line.startswith(" "):
            continue
        m = re.match(r"^([\w\s,*]+?)\s*:\s*(.*)$", line)
        if not m or param not in [n.strip() for n in m.group(1).split(",")]:
            continue
        body = []
        for nxt in lines[i + 1 :]:
            if not nxt.startswith(" ") or not nxt.strip():
                break
            body.append(nxt.strip())
        text = " ".join(body)
        sentence = re.match(r"^(.*?[.;])(\s|$)", text)
        return m.group(2).strip(), (sentence.group(1) if sentence else text)
    return None
