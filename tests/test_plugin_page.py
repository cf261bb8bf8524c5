"""docs/plugins.md's package as written: the page's file blocks are written to an empty folder,
installed with pip (no setup.py, no copy of plugins/), and every component and the task are used
by name in a fresh interpreter, against independent references."""

import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "plugins.md"


def page_files():
    """``{path: text}`` of the code blocks that docs/plugins.md captions with a file name."""
    blocks = re.findall(
        r"```\{code-block\} \w+\n:caption: `(\S+)`\n\n(.*?)```", PAGE.read_text(), flags=re.S
    )
    return dict(blocks)


def page_spec():
    """The page's spec of the example task (its TOML block with ``task = "kernel-alignment"``)."""
    blocks = re.findall(r"```toml\n(.*?)```", PAGE.read_text(), flags=re.S)
    return next(b for b in blocks if 'task = "kernel-alignment"' in b)


def _can_build_without_isolation():
    """setuptools builds wheels by itself from 70.1; before, it needs the ``wheel`` package."""
    import setuptools

    major, minor = (int(p) for p in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


@pytest.fixture(scope="module")
def page_site(tmp_path_factory):
    """A folder holding the page's package, installed by ``pip install --target``."""
    tmp = tmp_path_factory.mktemp("plugin_page")
    src = tmp / "sparsekit-example-plugin"
    for name, text in page_files().items():
        path = src / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    site = tmp / "site"
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--target",
        str(site),
        "--disable-pip-version-check",
        "--retries",
        "0",
        "--timeout",
        "20",
    ]
    if _can_build_without_isolation():
        cmd.append("--no-build-isolation")  # this environment's setuptools, offline
    out = subprocess.run([*cmd, str(src)], capture_output=True, text=True, timeout=300)
    if out.returncode != 0 and re.search(
        r"No matching distribution found for (setuptools|wheel)"
        r"|Could not find a version that satisfies",
        out.stderr,
    ):
        pytest.skip(
            "pip cannot fetch the build requirements (setuptools, wheel) here, and this "
            f"environment's setuptools cannot build alone:\n{out.stderr[-500:]}"
        )
    assert out.returncode == 0, f"the page's package does not install:\n{out.stdout}\n{out.stderr}"
    return site


def _run(args, site):
    """``python *args`` with the page's package first on the path, then this checkout."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )


def test_page_shows_a_complete_installable_distribution():
    files = page_files()
    assert {
        "pyproject.toml",
        "setup.cfg",
        "sparsekit_example_plugin/__init__.py",
        "sparsekit_example_plugin/plugin.py",
        "sparsekit_example_plugin/kernels.py",
        "sparsekit_example_plugin/samplers.py",
        "sparsekit_example_plugin/solvers.py",
        "sparsekit_example_plugin/factorizers.py",
        "sparsekit_example_plugin/projections.py",
        "sparsekit_example_plugin/tasks.py",
    } <= set(files)
    assert "build-backend" in files["pyproject.toml"]


USE_BY_NAME = r"""
import json, warnings, numpy as np, sparsekit, sparsekit_example_plugin
from sparsekit import Registry
from sklearn.gaussian_process.kernels import RationalQuadratic
from sklearn.linear_model import Lasso
from sklearn.metrics.pairwise import rbf_kernel
from sparsekit.run import run_task

# every warning from here on, DeprecationWarnings included (Python hides those raised outside
# __main__): loading the plugin and running its task must use no deprecated path
caught = warnings.catch_warnings(record=True)
record = caught.__enter__()
warnings.simplefilter("always")
out = {"module": sparsekit_example_plugin.__file__}
out["components"] = sorted([i.family, i.name, list(i.aliases)] for i in Registry().list()
                           if i.plugin == "example-plugin")
rng = np.random.default_rng(0)

X, Y = rng.normal(size=(30, 4)), rng.normal(size=(7, 4))
K = sparsekit.get_kernel("rq", length_scale=0.7, alpha=2.5)(X, Y)
out["kernel_err"] = float(np.abs(K - RationalQuadratic(length_scale=0.7, alpha=2.5)(X, Y)).max())

C = np.repeat(rng.normal(size=(4, 3)) * 100, 25, axis=0) + rng.normal(size=(100, 3)) * 0.01
lm = sparsekit.get_sampler("kmeans-pp").sample(C, sparsekit.get_kernel("rbf", gamma=1e-3), 4,
                                               random_state=0)
out["clusters"] = sorted((lm.indices // 25).tolist())
out["weights"] = lm.weights.tolist()

D = rng.normal(size=(40, 60)); D /= np.linalg.norm(D, axis=0)
y = D[:, :3] @ np.array([1.5, -2.0, 1.0])
res = sparsekit.get_solver("lasso", alpha=0.05, max_iter=20000, tol=1e-12).solve(D, y)
ref = Lasso(alpha=0.05 / 40, fit_intercept=False, tol=1e-12, max_iter=100000).fit(D, y).coef_
out["lasso_err"] = float(np.abs(res.coef - ref).max())
out["support"] = res.support.tolist()
out["nonzero"] = np.flatnonzero(res.coef).tolist()
out["stop"] = str(res.stop_reason)

M = rng.normal(size=(8, 8))
P = sparsekit.get_projection("banded", shape=(8, 8), bandwidth=2)
band = np.triu(np.tril(M, 2), -2)
out["band_err"] = float(np.abs(P(M) - band / np.linalg.norm(band)).max())
A, B = (np.triu(np.tril(rng.normal(size=(8, 8)), 1), -1) for _ in range(2))
fact = sparsekit.get_factorizer("palm4msa", n_iter=300).factorize(
    A @ B, [("band", {"shape": (8, 8), "bandwidth": 1})] * 2)
dense = [f.toarray() for f in fact.factors.factors]
out["band_outside"] = float(max(np.abs(f - np.triu(np.tril(f, 1), -1)).max() for f in dense))
out["palm_err"] = fact.relative_error

L = rng.normal(size=(20, 3)) @ rng.normal(size=(3, 15)) + 0.05 * rng.normal(size=(20, 15))
als = sparsekit.get_factorizer("alternating-least-squares").factorize(
    L, [("identity", {"shape": (20, 3)}), ("identity", {"shape": (3, 15)})])
s = np.linalg.svd(L, compute_uv=False)
out["als"] = [float(np.linalg.norm(L - als.factors.toarray()) / np.linalg.norm(L)),
              float(np.sqrt((s[3:] ** 2).sum()) / np.linalg.norm(L)), als.stop_reason]
B = np.repeat(rng.normal(size=(4, 6)) * 5, 30, axis=0) + rng.normal(size=(120, 6))
qk = sparsekit.QuicKMeans(4, factorizer="als", max_iter=5, random_state=0).fit(B)
out["als_clusters"] = [np.unique(r).tolist() for r in qk.labels_.reshape(4, 30)]

X2 = rng.normal(size=(60, 2)); t = np.where(X2[:, 0] > 0, 1.0, -1.0)
row = run_task("kernel-alignment", data={"X": X2, "y": (t > 0).astype(int)},
               components={"kernel": {"name": "rbf", "gamma": 0.5}})
Kr = rbf_kernel(X2, gamma=0.5)
out["alignment"] = [row["alignment"], float(np.sum(Kr * np.outer(t, t))
                    / (np.linalg.norm(Kr) * np.linalg.norm(np.outer(t, t))))]
H = np.eye(60) - 1 / 60
Kc = H @ Kr @ H
row = run_task("kernel-alignment", {"center": True}, data={"X": X2, "y": t},
               components={"kernel": {"name": "rbf", "gamma": 0.5}})
out["centred"] = [row["alignment"], float(t @ Kc @ t / (60 * np.linalg.norm(Kc)))]
out["tasks"] = [[i.name, i.plugin] for i in sparsekit.default_registry().list("task")
                if i.name == "kernel-alignment"]
caught.__exit__(None, None, None)
out["warnings"] = [f"{w.category.__name__}: {w.message}" for w in record]
print(json.dumps(out))
"""


def test_page_package_installs_and_every_component_works_by_name(page_site):
    run = _run(["-c", USE_BY_NAME], page_site)
    assert run.returncode == 0, run.stderr
    assert "Warning" not in run.stderr, run.stderr  # no conflict with another copy, no skip
    out = json.loads(run.stdout)
    assert pathlib.Path(out["module"]).is_relative_to(page_site)  # the page's copy was used
    assert out["components"] == [
        ["factorizer", "als", ["alternating-least-squares"]],
        ["kernel", "rational-quadratic", ["rq"]],
        ["projection", "band", ["banded"]],
        ["sampler", "kmeans-pp", ["d2"]],
        ["solver", "fista", ["lasso"]],
    ]
    assert out["kernel_err"] < 1e-12
    assert out["clusters"] == [0, 1, 2, 3] and out["weights"] == [1.0] * 4
    assert out["lasso_err"] < 1e-6
    # support: the non-zero atoms, largest first, one row per non-zero (a 1-D y: one column)
    assert sorted(out["support"]) == out["nonzero"] and out["stop"] == "tol"
    assert out["band_err"] < 1e-15
    assert out["band_outside"] == 0.0 and out["palm_err"] < 0.1
    # the factorizer reaches the best rank-3 error (Eckart–Young) and refits QuicK-means'
    # factors: one cluster per well-separated blob
    assert out["als"][0] == pytest.approx(out["als"][1], rel=1e-9) and out["als"][2] == "tol"
    assert sorted(c for (c,) in out["als_clusters"]) == [0, 1, 2, 3]
    assert out["alignment"][0] == pytest.approx(out["alignment"][1], rel=1e-12)
    assert out["centred"][0] == pytest.approx(out["centred"][1], rel=1e-10)
    # the task comes from the plugin's sparsekit_tasks hook
    assert out["tasks"] == [["kernel-alignment", "example-plugin"]]
    assert out["warnings"] == []


def test_page_spec_runs_the_plugin_task(page_site, tmp_path):
    spec = tmp_path / "alignment.toml"
    spec.write_text(page_spec())
    run = _run(
        [
            "-W",
            "always::DeprecationWarning",
            "-m",
            "sparsekit",
            "run",
            str(spec),
            "--out",
            str(tmp_path / "out"),
        ],
        page_site,
    )
    assert run.returncode == 0, run.stderr
    assert "Warning" not in run.stderr, run.stderr  # no deprecated path, shown or not
    rows = [
        json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    ]
    assert len(rows) == 2 and all(-1 <= r["alignment"] <= 1 for r in rows), rows
