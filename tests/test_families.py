"""One family per protocol: factorizers and manifold kernels are families of their own, one
vocabulary for what a component accepts, one Protocol per family, and the plugin-author API in
``sparsekit.plugins``."""

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy.linalg import hadamard

import sparsekit
import sparsekit.exceptions as exceptions
import sparsekit.plugins as plugins
import sparsekit.protocols as protocols
from sparsekit._accepts import INPUT_KINDS, input_kinds
from sparsekit.factorizers import HierarchicalPalm4MSA, Palm4MSA, hierarchical_constraints
from sparsekit.plugins import Registration, Registry, hookimpl

# -- a third-party factorizer, registered through the factorizer hook -------------------------


class RecordingPalm(Palm4MSA):
    """Palm4MSA under another name, recording the calls (a plugin factorizer)."""

    name = "recording-palm"
    calls: list = []

    def factorize(self, M, constraints, **kwargs):
        RecordingPalm.calls.append((np.shape(M), len(constraints), sorted(kwargs)))
        return super().factorize(M, constraints, **kwargs)


class LevelPalm(HierarchicalPalm4MSA):
    """Hierarchical Palm4MSA under another name: builds its schedule from a sparsity level."""

    name = "level-palm"


class FactorizerPlugin:
    @hookimpl
    def sparsekit_factorizers(self):
        yield Registration("recording-palm", RecordingPalm, summary="Palm4MSA, recorded")
        yield Registration("level-palm", LevelPalm, summary="hierarchical, by level")


@pytest.fixture
def reg():
    RecordingPalm.calls = []
    return Registry(entry_points=False, plugins=[FactorizerPlugin()])


def test_plugin_factorizer_is_listed_in_its_family(reg, monkeypatch, capsys):
    import sparsekit.cli as cli

    info = reg.lookup("factorizer", "recording-palm")
    assert info.family == "factorizer" and info.plugin.startswith("FactorizerPlugin")
    assert "recording-palm" not in reg.names("solver")
    monkeypatch.setattr(cli, "default_registry", lambda: reg)
    assert cli.main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["components"]
    factorizers = {r["name"]: r["plugin"] for r in rows if r["family"] == "factorizer"}
    assert set(factorizers) == {"palm4msa", "hierarchical-palm4msa", "recording-palm", "level-palm"}
    assert cli.main(["list", "--family", "factorizer"]) == 0
    table = capsys.readouterr().out
    assert "recording-palm" in table and "omp" not in table


def test_quickmeans_uses_the_plugin_factorizer(reg):
    """The plugin factorizer is Palm4MSA under another name: QuicK-means resolved through the
    factorizer family gives the built-in result exactly, and the plugin saw every refit."""
    rng = np.random.default_rng(0)
    X = np.repeat(rng.normal(size=(4, 6)) * 5, 30, axis=0) + rng.normal(size=(120, 6))
    kw = dict(n_clusters=4, sparsity=2, max_iter=4, palm_iter=15, random_state=0)
    ref = sparsekit.QuicKMeans(**kw).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the new family: no deprecated path
        got = sparsekit.QuicKMeans(factorizer="recording-palm", registry=reg, **kw).fit(X)
    np.testing.assert_array_equal(got.labels_, ref.labels_)
    np.testing.assert_allclose(got.objective_history_, ref.objective_history_, rtol=1e-12)
    assert len(RecordingPalm.calls) >= got.n_iter_ - 1 >= 1
    assert all(kwargs == ["init_factors", "init_scale"] for _, _, kwargs in RecordingPalm.calls)


def _rel_error(result, X):
    """‖X − λ S_1 ⋯ S_Q‖_F / ‖X‖_F from the dense factors (not the result's own property)."""
    dense = (
        np.linalg.multi_dot([f.toarray() for f in result.factors.factors]) * result.factors.scale
    )
    return np.linalg.norm(X - dense) / np.linalg.norm(X)


def test_palm4msa_task_uses_the_plugin_factorizers(reg):
    """The task resolves its [solver] section in the factorizer family: a flat plugin
    factorizer gets the schedule's factor constraints, one that builds its own schedule gets the
    sparsity level; the rows match the factorizations computed directly."""
    from sparsekit.run import run_task

    X = hadamard(16).astype(float)
    params = {"n_factors": 4, "sparsity": 2}
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        flat = run_task(
            "palm4msa",
            params,
            {"X": X},
            {"solver": {"name": "recording-palm", "n_iter": 40}},
            registry=reg,
        )
        level = run_task(
            "palm4msa",
            params,
            {"X": X},
            {"solver": {"name": "level-palm", "n_iter": 30}},
            registry=reg,
        )
    facts, _ = hierarchical_constraints(X.shape, 4, 2)
    assert RecordingPalm.calls == [((16, 16), len(facts), [])]
    direct = Palm4MSA(n_iter=40).factorize(X, facts)
    assert flat["rel_error"] == pytest.approx(_rel_error(direct, X), rel=1e-9, abs=1e-12)
    assert flat["nnz"] == direct.factors.nnz
    direct = HierarchicalPalm4MSA(n_iter=30).factorize(X, 2, n_factors=4)
    assert level["rel_error"] == pytest.approx(_rel_error(direct, X), rel=1e-9, abs=1e-12)
    assert level["rel_error"] < 1e-8  # the butterfly factorization of Hadamard 16


def test_a_sparse_solver_is_not_a_factorizer(reg):
    from sparsekit.run import run_task

    with pytest.raises(sparsekit.UnknownComponentError, match="unknown factorizer 'omp'"):
        run_task("palm4msa", {}, {"X": np.eye(4)}, {"solver": "omp"}, registry=reg)
    with pytest.raises(sparsekit.UnknownComponentError, match="unknown factorizer 'omp'"):
        sparsekit.QuicKMeans(2, factorizer="omp").fit(np.eye(4))


@pytest.mark.parametrize(
    "family, name, owner, way",
    [
        ("solver", "palm", "factorizer", "sparsekit.get_factorizer('palm4msa')"),
        ("factorizer", "omp", "solver", "sparsekit.get_solver('omp')"),
        ("kernel", "lle", "manifold kernel", "sparsekit.get_manifold_kernel('lle')"),
        ("sampler", "rbf", "kernel", "sparsekit.get_kernel('rbf')"),
        ("projection", "dac-rls", "sampler", "sparsekit.get_sampler('dac-rls')"),
        ("kernel", "nystrom", "task", "task = 'nystrom' in a spec of sparsekit run"),
    ],
)
def test_a_name_of_another_family_is_refused_with_where_it_is_used(family, name, owner, way):
    """One rule for every pair of families. Oracle: the registry's own listing, ``names(F)``
    (the name belongs to family ``owner`` and not to ``family``)."""
    reg = Registry(entry_points=False)
    owner_family = owner.replace(" ", "-")
    assert name not in reg.names(family)
    assert reg.lookup(owner_family, name).family == owner_family
    with pytest.raises(sparsekit.UnknownComponentError) as info:
        reg.get(family, name)
    assert info.value.family == owner_family
    assert f"unknown {family} {name!r}: {name!r} is a {owner}" in str(info.value)
    assert f"use it where a {owner} is expected: {way}" in str(info.value)


def test_every_name_of_another_family_is_refused_naming_its_families():
    """Every name of every family, looked up in every family it does not belong to (the pairs
    of the brute-force oracle: ``names(F)`` of each family F, aliases included)."""
    from sparsekit._families import NAMES as FAMILIES

    reg = Registry(entry_points=False)
    keys = {fam: {k for i in reg.list(fam) for k in (i.name, *i.aliases)} for fam in FAMILIES}
    pairs = 0
    for family in FAMILIES:
        for owner in FAMILIES:
            for name in sorted(keys[owner] - keys[family]):
                with pytest.raises(sparsekit.UnknownComponentError) as info:
                    reg.lookup(family, name)
                owners = [fam for fam in FAMILIES if name in keys[fam]]
                assert info.value.family == owners[0], (family, name)
                for fam in owners:
                    what = fam.replace("-", " ")
                    assert f"{name!r} is a {what}" in str(info.value), (family, name)
                pairs += 1
    assert pairs > 100


def _import_warnings(statement):
    """The DeprecationWarnings that ``statement`` raises in a fresh interpreter."""
    code = (
        "import warnings, json\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        f"    {statement}\n"
        "print(json.dumps([str(x.message) for x in w "
        "if issubclass(x.category, DeprecationWarning)]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- manifold kernels ----------------------------------------------------------------------------
MANIFOLD = ("isomap-geodesic", "lle", "spectral-normalized")


def _blobs():
    return np.random.default_rng(1).normal(size=(40, 3))


@pytest.mark.parametrize("name", MANIFOLD + ("isomap",))
@pytest.mark.parametrize(
    "entry", ["Nystroem", "KernelKMeans", "mmd2_biased", "mmd2_nystrom", "Registry.get", "resolve"]
)
def test_vector_kernel_entry_points_refuse_manifold_kernels_clearly(entry, name):
    from sparsekit import stats
    from sparsekit.components import resolve

    X = _blobs()
    calls = {
        "Nystroem": lambda: sparsekit.Nystroem(kernel=name, n_components=5).fit(X),
        "KernelKMeans": lambda: sparsekit.KernelKMeans(2, kernel=name).fit(X),
        "mmd2_biased": lambda: stats.mmd2_biased(X[:20], X[20:], kernel=name),
        "mmd2_nystrom": lambda: stats.mmd2_nystrom(X[:20], X[20:], kernel=name, n_landmarks=5),
        "Registry.get": lambda: Registry(entry_points=False).get("kernel", name),
        "resolve": lambda: resolve("kernel", name),
    }
    with pytest.raises(sparsekit.UnknownComponentError) as info:
        calls[entry]()
    message = str(info.value)
    canonical = "isomap-geodesic" if name == "isomap" else name
    assert f"unknown kernel {name!r}: {name!r} is a manifold kernel" in message
    assert "evaluated against the fitted points only" in message
    assert "Nystroem" in message and "Isomap" in message
    assert f"sparsekit.get_manifold_kernel({canonical!r})" in message


def test_manifold_kernel_objects_are_refused_where_a_kernel_is_expected():
    """Through sparsekit.components.resolve (KernelKMeans still copies its kernel object with a
    helper of its own, so it is not listed here)."""
    from sparsekit import stats
    from sparsekit.components import resolve
    from sparsekit.manifold.kernels import LLEKernel

    X = _blobs()
    for call in (
        lambda: resolve("kernel", LLEKernel()),
        lambda: sparsekit.get_kernel(LLEKernel()),
        lambda: sparsekit.Nystroem(kernel=LLEKernel(), n_components=5).fit(X),
        lambda: stats.mmd2_biased(X[:20], X[20:], kernel=LLEKernel()),
    ):
        with pytest.raises(TypeError, match="got the manifold kernel LLEKernel.*get_manifold"):
            call()


def test_manifold_kernels_have_their_own_family():
    from sklearn.manifold import Isomap

    names = sparsekit.default_registry().names("manifold-kernel")
    assert set(MANIFOLD) <= set(names)
    assert not set(MANIFOLD) & set(sparsekit.default_registry().names("kernel"))
    X = _blobs()
    k = sparsekit.get_manifold_kernel("isomap", n_neighbors=8).fit(X)
    # the centred geodesic Gram: -1/2 H D_G^2 H, with scikit-learn's geodesic distances
    D = Isomap(n_neighbors=8, n_components=2).fit(X).dist_matrix_
    H = np.eye(len(X)) - 1.0 / len(X)
    np.testing.assert_allclose(k.gram(), -0.5 * H @ (D**2) @ H, atol=1e-9)


def test_demo_kernel_table_reads_the_kernel_family_only(monkeypatch):
    """The demo's kernel table builds no manifold kernel (it used to build every kernel)."""
    import sparsekit.experiments.demo as demo

    built = []
    monkeypatch.setattr(
        demo,
        "run_task",
        lambda task, params, data, components, seed: (
            built.append(components["kernel"]["name"])
            or {"time": 0.0, "max_asym": 0.0, "min_eig": 0.0}
        ),
    )
    demo.kernel_table(n=20, d=3)
    vectors = [
        i.name
        for i in sparsekit.default_registry().list("kernel")
        if i.registration.accepts == "vectors"
    ]
    assert sorted(set(built)) == sorted(vectors) and not set(built) & set(MANIFOLD)


# -- one vocabulary for what a component accepts ---------------------------------------------------
def test_registration_reads_accepts_from_its_factory():
    from sparsekit.kernels import RBFKernel
    from sparsekit.kernels.graph import ShortestPathKernel
    from sparsekit.samplers import GreedyTraceSampler, UniformSampler

    assert Registration("a", RBFKernel).accepts == "vectors"  # Kernel.accepts = "vectors"
    assert Registration("b", ShortestPathKernel).accepts == "graphs"  # a str
    assert Registration("c", UniformSampler).accepts == "any"  # a tuple of both kinds
    assert Registration("d", GreedyTraceSampler).accepts == "any"  # a descriptor on the class
    assert Registration("e", Palm4MSA).accepts == "vectors"  # none declared
    assert Registration("f", UniformSampler, accepts="vectors").accepts == "vectors"  # given

    class Odd:
        accepts = ("vectors", "trees")

    with pytest.raises(ValueError, match="factory's accepts=.*pass accepts=... explicitly"):
        Registration("g", Odd)


def test_builtin_registrations_say_what_their_components_accept():
    """One vocabulary, read from the component: every built-in record's accepts is its class's."""
    for info in Registry(entry_points=False).list():
        declared = getattr(info.registration.factory, "accepts", "vectors")
        kinds = input_kinds(declared)
        assert info.registration.accepts == ("any" if len(kinds) == 2 else kinds[0]), info.name
    assert {i.registration.accepts for i in Registry(entry_points=False).list("projection")} == {
        "any"
    }


def test_input_kinds_reads_every_spelling():
    from sparsekit.samplers import GreedyTraceSampler

    assert input_kinds("any") == INPUT_KINDS == ("vectors", "graphs")
    assert input_kinds("graphs") == ("graphs",)
    assert input_kinds(("graphs", "vectors")) == ("vectors", "graphs")
    assert input_kinds(GreedyTraceSampler(approximate=True).accepts) == ("vectors",)
    with pytest.raises(ValueError, match="unknown accepts='vector'"):
        input_kinds("vector")


# -- protocols: every built-in component satisfies its family's ------------------------------------
def _instance(info):
    """The component of a built-in registration, built with small parameters."""
    import inspect

    factory = info.registration.factory
    if info.family == "task":
        return factory()
    kw = {
        "shape": (4, 4),
        "k": 2,
        "mask": np.eye(4, dtype=bool),
        "matrix": np.eye(4),
        "beta": 1.0,
        "lam": 1.0,
    }
    required = [
        p.name
        for p in inspect.signature(factory).parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    return factory(**{name: kw[name] for name in required})


@pytest.mark.parametrize("family", list(protocols.PROTOCOLS))
def test_every_builtin_component_satisfies_its_protocol(family):
    reg = Registry(entry_points=False)
    infos = reg.list(family)
    assert infos
    protocol = protocols.PROTOCOLS[family]
    for info in infos:
        component = _instance(info)
        assert isinstance(component, protocol), (family, info.name)
        for other_family, other in protocols.PROTOCOLS.items():  # and not another's
            if {family, other_family} == {"solver", "factorizer"}:
                assert not isinstance(component, other), (info.name, other_family)


def test_a_manifold_kernel_is_not_a_kernel_by_protocol():
    from sparsekit.manifold.kernels import IsomapGeodesicKernel

    assert isinstance(IsomapGeodesicKernel(), protocols.ManifoldKernelProtocol)
    assert not isinstance(IsomapGeodesicKernel(), protocols.KernelProtocol)
    assert not isinstance(sparsekit.get_kernel("rbf"), protocols.ManifoldKernelProtocol)


def test_protocols_reference_the_result_types():
    import sparsekit.protocols as protocols
    from sparsekit.samplers.base import Landmarks
    from sparsekit.solvers.base import SparseResult

    assert protocols.Landmarks is Landmarks and protocols.SparseResult is SparseResult
    assert protocols.FactorizationResult is sparsekit.factorizers.FactorizationResult
    assert set(protocols.PROTOCOLS) == set(sparsekit._families.NAMES)


# -- sparsekit.plugins and the top level --------------------------------------------------------
def test_every_name_of_sparsekit_plugins_imports_without_warning():
    caught = _import_warnings(
        "from sparsekit.plugins import *; import sparsekit.plugins as p; "
        "[getattr(p, n) for n in p.__all__]"
    )
    assert caught == []
    for name in plugins.__all__:
        assert getattr(plugins, name) is not None, name
    assert set(plugins.__all__) == set(plugins._SOURCES)
    assert set(plugins.__all__) <= set(dir(plugins))
    assert plugins.HOOKS["factorizer"] == "sparsekit_factorizers"


def test_user_names_stay_at_the_top_level_without_warning():
    caught = _import_warnings(
        "import sparsekit; [getattr(sparsekit, n) for n in sparsekit.__all__]"
    )
    assert caught == []
    assert {
        "PluginWarning",
        "UnknownComponentError",
        "Registry",
        "get_factorizer",
        "get_manifold_kernel",
    } <= set(sparsekit.__all__)
    assert sparsekit.PluginWarning is exceptions.PluginWarning
    assert issubclass(exceptions.ComponentConflictWarning, sparsekit.PluginWarning)


# -- one Family record per family, read by every reader -------------------------------------------
def test_every_reader_takes_the_families_from_the_one_table():
    """Oracles outside the table: pluggy's own hook specs (``PluginManager.add_hookspecs``), the
    protocol classes' attributes, the built CLI parser, the spec checker's sections and the
    modules of the built-in plugins."""
    import importlib
    import typing
    from collections.abc import Iterable

    import pluggy

    import sparsekit.components as components
    import sparsekit.protocols as protocols
    from sparsekit._families import FAMILIES, NAMES, family
    from sparsekit.cli import build_parser
    from sparsekit.hookspecs import PROJECT, Specs
    from sparsekit.registry import BUILTIN_PLUGINS
    from sparsekit.run.spec import COMPONENT_SECTIONS, TOP_KEYS

    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(Specs)
    specs = {name for name in dir(pm.hook) if name.startswith("sparsekit_")}
    assert {f.hook for f in FAMILIES} == specs and len(FAMILIES) == len(specs)
    assert plugins.HOOKS == {f.name: f.hook for f in FAMILIES}
    for f in FAMILIES:
        hints = typing.get_type_hints(getattr(Specs, f.hook))
        assert hints["return"] == Iterable[plugins.Registration], f.hook  # typed hooks
        protocol = protocols.PROTOCOLS[f.name]
        assert protocol.__name__ == f.protocol
        members = set(dir(protocol)) | set(protocol.__annotations__)
        assert not f.method or f.method in members, f.name
        if f.result is not None:
            module, cls = f.result
            assert getattr(protocols, cls) is getattr(importlib.import_module(module), cls)
        for module in f.plugins:
            assert callable(getattr(importlib.import_module(module), f.hook)), module
        if f.getter:
            shortcut = getattr(components, f.getter)
            assert getattr(sparsekit, f.getter) is shortcut and f.getter in sparsekit.__all__
            assert shortcut.__name__ == f.getter and f.example.startswith(f.getter + "(")
        assert family(f.name.upper().replace("-", "_") + "s") is f
    assert BUILTIN_PLUGINS == tuple(m for f in FAMILIES for m in f.plugins)
    assert set(protocols.RESULT_TYPES) == {"Landmarks", "SparseResult", "FactorizationResult"}
    assert COMPONENT_SECTIONS == ("kernel", "sampler", "solver")
    assert set(COMPONENT_SECTIONS) <= set(TOP_KEYS)
    parser = build_parser()
    list_parser = parser._subparsers._group_actions[0].choices["list"]
    family_action = next(a for a in list_parser._actions if a.dest == "family")
    assert tuple(family_action.choices) == NAMES
    with pytest.raises(ValueError, match=r"family must be one of \['kernel', .*got 'kernels!'"):
        family("kernels!")


@pytest.mark.parametrize(
    "family, name",
    [("sampler", "uniform"), ("solver", "omp"), ("factorizer", "palm4msa"), ("kernel", "rbf")],
)
def test_the_get_shortcuts_build_names_and_copy_objects(family, name):
    """The ``get_*`` shortcuts are :func:`~sparsekit.components.resolve` with the default
    registry. Oracle: the registry's own build of the name (same class and parameters) and
    object identity for the copy rule."""
    from sparsekit._families import family as family_record

    get = getattr(sparsekit, family_record(family).getter)
    built = get(name)
    expected = sparsekit.default_registry().get(family, name)
    assert type(built) is type(expected) and repr(built) == repr(expected)
    copied = get(built)
    assert copied is not built and repr(copied) == repr(built)
