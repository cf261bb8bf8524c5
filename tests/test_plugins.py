"""The separately installed plugin in plugins/ is found through its entry point; the core
works without it."""

import os
import warnings
from importlib import metadata

import numpy as np
import pytest
from sklearn.metrics.pairwise import cosine_similarity, sigmoid_kernel

import sparsekit
from sparsekit import Registry
from sparsekit.exceptions import UnknownComponentError
from sparsekit.samplers import Landmarks
from sparsekit.solvers.base import SparseResult

PLUGIN_DIST = "sparsekit-extra-kernels"


def _installed(dist=PLUGIN_DIST):
    try:
        metadata.distribution(dist)
        return True
    except metadata.PackageNotFoundError:
        return False


needs_plugin = pytest.mark.skipif(
    not _installed() and not os.environ.get("SPARSEKIT_REQUIRE_PLUGINS"),
    reason=f"{PLUGIN_DIST} not installed (pip install ./plugins/{PLUGIN_DIST})",
)


@needs_plugin
def test_plugin_listed_with_its_entry_point_name():
    infos = {i.name: i for i in Registry().list("kernel")}
    assert infos["cosine"].plugin == "extra-kernels"
    assert infos["sigmoid"].aliases == ("tanh",)


@needs_plugin
def test_plugin_kernels_usable_by_name_and_match_scikit_learn(rng):
    X = rng.normal(size=(20, 4))
    X[3] = 0.0
    Y = rng.normal(size=(7, 4))
    np.testing.assert_allclose(
        sparsekit.get_kernel("Cosine")(X, Y), cosine_similarity(X, Y), rtol=1e-12, atol=1e-15
    )
    np.testing.assert_allclose(
        sparsekit.get_kernel("tanh", gamma=0.3)(X), sigmoid_kernel(X, gamma=0.3), rtol=1e-12
    )
    k = sparsekit.get_kernel("cosine")
    np.testing.assert_allclose(k.diag(X), np.diag(k(X)), atol=1e-15)


@needs_plugin
def test_cli_list_shows_the_plugin(capsys):
    from sparsekit.cli import main

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    line = next(r for r in out.splitlines() if " cosine " in f" {r} ")
    assert "extra-kernels" in line and "kernel" in line


def test_core_works_without_entry_point_plugins(monkeypatch, rng):
    monkeypatch.setattr("sparsekit.registry._sparsekit_entry_points", lambda: [])
    reg = Registry()
    assert "cosine" not in reg.names("kernel")
    with pytest.raises(UnknownComponentError, match="unknown kernel 'cosine'"):
        reg.get("kernel", "cosine")
    X = rng.random((5, 3))
    assert reg.get("kernel", "rbf")(X).shape == (5, 5)


@needs_plugin
def test_plugin_kernel_parameters_are_validated():
    with pytest.raises(ValueError, match="gamma must be > 0"):
        sparsekit.get_kernel("sigmoid", gamma=-1.0)
    with pytest.raises(ValueError, match="unknown backend"):
        sparsekit.get_kernel("cosine", backend="gpu")


# -- the plugin example of docs/plugins.md: a kernel, a sampler and a solver --------------------
EXAMPLE_DIST = "sparsekit-example-plugin"
needs_example = pytest.mark.skipif(
    not _installed(EXAMPLE_DIST) and not os.environ.get("SPARSEKIT_REQUIRE_PLUGINS"),
    reason=f"{EXAMPLE_DIST} not installed (pip install ./plugins/{EXAMPLE_DIST})",
)


@needs_example
def test_example_plugin_registers_one_component_per_family():
    infos = {(i.family, i.name): i for i in Registry().list() if i.plugin == "example-plugin"}
    # an install older than the example projection (factorizer) lacks "band" ("als");
    # tests/test_plugin_page.py
    # checks the exact set of the page's package
    assert set(infos) - {("projection", "band"), ("factorizer", "als")} == {
        ("kernel", "rational-quadratic"),
        ("sampler", "kmeans-pp"),
        ("solver", "fista"),
    }
    assert infos["sampler", "kmeans-pp"].aliases == ("d2",)


@needs_example
def test_example_plugin_registers_its_task_through_the_hook_without_deprecation(rng):
    """The installed example's task comes from its sparsekit_tasks hook (plugin 'example-plugin'),
    and loading and running it warns nothing (a stale install: pip install
    ./plugins/sparsekit-example-plugin again)."""
    import warnings

    from sparsekit.run import run_task

    X = rng.normal(size=(40, 2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reg = Registry()
        info = reg.lookup("task", "kernel-alignment")
        row = run_task(
            "kernel-alignment",
            data={"X": X, "y": (X[:, 0] > 0).astype(int)},
            components={"kernel": "rq"},
            registry=reg,
        )
    assert info.plugin == "example-plugin"
    assert [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)] == []
    assert -1 <= row["alignment"] <= 1


@needs_example
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_example_kernel_matches_scikit_learn(rng, dtype, rtol):
    from sklearn.gaussian_process.kernels import RationalQuadratic

    X, Y = rng.normal(size=(25, 4)).astype(dtype), rng.normal(size=(9, 4)).astype(dtype)
    k = sparsekit.get_kernel("rq", length_scale=0.7, alpha=2.5)
    K = k(X, Y)
    assert K.dtype == dtype
    ref = RationalQuadratic(length_scale=0.7, alpha=2.5)(X.astype(np.float64), Y.astype(np.float64))
    np.testing.assert_allclose(K, ref, rtol=rtol)
    np.testing.assert_allclose(k.diag(X), np.diag(k(X)), rtol=rtol)
    with pytest.raises(ValueError, match="alpha must be > 0"):
        sparsekit.get_kernel("rational-quadratic", alpha=0.0)


@needs_example
def test_example_factorizer_reaches_the_truncated_svd_error(rng):
    """Alternating least squares without constraints, two factors of inner dimension 3: the
    error of the best rank-3 approximation (Eckart–Young), in float64 and float32."""
    if "als" not in Registry().names("factorizer"):
        pytest.skip(
            "an install older than the example factorizer: pip install "
            f"./plugins/{EXAMPLE_DIST} again"
        )
    M = rng.normal(size=(20, 3)) @ rng.normal(size=(3, 15)) + 0.05 * rng.normal(size=(20, 15))
    s = np.linalg.svd(M, compute_uv=False)
    best = np.sqrt((s[3:] ** 2).sum()) / np.linalg.norm(M)
    cons = [("identity", {"shape": (20, 3)}), ("identity", {"shape": (3, 15)})]
    for dtype, rtol in ((np.float64, 1e-9), (np.float32, 1e-4)):
        res = sparsekit.get_factorizer("als").factorize(M.astype(dtype), cons)
        dense = res.factors.toarray()
        assert dense.dtype == dtype
        assert np.linalg.norm(M - dense) / np.linalg.norm(M) == pytest.approx(best, rel=rtol)


@needs_example
def test_example_sampler_seeds_one_landmark_per_cluster(rng):
    centers = rng.normal(size=(5, 3)) * 100
    X = np.repeat(centers, 40, axis=0) + rng.normal(size=(200, 3)) * 0.01
    sampler = sparsekit.get_sampler("kmeans-pp")
    lm = sampler.sample(X, sparsekit.get_kernel("rbf", gamma=1e-3), 5, random_state=1)
    assert isinstance(lm, Landmarks)
    assert sorted(lm.indices // 40) == [0, 1, 2, 3, 4]  # D^2 sampling leaves no cluster empty
    np.testing.assert_array_equal(lm.points, X[lm.indices])
    with pytest.raises(ValueError, match="n_landmarks must be in"):
        sampler.sample(X, sparsekit.get_kernel("rbf"), 201)


@needs_example
def test_example_sampler_and_kernel_by_name_in_nystroem(rng):
    X = rng.normal(size=(120, 3))
    ny = sparsekit.Nystroem(
        kernel="rational-quadratic", sampler="kmeans-pp", n_components=120, random_state=0
    ).fit(X)
    Z = ny.transform(X)
    np.testing.assert_allclose(
        Z @ Z.T, sparsekit.get_kernel("rq")(X), atol=1e-8
    )  # all landmarks: exact


@needs_example
def test_example_solver_matches_scikit_learn_lasso(rng):
    from sklearn.linear_model import Lasso

    D = rng.normal(size=(40, 80))
    Y = np.c_[
        D[:, :3] @ np.array([1.0, -2.0, 3.0]) + 0.01 * rng.normal(size=40), rng.normal(size=40)
    ]
    res = sparsekit.get_solver("lasso", alpha=2.0, max_iter=20000, tol=1e-12).solve(D, Y)
    assert isinstance(res, SparseResult) and list(res.stop_reason) == ["tol", "tol"]
    for j in range(2):
        ref = (
            Lasso(alpha=2.0 / 40, fit_intercept=False, tol=1e-14, max_iter=100_000)
            .fit(D, Y[:, j])
            .coef_
        )
        np.testing.assert_allclose(res.coef[:, j], ref, atol=1e-7)
        nz = np.flatnonzero(res.coef[:, j])
        assert set(res.support[: nz.size, j]) == set(nz) and (res.support[nz.size :, j] == -1).all()
    one = sparsekit.get_solver("fista", alpha=2.0, max_iter=20000, tol=1e-12).solve(D, Y[:, 0])
    np.testing.assert_allclose(one.coef, res.coef[:, 0], atol=1e-12)
    assert isinstance(one.n_iter, int) and one.residual_norms[0] == pytest.approx(
        np.linalg.norm(Y[:, 0])
    )


def test_docs_show_the_example_plugin_files_verbatim():
    """Each code block of docs/plugins.md captioned with a file name is that file of the example
    plugin."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[1]
    doc = (root / "docs" / "plugins.md").read_text()
    assert "<!-- file:" not in doc  # a comment is not shown on the site: captions are
    blocks = re.findall(r"```\{code-block\} \w+\n:caption: `(\S+)`\n\n(.*?)```", doc, flags=re.S)
    assert {name for name, _ in blocks} >= {
        "setup.cfg",
        "sparsekit_example_plugin/plugin.py",
        "sparsekit_example_plugin/kernels.py",
        "sparsekit_example_plugin/samplers.py",
        "sparsekit_example_plugin/solvers.py",
    }
    for name, code in blocks:
        assert code == (root / "plugins" / EXAMPLE_DIST / name).read_text(), name


# -- an installed plugin that claims built-in names ---------------------------------------------
CLASH_MODULE = """
from sparsekit.plugins import hookimpl, Registration

class Fake:
    def __init__(self, **kw):
        pass

@hookimpl
def sparsekit_kernels():
    yield Registration("rbf", Fake)
    yield Registration("clash-only", Fake)

@hookimpl
def sparsekit_sampler():   # typo of sparsekit_samplers
    yield Registration("never", Fake)
"""


@pytest.fixture
def clashing_install(tmp_path):
    """A directory holding an installed distribution whose entry point claims 'rbf'."""
    (tmp_path / "clash_plugin.py").write_text(CLASH_MODULE)
    info = tmp_path / "sparsekit_clash-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sparsekit-clash\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[sparsekit]\nclash = clash_plugin\n")
    return tmp_path


def _run(code, site, **env):
    import subprocess
    import sys

    full_env = {
        **os.environ,
        **env,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, *code],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )


def test_installed_plugin_claiming_rbf_leaves_library_usable(clashing_install):
    out = _run(
        [
            "-c",
            "import sparsekit; k = sparsekit.get_kernel('rbf'); "
            "print(type(k).__name__, type(sparsekit.get_kernel('clash-only')).__name__)",
        ],
        clashing_install,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["RBFKernel", "Fake"]
    assert (
        "ComponentConflictWarning" in out.stderr
        and "'clash'" in out.stderr
        and "sparsekit.kernels._plugin" in out.stderr
    )
    assert "UnknownHookWarning" in out.stderr and "sparsekit_sampler" in out.stderr

    listing = _run(["-m", "sparsekit", "list"], clashing_install)
    assert listing.returncode == 0, listing.stderr
    skipped = listing.stdout[listing.stdout.index("skipped") :]
    row = next(line for line in skipped.splitlines() if "| rbf " in line)
    assert "clash" in row and "already taken by built-in plugin" in row
    assert any("sparsekit_sampler" in line for line in skipped.splitlines())


def test_disable_environment_variable_blocks_installed_plugin(clashing_install):
    out = _run(
        ["-m", "sparsekit", "list", "--json"],
        clashing_install,
        SPARSEKIT_DISABLE_PLUGINS="sparsekit-clash",
    )
    assert out.returncode == 0 and "Warning" not in out.stderr, out.stderr
    import json

    data = json.loads(out.stdout)
    assert "clash-only" not in {c["name"] for c in data["components"]}
    assert data["skipped"] == [
        {
            "plugin": "clash",
            "family": None,
            "name": None,
            "reason": "disabled by SPARSEKIT_DISABLE_PLUGINS",
        }
    ]


# -- estimators take registry= and check what third-party components return ---------------------
def _nystroem_takes_registry():
    import inspect

    return "registry" in inspect.signature(sparsekit.Nystroem).parameters


@pytest.mark.skipif(not _nystroem_takes_registry(), reason="Nystroem has no registry parameter yet")
def test_nystroem_resolves_in_its_registry_and_checks_sampler_results(rng):
    from sparsekit.exceptions import ComponentResultError
    from sparsekit.plugins import Registration, hookimpl

    class TupleSampler:
        accepts = ("vectors", "graphs")

        def sample(self, X, kernel, n_landmarks, random_state=None):
            return (np.arange(n_landmarks), X[:n_landmarks], np.ones(n_landmarks))

    class Plugin:
        @hookimpl
        def sparsekit_samplers(self):
            yield Registration("tuple-sampler", TupleSampler, accepts="any")

    reg = Registry(entry_points=False)
    reg.register(Plugin(), name="bad-plugin")
    X = rng.normal(size=(30, 3))
    with pytest.raises(UnknownComponentError):  # the default registry does not know it
        sparsekit.Nystroem(sampler="tuple-sampler", n_components=5).fit(X)
    with pytest.raises(
        ComponentResultError, match="'tuple-sampler' of plugin 'bad-plugin'.*Landmarks"
    ):
        sparsekit.Nystroem(sampler="tuple-sampler", n_components=5, registry=reg).fit(X)


# -- extreme scales: finite where the true value is ------------------------------------------
EXTREME_SCALES = [
    (np.float64, 1e300),
    (np.float64, 1e-300),
    (np.float64, 1e-310),
    (np.float32, 3e38),
    (np.float32, 1e-38),
    (np.float32, 1e-42),
]


def _extreme(rng, dtype, scale, shape):
    """Data in [-1, 1) times ``scale`` in ``dtype``, and the same rounded values divided by
    ``scale`` in float64 (a relative change of 1e-16: the oracle's O(1) copy)."""
    X = (rng.uniform(-1, 1, size=shape) * scale).astype(dtype)
    return X, X.astype(np.float64) / scale


@needs_plugin
@pytest.mark.parametrize("dtype, scale", EXTREME_SCALES)
def test_cosine_kernel_is_exact_at_extreme_scales(rng, dtype, scale):
    """The cosine is scale invariant: K(s X, s Y) = cosine_similarity(X, Y) (scikit-learn, on
    the data brought back to O(1) in float64). At 1e300 and float32 3e38 the squared norms
    overflowed (NaN), at 1e-300 / float32 1e-38 they underflowed (0 instead of the cosine);
    the diagonal is 1 for every non-zero row, 0 for a zero row."""
    X, X1 = _extreme(rng, dtype, scale, (12, 5))
    Y, Y1 = _extreme(rng, dtype, scale, (4, 5))
    X[3], X1[3] = 0, 0
    k = sparsekit.get_kernel("cosine")
    tol = {"rtol": 1e-10, "atol": 1e-13} if dtype == np.float64 else {"rtol": 1e-5, "atol": 2e-6}
    for K, ref in ((k(X, Y), cosine_similarity(X1, Y1)), (k(X), cosine_similarity(X1))):
        assert K.dtype == dtype
        np.testing.assert_allclose(K, ref, **tol)
    np.testing.assert_array_equal(k.diag(X), np.where(np.arange(12) == 3, 0.0, 1.0))


@needs_example
@pytest.mark.parametrize("dtype, scale", EXTREME_SCALES)
def test_rational_quadratic_is_exact_at_extreme_scales(rng, dtype, scale):
    """k depends on ||x - z|| / l only: the kernel with length_scale = 0.7 s on s X equals
    scikit-learn's RationalQuadratic(length_scale=0.7) on X (brought back to O(1) in float64).
    At 1e300 / float32 3e38 the squared norms overflowed (NaN), at 1e-300 l**2 underflowed
    (ZeroDivisionError), at float32 1e-38 1 / (2 alpha l^2) overflowed (NaN)."""
    from sklearn.gaussian_process.kernels import RationalQuadratic

    X, X1 = _extreme(rng, dtype, scale, (12, 5))
    Y, Y1 = _extreme(rng, dtype, scale, (4, 5))
    k = sparsekit.get_kernel("rq", length_scale=0.7 * scale, alpha=1.5)
    ref = RationalQuadratic(length_scale=0.7, alpha=1.5)
    tol = {"rtol": 1e-9} if dtype == np.float64 else {"rtol": 2e-5}
    for K, want in ((k(X, Y), ref(X1, Y1)), (k(X), ref(X1))):
        assert K.dtype == dtype
        np.testing.assert_allclose(K, want, **tol)


@needs_example
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rational_quadratic_with_a_length_scale_far_below_the_data_spread(rng, dtype):
    """l = 1e-200 (float64) / 1e-30 (float32) next to O(1) data with alpha = 0.01: u =
    ||x - z||^2 / (2 alpha l^2) is beyond the float range while k = (1 + u)^(-alpha) is about
    1e-4 (float32: 0.25). Oracle: the closed form in 60-digit decimal arithmetic on the exact
    squared distances. The diagonal is exactly 1 (zero distance; the GEMM's rounding of
    ||x||^2 + ||x||^2 - 2 <x, x> gave k(x, x) < 1 for small l)."""
    from decimal import Decimal, localcontext

    scale = 1e-200 if dtype == np.float64 else 1e-30
    X = rng.uniform(-1, 1, size=(8, 3)).astype(dtype)
    k = sparsekit.get_kernel("rq", length_scale=scale, alpha=0.01)
    K = k(X)
    with localcontext() as ctx:
        ctx.prec = 60
        want = np.empty((8, 8))
        for i in range(8):
            for j in range(8):
                r2 = sum((Decimal(float(a)) - Decimal(float(b))) ** 2 for a, b in zip(X[i], X[j]))
                u = r2 / (2 * Decimal("0.01") * Decimal(scale) ** 2)
                want[i, j] = float((-Decimal("0.01") * (1 + u).ln()).exp())
    np.testing.assert_array_equal(np.diag(K), 1.0)
    np.testing.assert_allclose(K, want, rtol=1e-10 if dtype == np.float64 else 1e-5)


@needs_plugin
@pytest.mark.parametrize(
    "dtype, scale", [(np.float64, 1e160), (np.float32, 3e38), (np.float32, 1e20)]
)
def test_sigmoid_kernel_at_scales_where_the_products_overflow(rng, dtype, scale):
    """With the default gamma = 1 / d, tanh(gamma s^2 <x, z> + 1) is exactly sign(<x, z>)
    (the argument is beyond 1e30); the sums of the products overflowed, inf - inf gave NaN
    (float64) and a wrong sign (float32). With gamma = 0.3 / s^2 the kernel equals scikit-
    learn's sigmoid_kernel(X, gamma=0.3) on the data brought back to O(1) (where that gamma is
    a normal float64: not 0.3e-320)."""
    X, X1 = _extreme(rng, dtype, scale, (15, 40))
    k = sparsekit.get_kernel("sigmoid")
    np.testing.assert_array_equal(k(X), np.sign(X1 @ X1.T))
    np.testing.assert_array_equal(k.diag(X), 1.0)
    if scale > 1e150:
        return
    k = sparsekit.get_kernel("sigmoid", gamma=0.3 / scale / scale)
    want = sigmoid_kernel(X1, gamma=0.3)
    rtol = 1e-10 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(k(X), want, rtol=rtol)
    np.testing.assert_allclose(k.diag(X), np.diag(want), rtol=rtol)


@needs_example
@pytest.mark.parametrize(
    "dtype, scale",
    [(np.float64, 1e154), (np.float64, 1e-160), (np.float32, 1e19), (np.float32, 1e-20)],
)
@pytest.mark.parametrize("what", ["atoms", "signals"])
def test_example_fista_solves_data_whose_squares_overflow(dtype, scale, what):
    """The example plugin's FISTA on ``D s`` and ``Y t`` with ``alpha s t`` gives the codes
    ``x t / s`` of the lasso at scale 1 (oracle: scale invariance; the scale-1 solve matches
    scikit-learn's ``Lasso``). Its step ``1 / ||D||_2^2`` was 0 or inf there, and its codes
    NaN."""
    from sklearn.linear_model import Lasso

    rng = np.random.default_rng(0)
    D = rng.normal(size=(40, 80))
    Y = np.c_[D[:, :3] @ np.array([1.0, -2.0, 3.0]), rng.normal(size=40)]
    D, Y = D.astype(dtype), Y.astype(dtype)
    ref = sparsekit.get_solver("fista", alpha=2.0, max_iter=5000, tol=1e-7).solve(D, Y)
    lasso = Lasso(alpha=2.0 / 40, fit_intercept=False, tol=1e-12, max_iter=100_000)
    np.testing.assert_allclose(ref.coef[:, 0], lasso.fit(D, Y[:, 0]).coef_, atol=1e-3)
    s, t = (scale, 1.0) if what == "atoms" else (1.0, scale)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = sparsekit.get_solver("fista", alpha=2.0 * s * t, max_iter=5000, tol=1e-7).solve(
            D * dtype(s), Y * dtype(t)
        )
    assert not np.isnan(res.coef).any()
    scale_of = np.abs(ref.coef).max() * t / s
    np.testing.assert_allclose(res.coef, ref.coef * (t / s), rtol=1e-3, atol=1e-4 * scale_of)


def test_the_author_api_is_what_a_plugin_subclasses_yields_and_returns():
    """Oracle: the example plugins' own imports (read from their source by ``ast``) use only
    names of ``sparsekit.plugins.__all__`` and of the public ``sparsekit.validation``, and every
    name of ``__all__`` resolves."""
    import ast
    import pathlib

    import sparsekit.plugins as api
    import sparsekit.validation as validation

    assert len(api.__all__) == len(set(api.__all__)) <= 20
    assert all(getattr(api, name) is not None for name in api.__all__)
    root = pathlib.Path(__file__).resolve().parents[1] / "plugins"
    for path in root.glob("*/*/*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "sparsekit.plugins":
                assert {a.name for a in node.names} <= set(api.__all__), path
            if isinstance(node, ast.ImportFrom) and node.module == "sparsekit.validation":
                assert {a.name for a in node.names} <= set(validation.__all__), path
