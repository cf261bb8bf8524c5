"""numpydoc validation of every public docstring, as scikit-learn and skglm run it.

The public names are every name in the ``__all__`` of every public module of sparsekit (a module
whose dotted name has no part starting with ``_``) and the public methods and properties of
the public classes, where sparsekit defines them (methods inherited from scikit-learn, NumPy or
the standard library are theirs to document). An object listed under several modules is
validated once. Each docstring goes through :func:`numpydoc.validate.validate`, and every check
applies except those in :data:`EXCLUDED_CHECKS`, each with its reason.

A failure lists every failing name with the codes it fails and their messages, one name a line.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import warnings

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

PACKAGE = "sparsekit"

#: Checks that are not applied, and why (every other numpydoc check applies).
EXCLUDED_CHECKS = {
    # An extended summary is welcome but not required: a one-line summary followed by the
    # Parameters and Returns sections fully describes a small function or a property
    # (scikit-learn does not require one of its methods either).
    "ES01": "no extended summary",
    # The See Also and Examples sections are not required on every name (scikit-learn requires
    # them only of a curated set of top-level classes): examples live in the user guide, whose
    # code blocks run in tests/test_docs_guide.py, and in the gallery; the docstrings that do
    # have an Examples section run as doctests (the README test command uses --doctest-modules).
    "SA01": "no See Also section",
    "EX01": "no Examples section",
}

#: Packages that need an optional extra (``sparsekit[dask]``, Keras for ``sparsekit.nn``): their
#: modules are skipped when the extra is not installed, and validated when it is.
OPTIONAL = {"sparsekit.dask": "dask", "sparsekit.nn": "keras"}


def _optional(name: str) -> str | None:
    for prefix, extra in OPTIONAL.items():
        if name == prefix or name.startswith(prefix + "."):
            return extra
    return None


def public_modules() -> tuple[list, list[str]]:
    """The public modules of sparsekit, and those not importable because an optional extra is
    missing."""
    package = importlib.import_module(PACKAGE)
    names = [PACKAGE] + [
        info.name
        for info in pkgutil.walk_packages(package.__path__, PACKAGE + ".")
        if not any(part.startswith("_") for part in info.name.split("."))
    ]
    modules, missing = [], []
    for name in sorted(names):
        try:
            modules.append(importlib.import_module(name))
        except ImportError:
            if _optional(name) is None:
                raise
            missing.append(name)
    return modules, missing


def _is_documented_object(obj) -> bool:
    return inspect.isclass(obj) or inspect.isfunction(inspect.unwrap(obj))


def _own(obj) -> bool:
    return (getattr(obj, "__module__", None) or "").split(".")[0] == PACKAGE


def _primary_names(modules) -> dict[int, tuple[str, object]]:
    """One public name per object: the listing in the module nearest its home module (the
    longest shared dotted prefix, as the API pages choose the indexed listing)."""
    best: dict[int, tuple[int, str, object]] = {}
    for module in modules:
        for item in getattr(module, "__all__", ()):
            if item.startswith("__") or not hasattr(module, item):  # see test_all_names_exist
                continue
            obj = getattr(module, item)
            if not _is_documented_object(obj) or not _own(obj):
                continue
            home = obj.__module__.split(".")
            shared = len(os.path.commonprefix([home, module.__name__.split(".")]))
            full = f"{module.__name__}.{item}"
            if id(obj) not in best or shared > best[id(obj)][0]:
                best[id(obj)] = (shared, full, obj)
    return {key: (full, obj) for key, (_, full, obj) in best.items()}


def _members(cls):
    """The public methods and properties that sparsekit classes define, inherited ones included
    (a method is documented where it is defined)."""
    seen = set()
    for klass in cls.__mro__:
        if not _own(klass):
            continue
        for name, attr in vars(klass).items():
            if name in seen or (name.startswith("_") and name != "__call__"):
                continue
            seen.add(name)
            if isinstance(attr, (staticmethod, classmethod)):
                attr = attr.__func__
            if isinstance(attr, property):
                key = attr.fget
            elif inspect.isfunction(attr):
                key = attr
            else:
                continue
            if key.__doc__ is None and _inherits_doc(cls, klass, name):
                continue  # Sphinx shows the overridden method's docstring, validated there
            yield name, key


def _inherits_doc(cls, klass, name) -> bool:
    """Whether ``klass.name`` overrides a method of a later class of ``cls``'s MRO that has a
    docstring (what ``inspect.getdoc`` and Sphinx show for it)."""
    later = cls.__mro__[cls.__mro__.index(klass) + 1 :]
    return any(getattr(vars(base).get(name), "__doc__", None) for base in later)


def public_names() -> list[str]:
    """Every public name to validate, one per distinct object (functions, classes, methods)."""
    modules, _ = public_modules()
    names, seen = [], set()
    for full, obj in sorted(_primary_names(modules).values(), key=lambda t: t[0]):
        names.append(full)
        if inspect.isclass(obj):
            for member, key in _members(obj):
                if id(key) in seen:
                    continue
                seen.add(id(key))
                names.append(f"{full}.{member}")
    return names


def validation_errors(name: str) -> list[tuple[str, str]]:
    """The (code, message) pairs of the checks that ``name``'s docstring fails."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpydoc's parser warns on some sections
        result = numpydoc_validate.validate(name)
    return [(code, msg) for code, msg in result["errors"] if code not in EXCLUDED_CHECKS]


def test_every_public_module_has_all():
    modules, _ = public_modules()
    lacking = [m.__name__ for m in modules if not hasattr(m, "__all__")]
    assert not lacking, "public modules without __all__:\n" + "\n".join(lacking)


def test_all_names_exist():
    modules, _ = public_modules()
    broken = [
        f"{m.__name__}.{item}"
        for m in modules
        for item in getattr(m, "__all__", ())
        if not hasattr(m, item)
    ]
    assert not broken, "names in __all__ that the module lacks:\n" + "\n".join(broken)


def test_optional_modules_import():
    """A module of an optional extra is skipped below only when its extra is missing."""
    _, missing = public_modules()
    for name in missing:
        pytest.importorskip(OPTIONAL[next(p for p in OPTIONAL if name.startswith(p))])
        pytest.fail(f"{name} does not import although its extra is installed")


def test_public_docstrings_pass_numpydoc_validation():
    names = public_names()
    assert len(names) > 100  # the collection itself works
    failures = []
    for name in names:
        errors = validation_errors(name)
        if errors:
            codes = " ".join(sorted({code for code, _ in errors}))
            details = "; ".join(f"{code} {msg}" for code, msg in errors)
            failures.append(f"{name} [{codes}]: {details}")
    assert not failures, (
        f"{len(failures)} of {len(names)} public names fail numpydoc validation "
        f"(checks excluded: {', '.join(sorted(EXCLUDED_CHECKS))}):\n" + "\n".join(failures)
    )
