"""sparsekit.components.resolve: one path from a spec to a component, used by every entry point.

- the copy rule: a component object given to an estimator, a statistics function or a task is
  never the one that is fitted (the caller's object is left as it was);
- the did-you-mean: an unknown name gets the closest registered one, whatever the entry point;
- ``registry=``: a private registry whose components the default registry does not have is the
  one that resolves names, in every entry point.
"""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import orthogonal_mp

import sparsekit
from sparsekit import Registry, UnknownComponentError, stats
from sparsekit.components import resolve
from sparsekit.kernels.base import CallableKernel, PrecomputedKernel
from sparsekit.kernels.linear import LinearKernel
from sparsekit.kernels.rbf import RBFKernel
from sparsekit.plugins import Registration, hookimpl
from sparsekit.samplers.uniform import UniformSampler
from sparsekit.solvers.omp import OMP


class _PrivateLinear(LinearKernel):
    """k(x, z) = <x, z>, registered only in a private registry."""


class _PrivateUniform(UniformSampler):
    """Uniform landmarks, registered only in a private registry."""


class _PrivateOMP(OMP):
    """OMP, registered only in a private registry."""


class _PrivatePlugin:
    @hookimpl
    def sparsekit_kernels(self):
        yield Registration("private-linear", _PrivateLinear)

    @hookimpl
    def sparsekit_samplers(self):
        yield Registration("private-uniform", _PrivateUniform)

    @hookimpl
    def sparsekit_solvers(self):
        yield Registration("private-omp", _PrivateOMP)


@pytest.fixture(scope="module")
def private():
    return Registry(entry_points=False, plugins=[_PrivatePlugin()])


@pytest.fixture(scope="module")
def samples():
    rng = np.random.default_rng(0)
    return rng.standard_normal((40, 3)), rng.standard_normal((30, 3)) + 0.5


# -- resolve itself ---------------------------------------------------------------------------
def test_resolve_names_objects_functions_and_precomputed(private):
    k = resolve("kernel", "RBF", {"gamma": 0.5})
    assert isinstance(k, RBFKernel) and k.gamma == 0.5
    obj = RBFKernel(gamma=2.0)
    copy = resolve("kernel", obj)
    assert copy is not obj and copy.gamma == 2.0
    X = np.arange(6.0).reshape(3, 2)

    def scaled(A, B, c=1.0):
        return c * A @ B.T

    fk = resolve("kernel", scaled, {"c": 3.0})
    assert isinstance(fk, CallableKernel)
    np.testing.assert_allclose(fk(X, X), 3.0 * X @ X.T)
    assert isinstance(resolve("kernel", " Precomputed"), PrecomputedKernel)
    assert isinstance(resolve("sampler", "private-uniform", registry=private), _PrivateUniform)


@pytest.mark.parametrize(
    "family, spec, params, match",
    [
        (
            "kernel",
            None,
            None,
            "kernel must be a registered kernel name or a kernel object, got None",
        ),
        ("kernel", RBFKernel, None, "pass an instance, e.g. RBFKernel()"),
        ("sampler", 3, None, "sampler must be a registered sampler name"),
        ("solver", object(), None, r"solver object with solve\(...\)"),
        (
            "kernel",
            RBFKernel(),
            {"gamma": 1.0},
            "kernel_params can only be given with a kernel name or a function",
        ),
        (
            "sampler",
            UniformSampler(),
            {"replace": True},
            "sampler_params can only be given with a sampler name, not",
        ),
        (
            "kernel",
            "precomputed",
            {"gamma": 1.0},
            "kernel_params cannot be given with kernel='precomputed'",
        ),
        ("kernel", "rbf", [("gamma", 1.0)], "kernel_params must be a dict"),
        ("sampler", lambda X: X, None, "sampler must be a registered sampler name"),
    ],
)
def test_resolve_rejects_what_cannot_be_a_component(family, spec, params, match):
    with pytest.raises(TypeError, match=match):
        resolve(family, spec, params)


def test_precomputed_and_functions_only_for_kernels():
    with pytest.raises(UnknownComponentError, match="unknown sampler 'precomputed'"):
        resolve("sampler", "precomputed")


# -- the copy rule: the caller's object is never the fitted one ---------------------------------
class _CountingUniform(UniformSampler):
    """A sampler that counts its calls (on itself: a copy counts for itself)."""

    def __init__(self, replace=False):
        super().__init__(replace)
        self.calls = 0

    def sample(self, X, kernel, n_landmarks, random_state=None):
        self.calls += 1
        return super().sample(X, kernel, n_landmarks, random_state)


class _CountingOMP(OMP):
    def solve(self, D, Y, **kw):
        self.calls = getattr(self, "calls", 0) + 1
        return super().solve(D, Y, **kw)


def _median_rbf():
    return RBFKernel(bandwidth="median")


def test_estimators_and_stats_never_fit_the_callers_objects(samples):
    X, Y = samples
    kernel, sampler = _median_rbf(), _CountingUniform()
    ny = sparsekit.Nystroem(kernel, sampler=sampler, n_components=10, random_state=0).fit(X)
    assert kernel.gamma_ is None and sampler.calls == 0
    assert ny.kernel_.gamma_ is not None and ny.sampler_.calls == 1
    # NystromMMD resolved its sampler without a copy before: the caller's object counted
    est = stats.NystromMMD(kernel, sampler=sampler, n_landmarks=5, random_state=0).fit(X, Y)
    assert sampler.calls == 0 and est.nystroem_.sampler_.calls == 1
    assert est.nystroem_.sampler_ is not sampler
    stats.mmd2_nystrom(X, Y, kernel, sampler=sampler, n_landmarks=5, random_state=0)
    stats.three_sample_test(
        X, Y, X[:10], kernel=kernel, sampler=sampler, n_landmarks=4, random_state=0
    )
    stats.permutation_test(
        X, Y, kernel=kernel, sampler=sampler, n_landmarks=4, n_permutations=5, random_state=0
    )
    for fn in (
        stats.mmd2_biased,
        stats.mmd2_unbiased,
        stats.mmd2_linear,
        stats.mmd2_block,
        stats.mmd2_rff,
    ):
        fn(X, Y, kernel)
    assert kernel.gamma_ is None and sampler.calls == 0


def test_solver_objects_are_copied_by_the_coder_the_forest_and_run_task():
    from sklearn.datasets import make_regression

    rng = np.random.default_rng(1)
    dictionary = rng.standard_normal((20, 8))
    solver = _CountingOMP(n_nonzero_coefs=2)
    coder = sparsekit.SparseCoder(dictionary, solver=solver).fit(rng.standard_normal((3, 8)))
    coder.transform(rng.standard_normal((3, 8)))
    assert not hasattr(solver, "calls") and coder.solver_.calls == 1
    X, y = make_regression(80, 5, random_state=0)
    forest = sparsekit.OMPForestRegressor(4, solver=solver, n_estimators=10, random_state=0)
    forest.fit(X, y)
    assert not hasattr(solver, "calls")
    sampler = _CountingUniform()
    from sparsekit.run import run_task

    run_task(
        "sampler", {"n_landmarks": 5}, {"X": X}, components={"sampler": sampler, "kernel": "linear"}
    )
    assert sampler.calls == 0


# -- one did-you-mean, whatever the entry point ------------------------------------------------
def _entry_points_with_a_kernel_name(X, Y):
    from sparsekit.run import run_task

    return {
        "Nystroem": lambda k: sparsekit.Nystroem(k).fit(X),
        "NystromMMD": lambda k: stats.NystromMMD(k).fit(X, Y),
        "mmd2_biased": lambda k: stats.mmd2_biased(X, Y, k),
        "mmd2_unbiased": lambda k: stats.mmd2_unbiased(X, Y, k),
        "mmd2_linear": lambda k: stats.mmd2_linear(X, Y, k),
        "mmd2_block": lambda k: stats.mmd2_block(X, Y, k),
        "mmd2_rff": lambda k: stats.mmd2_rff(X, Y, k),
        "mmd2_nystrom": lambda k: stats.mmd2_nystrom(X, Y, k),
        "three_sample_test": lambda k: stats.three_sample_test(X, Y, X, kernel=k),
        "three_sample_error": lambda k: stats.three_sample_error(
            lambda n, rng: X[:n], lambda n, rng: Y[:n], [5], n_repetitions=1, kernel=k
        ),
        "permutation_test": lambda k: stats.permutation_test(X, Y, kernel=k),
        "run_task": lambda k: run_task(
            "nystrom", {"n_components": 5}, {"X": X}, components={"kernel": k}
        ),
    }


@pytest.mark.parametrize("entry", sorted(_entry_points_with_a_kernel_name(None, None)))
def test_a_misspelt_kernel_gets_the_closest_name_everywhere(entry, samples):
    call = _entry_points_with_a_kernel_name(*samples)[entry]
    with pytest.raises(
        UnknownComponentError,
        match=r"unknown kernel 'rbff'\. Did you mean "
        r"'rbf'\? Available kernels: ",
    ):
        call("rbff")


def test_misspelt_samplers_and_solvers_get_the_closest_name(samples):
    X, Y = samples
    from sparsekit.run.tasks import make_sampler

    hint = r"Did you mean 'uniform'\?"
    with pytest.raises(UnknownComponentError, match=hint):
        sparsekit.Nystroem(sampler="unifrom").fit(X)
    with pytest.raises(UnknownComponentError, match=hint):
        stats.NystromMMD(sampler="unifrom").fit(X, Y)
    with pytest.raises(UnknownComponentError, match=hint):
        make_sampler("unifrom")
    with pytest.raises(UnknownComponentError, match=r"Did you mean 'omp'\?"):
        sparsekit.SparseCoder(np.eye(3), solver="ompp").fit(np.eye(3))
    with pytest.raises(UnknownComponentError, match=r"Did you mean 'omp'\?"):
        sparsekit.OMPForestRegressor(2, solver="ompp", n_estimators=3).fit(X, X[:, 0])


# -- registry=: the private registry is the one that resolves names -----------------------------
def _linear_mmd2_biased(X, Y):
    d = X.mean(axis=0) - Y.mean(axis=0)
    return float(d @ d)


def _linear_mmd2_unbiased(X, Y):
    def within(A):
        G = A @ A.T
        return (G.sum() - np.trace(G)) / (len(A) * (len(A) - 1))

    return within(X) + within(Y) - 2.0 * (X @ Y.T).mean()


def test_stats_resolve_kernel_names_in_the_given_registry(samples, private):
    X, Y = samples
    assert stats.mmd2_biased(X, Y, "private-linear", registry=private) == pytest.approx(
        _linear_mmd2_biased(X, Y), rel=1e-12
    )
    assert stats.mmd2_unbiased(X, Y, "private-linear", registry=private) == pytest.approx(
        _linear_mmd2_unbiased(X, Y), rel=1e-12
    )
    for fn in (stats.mmd2_biased, stats.mmd2_linear, stats.mmd2_block, stats.mmd2_nystrom):
        fn(X, Y, "private-linear", registry=private)
        with pytest.raises(UnknownComponentError):
            fn(X, Y, "private-linear")
    # the Nyström MMD with every point a landmark is the exact (biased) MMD² of the linear kernel,
    # plus λ‖v‖² = λ (1/n + 1/m)
    lam = 1e-3
    est = stats.NystromMMD(
        "private-linear", sampler="private-uniform", n_landmarks=70, lam=lam, registry=private
    ).fit(X, Y)
    assert isinstance(est.kernel_, _PrivateLinear)
    assert isinstance(est.nystroem_.sampler_, _PrivateUniform)
    assert est.mmd2() == pytest.approx(
        _linear_mmd2_biased(X, Y) + lam * (1 / len(X) + 1 / len(Y)), rel=1e-9
    )
    res = stats.three_sample_test(
        X,
        Y,
        X[:10],
        kernel="private-linear",
        sampler="private-uniform",
        registry=private,
        random_state=0,
    )
    assert res.w_from_x  # W = X[:10] comes from P_X
    stats.permutation_test(
        X,
        Y,
        kernel="private-linear",
        sampler="private-uniform",
        n_permutations=5,
        registry=private,
        random_state=0,
    )
    rows = stats.three_sample_error(
        lambda n, rng: X[:n],
        lambda n, rng: Y[:n],
        [6],
        methods=("nystrom",),
        n_repetitions=1,
        kernel="private-linear",
        registry=private,
        method_options={"nystrom": {"sampler": "private-uniform"}},
    )
    assert rows[0]["method"] == "nystrom"
    with pytest.raises(UnknownComponentError):
        stats.NystromMMD(sampler="private-uniform").fit(X, Y)


def test_estimators_resolve_names_in_the_given_registry(samples, private):
    X, _ = samples
    ny = sparsekit.Nystroem(
        "private-linear", sampler="private-uniform", n_components=len(X), registry=private
    ).fit(X)
    Z = ny.transform(X)
    np.testing.assert_allclose(Z @ Z.T, X @ X.T, atol=1e-9)  # S = X: the exact linear Gram
    with pytest.raises(UnknownComponentError):
        sparsekit.Nystroem("private-linear").fit(X)
    rng = np.random.default_rng(2)
    dictionary = rng.standard_normal((12, 6))
    signals = rng.standard_normal((4, 6))
    coder = sparsekit.SparseCoder(
        dictionary, solver="private-omp", solver_params={"n_nonzero_coefs": 3}, registry=private
    )
    codes = coder.fit_transform(signals)
    assert isinstance(coder.solver_, _PrivateOMP)
    np.testing.assert_allclose(
        codes, orthogonal_mp(dictionary.T, signals.T, n_nonzero_coefs=3).T, atol=1e-10
    )
    y = X[:, 0] + X[:, 1] ** 2
    ref = sparsekit.OMPForestRegressor(3, solver="omp", n_estimators=8, random_state=0).fit(X, y)
    got = sparsekit.OMPForestRegressor(
        3, solver="private-omp", n_estimators=8, random_state=0, registry=private
    ).fit(X, y)
    np.testing.assert_allclose(got.predict(X), ref.predict(X), rtol=1e-12)


def test_tasks_resolve_names_in_the_run_tasks_registry(samples, private):
    X, _ = samples
    from sparsekit.run import run_task
    from sparsekit.run.tasks import make_sampler

    out = run_task(
        "sampler",
        {"n_landmarks": 6},
        {"X": X},
        components={"kernel": "private-linear", "sampler": "private-uniform"},
        registry=private,
    )
    assert out["n_landmarks"] == 6
    assert isinstance(make_sampler("private-uniform", registry=private), _PrivateUniform)
    out = run_task(
        "mmd",
        {"method": "nystrom", "sampler": "private-uniform"},
        {"X": np.vstack([X, X + 1.0]), "y": np.repeat([0, 1], len(X))},
        components={"kernel": "private-linear"},
        registry=private,
    )
    assert out["mmd2"] > 0
    with pytest.raises(UnknownComponentError):
        run_task("sampler", {"n_landmarks": 6}, {"X": X}, components={"kernel": "private-linear"})


def test_kernel_functions_and_precomputed_reach_every_estimator(samples):
    X, Y = samples

    def linear(A, B):
        return A @ B.T

    assert stats.mmd2_biased(X, Y, linear) == pytest.approx(_linear_mmd2_biased(X, Y), rel=1e-12)
    with pytest.raises(ValueError, match="kernel='precomputed' cannot compare samples"):
        stats.mmd2_biased(X, Y, "precomputed")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ny = sparsekit.Nystroem("precomputed", n_components=len(X)).fit(X @ X.T)
    np.testing.assert_allclose(ny.transform(X @ X.T) @ ny.transform(X @ X.T).T, X @ X.T, atol=1e-8)
