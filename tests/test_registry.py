"""Registry contract: lookup by name, aliases, errors, conflicts, entry points, failing plugins."""
import warnings

import numpy as np
import pytest

import sparsekit
from sparsekit import Registration, Registry, hookimpl
from sparsekit.registry import ComponentConflictError, PluginLoadWarning, UnknownComponentError


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


def test_object_passes_through_but_not_with_params():
    reg = Registry(entry_points=False)
    obj = _Doubler()
    assert reg.get("kernel", obj) is obj
    with pytest.raises(TypeError, match="only be given with a kernel name"):
        reg.get("kernel", obj, factor=3)


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


def test_two_plugins_claiming_one_name_is_an_error_naming_both():
    class Clash:
        @hookimpl
        def sparsekit_kernels(self):
            yield Registration("gaussian", _Doubler)

    reg = Registry(entry_points=False)
    reg.register(Clash(), name="clash-plugin")
    with pytest.raises(ComponentConflictError) as err:
        reg.lookup("kernel", "rbf")
    assert "clash-plugin" in str(err.value) and "sparsekit.kernels._plugin" in str(err.value)
    reg.block("clash-plugin")
    assert reg.lookup("kernel", "gaussian").name == "rbf"


def test_registry_without_builtins_is_empty_then_extensible():
    reg = Registry(builtins=False, entry_points=False)
    assert reg.list() == []
    reg.register(_ToyPlugin(), name="toy")
    assert reg.names("kernel") == ["toy-doubler"]


def test_hook_yielding_wrong_type_is_type_error():
    class Bad:
        @hookimpl
        def sparsekit_kernels(self):
            yield ("rbf", _Doubler)

    reg = Registry(builtins=False, entry_points=False, plugins=[Bad()])
    with pytest.raises(TypeError, match="expected sparsekit.Registration"):
        reg.list()


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
    with pytest.raises(TypeError, match=r"kernel 'rbf' got unknown parameter\(s\) \['gama'\]; its parameters are \['gamma', 'sigma', 'bandwidth', 'backend'\]"):
        Registry(entry_points=False).get("kernel", "gaussian", gama=1.0)
