"""The error for a component built without a parameter its factory requires.

Python's own ``TypeError: __init__() missing 1 required positional argument: 'beta'`` names
neither the component nor what ``beta`` is. :func:`missing_params_error` is checked before the
factory is called (so that a ``TypeError`` raised inside a factory is never re-labelled): it
names the component, each missing parameter with the first sentence of its description in the
factory's NumPy-style docstring, and the call that supplies it.
"""
from __future__ import annotations

import functools
import inspect
import re

#: Families with a ``sparsekit.get_<family>`` shortcut.
_SHORTCUTS = ("kernel", "sampler", "solver", "projection")
#: Families that estimators take by name with a ``<family>_params`` dict.
_ESTIMATOR_PARAMS = ("kernel", "sampler", "solver")
_SECTIONS = ("Parameters", "Attributes", "Other Parameters")


def missing_params_error(family: str, name: str, factory, params: dict) -> TypeError | None:
    """A ``TypeError`` naming the required parameters of ``factory`` absent from ``params``,
    or None when none is missing (or the factory has no inspectable signature)."""
    try:
        required = _required(factory)
    except TypeError:  # an unhashable factory object
        required = _required.__wrapped__(factory)
    missing = [p for p in required if p not in params]
    if not missing:
        return None
    lines = [f"{family} {name!r} needs the parameter{'s' if len(missing) > 1 else ''} "
             f"{', '.join(missing)}, which {'have' if len(missing) > 1 else 'has'} no default:"]
    for p in missing:
        kind, what = _described(factory, p)
        lines.append(f"  {p}" + (f" : {kind}" if kind else "") + (f" -- {what}" if what else ""))
    given = "".join(f", {k}={v!r}" for k, v in params.items())
    needed = "".join(f", {p}=..." for p in missing)
    call = (f"sparsekit.get_{family}({name!r}{given}{needed})" if family in _SHORTCUTS
            else f"default_registry().get({family!r}, {name!r}{given}{needed})")
    hint = f"Pass {'them' if len(missing) > 1 else 'it'} by name, e.g. {call}"
    if family in _ESTIMATOR_PARAMS:
        as_dict = ", ".join(f"{p!r}: ..." for p in missing)
        hint += f"; to an estimator, as {family}_params={{{as_dict}}}"
    lines.append(hint + ".")
    return TypeError("\n".join(lines))


@functools.lru_cache(maxsize=256)
def _required(factory) -> tuple:
    """Keyword-passable parameters of ``factory`` without a default (empty when the signature
    cannot be read: the call decides)."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in sig.parameters.values()
                 if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


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
        for nxt in lines[i + 1:]:
            if not nxt.startswith(" ") or not nxt.strip():
                break
            body.append(nxt.strip())
        text = " ".join(body)
        sentence = re.match(r"^(.*?[.;])(\s|$)", text)
        return m.group(2).strip(), (sentence.group(1) if sentence else text)
    return None
