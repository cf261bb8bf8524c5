import numpy as np
import pytest
from sklearn.linear_model import orthogonal_mp

import sparsekit
from sparsekit.registry import Registry, UnknownComponentError
from sparsekit.solvers import _plugin
from sparsekit.solvers.fw import FrankWolfe
from sparsekit.solvers.mp import MatchingPursuit
from sparsekit.solvers.nnomp import NonNegativeOMP
from sparsekit.solvers.coder import SparseCoder
from sparsekit.solvers.omp import OMP

from ._problems import unit_gaussian


@pytest.fixture
def registry():
    return Registry(builtins=False, entry_points=False, plugins=[_plugin])


@pytest.fixture
def problem():
    rng = np.random.default_rng(6)
    return unit_gaussian(rng, 30, 50), rng.standard_normal((30, 4))


def test_solvers_registered_by_name_and_alias(registry):
    assert registry.names("solver") == ["frank-wolfe", "hierarchical-palm4msa", "mp", "nn-omp",
                                        "omp", "palm4msa"]
    assert isinstance(registry.get("solver", "OMP", n_nonzero_coefs=3), OMP)
    assert isinstance(registry.get("solver", "matching_pursuit"), MatchingPursuit)
    assert isinstance(registry.get("solver", "nnomp"), NonNegativeOMP)
    fw = registry.get("solver", "fw", beta=2.0, step="2/(k+2)")
    assert isinstance(fw, FrankWolfe) and fw.get_params()["step"] == "2/(k+2)"
    with pytest.raises(UnknownComponentError, match="Did you mean 'omp'"):
        registry.get("solver", "opm")


def test_top_level_export_and_default_registry(problem):
    D, Y = problem
    assert sparsekit.SparseCoder.__module__ == "sparsekit.solvers.coder"
    codes = sparsekit.SparseCoder("omp", {"n_nonzero_coefs": 4}).fit(D).transform(Y)
    np.testing.assert_allclose(codes, orthogonal_mp(D, Y, n_nonzero_coefs=4), rtol=1e-8,
                               atol=1e-12)


@pytest.mark.parametrize("name,params", [
    ("omp", {"n_nonzero_coefs": 5}),
    ("mp", {"max_iter": 12}),
    ("nn-omp", {"n_nonzero_coefs": 5}),
    ("frank-wolfe", {"beta": 3.0, "max_iter": 30}),
])
def test_coder_equals_solver(registry, problem, name, params):
    D, Y = problem
    coder = sparsekit.SparseCoder(name, params, registry=registry)
    assert coder.fit(D) is coder
    direct = registry.get("solver", name, **params).solve(D, Y)
    np.testing.assert_allclose(coder.transform(Y), direct.coef, rtol=1e-12, atol=1e-14)
    assert coder.dictionary_.shape == (30, 50) and coder.n_atoms_ == 50
    assert (coder.gram_ is not None) == (name != "frank-wolfe")
    np.testing.assert_allclose(coder.inverse_transform(coder.transform(Y)),
                               D @ direct.coef, rtol=1e-12)
    assert coder.transform(Y[:, 0]).shape == (50,)


def test_coder_params_and_solver_object(registry, problem):
    D, Y = problem
    coder = sparsekit.SparseCoder("omp", {"n_nonzero_coefs": 2}, registry=registry)
    assert coder.get_params()["solver"] == "omp"
    coder.set_params(solver_params={"n_nonzero_coefs": 6}).fit(D)
    assert (np.count_nonzero(coder.transform(Y), axis=0) == 6).all()
    obj = OMP(n_nonzero_coefs=3)
    coder = sparsekit.SparseCoder(obj, registry=registry).fit(D)
    assert coder.solver_ is obj
    with pytest.raises(TypeError, match="parameters"):
        sparsekit.SparseCoder(obj, {"tol": 1.0}, registry=registry).fit(D)
    with pytest.raises(UnknownComponentError, match="unknown solver"):
        sparsekit.SparseCoder("lasso-lars", registry=registry).fit(D)
    with pytest.raises(ValueError, match="not fitted"):
        sparsekit.SparseCoder(registry=registry).transform(Y)
    with pytest.raises(TypeError, match="solve"):
        sparsekit.SparseCoder(object(), registry=registry).fit(D)
    with pytest.raises(ValueError, match="rows"):
        sparsekit.SparseCoder(registry=registry).fit(D).inverse_transform(np.ones((3, 2)))


@pytest.mark.parametrize("solver", ["omp", "nn-omp"])
def test_float32_dictionary_with_float64_signals(solver):
    """A float32 D with float64 Y promotes to float64; the float32 Gram of fit is recomputed."""
    rng = np.random.default_rng(3)
    D = rng.normal(size=(20, 40))
    D /= np.linalg.norm(D, axis=0)
    x = np.zeros((40, 3))
    x[[1, 7], :] = np.abs(rng.normal(size=(2, 3))) + 0.5
    Y = D @ x
    coder32 = SparseCoder(solver, {"n_nonzero_coefs": 2}).fit(D.astype(np.float32))
    got = coder32.transform(Y)
    want = SparseCoder(solver, {"n_nonzero_coefs": 2}).fit(D.astype(np.float32).astype(np.float64)).transform(Y)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
