"""Value tests for ``sparsekit.run`` rules that the other run tests leave unchecked: data-source
defaults against scikit-learn and closed forms, the omp-forest task against scikit-learn's
forests, the sparse-coding protocol, spec validation, dry-run output, plots, and strict JSON of
NumPy scalars."""

import importlib
import io
import json

import numpy as np
import pytest
from scipy import stats

import sparsekit.run as run_pkg
from sparsekit.run import (
    Spec,
    SpecError,
    Task,
    data as data_mod,
    dry_run,
    load_spec,
    plan,
    run_spec,
    run_task,
)

# ---------------------------------------------------------------- the package's lazy names


def test_lazy_public_name_is_bound_in_the_package_after_first_use():
    value = run_pkg.load_spec
    assert vars(run_pkg)["load_spec"] is value
    assert value is importlib.import_module("sparsekit.run.spec").load_spec


# ---------------------------------------------------------------- data sources


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


# ---------------------------------------------------------------- tasks


def test_task_names_the_missing_data_key():
    X = np.ones((10, 2))
    with pytest.raises(ValueError, match="needs data with y; the data source gave X"):
        run_task("omp-forest", {}, {"X": X})


def test_gram_task_memory_error_names_its_matrices(monkeypatch):
    from sparsekit._runtime import memory as _memory

    monkeypatch.setattr(_memory, "available_memory", lambda *a, **k: 1000)
    X = np.random.default_rng(0).random((40, 3))
    with pytest.raises(MemoryError, match="gram task on 40 samples needs .* its n x n matrices"):
        run_task("gram", {}, {"X": X}, {"kernel": "linear"})


def _sklearn_forest_score(X, y, problem, n_estimators, seed):
    """The omp-forest protocol's full-forest test score, with scikit-learn alone."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.metrics import accuracy_score, r2_score
    from sklearn.model_selection import train_test_split

    strat = problem == "classification"
    X_rest, X_test, y_rest, y_test = train_test_split(
        X, y, test_size=0.2, random_state=seed, stratify=y if strat else None
    )
    X_train, _, y_train, _ = train_test_split(
        X_rest, y_rest, test_size=0.25, random_state=seed, stratify=y_rest if strat else None
    )
    Forest = RandomForestClassifier if strat else RandomForestRegressor
    forest = Forest(n_estimators=n_estimators, random_state=seed).fit(X_train, y_train)
    return (accuracy_score if strat else r2_score)(y_test, forest.predict(X_test))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_omp_forest_problem_picks_the_forest_and_the_score():
    """Integer targets are classification under ``auto`` (accuracy of a classifier forest on a
    stratified split); ``problem`` forces either kind."""
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    params = {"n_estimators": 6, "sizes": [2]}
    expected = {
        kind: _sklearn_forest_score(X, y, kind, 6, seed=3)
        for kind in ("classification", "regression")
    }
    assert expected["classification"] != expected["regression"]
    for problem, kind in [
        ("auto", "classification"),
        ("classification", "classification"),
        ("regression", "regression"),
    ]:
        row = run_task("omp-forest", {**params, "problem": problem}, {"X": X, "y": y}, seed=3)
        assert row["full_forest"] == pytest.approx(expected[kind], rel=1e-12), problem
    y_float = y.astype(float)  # float targets under auto: regression
    row = run_task("omp-forest", params, {"X": X, "y": y_float}, seed=3)
    assert row["full_forest"] == pytest.approx(expected["regression"], rel=1e-12)


def test_omp_forest_refuses_a_forest_size_below_one():
    X, y = np.random.default_rng(0).random((40, 3)), np.arange(40) % 2
    with pytest.raises(ValueError, match="sizes must be forest sizes >= 1, got \\[0, 2\\]"):
        run_task("omp-forest", {"sizes": [0, 2]}, {"X": X, "y": y})


def test_sparse_coding_omp_stops_at_the_signal_sparsity_unless_max_iter_says():
    problem = data_mod.sparse_signals(32, 48, 3, 5, seed=1)
    m = np.count_nonzero(problem["coef"][:, 0])
    assert m == 3
    row = run_task("sparse-coding", {"warm_up": False}, problem, {"solver": {"name": "omp"}})
    assert row["mean_nnz"] == m and row["support_recovery"] == 1.0
    assert row["max_rel_residual"] < 1e-10
    two = run_task(
        "sparse-coding", {"warm_up": False, "max_iter": 2}, problem, {"solver": {"name": "omp"}}
    )
    assert two["mean_nnz"] == 2 and two["median_rel_residual"] > 1e-3


# ---------------------------------------------------------------- specs, plan, dry run

GRAM = 'task = "gram"\n[data]\nsource = "iris"\n[params]\n'


def test_zip_group_needs_two_keys():
    base = GRAM + "n_eig = [5, 10]\nwarm_up = [true, false]\n[sweep]\n"
    load_spec("s.toml", text=base + 'zip = ["params.n_eig", "params.warm_up"]\n')
    for zip_value in (
        '["params.n_eig"]',
        '[["params.n_eig"]]',
        '[["params.n_eig", "params.warm_up"], 3]',
    ):
        with pytest.raises(SpecError, match="each zip group is a list of at least two"):
            load_spec("s.toml", text=base + f"zip = {zip_value}\n")


def test_spec_built_in_python_runs_each_point_once():
    spec = Spec(
        name="s", task="gram", sections={"data": {"source": "iris"}, "params": {"n_eig": [5, 9]}}
    )
    runs = plan(spec)
    assert [(r["point"]["params"]["n_eig"], r["repeat"], r["seed"]) for r in runs] == [
        (5, 0, 0),
        (9, 0, 0),
    ]


def test_dry_run_lists_the_varying_keys_of_each_point():
    stream = io.StringIO()
    dry_run(load_spec("s.toml", text=GRAM + "n_eig = [5, 10]\n"), stream=stream)
    lines = stream.getvalue().splitlines()
    assert lines[1].endswith("seed=0 params.n_eig=5") and lines[2].endswith("params.n_eig=10")
    stream = io.StringIO()
    dry_run(load_spec("s.toml", text=GRAM + "n_eig = 5\n"), stream=stream)
    assert stream.getvalue().splitlines()[1].endswith("seed=0 (single point)")


# ---------------------------------------------------------------- result files and plots


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


# ---------------------------------------------------------------- metrics reported by tasks


def _rbf(A, B, gamma):
    from scipy.spatial.distance import cdist

    return np.exp(-gamma * cdist(A, B, "sqeuclidean"))


def test_sampler_task_relative_residual_trace_is_the_nystrom_residual():
    """rel_residual_trace = tr(K − K_nm K_mm⁺ K_mn) / tr(K) over all points (n ≤ n_eval), for
    the landmarks the same sampler draws with the run's seed."""
    from sparsekit import Nystroem, get_kernel

    X = np.random.default_rng(2).standard_normal((120, 3))
    kernel = {"name": "rbf", "gamma": 0.7}
    row = run_task(
        "sampler",
        {"n_landmarks": 12, "n_eval": 1000, "warm_up": False},
        {"X": X},
        {"kernel": kernel, "sampler": "uniform"},
        seed=5,
    )
    ny = Nystroem(
        get_kernel("rbf", gamma=0.7), sampler="uniform", n_components=12, random_state=5
    ).fit(X)
    idx = np.asarray(ny.component_indices_)
    assert row["n_landmarks"] == len(idx) == len(set(idx.tolist())) == 12
    K = _rbf(X, X, 0.7)
    K_hat = K[:, idx] @ np.linalg.pinv(K[np.ix_(idx, idx)]) @ K[idx, :]
    expected = np.trace(K - K_hat) / np.trace(K)
    assert 0.0 < expected < 1.0
    assert row["rel_residual_trace"] == pytest.approx(expected, rel=1e-6)
    every = run_task(
        "sampler",
        {"n_landmarks": 120, "n_eval": 1000, "warm_up": False},
        {"X": X},
        {"kernel": kernel, "sampler": "uniform"},
    )
    assert abs(every["rel_residual_trace"]) < 1e-8  # all points as landmarks: K̂ = K


def test_mmd_task_delta_exact_is_the_estimate_minus_the_biased_mmd():
    """delta_exact = estimate − biased MMD²: negative for the unbiased estimate (it drops the
    k(x, x) = 1 terms of the RBF kernel), zero for the exact one; absent above exact_max_n."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    A, B = X[y == 0], X[y == 1]
    Kaa, Kbb, Kab = _rbf(A, A, 0.1), _rbf(B, B, 0.1), _rbf(A, B, 0.1)
    m, n = len(A), len(B)
    biased = Kaa.mean() + Kbb.mean() - 2 * Kab.mean()
    unbiased = (Kaa.sum() - m) / (m * (m - 1)) + (Kbb.sum() - n) / (n * (n - 1)) - 2 * Kab.mean()
    kernel = {"kernel": {"name": "rbf", "gamma": 0.1}}
    row = run_task("mmd", {"method": "unbiased"}, {"X": X, "y": y}, kernel)
    assert row["mmd2"] == pytest.approx(unbiased, rel=1e-10)
    assert row["delta_exact"] == pytest.approx(unbiased - biased, rel=1e-8)
    assert row["delta_exact"] < 0
    small = run_task("mmd", {"method": "unbiased", "exact_max_n": 99}, {"X": X, "y": y}, kernel)
    assert "delta_exact" not in small
    at_n = run_task("mmd", {"method": "unbiased", "exact_max_n": 100}, {"X": X, "y": y}, kernel)
    assert at_n["delta_exact"] == pytest.approx(unbiased - biased, rel=1e-8)


def test_sparse_coding_protocol_gives_frank_wolfe_its_radius_and_mp_four_m_steps(monkeypatch):
    """Frank–Wolfe gets beta = beta_factor · ‖x*‖₁ per signal and 100 steps, and its codes stay
    in that ℓ1 ball; MP runs 4 m steps (m: the signals' sparsity)."""
    from sparsekit.solvers.fw import FrankWolfe
    from sparsekit.solvers.mp import MatchingPursuit

    seen = {}
    for cls in (FrankWolfe, MatchingPursuit):
        original = cls.solve

        def spy(self, D, Y, *args, _original=original, **kwargs):
            result = _original(self, D, Y, *args, **kwargs)
            seen[type(self).__name__] = (self, result)
            return result

        monkeypatch.setattr(cls, "solve", spy)
    problem = data_mod.sparse_signals(20, 30, 3, 4, seed=2)
    radius = np.abs(problem["coef"]).sum(axis=0)
    run_task(
        "sparse-coding",
        {"warm_up": False, "beta_factor": 0.5},
        problem,
        {"solver": {"name": "frank-wolfe"}},
    )
    fw, result = seen["FrankWolfe"]
    np.testing.assert_allclose(fw.beta, 0.5 * radius, rtol=1e-12)
    assert fw.max_iter == 100
    assert (np.abs(result.coef).sum(axis=0) <= 0.5 * radius * (1 + 1e-9)).all()
    run_task("sparse-coding", {"warm_up": False}, problem, {"solver": {"name": "mp"}})
    assert seen["MatchingPursuit"][0].max_iter == 4 * 3


# ---------------------------------------------------------------- Dask connection errors


def test_local_cluster_without_a_worker_closes_its_client_and_cluster(monkeypatch):
    distributed = pytest.importorskip("distributed")
    from sparsekit.run.runner import connect

    closed = []

    class Cluster:
        def __init__(self, **kwargs):
            pass

        def close(self):
            closed.append("cluster")

    class Client:
        def __init__(self, cluster):
            pass

        def wait_for_workers(self, n, timeout):
            raise TimeoutError("no worker")

        def close(self):
            closed.append("client")

    monkeypatch.setattr(distributed, "LocalCluster", Cluster)
    monkeypatch.setattr(distributed, "Client", Client)
    with pytest.raises(ConnectionError, match="'local:1' has no worker after 0.5 s"):
        connect("local:1", worker_timeout=0.5)
    assert closed == ["client", "cluster"]


def test_scheduler_error_says_whether_the_server_closed_or_was_unreachable(monkeypatch):
    pytest.importorskip("distributed")
    import distributed.comm
    from distributed.comm import CommClosedError

    from sparsekit.run.runner import connect

    for exc, says in [
        (CommClosedError("closed"), "closed the connection during Dask's handshake"),
        (OSError("refused"), "could not reach the Dask scheduler at 'tcp://h:1' within 1 s"),
    ]:

        async def fail(*args, _exc=exc, **kwargs):
            raise _exc

        monkeypatch.setattr(distributed.comm, "connect", fail)
        with pytest.raises(ConnectionError, match=says):
            connect("tcp://h:1", timeout=1)
