"""A component built without a parameter its factory requires: the error names the component,
the parameter, what it is, and the call that supplies it (not Python's bare TypeError)."""

import inspect

import numpy as np
import pytest

import sparsekit
from sparsekit import Registry
from sparsekit.plugins import Registration, hookimpl


def test_frank_wolfe_without_beta_names_beta_and_what_it_is():
    with pytest.raises(TypeError) as info:
        sparsekit.get_solver("frank-wolfe")
    msg = str(info.value)
    assert "solver 'frank-wolfe' needs the parameter beta" in msg
    assert "Radius of the l1 ball" in msg
    assert "sparsekit.get_solver('frank-wolfe', beta=...)" in msg
    assert "solver_params={'beta': ...}" in msg
    assert "positional argument" not in msg
    # with beta it builds
    assert sparsekit.get_solver("frank-wolfe", beta=2.0).beta == 2.0


def test_estimator_resolving_frank_wolfe_without_beta_gets_the_same_message():
    from sparsekit.solvers.coder import SparseCoder

    D = np.linalg.qr(np.random.default_rng(0).normal(size=(8, 8)))[0]
    with pytest.raises(TypeError, match=r"(?s)needs the parameter beta.*solver_params=\{'beta'"):
        SparseCoder(D, solver="frank-wolfe").fit(np.ones((2, 8)))


def _required(factory):
    sig = inspect.signature(factory)
    return [
        p.name
        for p in sig.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]


_BUILTINS = [(i.family, i.name) for i in Registry(entry_points=False).list()]


@pytest.mark.parametrize("family,name", _BUILTINS, ids=[f"{f}-{n}" for f, n in _BUILTINS])
def test_every_builtin_without_a_required_parameter_says_which_and_what(family, name):
    reg = Registry(entry_points=False)
    required = _required(reg.lookup(family, name).registration.factory)
    if not required:
        reg.get(family, name)  # builds with its defaults
        return
    with pytest.raises(TypeError) as info:
        reg.get(family, name)
    msg = str(info.value)
    assert f"{family} {name!r} needs the parameter" in msg
    for p in required:
        # every missing parameter is listed with its documented type and description
        line = next(ln for ln in msg.splitlines() if ln.startswith(f"  {p} : "))
        assert " -- " in line, line
    assert "positional argument" not in msg


class _Raising:
    """A toy kernel whose constructor itself raises TypeError.

    Parameters
    ----------
    width : float
        Scale.
    """

    def __init__(self, width):
        raise TypeError("inner failure, not a missing parameter")


class _RaisingPlugin:
    @hookimpl
    def sparsekit_kernels(self):
        yield Registration("raising", _Raising)


def test_a_type_error_raised_by_the_factory_itself_is_not_relabelled():
    reg = Registry(entry_points=False, plugins=[_RaisingPlugin()])
    with pytest.raises(TypeError, match="kernel 'raising' needs the parameter width") as info:
        reg.get("kernel", "raising")
    assert "width : float -- Scale." in str(info.value)
    assert "default_registry" not in str(info.value)  # kernels have a get_kernel shortcut
    with pytest.raises(TypeError, match="^inner failure"):
        reg.get("kernel", "raising", width=1.0)


def test_factory_signature_is_read_once_for_every_kind_of_factory():
    import functools

    from sparsekit._required_params import factory_signature

    class WithKwargs:
        def __init__(self, a, b=1, *args, c, d=2, **kw):
            pass

    def plain(x, /, y, z=3):
        pass

    sig = factory_signature(WithKwargs)
    assert sig.names == ("a", "b", "c", "d") and sig.required == ("a", "c") and sig.var_keyword
    sig = factory_signature(plain)  # positional-only x cannot be passed by keyword
    assert sig.names == ("y", "z") and sig.required == ("y",) and not sig.var_keyword
    assert factory_signature(functools.partial(plain, 1, z=4)).names == ("y", "z")
    assert factory_signature(len).names == ()  # len(obj, /): nothing by keyword
    assert factory_signature(dict).var_keyword  # no signature to read: the call decides

    class Unhashable:
        __hash__ = None

        def __call__(self, q=1):
            pass

    assert factory_signature(Unhashable()).names == ("q",)
    for factory in (WithKwargs, plain):
        expected = [
            p.name
            for p in inspect.signature(factory).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
        assert list(factory_signature(factory).names) == expected
