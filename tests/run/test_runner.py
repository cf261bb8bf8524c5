"""``sparsekit run``: the example specs at a small size, output, resume, data sources (their
defaults against scikit-learn and closed forms), plots, plugins."""

import csv
import importlib
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import sparsekit.run as run_pkg
from sparsekit.cli import main
from sparsekit.run import (
    SpecError,
    Task,
    data as data_mod,
    execute_point,
    load_spec,
    run_spec,
)

SPECS = Path(__file__).resolve().parents[2] / "examples" / "specs"

#: --set overrides that make each example spec small
SMALL = {
    "nystrom_samplers": [
        "data.n_samples=400",
        "data.n_features=5",
        "repeat=1",
        'sampler.name=["uniform", "dac-rls"]',
        "params.n_components=[10, 30]",
        "params.n_eval=200",
    ],
    "frank_wolfe_recovery": [
        "data.n_features=40",
        "data.n_atoms=60",
        "params.n_dictionaries=1",
        "params.n_signals=3",
        "params.max_iter=40",
    ],
    "sparse_coding": [
        "data.n_features=32",
        "data.n_atoms=48",
        "data.n_nonzero=[2]",
        "data.n_signals=5",
        "params.warm_up=false",
    ],
    "kernel_kmeans": [
        "data.n_samples=120",
        "repeat=1",
        "params.n_landmarks=20",
        'sampler.name="uniform"',
    ],
    "three_sample_gaussians": ["params.n=[[20]]", "params.n_repetitions=2"],
    "three_sample_digits": ["params.n=[[20]]", "params.n_repetitions=2"],
    "three_sample_graphs": ["params.n=[[8]]", "params.n_repetitions=2"],
    "mmd": ['params.method=["exact", "nystrom"]', "params.n_landmarks=20"],
    "quickmeans": [
        "data.n_samples=[120, 120, 200]",
        "params.n_clusters=4",
        "params.max_iter=2",
        "params.palm_iter=5",
        "params.n_eval=60",
    ],
    "label_cost": [
        "data.n_samples=120",
        "repeat=2",
        'sampler.name=["uniform", "dac-rls"]',
        "params.budgets=[[0.1, 0.5]]",
    ],
    "nystrom_classifier": [
        "data.n_samples=150",
        'params.landmarks=[["uniform", "kmeans"]]',
        "params.n_components=8",
    ],
    "palm4msa": ["data.n=[8]", "params.n_factors=[3]", "solver.n_iter=20"],
    "kernel_ridge": [
        "data.n_samples=200",
        "repeat=1",
        'sampler.name=["uniform", "kmeans-pp"]',
        "params.n_components=[10, 20]",
    ],
    "out_of_sample": [
        "data.n_samples=200",
        'params.method=["mds", "lle"]',
        "params.proportion=[0.1]",
        "params.n_train=60",
        "params.n_probe=2",
        "params.n_repetitions=1",
    ],
    "omp_forest": [
        'data.source=["diabetes"]',
        "repeat=1",
        "params.n_estimators=[10]",
        "params.sizes=[[2, 5]]",
    ],
    # random convolutions (no pretraining), one pass, one model of each kind
    "nn_nystrom_parameters": [
        'data.source=["digits"]',
        "data.n_samples=80",
        "params.n_repeats=1",
        "params.pretrain_epochs=0",
        "params.epochs=1",
        "params.widths=[[2]]",
        "params.n_landmarks=[[3]]",
        'params.kernels=[["rbf"]]',
        "params.adaptive=[[true]]",
    ],
    "nn_few_shot": [
        'data.source=["digits"]',
        "data.n_samples=80",
        "params.n_repeats=1",
        "params.pretrain_epochs=0",
        "params.epochs=1",
        "params.n_per_class=[[2]]",
        "params.width=2",
        "params.n_landmarks=3",
        'params.kernels=[["linear"]]',
    ],
    # no fine-tuning epoch: one compiled network (the base one)
    "nn_compress": [
        "data.n_samples=120",
        "params.n_factors=[2]",
        "params.sparsity=[2]",
        "params.epochs=1",
        "params.finetune_epochs=0",
        "params.select_lr=false",
        "params.palm_iter=5",
    ],
}


def _rows(out):
    with open(Path(out) / "results.jsonl") as fh:
        return [json.loads(line) for line in fh]


def test_every_example_spec_has_a_small_run():
    assert {p.stem for p in SPECS.glob("*.toml")} == set(SMALL)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_example_spec_runs_small(name, tmp_path, capsys):
    args = ["run", str(SPECS / f"{name}.toml"), "--out", str(tmp_path)]
    for item in SMALL[name]:
        args += ["--set", item]
    assert main(args) == 0, capsys.readouterr()
    rows = _rows(tmp_path)
    assert rows and all(r["status"] == "ok" for r in rows)
    spec = load_spec(SPECS / f"{name}.toml", overrides=SMALL[name])
    runs = __import__("sparsekit.run", fromlist=["plan"]).plan(spec)
    assert {r["run_id"] for r in rows} == {r["run_id"] for r in runs}
    assert len(rows) == sum(r.get("n_rows", 1) for r in rows if r.get("row", 0) == 0)
    # a task's declared metrics hold every column its rows report (a [[plot]] is checked
    # against them when the spec loads)
    from sparsekit.run import get_task
    from sparsekit.run.spec import ROW_COLUMNS

    declared = get_task(spec.task).metrics
    if declared is not None:
        reported = {c for r in rows for c in r if "." not in c} - set(ROW_COLUMNS)
        assert reported <= set(declared), reported - set(declared)
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["sparsekit"] and meta["threads"] >= 1
    assert json.loads((tmp_path / "spec.json").read_text())["task"] == spec.task
    with open(tmp_path / "results.csv") as fh:
        assert len(list(csv.DictReader(fh))) == len(rows)
    printed = capsys.readouterr().out
    assert "results:" in printed
    if (
        name
        in (
            "nystrom_samplers",
            "frank_wolfe_recovery",
            "sparse_coding",
            "out_of_sample",
            "quickmeans",
            "label_cost",
            "nystrom_classifier",
        )
        or "three" in name
    ):
        assert "plot: " in printed and list(tmp_path.glob("*.png"))


def test_metric_values_are_right(tmp_path):
    """Exact values where they are known: OMP recovers m-sparse supports on an incoherent
    dictionary, the Nyström error vanishes when every point is a landmark, exact MMD has Δ = 0."""
    point = {
        "data": {
            "source": "sparse-signals",
            "n_features": 64,
            "n_atoms": 80,
            "n_nonzero": 2,
            "n_signals": 10,
        },
        "solver": {"name": "omp"},
        "params": {},
    }
    res = execute_point("sparse-coding", point, seed=0)
    assert res["support_recovery"] == 1.0 and res["max_rel_residual"] < 1e-10
    point = {
        "data": {"source": "blobs", "n_samples": 40},
        "kernel": {"name": "rbf", "gamma": 0.1},
        "sampler": {"name": "uniform"},
        "params": {"n_components": 40},
    }
    res = execute_point("nystrom", point, seed=0)
    assert res["rel_error_fro"] < 1e-6 and res["ridge_accuracy"] >= 0.9
    point = {
        "data": {"source": "blobs", "n_samples": 60},
        "kernel": {"name": "rbf", "gamma": 0.1},
        "params": {"method": "exact"},
    }
    res = execute_point("mmd", point, seed=0)
    from sparsekit.stats import mmd2_biased

    d = data_mod.load(point["data"], seed=0)
    X, y = d["X"], d["y"]
    ref = mmd2_biased(X[y == 0], X[y == 1], "rbf", kernel_params={"gamma": 0.1})
    assert res["mmd2"] == pytest.approx(ref, rel=1e-12) and res["delta_exact"] == 0.0


SMALL_SPEC = """\
task = "nystrom"
[data]
source = "blobs"
n_samples = 60
[kernel]
name = "rbf"
gamma = 0.5
[params]
n_components = [5, 10]
n_eval = 60
"""


def test_resume_skips_finished_rows(tmp_path, monkeypatch):
    spec = load_spec("s.toml", text=SMALL_SPEC)
    calls = []
    import sparsekit.run.runner as runner

    real = runner.execute_point
    monkeypatch.setattr(runner, "execute_point", lambda *a, **k: calls.append(a) or real(*a, **k))
    run_spec(spec, out=tmp_path)
    assert len(calls) == 2
    first = _rows(tmp_path)
    # a crash after the first row: keep only it, plus a line cut in the middle
    (tmp_path / "results.jsonl").write_text(json.dumps(first[0]) + '\n{"run_id": "ab')
    run_spec(spec, out=tmp_path)
    assert len(calls) == 3
    rows = [r for r in _rows_tolerant(tmp_path)]
    assert sorted(r["run_id"] for r in rows) == sorted(r["run_id"] for r in first)
    run_spec(spec, out=tmp_path)
    assert len(calls) == 3  # nothing left to run


def _rows_tolerant(out):
    rows = []
    for line in (Path(out) / "results.jsonl").read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return rows


def test_a_task_may_return_several_rows_and_resume_keeps_them_whole(tmp_path, private_registry):
    """A task returning a list gives one row per item (same run id, ``row``/``n_rows``); a run
    whose rows were cut by a crash runs again, a complete one does not."""
    calls = []

    def several(ctx):
        calls.append(ctx.params["k"])
        return [
            {"k": ctx.params["k"], "part": i, "value": ctx.params["k"] * 10 + i} for i in range(3)
        ]

    reg = private_registry(Task("several-rows", several, {"k": 0}))
    spec = load_spec(
        "m.toml",
        text='task = "several-rows"\n[data]\nsource = "iris"\n[params]\nk = [1, 2]\n',
        registry=reg,
    )
    run_spec(spec, out=tmp_path, registry=reg)
    rows = _rows(tmp_path)
    assert [(r["params.k"], r["row"], r["n_rows"], r["value"]) for r in rows] == [
        (k, i, 3, k * 10 + i) for k in (1, 2) for i in range(3)
    ]
    assert len({r["run_id"] for r in rows}) == 2 and calls == [1, 2]
    with open(tmp_path / "results.csv") as fh:
        assert [int(r["value"]) for r in csv.DictReader(fh)] == [10, 11, 12, 20, 21, 22]
    # a crash in the middle of the second run's rows: its first row and half a line remain
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    (tmp_path / "results.jsonl").write_text("\n".join(lines[:4]) + "\n" + lines[4][:20])
    run_spec(spec, out=tmp_path, registry=reg)
    assert calls == [1, 2, 2]
    rows = _rows(tmp_path)
    assert sorted((r["params.k"], r["row"]) for r in rows) == [
        (k, i) for k in (1, 2) for i in range(3)
    ]
    run_spec(spec, out=tmp_path, registry=reg)
    assert calls == [1, 2, 2]  # nothing left to run


def test_results_jsonl_is_strict_json_with_nan_and_inf_as_null(tmp_path, private_registry):
    """Standard JSON has no NaN or Infinity: strict readers (jq, JavaScript) reject Python's
    ``NaN`` token, so non-finite metrics are written as ``null``; the CSV keeps them."""

    def non_finite(ctx):
        return {
            "missing": float("nan"),
            "big": np.float64(np.inf),
            "curve": [1.0, float("nan")],
            "value": 2.5,
        }

    reg = private_registry(Task("non-finite", non_finite, {}))
    text = 'task = "non-finite"\n[data]\nsource = "iris"\n'
    spec = load_spec("m.toml", text=text, registry=reg)
    run_spec(spec, out=tmp_path, registry=reg)

    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    line = (tmp_path / "results.jsonl").read_text().splitlines()[0]
    row = json.loads(line, parse_constant=refuse)
    assert row["missing"] is None and row["big"] is None and row["curve"] == [1.0, None]
    assert row["value"] == 2.5
    with open(tmp_path / "results.csv") as fh:
        cells = next(csv.DictReader(fh))
    assert cells["missing"] == "nan" and cells["big"] == "inf"


def test_repeat_and_seed_options(tmp_path, capsys):
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(SMALL_SPEC)
    assert main(["run", str(spec_file), "--dry-run", "--repeat", "3", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "2 grid point(s) x 3 repeat(s) = 6 run(s)" in out
    assert "seed=5" in out and "seed=7" in out and "seed=8" not in out
    assert not list(tmp_path.glob("runs"))


def test_sweep_limit_needs_yes(tmp_path, capsys):
    spec_file = tmp_path / "s.toml"
    spec_file.write_text("max_runs = 3\n" + SMALL_SPEC.replace("[5, 10]", "[2, 3, 4, 5]"))
    assert main(["run", str(spec_file), "--out", str(tmp_path / "o")]) == 2
    assert "4 runs, more than the limit of 3; pass --yes" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    assert main(["run", str(spec_file), "--out", str(tmp_path / "o"), "--yes"]) == 0
    assert len(_rows(tmp_path / "o")) == 4


def test_cli_error_names_line(tmp_path, capsys):
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(SMALL_SPEC.replace("gamma", "gamme"))
    assert main(["run", str(spec_file)]) == 2
    err = capsys.readouterr().err
    assert "line 7" in err and "Did you mean 'gamma'" in err


def test_failed_run_is_a_row_and_exit_code(tmp_path, capsys):
    np.save(tmp_path / "one-d.npy", np.arange(5.0))  # readable, so it fails only when run
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(
        SMALL_SPEC.replace(
            'source = "blobs"\nn_samples = 60',
            f'source = "file"\npath = "{tmp_path / "one-d.npy"}"',
        )
    )
    assert main(["run", str(spec_file), "--out", str(tmp_path / "o")]) == 1
    rows = _rows(tmp_path / "o")
    assert rows[0]["status"] == "error" and "2-D numeric array" in rows[0]["error"]


def test_file_sources(tmp_path, rng):
    X = rng.standard_normal((20, 3))
    y = np.arange(20) % 2
    np.save(tmp_path / "x.npy", X)
    np.savez(tmp_path / "xy.npz", X=X, y=y)
    with open(tmp_path / "x.csv", "w") as fh:
        fh.write("a,b,c,label\n")
        for row, lab in zip(X, y):
            fh.write(",".join(repr(float(v)) for v in row) + f",{lab}\n")
    np.testing.assert_array_equal(data_mod.file(tmp_path / "x.npy")["X"], X)
    d = data_mod.file(tmp_path / "xy.npz")
    np.testing.assert_array_equal(d["y"], y)
    d = data_mod.file(tmp_path / "x.csv", target="label")
    np.testing.assert_allclose(d["X"], X)
    np.testing.assert_array_equal(d["y"], y)
    import pandas as pd

    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y)
    frame.to_parquet(tmp_path / "x.parquet")
    np.testing.assert_allclose(data_mod.file(tmp_path / "x.parquet", target="label")["X"], X)
    np.save(tmp_path / "bad.npy", np.arange(5.0))
    with pytest.raises(ValueError, match="2-D numeric array"):
        data_mod.file(tmp_path / "bad.npy")
    with pytest.raises(ValueError, match="no column 'lab'"):
        data_mod.file(tmp_path / "x.csv", target="lab")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        data_mod.file(tmp_path / "nope.npy")


def test_graph_folder_and_pickle_needs_permission(tmp_path):
    import pickle

    import networkx as nx

    folder = tmp_path / "g"
    folder.mkdir()
    for i, g in enumerate([nx.path_graph(4), nx.cycle_graph(5)]):
        nx.write_edgelist(g, folder / f"{i}.edgelist", data=False)
    (folder / "labels.txt").write_text("0\n1\n")
    d = data_mod.graphs(folder)
    assert [g.number_of_edges() for g in d["graphs"]] == [3, 5] and list(d["y"]) == [0, 1]
    with open(tmp_path / "g.pkl", "wb") as fh:
        pickle.dump([nx.path_graph(3)], fh)
    with pytest.raises(PermissionError, match="--allow-pickle"):
        data_mod.load({"source": "graphs", "path": str(tmp_path / "g.pkl")})
    d = data_mod.load({"source": "graphs", "path": str(tmp_path / "g.pkl")}, allow_pickle=True)
    assert d["graphs"][0].number_of_edges() == 2


def test_generated_sources():
    d = data_mod.rings(n_samples=200, n_rings=3, noise=0.0, seed=1)
    r = np.linalg.norm(d["X"], axis=1)
    np.testing.assert_allclose(r, d["y"] + 1.0)
    d = data_mod.gaussian_mixture(n_samples=300, n_features=4, n_clusters=3, seed=2)
    from sparsekit.run.data import generated_dataset

    np.testing.assert_array_equal(d["X"], generated_dataset(300, 4, 3, random_state=2))
    # the labels are the mixture's components: within-component spread < between
    centers = np.array([d["X"][d["y"] == k].mean(0) for k in range(3)])
    assert np.linalg.norm(d["X"] - centers[d["y"]], axis=1).mean() < 1.0
    d = data_mod.sparse_signals(16, 20, 3, 4, seed=0)
    np.testing.assert_allclose(d["D"] @ d["coef"], d["Y"])
    assert (np.count_nonzero(d["coef"], axis=0) == 3).all()


def test_plugin_task_runs_by_name(tmp_path, private_registry):
    def run(ctx):
        (X,) = ctx.need("X")
        return {"scaled_mean": float(ctx.params["scale"] * X.mean())}

    reg = private_registry(Task("test-mean", run, params={"scale": 1.0}))
    spec = load_spec(
        "s.toml",
        text='task = "test-mean"\n[data]\nsource = "iris"\n[params]\nscale = [1.0, 2.0]\n',
        registry=reg,
    )
    run_spec(spec, out=tmp_path, registry=reg)
    from sklearn.datasets import load_iris

    mean = load_iris().data.mean()
    assert [r["scaled_mean"] for r in _rows(tmp_path)] == pytest.approx([mean, 2 * mean])
    with pytest.raises(Exception, match="has no parameter 'scal'"):
        load_spec(
            "s.toml",
            text='task = "test-mean"\n[data]\nsource = "iris"\n[params]\nscal = 1\n',
            registry=reg,
        )


def test_plots_named_in_the_spec(tmp_path, capsys):
    text = SMALL_SPEC + '[[plot]]\nx = "params.n_components"\ny = "error_fro"\nfile = "e.png"\n'
    run_spec(load_spec("s.toml", text=text), out=tmp_path)
    assert (tmp_path / "e.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    typo = '[[plot]]\nx = "params.n_components"\ny = "eror_fro"\n'
    with pytest.raises(SpecError, match="y = 'eror_fro' is not a column.* 'error_fro'"):
        load_spec("s.toml", text=text + typo)  # at load, not after the sweep

    with pytest.raises(SpecError, match=r"line 14: unknown key 'colour' in \[\[plot\]\]"):
        load_spec("s.toml", text=SMALL_SPEC + '[[plot]]\nx = "a"\ny = "b"\ncolour = "red"\n')
    with pytest.raises(SpecError, match="plain file name ending in .png"):
        load_spec("s.toml", text=SMALL_SPEC + '[[plot]]\nx = "a"\ny = "b"\nfile = "../x.png"\n')


def test_graph_collection_through_a_task(tmp_path):
    """Sparse and dense random graphs from a folder of edge lists: kernel k-means with the
    shortest-path kernel separates them exactly."""
    import networkx as nx

    for i in range(16):
        g = nx.gnp_random_graph(8, 0.2 + 0.5 * (i % 2), seed=i)
        nx.write_edgelist(g, tmp_path / f"{i:02d}.edgelist", data=False)
    (tmp_path / "labels.txt").write_text("\n".join(str(i % 2) for i in range(16)))
    point = {
        "data": {"source": "graphs", "path": str(tmp_path)},
        "kernel": {"name": "shortest-path", "with_labels": False},
        "sampler": {"name": "uniform"},
        "params": {"n_clusters": 2, "method": "exact"},
    }
    res = execute_point("kernel-kmeans", point, seed=0)
    assert res["ari"] == 1.0 and res["method"] == "exact"


def test_lazy_public_name_is_bound_in_the_package_after_first_use():
    value = run_pkg.load_spec
    assert vars(run_pkg)["load_spec"] is value
    assert value is importlib.import_module("sparsekit.run.spec").load_spec


def test_rings_radii_noise_and_angles_follow_the_documented_law():
    """Ring k has radius k + 1 plus N(0, noise²) noise (default 0.05) and a uniform angle."""
    points = data_mod.rings(n_samples=2000, n_rings=3, seed=4)
    X, y = points["X"], points["y"]
    assert np.bincount(y).tolist() == [667, 667, 666]
    deviation = np.hypot(X[:, 0], X[:, 1]) - (y + 1.0)
    assert abs(deviation.mean()) < 0.01 and deviation.std() == pytest.approx(0.05, rel=0.1)
    angle = np.mod(np.arctan2(X[:, 1], X[:, 0]), 2 * np.pi)
    assert stats.kstest(angle, stats.uniform(0, 2 * np.pi).cdf).pvalue > 1e-3


def test_circles_default_is_scikit_learn_make_circles():
    from sklearn.datasets import make_circles

    X, y = make_circles(1000, factor=0.3, noise=0.04, random_state=0)
    points = data_mod.circles()
    np.testing.assert_array_equal(points["X"], X)
    np.testing.assert_array_equal(points["y"], y)


def test_random_labelled_graphs_default_draws_five_labels():
    graphs = data_mod.random_labelled_graphs(20)
    labels = np.concatenate([lab for _, lab in graphs])
    assert set(labels.tolist()) == {0, 1, 2, 3, 4}
    source = data_mod.random_graphs(n_graphs=20)["graphs"]  # the source's documented defaults
    for (A, lab), (B, lab2) in zip(graphs, source):
        np.testing.assert_array_equal(A, B)
        np.testing.assert_array_equal(lab, lab2)


def test_numpy_float32_metrics_are_strict_json(tmp_path, private_registry):
    """NumPy scalars that are not Python floats (float32, float16) are written as numbers,
    their NaN and infinities as ``null``."""

    def scalars(ctx):
        return {
            "value": np.float32(0.5),
            "missing": np.float32("nan"),
            "big": np.float16("inf"),
        }

    reg = private_registry(Task("test-float32", scalars, {}))
    spec = load_spec(
        "m.toml", text='task = "test-float32"\n[data]\nsource = "iris"\n', registry=reg
    )
    run_spec(spec, out=tmp_path, registry=reg)
    line = (tmp_path / "results.jsonl").read_text().splitlines()[0]
    row = json.loads(line, parse_constant=lambda token: pytest.fail(token))
    assert row["value"] == 0.5 and row["missing"] is None and row["big"] is None


def test_plot_has_one_legend_entry_per_group_titled_by_the_group(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sparsekit.run.plots import draw

    figures = []
    close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: (figures.append(fig), close(fig)))
    rows = [
        {"status": "ok", "n": n, "err": n * s, "sampler": name}
        for name, s in (("uniform", 1.0), ("rls", 0.5))
        for n in (1, 2, 3)
    ]
    path = draw({"x": "n", "y": "err", "group": "sampler"}, rows, tmp_path)
    assert path.read_bytes()[:4] == b"\x89PNG"
    (fig,) = figures
    legend = fig.axes[0].get_legend()
    assert legend is not None and legend.get_title().get_text() == "sampler"
    assert [t.get_text() for t in legend.get_texts()] == ["uniform", "rls"]
    lines = fig.axes[0].get_lines()
    np.testing.assert_allclose(lines[1].get_ydata(), [0.5, 1.0, 1.5])
