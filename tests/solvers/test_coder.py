import warnings

import numpy as np
import pytest
from sklearn.decomposition import SparseCoder as SkSparseCoder
from sklearn.linear_model import orthogonal_mp
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import sparsekit
from sparsekit.exceptions import UnknownComponentError
from sparsekit.registry import Registry
from sparsekit.solvers import _plugin
from sparsekit.solvers.coder import SparseCoder
from sparsekit.solvers.fw import FrankWolfe
from sparsekit.solvers.mp import MatchingPursuit
from sparsekit.solvers.nnomp import NonNegativeOMP
from sparsekit.solvers.omp import OMP

from ._problems import unit_gaussian


@pytest.fixture
def registry():
    return Registry(builtins=False, entry_points=False, plugins=[_plugin])


@pytest.fixture
def problem():
    """``(dictionary, X)`` in scikit-learn's layout: atoms and samples are rows."""
    rng = np.random.default_rng(6)
    return unit_gaussian(rng, 30, 50).T.copy(), rng.standard_normal((4, 30))


def test_solvers_registered_by_name_and_alias(registry):
    assert registry.names("solver") == ["frank-wolfe", "mp", "nn-omp", "omp"]  # no factorizer
    assert isinstance(registry.get("solver", "OMP", n_nonzero_coefs=3), OMP)
    assert isinstance(registry.get("solver", "matching_pursuit"), MatchingPursuit)
    assert isinstance(registry.get("solver", "nnomp"), NonNegativeOMP)
    fw = registry.get("solver", "fw", beta=2.0, step="2/(k+2)")
    assert isinstance(fw, FrankWolfe) and fw.get_params()["step"] == "2/(k+2)"
    with pytest.raises(UnknownComponentError, match="Did you mean 'omp'"):
        registry.get("solver", "opm")


def test_top_level_export_and_sklearn_layout(problem):
    dictionary, X = problem
    assert sparsekit.SparseCoder.__module__ == "sparsekit.solvers.coder"
    codes = (
        sparsekit.SparseCoder(dictionary, solver_params={"n_nonzero_coefs": 4}).fit(X).transform(X)
    )
    assert codes.shape == (4, 50)
    np.testing.assert_allclose(
        codes, orthogonal_mp(dictionary.T, X.T, n_nonzero_coefs=4).T, rtol=1e-8, atol=1e-12
    )


def test_codes_equal_sklearn_sparse_coder(problem):
    """Same dictionary, same samples: the codes of scikit-learn's SparseCoder (OMP)."""
    dictionary, X = problem
    sk = SkSparseCoder(dictionary, transform_algorithm="omp", transform_n_nonzero_coefs=5)
    ours = SparseCoder(dictionary, solver="omp", solver_params={"n_nonzero_coefs": 5})
    np.testing.assert_allclose(ours.fit_transform(X), sk.fit_transform(X), rtol=1e-8, atol=1e-10)
    # transform works without fit, as in scikit-learn
    np.testing.assert_allclose(
        SparseCoder(dictionary, solver_params={"n_nonzero_coefs": 5}).transform(X),
        sk.transform(X),
        rtol=1e-8,
        atol=1e-10,
    )
    codes = ours.transform(X)
    np.testing.assert_allclose(
        ours.inverse_transform(codes), sk.inverse_transform(codes), rtol=1e-12
    )


def test_in_a_pipeline(problem):
    dictionary, X = problem
    rng = np.random.default_rng(1)
    Xtr = rng.standard_normal((20, 30))
    pipe = make_pipeline(
        StandardScaler(), SparseCoder(dictionary, solver_params={"n_nonzero_coefs": 3})
    )
    codes = pipe.fit(Xtr).transform(X)
    want = orthogonal_mp(dictionary.T, pipe[0].transform(X).T, n_nonzero_coefs=3).T
    np.testing.assert_allclose(codes, want, rtol=1e-8, atol=1e-12)
    assert (np.count_nonzero(codes, axis=1) == 3).all()


@pytest.mark.parametrize(
    "name,params",
    [
        ("omp", {"n_nonzero_coefs": 5}),
        ("mp", {"max_iter": 12}),
        ("nn-omp", {"n_nonzero_coefs": 5}),
        ("frank-wolfe", {"beta": 3.0, "max_iter": 30}),
    ],
)
def test_coder_equals_solver(registry, problem, name, params):
    dictionary, X = problem
    coder = sparsekit.SparseCoder(dictionary, solver=name, solver_params=params, registry=registry)
    assert coder.fit(X) is coder
    direct = registry.get("solver", name, **params).solve(dictionary.T, X.T)
    np.testing.assert_allclose(coder.transform(X), direct.coef.T, rtol=1e-12, atol=1e-14)
    assert coder.n_components_ == 50 and coder.n_features_in_ == 30
    assert (coder.gram_ is not None) == (name != "frank-wolfe")
    np.testing.assert_allclose(
        coder.inverse_transform(coder.transform(X)), (dictionary.T @ direct.coef).T, rtol=1e-12
    )


def test_coder_params_and_solver_object(registry, problem):
    dictionary, X = problem
    coder = sparsekit.SparseCoder(
        dictionary, solver_params={"n_nonzero_coefs": 2}, registry=registry
    )
    assert coder.get_params()["solver"] == "omp"
    coder.set_params(solver_params={"n_nonzero_coefs": 6}).fit(X)
    assert (np.count_nonzero(coder.transform(X), axis=1) == 6).all()
    obj = OMP(n_nonzero_coefs=3)
    coder = sparsekit.SparseCoder(dictionary, solver=obj, registry=registry).fit(X)
    # the copy rule of sparsekit.components.resolve: the caller's object is never the fitted one
    assert coder.solver_ is not obj and coder.solver_.get_params() == obj.get_params()
    with pytest.raises(TypeError, match="parameters"):
        sparsekit.SparseCoder(
            dictionary, solver=obj, solver_params={"tol": 1.0}, registry=registry
        ).fit(X)
    with pytest.raises(UnknownComponentError, match="unknown solver"):
        sparsekit.SparseCoder(dictionary, solver="lasso-lars", registry=registry).fit(X)
    with pytest.raises(TypeError, match="solve"):
        sparsekit.SparseCoder(dictionary, solver=object(), registry=registry).fit(X)
    with pytest.raises(TypeError, match="solver must be"):
        sparsekit.SparseCoder(dictionary, solver=OMP, registry=registry).fit(X)
    with pytest.raises(ValueError, match="one column per atom"):
        sparsekit.SparseCoder(dictionary, registry=registry).inverse_transform(np.ones((3, 2)))
    with pytest.raises(ValueError, match="X has 29 features but the dictionary has 30"):
        sparsekit.SparseCoder(dictionary, registry=registry).fit(X[:, :29])
    with pytest.raises(ValueError, match="zero column"):
        sparsekit.SparseCoder(np.vstack([dictionary, np.zeros(30)]), registry=registry).fit(X)


@pytest.mark.parametrize("solver", ["omp", "nn-omp"])
def test_dtype_follows_x(solver):
    """Codes keep the dtype of X (float32 stays float32) whatever the dictionary's dtype."""
    rng = np.random.default_rng(3)
    D = rng.normal(size=(40, 20))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    x = np.zeros((3, 40))
    x[:, [1, 7]] = np.abs(rng.normal(size=(3, 2))) + 0.5
    X = x @ D
    coder = SparseCoder(D, solver=solver, solver_params={"n_nonzero_coefs": 2})
    got64 = coder.fit(X).transform(X)
    got32 = coder.fit(X.astype(np.float32)).transform(X.astype(np.float32))
    assert got64.dtype == np.float64 and got32.dtype == np.float32
    np.testing.assert_allclose(got64, x, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got32, x, rtol=1e-4, atol=1e-5)
    got = (
        SparseCoder(D.astype(np.float32), solver=solver, solver_params={"n_nonzero_coefs": 2})
        .fit(X)
        .transform(X)
    )
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, x, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("scale", [1e200, 1e-200])
@pytest.mark.parametrize("solver", ["omp", "mp", "nn-omp"])
def test_atoms_near_the_ends_of_the_float_range(solver, scale):
    """A dictionary scaled by 1e200 or 1e-200 gives the codes ``/ scale`` of the dictionary at
    scale 1 (oracle: scale invariance; at scale 1 the OMP codes are scikit-learn's
    ``orthogonal_mp``), with no overflow warning from a Gram matrix of the atoms in ``fit``
    (``gram_`` is left to the solver, which rescales the atoms)."""

    rng = np.random.default_rng(0)
    atoms, X = rng.standard_normal((30, 20)), rng.standard_normal((4, 20))
    params = {"max_iter": 3} if solver == "mp" else {"n_nonzero_coefs": 3}
    ref = SparseCoder(atoms, solver=solver, solver_params=params).fit_transform(X)
    if solver == "omp":
        np.testing.assert_allclose(ref, orthogonal_mp(atoms.T, X.T, n_nonzero_coefs=3).T)
    coder = SparseCoder(atoms * scale, solver=solver, solver_params=params)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        codes = coder.fit_transform(X)
    assert coder.gram_ is None
    np.testing.assert_allclose(codes, ref / scale, rtol=1e-9, atol=1e-12 / scale)
