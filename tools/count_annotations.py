"""Count the public signatures of sparsekit that carry type hints, and list the ones that do not.

Usage (from the repository root)::

    python tools/count_annotations.py [--list] [--top-level] [--fail-under N]

A public signature is

- a function in ``__all__`` of a public module (no ``_``-prefixed part in its dotted name);
- for each class in such an ``__all__``, and each sparsekit class it inherits from (a mixin of a
  private module such as ``sparsekit._base`` included): ``__init__``, the operator methods a user
  calls (``__call__``, ``__len__``, ``__matmul__``, ``__rmatmul__``, ``__getitem__``,
  ``__iter__``, ``__contains__``), every method whose name has no leading underscore, and every
  such property.

Methods that ``dataclasses`` generates (``__setattr__`` of a frozen record and the like) are not
counted: their source is not in the package; nor are methods defined outside sparsekit that land
in a class's namespace (the ``__init__`` that ``typing.Protocol`` gives a protocol class).
A function counts as annotated when every parameter but ``self``/``cls`` has an annotation and,
except for ``__init__``, so does the return; a property when its getter's return is annotated.
``--top-level`` counts the names of ``sparsekit.__all__`` (and their classes' methods) only;
``--list`` prints each signature that is not annotated as ``path:line: qualified.name`` (so an
editor jumps to it); ``--fail-under N`` exits 1 when fewer than N percent are annotated.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import pkgutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# the repository's package, not an installed copy
sys.path.insert(0, str(ROOT))

#: Dunder methods that are part of a class's public interface (called through an operator).
PUBLIC_DUNDERS = frozenset(
    {
        "__init__",
        "__call__",
        "__len__",
        "__matmul__",
        "__rmatmul__",
        "__getitem__",
        "__iter__",
        "__contains__",
    }
)


def _public_modules() -> Iterator[Any]:
    import sparsekit

    yield sparsekit
    for info in pkgutil.walk_packages(sparsekit.__path__, "sparsekit."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        yield importlib.import_module(info.name)


def _is_public_member(attr: str) -> bool:
    return attr in PUBLIC_DUNDERS or not attr.startswith("_")


def _in_package(func: Callable[..., Any]) -> bool:
    """Whether ``func`` is defined in a sparsekit module, in a source file.

    This leaves out what ``dataclasses`` generates (no source file) and what a class inherits
    from outside the package into its own namespace, such as the ``__init__`` that
    ``typing.Protocol`` puts on each protocol class (its code lives in ``typing.py``).
    """
    code = getattr(func, "__code__", None)
    module = getattr(func, "__module__", None) or ""
    return (
        code is not None
        and module.split(".")[0].startswith("sparsekit")
        and Path(code.co_filename).is_file()
    )


def _class_signatures(cls: type) -> Iterator[tuple[str, Callable[..., Any], str]]:
    """(qualified name, function, kind) for the public members of ``cls`` and its sparsekit bases.

    ``kind`` is ``"method"`` (first parameter bound), ``"static"`` or ``"property"``.
    """
    for klass in cls.__mro__:
        if not klass.__module__.startswith("sparsekit"):
            continue
        for attr, member in vars(klass).items():
            if not _is_public_member(attr):
                continue
            name = f"{klass.__module__}.{klass.__qualname__}.{attr}"
            if isinstance(member, property):
                if member.fget is not None and _in_package(member.fget):
                    yield name, member.fget, "property"
            elif isinstance(member, staticmethod):
                if _in_package(member.__func__):
                    yield name, member.__func__, "static"
            elif isinstance(member, classmethod):
                if _in_package(member.__func__):
                    yield name, member.__func__, "method"
            elif inspect.isfunction(member) and _in_package(member):
                yield name, member, "method"


def _signatures(module: Any) -> Iterator[tuple[str, Callable[..., Any], str]]:
    """(qualified name, function, kind) for each public signature of one module."""
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name, None)
        if inspect.isclass(obj):
            yield from _class_signatures(obj)
        elif inspect.isfunction(obj):
            yield f"{obj.__module__}.{obj.__qualname__}", obj, "function"


def is_annotated(func: Callable[..., Any], kind: str) -> bool:
    """Whether every parameter (but the bound first one of a method) and the return are annotated.

    A property needs its return annotated only; ``__init__`` needs no return annotation.
    """
    if kind == "property":
        return "return" in func.__annotations__
    params = list(inspect.signature(func).parameters.values())
    if kind == "method" and params:
        params = params[1:]
    if any(p.annotation is inspect.Parameter.empty for p in params):
        return False
    return func.__name__ == "__init__" or "return" in func.__annotations__


def location(func: Callable[..., Any]) -> str:
    """``path:line`` of ``func``'s definition, the path relative to the repository root."""
    code = func.__code__
    path = Path(code.co_filename).resolve()
    try:
        path = path.relative_to(ROOT)
    except ValueError:
        pass
    return f"{path.as_posix()}:{code.co_firstlineno}"


def collect(modules: list[Any]) -> dict[str, tuple[Callable[..., Any], bool]]:
    """``{qualified name: (function, annotated)}`` over the public signatures of ``modules``."""
    seen: dict[str, tuple[Callable[..., Any], bool]] = {}
    for module in modules:
        for qualname, func, kind in _signatures(module):
            if qualname not in seen:
                seen[qualname] = (func, is_annotated(func, kind))
    return seen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--list", action="store_true", help="print the unannotated signatures as path:line: name"
    )
    parser.add_argument("--top-level", action="store_true", help="sparsekit.__all__ only")
    parser.add_argument(
        "--fail-under",
        type=float,
        default=None,
        metavar="PERCENT",
        help="exit 1 when fewer than PERCENT %% of the signatures are annotated",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

    import sparsekit

    modules = [sparsekit] if args.top_level else list(_public_modules())
    seen = collect(modules)
    missing = sorted((location(func), name) for name, (func, ok) in seen.items() if not ok)
    if args.list:
        for where, name in missing:
            print(f"{where}: {name}")
    done = len(seen) - len(missing)
    print(f"{done} of {len(seen)} public signatures annotated")
    if args.fail_under is not None and done < args.fail_under / 100 * len(seen):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
