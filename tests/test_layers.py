"""The import graph of the package: no cycle, and every arrow points down the layers.

A static analysis (``ast``) of every module of ``sparsekit/``, counting function-level (lazy)
imports as edges too, so a cycle hidden behind a lazy import is found. Run it with
``python -m pytest tests/test_layers.py``.

- (a) no cycle in the module import graph;
- (b) the registry (``registry.py``, ``hookspecs.py``, ``_names.py``) imports no component
  package (nor anything above it);
- (c) the compute modules (``_cpu.py``, ``_cuda.py``) import nothing above them: directly or
  through other modules, only compute modules, the top-level private helpers
  (``sparsekit._runtime``, ``sparsekit._validation``, ...) and leaves (modules that import
  nothing of sparsekit).

An edge ``a -> b`` is an import statement in ``a`` naming ``b`` (``from . import x`` names the
submodule ``x`` when it is one), or a call ``importlib.import_module("b")`` (or
``import_module("b")``) with the name written out; importing ``pkg.sub`` is an edge to
``pkg.sub`` only, not to the package ``pkg`` whose ``__init__`` Python also runs, as in other
import-graph tools (every package's ``__init__`` importing its own modules would otherwise be a
cycle).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sparsekit"

#: Cycles outside the scope of the change that made run/ and the registry acyclic, each named
#: (a frozenset of its modules). A new cycle fails the test; so does a cycle here that is gone
#: (remove it from the list).
KNOWN_CYCLES: set = set()

#: Modules the registry layer is made of, and the only sparsekit modules they may import.
REGISTRY_LAYER = {
    "sparsekit.registry",
    "sparsekit.hookspecs",
    "sparsekit._families",
    "sparsekit.exceptions",
    "sparsekit._names",
    "sparsekit._accepts",
    "sparsekit._required_params",
    "sparsekit._terminal",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute name of a (possibly relative) import in ``module``."""
    if level == 0:
        return target or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _import_module_target(node: ast.AST) -> str | None:
    """The module name of a call ``importlib.import_module("name")`` / ``import_module("name")``
    whose first argument is a string literal, else None."""
    if not (isinstance(node, ast.Call) and node.args):
        return None
    func, arg = node.func, node.args[0]
    named = (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id == "import_module"
    )
    if named and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    return None


def module_edges(name: str, is_package: bool, source: str, modules) -> set:
    """The sparsekit modules (of ``modules``) that the source of module ``name`` imports."""
    edges = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, is_package, node.level, node.module)
            # "from pkg import sub" names the submodule when it is one
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names
            ]
        elif (literal := _import_module_target(node)) is not None:
            level = len(literal) - len(literal.lstrip("."))
            targets = [_resolve(name, is_package, level, literal.lstrip(".") or None)]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # "import a.b.c" of a name in a.b
                target = target.rpartition(".")[0]
            if target.startswith("sparsekit") and target != name:
                edges.add(target)
    return edges


def import_graph() -> dict:
    """``{module: set of sparsekit modules it imports}`` over every module of the package,
    imports inside functions, classes and ``if`` blocks included."""
    modules = _modules()
    return {
        name: module_edges(
            name, path.name == "__init__.py", path.read_text(encoding="utf-8"), modules
        )
        for name, path in modules.items()
    }


def cycles(graph: dict) -> list:
    """The strongly connected components with more than one module (Tarjan), each a set."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(component)

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


GRAPH = import_graph()


def test_the_analysis_sees_lazy_and_relative_imports():
    # run/runner.py imports run/tasks inside a function; registry.py imports hookspecs at the top
    assert "sparsekit.run.tasks" in GRAPH["sparsekit.run.runner"]
    assert "sparsekit.hookspecs" in GRAPH["sparsekit.registry"]
    # an import_module call with the name written out is an import too (a name computed at run
    # time, as the registry's BUILTIN_PLUGINS, is not seen)
    source = (
        "import importlib\n"
        "from importlib import import_module\n"
        "def f():\n"
        "    importlib.import_module('sparsekit.components').resolve\n"
        "    import_module('.tasks', __package__)\n"
        "    importlib.import_module('keras')\n"
    )
    assert module_edges("sparsekit.run.runner", False, source, _modules()) == {
        "sparsekit.components",
        "sparsekit.run.tasks",
    }
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


def test_no_import_cycle():
    found = {frozenset(c) for c in cycles(GRAPH)}
    new = found - KNOWN_CYCLES
    assert not new, "import cycles: " + "; ".join(" <-> ".join(sorted(c)) for c in new)
    assert not KNOWN_CYCLES - found, "a known cycle is gone: remove it from KNOWN_CYCLES"


def test_registry_imports_no_component_package():
    for module in REGISTRY_LAYER:
        assert GRAPH[module] <= REGISTRY_LAYER, (module, GRAPH[module] - REGISTRY_LAYER)


def test_no_module_of_the_package_imports_the_plugin_author_api():
    """``sparsekit.plugins`` gathers the base classes of every family for plugin authors, so it
    sits above them all: a module of the package that imported it (a built-in ``_plugin.py``
    for ``hookimpl``) would tie every family to every other one. The built-in plugins import
    the core (``sparsekit.hookspecs``) directly."""
    plugin_modules = [m for m in GRAPH if m.endswith("._plugin")]
    assert len(plugin_modules) == 8
    for module in plugin_modules:
        assert "sparsekit.hookspecs" in GRAPH[module], module
    importers = sorted(m for m, edges in GRAPH.items() if "sparsekit.plugins" in edges)
    assert importers == [], importers


def _reachable(module):
    seen, todo = set(), [module]
    while todo:
        for target in GRAPH[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_compute_modules_import_nothing_above_them():
    compute = {m for m in GRAPH if m.rpartition(".")[2] in ("_cpu", "_cuda")}
    assert len(compute) >= 3
    helpers = {
        m
        for m in GRAPH
        if (m.count(".") == 1 and m.rpartition(".")[2].startswith("_"))
        or m.startswith("sparsekit._runtime")
    }
    leaves = {m for m, edges in GRAPH.items() if not edges}
    for module in compute:
        above = _reachable(module) - compute - helpers - leaves
        assert not above, (module, above)


def _import_alone(modules, at_once: int = 4):
    """Import each module in an interpreter of its own (``at_once`` at a time); returns the
    failures."""
    script = (
        "import importlib, sys, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "importlib.import_module(sys.argv[1])\n"
    )
    failures, todo = {}, list(modules)
    while todo:
        batch, todo = todo[:at_once], todo[at_once:]
        procs = {
            m: subprocess.Popen(
                [sys.executable, "-c", script, m],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for m in batch
        }
        for m, proc in procs.items():
            _, err = proc.communicate(timeout=300)
            if proc.returncode:
                failures[m] = err.strip().splitlines()[-1:]
    return failures


@pytest.mark.parametrize("layer", ["registry", "run", "experiments"])
def test_each_module_of_a_layer_imports_alone(layer):
    """The static graph is the check; this makes sure each module of the layers it orders
    also imports first, in a fresh interpreter (an import-order dependency would fail here)."""
    prefix = "sparsekit." + layer
    modules = [m for m in GRAPH if m == prefix or m.startswith(prefix + ".")]
    if layer == "registry":
        modules = sorted(REGISTRY_LAYER | {"sparsekit.components"})
    assert modules
    assert _import_alone(sorted(modules)) == {}


def test_samplers_reach_no_feature_map():
    """Samplers sit below the feature maps (``Nystroem`` uses samplers): no sampler module
    imports ``sparsekit.features``, directly or through others. The random Fourier map that
    the approximate greedy-trace sampler needs lives in ``sparsekit._random_features``."""
    samplers = [m for m in GRAPH if m.split(".")[:2] == ["sparsekit", "samplers"]]
    assert "sparsekit.samplers.greedy" in samplers
    for module in samplers:
        up = {t for t in _reachable(module) if t.startswith("sparsekit.features")}
        assert not up, (module, up)


def test_factorizers_and_sparse_solvers_are_separate_families():
    """The factorizers (Palm4MSA) reach no sparse solver module and the reverse: the two
    protocols are two families. ``sparsekit.plugins``, the namespace that names every family's
    base class for plugin authors (the built-in ``_plugin`` modules import their hook marker
    from it), is left out."""
    graph = {m: edges - {"sparsekit.plugins"} for m, edges in GRAPH.items()}

    def reachable(module):
        seen, todo = set(), [module]
        while todo:
            for target in graph[todo.pop()] - seen:
                seen.add(target)
                todo.append(target)
        return seen

    factorizers = [m for m in graph if m.startswith("sparsekit.factorizers")]
    assert "sparsekit.factorizers.palm4msa" in factorizers
    for module in factorizers:
        assert not {t for t in reachable(module) if t.startswith("sparsekit.solvers")}, module
    for module in (m for m in graph if m.startswith("sparsekit.solvers")):
        assert not {t for t in reachable(module) if t.startswith("sparsekit.factorizers")}, module
