"""Registry contract: lookup by name, aliases, errors, conflicts, entry points, failing plugins."""

import warnings

import numpy as np
import pytest

import sparsekit
from sparsekit import Registry
from sparsekit.exceptions import (
    ComponentConflictError,
    ComponentConflictWarning,
    ComponentResultError,
    PluginLoadWarning,
    UnknownComponentError,
    UnknownHookWarning,
)
from sparsekit.plugins import Registration, hookimpl


class _Doubler:
    """A toy kernel used as a third-party component."""

    def __init__(self, factor=2.0):
        self.factor = factor

    def __call__(self, X, Y=None):
        Y = X if Y is None else Y
        return self.factor * X @ Y.T


class _ToyPlugin:
    @hookimpl
    def sparsekit_kernels(self):
        yield Registration("toy-doubler", _Doubler, aliases=("doubler",), summary="2 <x, z>")


def test_builtin_kernels_listed_with_plugin_and_aliases():
    reg = Registry(entry_points=False)
    infos = {i.name: i for i in reg.list("kernel")}
    assert {"linear", "polynomial", "rbf", "laplacian", "chi2", "additive-chi2"} <= set(infos)
    assert "gaussian" in infos["rbf"].aliases
    assert infos["rbf"].plugin == "sparsekit.kernels._plugin"


@pytest.mark.parametrize("spelling", ["rbf", "RBF", "Gaussian", "gaussian", " rbf "])
def test_names_are_case_and_alias_insensitive(spelling):
    k = Registry(entry_points=False).get("kernel", spelling, gamma=0.5)
    assert type(k).__name__ == "RBFKernel" and k.gamma == 0.5


def test_dash_underscore_insensitive():
    reg = Registry(entry_points=False)
    assert reg.lookup("kernel", "ADDITIVE_CHI2").name == "additive-chi2"
    assert reg.lookup("kernels", "additive-chi2").name == "additive-chi2"


def test_unknown_name_lists_available_and_closest():
    reg = Registry(entry_points=False)
    with pytest.raises(UnknownComponentError) as err:
        reg.get("kernel", "rbff")
    msg = str(err.value)
    assert "Did you mean 'rbf'" in msg and "laplacian" in msg and "polynomial" in msg
    assert isinstance(err.value, ValueError)


def test_unknown_family():
    with pytest.raises(ValueError, match="family must be one of"):
        Registry(entry_points=False).list("transformer")


def test_non_string_name_is_type_error():
    with pytest.raises(TypeError, match="component name must be a str"):
        Registry(entry_points=False).lookup("kernel", 3)


def test_registry_get_takes_names_only_and_resolve_copies_objects():
    """``Registry.get`` builds from names; ``components.resolve`` (and the ``get_*`` shortcuts
    made from it) is the one door for objects, with one copy rule. Oracle: object identity and
    the copied object's attribute (a deep copy is a new object with equal parameters)."""
    from sparsekit.components import resolve

    reg = Registry(entry_points=False)
    obj = _Doubler(factor=3.0)
    with pytest.raises(TypeError, match=r"registered name \(str\), got _Doubler; .*resolve"):
        reg.get("kernel", obj)
    for copied in (resolve("kernel", obj, registry=reg), sparsekit.get_kernel(obj)):
        assert copied is not obj and type(copied) is _Doubler and copied.factor == 3.0
    with pytest.raises(TypeError, match="only be given with a kernel name"):
        sparsekit.get_kernel(obj, factor=4.0)


def test_registered_plugin_is_usable_by_name_and_combines():
    reg = Registry(entry_points=False, plugins=[_ToyPlugin()])
    k = reg.get("kernel", "Doubler", factor=3.0)
    X = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(k(X), 3.0 * X @ X.T)
    info = reg.lookup("kernel", "toy-doubler")
    assert info.plugin.startswith("_ToyPlugin")
    reg.unregister(info.plugin)
    with pytest.raises(UnknownComponentError):
        reg.lookup("kernel", "toy-doubler")


class _Clash:
    """A plugin that claims the built-in name 'gaussian' and a free name."""

    @hookimpl
    def sparsekit_kernels(self):
        yield Registration("gaussian", _Doubler)
        yield Registration("free-name", _Doubler)


def test_plugin_claiming_a_builtin_name_is_skipped_with_a_warning_naming_both():
    reg = Registry(entry_points=False)
    reg.register(_Clash(), name="clash-plugin")
    with pytest.warns(ComponentConflictWarning) as rec:
        info = reg.lookup("kernel", "gaussian")
    assert info.name == "rbf" and info.plugin == "sparsekit.kernels._plugin"  # built-in wins
    msg = str(rec[0].message)
    assert "clash-plugin" in msg and "sparsekit.kernels._plugin" in msg
    assert "SPARSEKIT_DISABLE_PLUGINS=clash-plugin" in msg
    assert type(reg.get("kernel", "rbf")).__name__ == "RBFKernel"
    assert isinstance(reg.get("kernel", "free-name"), _Doubler)  # the rest of the plugin works
    (skip,) = reg.skipped()
    assert (skip.plugin, skip.family, skip.name) == ("clash-plugin", "kernel", "gaussian")
    assert "already taken by built-in plugin 'sparsekit.kernels._plugin'" in skip.reason


def test_clash_between_two_third_party_plugins_keeps_the_first():
    class Second:
        @hookimpl
        def sparsekit_kernels(self):
            yield Registration("other", _Doubler, aliases=("doubler",))

    reg = Registry(entry_points=False, plugins=[_ToyPlugin()])
    reg.register(Second(), name="second")
    with pytest.warns(
        ComponentConflictWarning, match="'other' of plugin 'second' is skipped.*'doubler'"
    ):
        assert reg.lookup("kernel", "doubler").name == "toy-doubler"
    with pytest.raises(UnknownComponentError, match="'second' provides one but it was skipped"):
        reg.lookup("kernel", "other")


def test_two_builtins_claiming_one_name_is_an_error(monkeypatch):
    import sparsekit.registry as registry_module

    class Twin:
        @hookimpl
        def sparsekit_kernels(self):
            yield Registration("rbf", _Doubler)

    reg = Registry(entry_points=False)
    reg.register(Twin(), name="twin")
    monkeypatch.setattr(
        registry_module, "BUILTIN_PLUGINS", (*registry_module.BUILTIN_PLUGINS, "twin")
    )
    with pytest.raises(ComponentConflictError, match="registered twice by built-in plugins"):
        reg.list()


def test_blocked_plugin_is_removed():
    reg = Registry(entry_points=False)
    reg.register(_Clash(), name="clash-plugin")
    reg.block("clash-plugin")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert reg.lookup("kernel", "gaussian").name == "rbf"
        assert "free-name" not in reg.names("kernel")


def test_registry_without_builtins_is_empty_then_extensible():
    reg = Registry(builtins=False, entry_points=False)
    assert reg.list() == []
    reg.register(_ToyPlugin(), name="toy")
    assert reg.names("kernel") == ["toy-doubler"]


def test_hook_yielding_wrong_type_is_skipped_with_a_warning():
    class Bad:
        @hookimpl
        def sparsekit_kernels(self):
            yield ("rbf", _Doubler)
            yield Registration("fine", _Doubler)

    reg = Registry(entry_points=False, plugins=[Bad()])
    with pytest.warns(
        PluginLoadWarning, match="yielded tuple .*expected sparsekit.plugins.Registration"
    ):
        names = reg.names("kernel")
    assert "fine" in names and "rbf" in names


def test_plugin_raising_in_hook_is_skipped_with_warning():
    class Broken:
        @hookimpl
        def sparsekit_kernels(self):
            raise RuntimeError("boom")

    reg = Registry(entry_points=False, plugins=[Broken()])
    with pytest.warns(PluginLoadWarning, match="boom"):
        names = reg.names("kernel")
    assert "rbf" in names


class _FakeEntryPoint:
    def __init__(self, name, value, target=None, exc=None):
        self.name, self.value, self._target, self._exc = name, value, target, exc

    def load(self):
        if self._exc is not None:
            raise self._exc
        return self._target


def test_entry_points_loaded_once_lazily_and_broken_one_warns(monkeypatch):
    calls = []

    def fake_entry_points():
        calls.append("sparsekit")
        return [
            _FakeEntryPoint("good", "good_mod", target=_ToyPlugin()),
            _FakeEntryPoint("broken", "broken_mod", exc=ImportError("no module named broken_mod")),
        ]

    monkeypatch.setattr("sparsekit.registry._sparsekit_entry_points", fake_entry_points)
    reg = Registry()
    assert calls == []  # lazy: nothing loaded at construction
    with pytest.warns(PluginLoadWarning, match="'broken'.*no module named broken_mod"):
        k = reg.get("kernel", "toy-doubler")
    assert isinstance(k, _Doubler)
    reg.list()
    reg.names("kernel")
    assert calls == ["sparsekit"]  # once
    assert reg.lookup("kernel", "doubler").plugin == "good"
    assert "rbf" in reg.names("kernel")  # the rest keeps working


def test_default_registry_helpers():
    k = sparsekit.get_kernel("laplace", gamma=0.1)
    assert type(k).__name__ == "LaplacianKernel"
    families = {i.family for i in sparsekit.list_components()}
    assert "kernel" in families


def test_unknown_parameter_names_component_and_valid_parameters():
    with pytest.raises(
        TypeError,
        match=r"kernel 'rbf' got unknown parameter\(s\) \['gama'\]; its parameters are "
        r"\['gamma', 'sigma', 'bandwidth', 'backend'\]",
    ):
        Registry(entry_points=False).get("kernel", "gaussian", gama=1.0)


# -- disabling plugins ------------------------------------------------------------------------
def _fake_entry_points(*names):
    return lambda: [_FakeEntryPoint(n, f"{n}_mod", target=_ToyPlugin()) for n in names]


def test_disable_argument_skips_an_entry_point_and_lists_why(monkeypatch):
    monkeypatch.setattr("sparsekit.registry._sparsekit_entry_points", _fake_entry_points("toy"))
    monkeypatch.delenv("SPARSEKIT_DISABLE_PLUGINS", raising=False)
    assert "toy-doubler" in Registry().names("kernel")
    reg = Registry(disable=["TOY"])  # names are compared like component names
    assert "toy-doubler" not in reg.names("kernel") and "rbf" in reg.names("kernel")
    (skip,) = reg.skipped()
    assert skip.plugin == "toy" and skip.reason == "disabled by Registry(disable=...)"


def test_disable_environment_variable(monkeypatch):
    monkeypatch.setattr(
        "sparsekit.registry._sparsekit_entry_points", _fake_entry_points("toy", "keep")
    )
    monkeypatch.setenv("SPARSEKIT_DISABLE_PLUGINS", " other , toy")
    reg = Registry()
    assert reg.lookup("kernel", "toy-doubler").plugin == "keep"
    assert [s.plugin for s in reg.skipped()] == ["toy"]
    assert reg.skipped()[0].reason == "disabled by SPARSEKIT_DISABLE_PLUGINS"


def test_disable_by_distribution_name(monkeypatch):
    class Dist:
        name = "sparsekit-toy"

    ep = _FakeEntryPoint("toy", "toy_mod", target=_ToyPlugin())
    ep.dist = Dist()
    monkeypatch.setattr("sparsekit.registry._sparsekit_entry_points", lambda: [ep])
    assert "toy-doubler" not in Registry(disable="sparsekit-toy").names("kernel")


def test_disable_applies_to_registered_plugins():
    reg = Registry(entry_points=False, disable=["toy"])
    assert reg.register(_ToyPlugin(), name="toy") is None
    assert "toy-doubler" not in reg.names("kernel")


# -- plugin mistakes ---------------------------------------------------------------------------
def test_hook_name_typo_warns_with_the_closest_hook():
    class Typo:
        @hookimpl
        def sparsekit_sampler(self):  # the hook is sparsekit_samplers
            yield Registration("never", _Doubler)

    reg = Registry(entry_points=False)
    with pytest.warns(
        UnknownHookWarning, match="'typo'.*'sparsekit_sampler'.*did you mean 'sparsekit_samplers'"
    ):
        reg.register(Typo(), name="typo")
    assert "never" not in reg.names("sampler")
    assert any("sparsekit_sampler" in s.reason for s in reg.skipped())


def test_hook_without_marker_warns():
    class Unmarked:
        def sparsekit_solvers(self):
            yield Registration("never", _Doubler)

    with pytest.warns(
        UnknownHookWarning,
        match="sparsekit_solvers is not decorated with @sparsekit.plugins.hookimpl",
    ):
        Registry(entry_points=False, plugins=[Unmarked()])


def test_entry_point_with_hook_typo_warns(monkeypatch):
    class Typo:
        @hookimpl
        def sparsekit_kernel(self):
            return []

    monkeypatch.setattr(
        "sparsekit.registry._sparsekit_entry_points",
        lambda: [_FakeEntryPoint("typo", "typo_mod", target=Typo())],
    )
    with pytest.warns(UnknownHookWarning, match="did you mean 'sparsekit_kernels'"):
        assert "rbf" in Registry().names("kernel")


def test_registration_rejects_unknown_accepts_with_closest():
    with pytest.raises(ValueError, match=r"unknown accepts='vector'. Did you mean 'vectors'\?"):
        Registration("k", _Doubler, accepts="vector")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(name="", factory=_Doubler), "non-empty str"),
        (dict(name="k", factory=3), "factory must be callable"),
        (dict(name="k", factory=_Doubler, aliases="kk"), r"write aliases=\('kk',\)"),
    ],
)
def test_registration_rejects_bad_fields(kwargs, match):
    with pytest.raises(TypeError, match=match):
        Registration(**kwargs)


def test_plugin_whose_hook_builds_a_bad_registration_is_skipped():
    class BadAccepts:
        @hookimpl
        def sparsekit_samplers(self):
            yield Registration("bad", _Doubler, accepts="vector")

    reg = Registry(entry_points=False, plugins=[BadAccepts()])
    with pytest.warns(
        PluginLoadWarning, match="raised in sparsekit_samplers: ValueError: .*accepts='vector'"
    ):
        assert "uniform" in reg.names("sampler")


# -- results of third-party components ---------------------------------------------------------
class _TupleSampler:
    def sample(self, X, kernel, n_landmarks, random_state=None):
        return (np.arange(n_landmarks), X[:n_landmarks], np.ones(n_landmarks))


class _DictSolver:
    def solve(self, D, Y, *, gram=None):
        return {"coef": np.zeros(D.shape[1])}


class _ResultPlugin:
    @hookimpl
    def sparsekit_samplers(self):
        yield Registration("tuple-sampler", _TupleSampler, accepts="any")

    @hookimpl
    def sparsekit_solvers(self):
        yield Registration("dict-solver", lambda: _DictSolver())  # a function factory


def test_wrong_result_type_names_plugin_and_expected_type():
    reg = Registry(entry_points=False)
    reg.register(_ResultPlugin(), name="result-plugin")
    sampler = reg.get("sampler", "tuple-sampler")
    X = np.ones((5, 2))
    with pytest.raises(
        ComponentResultError,
        match=r"sampler 'tuple-sampler' of plugin 'result-plugin' returned tuple from sample\(\); "
        r"expected sparsekit.samplers.base.Landmarks",
    ):
        sparsekit.components.check_result(
            "sampler", sampler, sampler.sample(X, None, 2), registry=reg
        )
    solver = reg.get("solver", "dict-solver")
    with pytest.raises(
        ComponentResultError,
        match="solver 'dict-solver' of plugin 'result-plugin' returned dict from solve"
        ".*SparseResult",
    ):
        sparsekit.components.check_result("solver", solver, solver.solve(X, X[:, 0]), registry=reg)
    assert isinstance(ComponentResultError("x"), TypeError)


def test_check_result_passes_good_results_and_names_unregistered_classes():
    reg = Registry(entry_points=False)
    sampler = reg.get("sampler", "uniform")
    X = np.random.default_rng(0).random((6, 2))
    lm = sampler.sample(X, reg.get("kernel", "rbf"), 3, random_state=0)
    assert sparsekit.components.check_result("sampler", sampler, lm, registry=reg) is lm
    with pytest.raises(
        ComponentResultError, match=r"sampler _TupleSampler \(module 'tests.test_registry'\)"
    ):
        sparsekit.components.check_result("sampler", _TupleSampler(), (1, 2, 3), registry=reg)
    assert sparsekit.components.check_result("kernel", object(), 3, registry=reg) == 3  # unchecked


def test_resolve_builds_names_and_copies_objects():
    from sparsekit.components import resolve

    reg = Registry(entry_points=False, plugins=[_ToyPlugin()])
    k = resolve("kernel", "doubler", {"factor": 4.0}, registry=reg)
    assert isinstance(k, _Doubler) and k.factor == 4.0
    obj = _Doubler(5.0)
    copy = resolve("kernel", obj)
    assert copy is not obj and copy.factor == 5.0
    with pytest.raises(TypeError, match="kernel_params can only be given with a kernel name"):
        resolve("kernel", obj, {"factor": 1.0})
    with pytest.raises(TypeError, match="got None"):
        resolve("sampler", None)
    with pytest.raises(UnknownComponentError):  # the given registry, not the default one
        resolve("kernel", "doubler", registry=Registry(entry_points=False))


# -- a registry as an estimator parameter: copied by reference, pickled as its recipe ------------
class _PicklablePlugin:
    @hookimpl
    def sparsekit_kernels(self):
        yield Registration("toy-doubler", _Doubler, aliases=("doubler",))


def test_deepcopy_returns_the_registry_itself():
    import copy

    reg = Registry(entry_points=False)
    assert copy.deepcopy(reg) is reg
    assert copy.deepcopy({"registry": reg})["registry"] is reg  # as scikit-learn's clone does


def test_pickled_registry_is_rebuilt_with_its_plugins_blocks_and_disables():
    import pickle

    reg = Registry(entry_points=False, disable=["off"])
    reg.register(_PicklablePlugin(), name="toy")
    reg.register(_Clash(), name="clash-plugin")
    reg.block("clash-plugin")
    copy = pickle.loads(pickle.dumps(reg))
    assert copy is not reg
    assert copy.names("kernel") == reg.names("kernel") and "toy-doubler" in copy.names("kernel")
    assert "free-name" not in copy.names("kernel")
    assert copy.register(_PicklablePlugin(), name="off") is None
    assert pickle.loads(pickle.dumps(sparsekit.default_registry())) is sparsekit.default_registry()


def test_pickled_registry_imports_plugin_modules_by_name():
    import importlib
    import pickle

    reg = Registry(builtins=False, entry_points=False)
    reg.register(importlib.import_module("sparsekit.solvers._plugin"), name="solvers")
    copy = pickle.loads(pickle.dumps(reg))
    assert copy.names("solver") == reg.names("solver") and "omp" in copy.names("solver")
    assert copy.names("kernel") == []


def test_pickled_registry_keeps_a_blocked_entry_point_blocked(monkeypatch):
    import pickle

    monkeypatch.setattr("sparsekit.registry._sparsekit_entry_points", _fake_entry_points("toy"))
    reg = Registry()
    reg.block("toy")
    assert "toy-doubler" not in reg.names("kernel")
    copy = pickle.loads(pickle.dumps(reg))
    assert "toy-doubler" not in copy.names("kernel") and "rbf" in copy.names("kernel")


# -- plugins cannot end or hang the process ----------------------------------------------------
def _module_entry_point(tmp_path, monkeypatch, ep_name, module, source):
    """A real entry point (importlib.metadata) to a module written in ``tmp_path``."""
    from importlib import metadata

    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    return metadata.EntryPoint(name=ep_name, value=module, group="sparsekit")


class _CustomBase(BaseException):
    pass


@pytest.mark.parametrize(
    "raise_it, shown",
    [
        ("import sys; sys.exit(3)", "SystemExit: 3"),
        ("raise GeneratorExit('misused')", "GeneratorExit: misused"),
        ("raise _Custom('not an Exception')", "_Custom: not an Exception"),
    ],
)
def test_plugin_ending_the_process_at_import_is_skipped(tmp_path, monkeypatch, raise_it, shown):
    source = f"class _Custom(BaseException):\n    pass\n\n{raise_it}\n"
    module = f"sk_exiting_{abs(hash(raise_it))}"
    ep = _module_entry_point(tmp_path, monkeypatch, "exiting", module, source)
    monkeypatch.setattr(
        "sparsekit.registry._sparsekit_entry_points",
        lambda: [ep, _FakeEntryPoint("good", "good_mod", target=_ToyPlugin())],
    )
    reg = Registry()
    with pytest.warns(
        PluginLoadWarning, match=f"plugin 'exiting' is skipped: failed to load .*{shown}"
    ):
        kernel = reg.get("kernel", "rbf", gamma=0.5)  # the process is still here
    assert type(kernel).__name__ == "RBFKernel"
    assert "toy-doubler" in reg.names("kernel")  # the other plugin still loads
    (skip,) = [s for s in reg.skipped() if s.plugin == "exiting"]
    assert shown in skip.reason


def test_keyboard_interrupt_in_a_plugin_still_interrupts(monkeypatch):
    monkeypatch.setattr(
        "sparsekit.registry._sparsekit_entry_points",
        lambda: [_FakeEntryPoint("ctrl-c", "m", exc=KeyboardInterrupt())],
    )
    with pytest.raises(KeyboardInterrupt):
        Registry().names("kernel")


def test_hook_calling_sys_exit_or_raising_base_exceptions_is_skipped():
    import sys

    class Exits:
        @hookimpl
        def sparsekit_kernels(self):
            sys.exit(3)

    class ExitsWhileYielding:
        @hookimpl
        def sparsekit_samplers(self):
            yield Registration("half", _Doubler)
            raise GeneratorExit("misused")

    class Custom:
        @hookimpl
        def sparsekit_solvers(self):
            raise _CustomBase("custom")

    reg = Registry(entry_points=False)
    for plugin, name in [
        (Exits(), "exits"),
        (ExitsWhileYielding(), "exits-late"),
        (Custom(), "custom"),
    ]:
        reg.register(plugin, name=name)
    with pytest.warns(PluginLoadWarning) as record:
        kernel = reg.get("kernel", "rbf")
    assert type(kernel).__name__ == "RBFKernel" and "half" not in reg.names("sampler")
    assert "omp" in reg.names("solver")
    messages = " | ".join(str(w.message) for w in record)
    assert "plugin 'exits' is skipped: raised in sparsekit_kernels: SystemExit: 3" in messages
    assert (
        "plugin 'exits-late' is skipped: raised in sparsekit_samplers: GeneratorExit: misused"
        in messages
    )
    assert (
        "plugin 'custom' is skipped: raised in sparsekit_solvers: _CustomBase: custom" in messages
    )
    assert {s.plugin for s in reg.skipped()} == {"exits", "exits-late", "custom"}


def test_hook_yielding_forever_is_cut_and_skipped():
    limit = 10_000  # sparsekit.registry.MAX_REGISTRATIONS_PER_HOOK, checked at the end
    state = {"yielded": 0, "closed": False}
    record = Registration("endless", _Doubler)

    class Endless:
        @hookimpl
        def sparsekit_kernels(self):
            try:
                while True:  # forever; the guard only keeps a registry that never stops finite
                    state["yielded"] += 1
                    if state["yielded"] > 20 * limit:
                        raise AssertionError("the hook was not cut")
                    yield record
            finally:
                state["closed"] = True

    reg = Registry(entry_points=False, plugins=[_ToyPlugin()])
    reg.register(Endless(), name="endless")
    with pytest.warns(
        PluginLoadWarning,
        match="plugin 'endless' is skipped: yielded more than "
        "10,000 registrations from sparsekit_kernels",
    ):
        names = reg.names("kernel")
    assert state == {"yielded": limit + 1, "closed": True}
    assert "endless" not in names and "toy-doubler" in names and "rbf" in names
    (skip,) = reg.skipped()
    assert skip.plugin == "endless" and skip.family == "kernel" and "cut there" in skip.reason
    from sparsekit.registry import MAX_REGISTRATIONS_PER_HOOK

    assert MAX_REGISTRATIONS_PER_HOOK == limit


def test_a_hook_may_yield_up_to_the_limit():
    from sparsekit.registry import MAX_REGISTRATIONS_PER_HOOK

    class Many:
        @hookimpl
        def sparsekit_kernels(self):
            for i in range(MAX_REGISTRATIONS_PER_HOOK):
                yield Registration(f"k{i}", _Doubler)

    reg = Registry(builtins=False, entry_points=False, plugins=[Many()])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(reg.names("kernel")) == MAX_REGISTRATIONS_PER_HOOK


def test_installed_plugins_that_exit_or_yield_forever_leave_the_process_working(tmp_path):
    """The reported case end to end: installed distributions (dist-info with entry points), a
    fresh process calling ``get_kernel("rbf")`` and ``sparsekit list``."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "sk_exiting_plugin.py").write_text("import sys\nsys.exit(3)\n")
    (tmp_path / "sk_endless_plugin.py").write_text(
        "import itertools\nimport sparsekit.plugins\n\n\n@sparsekit.plugins.hookimpl\n"
        "def sparsekit_kernels():\n"
        "    for i in itertools.count():\n"
        "        yield sparsekit.plugins.Registration(f'endless-{i}', dict)\n"
    )
    info = tmp_path / "sparsekit_badplugins-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: sparsekit-badplugins\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(
        "[sparsekit]\nexiting = sk_exiting_plugin\nendless = sk_endless_plugin\n"
    )
    root = Path(sparsekit.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(tmp_path)])}
    env.pop("SPARSEKIT_DISABLE_PLUGINS", None)
    code = (
        "import sys, sparsekit\nfrom sparsekit.cli import main\n"
        "print('built', type(sparsekit.get_kernel('rbf')).__name__)\n"
        "sys.exit(main(['list', '--family', 'kernel']))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root, timeout=300
    )
    assert out.returncode == 0, (out.returncode, out.stdout[-2000:], out.stderr[-2000:])
    assert "built RBFKernel" in out.stdout
    assert "'exiting' is skipped: failed to load (sk_exiting_plugin): SystemExit: 3" in out.stderr
    assert "'endless' is skipped: yielded more than 10,000 registrations" in out.stderr
    listed = out.stdout.split("skipped plugins and components")[1]
    assert "exiting" in listed and "SystemExit: 3" in listed and "endless" in listed


# -- what a plugin names reaches the terminal as visible escapes -------------------------------
_CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e", "\x00", "\r")


def test_plugin_warnings_escape_terminal_controls(monkeypatch):
    """Every warning the registry emits about a plugin carries the plugin's strings (entry-point
    name and value, exception class and message, a record's repr, a component name) with their
    control characters escaped. Oracle: ``str.isprintable``, the definition of what a terminal
    shows as text; the escapes are those Python's ``repr`` writes (``\\x1b``)."""
    attack = "\x1b[2J\x1b]0;pwned\x07\x9b\u202e\x00\r"
    exc_type = type("Err" + attack.replace("\x00", ""), (Exception,), {})

    class Raises:
        @hookimpl
        def sparsekit_kernels(self):
            raise RuntimeError("hook" + attack)

    class BadRecord:
        def __repr__(self):
            return "record" + attack

    class YieldsJunk:
        @hookimpl
        def sparsekit_samplers(self):
            yield BadRecord()

    class Clash:
        @hookimpl
        def sparsekit_solvers(self):
            yield Registration("omp", _Doubler)

    class Typo:
        @hookimpl
        def sparsekit_kernel(self):
            return []

    monkeypatch.setattr(
        "sparsekit.registry._sparsekit_entry_points",
        lambda: [
            _FakeEntryPoint("load" + attack, "mod" + attack, exc=exc_type("import" + attack)),
            _FakeEntryPoint("raises" + attack, "m", target=Raises()),
            _FakeEntryPoint("junk" + attack, "m", target=YieldsJunk()),
            _FakeEntryPoint("clash" + attack, "m", target=Clash()),
            _FakeEntryPoint("typo" + attack, "m", target=Typo()),
        ],
    )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        reg = Registry()
        reg.names("kernel")
    texts = [str(w.message) for w in record if issubclass(w.category, Warning)]
    assert len(texts) >= 5  # load, hook, junk record, clash, typo
    for text in texts:
        assert not any(c in text for c in _CONTROLS), text
    joined = "\n".join(texts)
    for visible in ("Err\\x1b[2J", "import\\x1b[2J", "mod\\x1b[2J", "hook\\x1b[2J"):
        assert visible in joined
    for visible in ("record\\x1b[2J", "clash\\x1b[2J", "typo\\x1b[2J"):
        assert visible in joined
    # what skipped() keeps is the text as the plugin wrote it (sparsekit list escapes it)
    assert any("import" + attack in s.reason for s in reg.skipped())


# -- threads -----------------------------------------------------------------------------------
def test_concurrent_first_lookups_all_find_the_plugin_component(monkeypatch):
    """Eight threads look a plugin's component up at once on a fresh registry whose entry point
    imports slowly and whose hook is slow. Oracle: the same lookup made alone (one thread)
    succeeds, so every thread must get the plugin's component, and the plugin's hook runs once
    (the tables are built once)."""
    import threading
    import time

    calls = []

    class Slow:
        @hookimpl
        def sparsekit_kernels(self):
            calls.append(1)
            time.sleep(0.05)
            yield Registration("slow-doubler", _Doubler)

    class SlowEntryPoint(_FakeEntryPoint):
        def load(self):
            time.sleep(0.1)  # a plugin whose import takes a while
            return super().load()

    monkeypatch.setattr(
        "sparsekit.registry._sparsekit_entry_points",
        lambda: [SlowEntryPoint("slow", "slow_mod", target=Slow())],
    )
    assert type(Registry().get("kernel", "slow-doubler")) is _Doubler  # alone
    calls.clear()
    for _ in range(3):
        reg = Registry()
        n_threads = 8
        barrier = threading.Barrier(n_threads)
        results, errors = [], []

        def lookup(reg=reg, barrier=barrier, results=results, errors=errors):
            barrier.wait()
            try:
                results.append(reg.get("kernel", "slow-doubler"))
            except Exception as exc:
                errors.append(exc)

        threads = [threading.Thread(target=lookup) for _ in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert len(results) == n_threads and all(type(k) is _Doubler for k in results)
        assert len(calls) == 1
        calls.clear()


def test_concurrent_first_calls_share_one_default_registry(monkeypatch):
    """Eight threads ask for the process-wide registry at once while it is slow to build.
    Oracle: its contract, one registry per process (``is`` identity)."""
    import threading
    import time

    import sparsekit.registry as registry_module

    class SlowRegistry(Registry):
        def __init__(self, **kwargs):
            time.sleep(0.05)
            super().__init__(entry_points=False, **kwargs)

    monkeypatch.setattr(registry_module, "_default", None)
    monkeypatch.setattr(registry_module, "Registry", SlowRegistry)
    barrier = threading.Barrier(8)
    seen = []

    def first_call():
        barrier.wait()
        seen.append(registry_module.default_registry())

    threads = [threading.Thread(target=first_call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 8 and all(reg is seen[0] for reg in seen)


class _SpelledAliasPlugin:
    @hookimpl
    def sparsekit_kernels(self):
        yield Registration("Spelled_Name", _Doubler, aliases=("My_Alias", "other alias"))


@pytest.mark.parametrize("spelling", ["my-alias", "MY_ALIAS", "My Alias", "Other-Alias"])
def test_aliases_follow_the_name_rule_of_the_contract(spelling):
    """An alias registered with capitals, ``_`` or spaces is found under every spelling the
    name rule allows. Oracle: DESIGN.md, "The registry contract" (names case- and
    ``-``/``_``-insensitive), on a private registry with a fake plugin."""
    reg = Registry(entry_points=False, builtins=False, plugins=[_SpelledAliasPlugin()])
    info = reg.lookup("kernel", spelling)
    assert info.name == "spelled-name"
    assert set(info.aliases) == {"my-alias", "other-alias"}


class _Nested:
    """A kernel object holding mutable state below its first level."""

    def __init__(self):
        self.state = {"scale": [1.0]}

    def __call__(self, X, Y=None):
        return self.state["scale"][0] * X @ (X if Y is None else Y).T


def test_resolve_copies_an_object_deeply():
    """The copy rule: fitting never changes the caller's object, not even its nested state.
    Oracle: ``copy.deepcopy`` semantics, i.e. no mutable part shared with the caller's object."""
    obj = _Nested()
    got = sparsekit.components.resolve("kernel", obj)
    assert got is not obj and got.state is not obj.state
    got.state["scale"][0] = 5.0
    assert obj.state == {"scale": [1.0]}


class _NearNamesPlugin:
    """A kernel and a manifold kernel whose names are both close to a misspelling."""

    @hookimpl
    def sparsekit_kernels(self):
        yield Registration("toy-doubler", _Doubler)

    @hookimpl
    def sparsekit_manifold_kernels(self):
        yield Registration("toy-doublet", _Doubler)
        yield Registration("geodesic-walk", _Doubler)


def test_did_you_mean_prefers_the_family_looked_up():
    """An unknown kernel name is answered with the closest kernel; the manifold kernels are
    searched only when no kernel is close. Oracle: ``difflib.get_close_matches`` over the
    kernel names of a private registry (cutoff 0.5, the registry's)."""
    import difflib

    reg = Registry(entry_points=False, builtins=False, plugins=[_NearNamesPlugin()])
    wrong = "toy-doublerr"
    best = difflib.get_close_matches(wrong, reg.names("kernel"), n=1, cutoff=0.5)
    assert best == ["toy-doubler"]
    with pytest.raises(UnknownComponentError) as err:
        reg.lookup("kernel", wrong)
    message = str(err.value)
    assert f"Did you mean {best[0]!r}?" in message and "(a manifold-kernel)" not in message
    with pytest.raises(UnknownComponentError, match=r"mean 'geodesic-walk' \(a manifold-kernel"):
        reg.lookup("kernel", "geodesic-walks")
