"""The tasks as a library (run_task): the code behind `sparsekit demo`, the examples and
`sparsekit run`, with values checked against direct computations."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from sparsekit.run import (
    data as data_mod,
    execute_point,
    load_spec,
    run_spec,
    run_task,
)
from tests.test_examples import _load as _load_example

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SPECS = EXAMPLES / "specs"


def test_gram_task_values_and_dtypes():
    X = np.random.default_rng(0).random((60, 4))
    K = X @ X.T
    row = run_task("gram", {"n_eig": 20}, {"X": X}, {"kernel": {"name": "linear"}})
    assert row["max_asym"] == 0.0
    assert row["median"] == pytest.approx(np.median(K), rel=1e-12)
    assert row["min_eig"] == pytest.approx(np.linalg.eigvalsh(K[:20, :20]).min(), abs=1e-12)
    row32 = run_task(
        "gram", {"n_eig": 20, "dtype": "float32"}, {"X": X}, {"kernel": {"name": "linear"}}
    )
    assert row32["median"] == pytest.approx(np.median(K), rel=1e-5)
    assert row32["median"] != row["median"]  # the float32 Gram matrix was formed
    only = run_task("gram", {"checks": ["median"]}, {"X": X}, {"kernel": {"name": "linear"}})
    assert set(only) == {"time", "median"}
    with pytest.raises(ValueError, match="unknown check 'min_eigs'.*'min_eig'"):
        run_task("gram", {"checks": ["min_eigs"]}, {"X": X})


def test_run_task_checks_parameters_and_takes_built_components():
    with pytest.raises(ValueError, match="has no parameter 'n_eigs'.*'n_eig'"):
        run_task("gram", {"n_eigs": 3}, {"X": np.ones((3, 2))})
    with pytest.raises(ValueError, match="unknown task 'gramm'.*'gram'"):
        run_task("gramm")
    from sparsekit import get_kernel

    X = np.random.default_rng(1).random((30, 3))
    by_name = run_task("gram", {}, {"X": X}, {"kernel": {"name": "rbf", "gamma": 0.3}})
    by_object = run_task("gram", {}, {"X": X}, {"kernel": get_kernel("rbf", gamma=0.3)})
    assert by_name["median"] == by_object["median"]
    name_only = run_task("gram", {}, {"X": X}, {"kernel": "linear"})  # a name alone
    assert name_only["median"] == pytest.approx(np.median(X @ X.T), rel=1e-12)
    with pytest.raises(ValueError, match="'rbff'.*'rbf'"):
        run_task("gram", {}, {"X": X}, {"kernel": "rbff"})


def test_nystrom_task_protocol_parameters():
    """lam reaches the RLS samplers the section leaves without one (not recursive RLS, not a
    section that sets its own); eval_seed fixes the evaluation subset."""
    from sparsekit import Nystroem
    from sparsekit.samplers.rls import DACRLSSampler

    X = 20.0 * data_mod.generated_dataset(n=300, d=3, random_state=0)  # λ = 1/mean‖x‖ far from 1
    kernel = {"name": "rbf", "bandwidth": "mean-sq-dist"}
    params = {
        "n_components": 15,
        "n_eval": 100,
        "lam": "inverse-mean-norm",
        "eval_seed": 7,
        "relative_error": False,
    }
    row = run_task(
        "nystrom", params, {"X": X}, {"kernel": kernel, "sampler": {"name": "dac-rls"}}, seed=3
    )
    assert set(row) == {"n_landmarks", "fit_time", "error_fro"}
    ny = Nystroem(
        "rbf",
        kernel_params={"bandwidth": "mean-sq-dist"},
        sampler=DACRLSSampler(lam="inverse-mean-norm"),
        n_components=15,
        random_state=3,
    ).fit(X)
    assert row["error_fro"] == pytest.approx(
        ny.approximation_error(X, n_eval=100, random_state=7), rel=1e-12
    )
    own = run_task(
        "nystrom",
        params,
        {"X": X},
        {"kernel": kernel, "sampler": {"name": "dac-rls", "lam": 1e-4}},
        seed=3,
    )
    assert own["error_fro"] != row["error_fro"]  # the section's λ wins
    ny1 = Nystroem(
        "rbf",
        kernel_params={"bandwidth": "mean-sq-dist"},
        sampler=DACRLSSampler(lam=1e-4),
        n_components=15,
        random_state=3,
    ).fit(X)
    assert own["error_fro"] == pytest.approx(
        ny1.approximation_error(X, n_eval=100, random_state=7), rel=1e-12
    )


def test_sampler_task_scores_only():
    from sparsekit import get_kernel, get_sampler

    X = data_mod.generated_dataset(n=200, d=3, random_state=1)
    row = run_task(
        "sampler",
        {"n_landmarks": 0, "lam": "inverse-mean-norm"},
        {"X": X},
        {"kernel": {"name": "rbf", "gamma": 0.5}, "sampler": {"name": "rls"}},
    )
    assert set(row) == {"score_time", "sum_scores", "max_score"}
    scores = get_sampler("rls", lam="inverse-mean-norm").scores(X, get_kernel("rbf", gamma=0.5))
    assert row["sum_scores"] == pytest.approx(scores.sum(), rel=1e-10)


def test_out_of_sample_task_is_exact_on_planar_data(rng):
    """Classical MDS of points lying in a plane recovers them up to a rigid motion, and the
    Nyström formula embeds a left-out point exactly (Bengio et al. 2004): d_var = d_oos = 0."""
    P = rng.normal(size=(120, 2))
    X = P @ rng.normal(size=(2, 5))
    row = run_task(
        "out-of-sample",
        {"method": "mds", "proportion": 0.1, "n_train": 60, "n_probe": 5, "n_repetitions": 2},
        {"X": X},
        seed=0,
    )
    assert row["n_differences"] == 10 and len(row["differences"]) == 10
    assert np.abs(row["differences"]).max() < 1e-8
    with pytest.raises(ValueError, match="unknown method 'isomapp'.*'isomap'"):
        run_task("out-of-sample", {"method": "isomapp"}, {"X": X})
    with pytest.raises(ValueError, match="need 132 points"):
        run_task("out-of-sample", {"n_train": 110, "proportion": 0.2}, {"X": X})


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_omp_forest_task_uniform_weights_over_all_trees_is_the_forest():
    """The random baseline with uniform weights, keeping every tree, predicts as the forest."""
    points = data_mod.friedman1(n_samples=300, seed=0)
    row = run_task(
        "omp-forest",
        {"method": "random", "weights": "uniform", "n_estimators": 8, "sizes": [2, 8, 20]},
        points,
        seed=1,
    )
    assert row["scores"][1] == pytest.approx(row["full_forest"], rel=1e-10)
    assert row["scores"][2] is None and row["score"] == row["scores"][1]
    assert row["n_trees"] == 8
    cls = run_task(
        "omp-forest",
        {"method": "omp", "n_estimators": 10, "sizes": [3]},
        data_mod.SOURCES["breast-cancer"](),
        seed=0,
    )
    assert 0.8 < cls["score"] <= 1.0 and cls["n_trees"] == 3  # accuracy: classification


def test_kernel_ridge_task_with_every_sample_a_landmark_is_sklearn_kernel_ridge():
    """n_components = the training size: the task's test MSE is that of scikit-learn's
    KernelRidge(alpha = λ n) on the same split (targets centred on the training mean); class
    labels: the argmax of KernelRidge on one-vs-rest ±1 targets."""
    from sklearn.kernel_ridge import KernelRidge

    lam, gamma, seed = 1e-3, 0.5, 4
    for points in (data_mod.friedman1(n_samples=200, seed=0), data_mod.SOURCES["iris"]()):
        X, y = points["X"], points["y"]
        perm = np.random.default_rng(seed).permutation(len(y))
        n_test = int(round(0.25 * len(y)))
        test, train = perm[:n_test], perm[n_test:]
        row = run_task(
            "kernel-ridge",
            {"n_components": len(train), "alpha": lam, "tol": 1e-12, "max_iter": 1000},
            points,
            {"kernel": {"name": "rbf", "gamma": gamma}},
            seed=seed,
        )
        assert row["n_landmarks"] == len(train)
        ref = KernelRidge(alpha=lam * len(train), kernel="rbf", gamma=gamma)
        if "test_mse" in row:
            offset = y[train].mean()
            pred = ref.fit(X[train], y[train] - offset).predict(X[test]) + offset
            assert row["test_mse"] == pytest.approx(np.mean((pred - y[test]) ** 2), rel=1e-6)
        else:
            classes = np.unique(y)
            targets = np.where(y[train, None] == classes, 1.0, -1.0)
            pred = classes[np.argmax(ref.fit(X[train], targets).predict(X[test]), axis=1)]
            assert row["test_accuracy"] == pytest.approx(np.mean(pred == y[test]))


def test_spec_point_equals_run_task():
    """A spec's grid point and a direct call give the same row (one implementation)."""
    point = {
        "data": {"source": "swiss-roll", "n_samples": 200},
        "params": {"method": "isomap", "proportion": 0.1, "n_train": 80, "n_probe": 3},
    }
    via_spec = execute_point("out-of-sample", point, seed=2)
    direct = run_task("out-of-sample", point["params"], data_mod.swiss_roll(200, seed=2), seed=2)
    assert via_spec["differences"] == direct["differences"]


def test_new_data_sources():
    np.testing.assert_array_equal(
        data_mod.uniform(5, 3, seed=4)["X"], np.random.default_rng(4).random((5, 3))
    )
    graphs = data_mod.random_graphs(n_graphs=3, n_nodes=6, p=0.5, seed=1)["graphs"]
    A, labels = graphs[0]
    assert A.shape == (6, 6) and (A == A.T).all() and not A.diagonal().any()
    assert labels.shape == (6,) and labels.max() < 5
    from sklearn.datasets import load_digits

    digits = data_mod.load({"source": "digits", "scale": 16.0})
    np.testing.assert_array_equal(digits["X"], load_digits().data / 16.0)
    fried = data_mod.load({"source": "friedman1", "n_samples": 50, "seed": 3})
    assert fried["X"].shape == (50, 8)
    roll = data_mod.load({"source": "swiss-roll", "n_samples": 40})
    assert roll["X"].shape == (40, 3)


def test_kernel_kmeans_task_landmarks_and_labels():
    from sklearn.metrics import adjusted_mutual_info_score

    points = data_mod.circles(200, factor=0.3, noise=0.02, seed=0)
    exact = run_task(
        "kernel-kmeans",
        {"method": "exact", "return_labels": True},
        points,
        {"kernel": {"name": "rbf", "gamma": 5.0}},
    )
    assert exact["n_landmarks"] is None and exact["ami"] == 1.0
    assert exact["ami"] == adjusted_mutual_info_score(points["y"], exact["labels"])
    ny = run_task(
        "kernel-kmeans",
        {"method": "nystrom", "n_landmarks": 20},
        points,
        {"kernel": {"name": "rbf", "gamma": 5.0}, "sampler": {"name": "uniform"}},
    )
    assert ny["n_landmarks"] == 20 and "labels" not in ny


def test_palm4msa_task_counts_the_butterfly_non_zeros():
    """The Hadamard matrix of order n = 2^k as k factors with 2 non-zeros per row: 2 n k."""
    row = run_task(
        "palm4msa",
        {"n_factors": 4, "sparsity": 2},
        data_mod.hadamard(n=16),
        {"solver": {"name": "hierarchical-palm4msa", "n_iter": 30}},
    )
    assert row["nnz"] == 2 * 16 * 4 and row["rel_error"] < 1e-10


def test_sparse_coding_takes_a_solver_section_only():
    from sparsekit import get_solver

    problem = data_mod.sparse_signals(16, 24, 2, 3, seed=0)
    with pytest.raises(TypeError, match="builds its solver itself"):
        run_task("sparse-coding", {}, problem, {"solver": get_solver("omp")})
    row = run_task("sparse-coding", {"warm_up": False}, problem, {"solver": {"name": "omp"}})
    assert row["support_recovery"] == 1.0


@pytest.mark.parametrize("name", ["omp", "frank-wolfe"])
def test_sparse_coding_warm_up_solves_the_timed_batch(monkeypatch, name):
    """The untimed warm-up compiles what the timed call runs: OMP's ``precompute="auto"`` takes
    its Gram kernel only for enough signals, so a one-signal warm-up left the compile in the
    timed call (1.4 s for 200 signals on a cold cache instead of 19 ms)."""
    from sparsekit.solvers.fw import FrankWolfe
    from sparsekit.solvers.omp import OMP

    cls = {"omp": OMP, "frank-wolfe": FrankWolfe}[name]
    calls = []
    original = cls.solve

    def spy(self, D, Y, *args, **kwargs):
        calls.append((np.shape(Y), np.shape(getattr(self, "beta", None))))
        return original(self, D, Y, *args, **kwargs)

    monkeypatch.setattr(cls, "solve", spy)
    problem = data_mod.sparse_signals(16, 24, 2, 5, seed=0)
    run_task("sparse-coding", {}, problem, {"solver": {"name": name}})
    assert len(calls) == 2 and calls[0] == calls[1]
    assert calls[1][0] == np.shape(problem["Y"])


def test_three_sample_task_is_the_library_protocol_and_the_example_spec():
    """The three-sample task returns stats.three_sample_error's rows (error renamed
    error_rate) on the same draws; the digits spec and the example compute the same rows;
    classes given as lists of labels pool them."""
    from sparsekit.run.data import SOURCES
    from sparsekit.stats import three_sample_error

    data = SOURCES["graph-pair"](p_x=0.2, p_z=0.5, min_nodes=6, max_nodes=8)
    rows = run_task(
        "three-sample",
        {"methods": ["exact", "block"], "n": [6, 10], "n_repetitions": 2},
        data,
        {"kernel": {"name": "shortest-path", "normalize": True}},
        seed=3,
    )
    ref = three_sample_error(
        data["sample_x"],
        data["sample_z"],
        [6, 10],
        ["exact", "block"],
        n_repetitions=2,
        kernel="shortest-path",
        kernel_params={"normalize": True},
        random_state=3,
    )
    keys = ("method", "n", "error_se", "delta")
    assert [tuple(r[k] for k in keys) + (r["error_rate"],) for r in rows] == [
        tuple(r[k] for k in keys) + (r["error"],) for r in ref
    ]

    spec = load_spec(
        SPECS / "three_sample_digits.toml",
        overrides=[
            "params.n=[[15]]",
            "params.n_repetitions=3",
            'params.methods=[["exact", "nystrom"]]',
        ],
    )
    import tempfile

    with tempfile.TemporaryDirectory() as out:
        run_spec(spec, out=out, stream=open(os.devnull, "w"))
        with open(Path(out) / "results.jsonl") as fh:
            from_spec = [json.loads(line) for line in fh]
    digits = SOURCES["digits"](scale=16.0)
    low, high = digits["X"][digits["y"] <= 4], digits["X"][digits["y"] >= 5]
    ref = three_sample_error(
        lambda n, rng: low[rng.choice(len(low), n, replace=False)],
        lambda n, rng: high[rng.choice(len(high), n, replace=False)],
        [15],
        ["exact", "nystrom"],
        n_repetitions=3,
        kernel="rbf",
        kernel_params={"bandwidth": "mean-sq-dist"},
        random_state=0,
    )
    assert [(r["method"], r["error_rate"], r["delta"]) for r in from_spec] == [
        (r["method"], r["error"], r["delta"]) for r in ref
    ]
    example = _load_example("three_sample_test")
    name, data, components, params = example.experiments(quick=True)[1]
    assert name == "digits"
    rows = run_task(
        "three-sample",
        {**params, "n": [15], "n_repetitions": 3, "methods": ["exact", "nystrom"]},
        data,
        components,
        seed=0,
    )
    assert [(r["method"], r["error_rate"], r["delta"]) for r in rows] == [
        (r["method"], r["error_rate"], r["delta"]) for r in from_spec
    ]


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
