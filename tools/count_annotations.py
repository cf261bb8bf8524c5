"""Count the public signatures of sparsekit that carry type hints.

Usage (from the repository root)::

    python tools/count_annotations.py [--list] [--top-level]

A public signature is a function in ``__all__`` of a public module (no ``_``-prefixed part in its
dotted name), or a method that a class in such an ``__all__`` defines itself (``__init__``, or a
name without a leading underscore; properties are left out). It counts as annotated when every
parameter but ``self``/``cls`` has an annotation and, except for ``__init__``, so does the
return. ``--top-level`` counts the names of ``sparsekit.__all__`` only; ``--list`` prints the
signatures that are not annotated.
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

# the repository's package, not an installed copy
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _public_modules() -> Iterator[Any]:
    import sparsekit

    yield sparsekit
    for info in pkgutil.walk_packages(sparsekit.__path__, "sparsekit."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        module = importlib.import_module(info.name)
        if getattr(module, "__name__", info.name) != info.name:  # a moved module's alias
            continue
        yield module


def _signatures(module: Any) -> Iterator[tuple[str, Callable[..., Any], bool]]:
    """(qualified name, function, is_method) for each public signature of one module."""
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name, None)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr != "__init__" and attr.startswith("_"):
                    continue
                if isinstance(member, (staticmethod, classmethod)):
                    yield (f"{obj.__module__}.{obj.__qualname__}.{attr}", member.__func__,
                           isinstance(member, classmethod))
                elif inspect.isfunction(member):
                    yield f"{obj.__module__}.{obj.__qualname__}.{attr}", member, True
        elif inspect.isfunction(obj):
            yield f"{obj.__module__}.{obj.__qualname__}", obj, False


def is_annotated(func: Callable[..., Any], is_method: bool) -> bool:
    """Whether every parameter (but the bound first one) and the return are annotated."""
    params = list(inspect.signature(func).parameters.values())
    if is_method and params:
        params = params[1:]
    if any(p.annotation is inspect.Parameter.empty for p in params):
        return False
    return func.__name__ == "__init__" or "return" in func.__annotations__


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print the unannotated signatures")
    parser.add_argument("--top-level", action="store_true", help="sparsekit.__all__ only")
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

    import sparsekit

    modules = [sparsekit] if args.top_level else list(_public_modules())
    seen: dict[str, bool] = {}
    for module in modules:
        for qualname, func, is_method in _signatures(module):
            seen.setdefault(qualname, is_annotated(func, is_method))
    missing = sorted(name for name, ok in seen.items() if not ok)
    if args.list:
        print("\n".join(missing))
    print(f"{len(seen) - len(missing)} of {len(seen)} public signatures annotated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
