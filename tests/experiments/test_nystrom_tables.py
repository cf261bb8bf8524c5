"""The Chapter 3 experiment tables (sparsekit.experiments.nystrom_tables), computed by the
nystrom and sampler tasks, and the demo's Nyström section."""

import numpy as np
import pytest

from sparsekit.experiments import demo, nystrom_tables as exp
from sparsekit.run.data import generated_dataset


def test_generated_dataset_is_deterministic_and_unbalanced():
    a = generated_dataset(n=3000, d=6, random_state=1)
    b = generated_dataset(n=3000, d=6, random_state=1)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (3000, 6) and a.dtype == np.float64
    assert generated_dataset(n=10, d=3, dtype=np.float32).dtype == np.float32
    assert not np.array_equal(a, generated_dataset(n=3000, d=6, random_state=2))


def test_error_table_all_landmarks_is_exact_and_more_landmarks_help():
    X = generated_dataset(n=150, d=4, random_state=0)
    table = exp.frobenius_error_table(
        X,
        samplers=("uniform",),
        landmark_counts=(5, 60, 150),
        n_draws=3,
        n_eval=100,
        random_state=0,
    )
    assert table.samplers == ["uniform"] and table.n_eval == 100
    e5, e60, e150 = (table.mean_std("uniform", c)[0] for c in (5, 60, 150))
    assert e150 < 1e-6 < e60 < e5
    assert table.errors[("uniform", 5)].shape == (3,)
    text = table.format()
    assert "uniform" in text and "±" in text and "|S|=60" in text


def test_error_table_matches_direct_computation():
    """The thesis protocol, computed without the task: the kernel resolved on X, λ = (mean
    ‖x‖)⁻¹ for DAC-RLS, one evaluation subset for every draw."""
    from sparsekit import Nystroem
    from sparsekit.samplers.rls import DACRLSSampler

    X = generated_dataset(n=120, d=3, random_state=0)
    table = exp.frobenius_error_table(
        X,
        samplers=("uniform", "dac-rls"),
        landmark_counts=(10,),
        n_draws=2,
        n_eval=50,
        random_state=4,
    )
    rng = np.random.default_rng(4)
    eval_seed = int(rng.integers(2**31))
    for name in ("uniform", "dac-rls"):
        sampler = DACRLSSampler(lam="inverse-mean-norm") if name == "dac-rls" else "uniform"
        for draw in range(2):
            ny = Nystroem(
                exp.experiment_kernel(),
                sampler=sampler,
                n_components=10,
                random_state=int(rng.integers(2**31)),
            ).fit(X)
            expected = ny.approximation_error(X, n_eval=50, random_state=eval_seed)
            assert table.errors[(name, 10)][draw] == pytest.approx(expected, rel=1e-12)


def test_skips_are_reported(monkeypatch):
    monkeypatch.setattr(exp, "EXACT_RLS_MAX_N", 50)
    X = generated_dataset(n=80, d=3)
    table = exp.frobenius_error_table(
        X, samplers=("rls", "no-such-sampler", "uniform"), landmark_counts=(5,), n_draws=1
    )
    assert table.samplers == ["uniform"]
    assert "not registered" in table.skipped["no-such-sampler"]
    assert "n > 50" in table.skipped["rls"]
    assert "no-such-sampler: not registered" in table.format()


def test_timing_table():
    X = generated_dataset(n=400, d=3)
    t = exp.score_timing_table(X, samplers=("uniform", "dac-rls"), sizes=(100, 400, 800))
    assert t.samplers == ["dac-rls"] and t.sizes == [100, 400]
    assert all(t.seconds[("dac-rls", n)] > 0 for n in (100, 400))
    assert "uniform" in t.skipped and "n=400" in t.format()


def test_make_sampler_passes_the_thesis_lambda_rule():
    assert exp.make_sampler("dac-rls", lam=exp.LAM).lam == "inverse-mean-norm"
    assert exp.make_sampler("dac-rls", lam=2.0).lam == 2.0
    assert exp.make_sampler("dac-rls").lam == 1.0  # no protocol λ: the sampler's default
    assert exp.make_sampler("recursive-rls", lam=exp.LAM).lam != "inverse-mean-norm"


def test_demo_table_quick_lists_every_sampler(monkeypatch):
    tables = []

    def recording(*args, **kwargs):
        tables.append(real(*args, **kwargs))
        return tables[-1]

    real = exp.frobenius_error_table
    monkeypatch.setattr(demo, "frobenius_error_table", recording)
    out = demo.nystrom_table(quick=True)
    assert isinstance(out, str)
    errors, timing = out.split("\n\n")
    rows = {line.split()[0]: line for line in errors.splitlines()[2:]}
    # every sampler got the mean ± std of its 3 draws on the documented setting, as printed
    (table,) = tables
    assert (
        table.n_eval == 1000 and table.n_samples == 1000 and list(table.landmark_counts) == [20, 50]
    )
    assert set(rows) == set(exp.SAMPLERS)
    for name, line in rows.items():
        assert line.count("±") == 2, line
        printed = [cell.strip() for cell in line[len(name) :].split("  ") if "±" in cell]
        want = []
        for c in (20, 50):
            assert table.errors[(name, c)].shape == (3,)
            m, sd = table.mean_std(name, c)
            want.append(f"{m:.4g} ± {sd:.2g}")
        assert printed == want, line
    assert timing.startswith("Score computation time")
    assert "dac-rls" in timing and "n=1000" in timing


def test_max_landmarks_caps_one_sampler_and_says_so():
    X = generated_dataset(n=300, d=4, random_state=2)
    table = exp.frobenius_error_table(
        X,
        samplers=("uniform", "diagonal"),
        landmark_counts=(5, 20),
        n_draws=1,
        max_landmarks={"diagonal": 10},
    )
    assert ("diagonal", 5) in table.errors and ("diagonal", 20) not in table.errors
    assert ("uniform", 20) in table.errors
    assert "|S| <= 10" in table.skipped["diagonal"]
    assert "—" in table.format()


def test_example_plots_tables_with_capped_samplers(tmp_path):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "nystrom_samplers.py"
    spec = importlib.util.spec_from_file_location("nystrom_samplers_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    X = generated_dataset(n=200, d=3, random_state=1)
    table = exp.frobenius_error_table(
        X,
        samplers=("uniform", "diagonal"),
        landmark_counts=(5, 20),
        n_draws=2,
        max_landmarks={"diagonal": 10},
    )
    out = tmp_path / "errors.png"
    example.plot_errors(table, str(out))
    assert out.stat().st_size > 1000
    timing = exp.score_timing_table(X, samplers=("diagonal", "dac-rls"), sizes=(50, 100))
    example.plot_timing(timing, str(tmp_path / "timing.png"))
    assert (tmp_path / "timing.png").stat().st_size > 1000


@pytest.mark.parametrize("random_state", [0, np.random.default_rng(0)])
def test_timing_table_passes_run_task_integer_seeds(monkeypatch, random_state):
    # run_task's seed is an int (the tasks add to it); a Generator random_state seeds the draws
    seeds = []
    real = exp.run_task

    def recording(*args, seed=0, **kwargs):
        seeds.append(seed)
        return real(*args, seed=seed, **kwargs)

    monkeypatch.setattr(exp, "run_task", recording)
    X = generated_dataset(n=100, d=3)
    t = exp.score_timing_table(
        X, samplers=("diagonal",), sizes=(50, 100), random_state=random_state
    )
    assert t.samplers == ["diagonal"] and len(seeds) == 2
    assert all(type(s) is int for s in seeds)


def test_sampler_params_reach_the_sampler():
    """Oracle: the Nyström approximation computed without the task, with the λ of
    ``sampler_params`` (100, far from the protocol's rule, which gives another error here)."""
    from sparsekit import Nystroem
    from sparsekit.samplers.rls import DACRLSSampler

    X = generated_dataset(n=100, d=3, random_state=0)
    table = exp.frobenius_error_table(
        X,
        samplers=("dac-rls",),
        landmark_counts=(8,),
        n_draws=1,
        n_eval=40,
        random_state=2,
        sampler_params={"dac-rls": {"lam": 100.0}},
    )
    rng = np.random.default_rng(2)
    eval_seed = int(rng.integers(2**31))
    ny = Nystroem(
        exp.experiment_kernel(),
        sampler=DACRLSSampler(lam=100.0),
        n_components=8,
        random_state=int(rng.integers(2**31)),
    ).fit(X)
    expected = ny.approximation_error(X, n_eval=40, random_state=eval_seed)
    assert table.errors[("dac-rls", 8)][0] == pytest.approx(expected, rel=1e-12)
    protocol = exp.frobenius_error_table(
        X, samplers=("dac-rls",), landmark_counts=(8,), n_draws=1, n_eval=40, random_state=2
    )
    assert abs(protocol.errors[("dac-rls", 8)][0] - expected) > 1e-3 * expected


def test_max_landmarks_is_inclusive_and_exact_rls_runs_at_its_limit(monkeypatch):
    """Oracle: the documented boundaries: ``max_landmarks`` runs ``|S| <= k`` (k itself
    included); exact RLS is skipped only for n > ``EXACT_RLS_MAX_N``."""
    X = generated_dataset(n=60, d=3, random_state=0)
    table = exp.frobenius_error_table(
        X, samplers=("diagonal",), landmark_counts=(5, 6), n_draws=1, max_landmarks={"diagonal": 5}
    )
    assert ("diagonal", 5) in table.errors and ("diagonal", 6) not in table.errors
    monkeypatch.setattr(exp, "EXACT_RLS_MAX_N", 60)
    at = exp.frobenius_error_table(X, samplers=("rls",), landmark_counts=(5,), n_draws=1)
    assert at.samplers == ["rls"] and "rls" not in at.skipped
    monkeypatch.setattr(exp, "EXACT_RLS_MAX_N", 59)
    over = exp.frobenius_error_table(X, samplers=("rls",), landmark_counts=(5,), n_draws=1)
    assert over.samplers == [] and "n > 59" in over.skipped["rls"]


def test_mean_std_of_a_cell_is_numpy_over_the_draws():
    """Oracle: NumPy's mean and (population) standard deviation of the draws of one cell."""
    draws = np.array([1.0, 2.0, 4.0, 7.0])
    table = exp.ErrorTable("data", 10, 10, [3], ["uniform"], errors={("uniform", 3): draws})
    mean, std = table.mean_std("uniform", 3)
    assert mean == pytest.approx(3.5, rel=1e-15)
    assert std == pytest.approx(np.sqrt(np.mean((draws - 3.5) ** 2)), rel=1e-12)
    assert "3.5 ± 2.3" in table.format()


def test_timing_table_takes_a_sampler_lambda(monkeypatch):
    """A ``sampler_params`` λ replaces the protocol's, as in the error table (it raised a
    TypeError). Oracle: the timed scores sum to the effective dimension at that λ, computed by
    the sampler directly, not at the protocol's λ."""
    rows = []
    real = exp.run_task

    def recording(*args, **kwargs):
        rows.append(real(*args, **kwargs))
        return rows[-1]

    monkeypatch.setattr(exp, "run_task", recording)
    X = generated_dataset(n=80, d=3, random_state=0)
    t = exp.score_timing_table(
        X, samplers=("rls",), sizes=(80,), sampler_params={"rls": {"lam": 0.1}}
    )
    assert t.samplers == ["rls"] and t.seconds[("rls", 80)] == rows[0]["score_time"]
    kernel = exp.experiment_kernel().fit(X)
    d_eff = exp.make_sampler("rls", lam=0.1).effective_dimension(X, kernel)
    assert rows[0]["sum_scores"] == pytest.approx(d_eff, rel=1e-9)
    protocol = exp.make_sampler("rls", lam=exp.LAM).effective_dimension(X, kernel)
    assert abs(protocol - d_eff) > 1e-3 * d_eff
