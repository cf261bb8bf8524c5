"""The ``sparsekit`` command line."""

import subprocess
import sys

import numpy as np
import pytest

import sparsekit
from sparsekit.cli import main


def test_version_flag(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"sparsekit {sparsekit.__version__}"


def test_list_prints_every_component_with_family_and_plugin(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for info in sparsekit.list_components():
        row = next(r for r in out.splitlines() if f"| {info.name} " in r)
        assert info.family in row and info.plugin in row


def test_list_one_family(capsys):
    assert main(["list", "--family", "kernel"]) == 0
    assert "| solver" not in capsys.readouterr().out


def test_demo_kernels_section_prints_a_table(capsys):
    assert main(["demo", "kernels"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "| rbf " in out and "| chi2 " in out and "min eig" in out
    # every line of the table is a valid Markdown row (no stray '|' inside a cell)
    rows = [line for line in out.splitlines() if line.startswith("|")]
    assert len({line.count("|") for line in rows}) == 1
    # the row with negative eigenvalues is explained under the table
    chi2_row = next(line for line in rows if line.startswith("| additive-chi2 "))
    assert float(chi2_row.split("|")[-2]) < -1
    assert (
        "- additive-chi2: -Σ (x-z)²/(x+z) is minus a distance, only conditionally positive definite"
        in out
    )
    assert "[1/1] running 'kernels'" in captured.err


def test_list_json_is_machine_readable(capsys):
    import json

    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    expected = [(i.family, i.name, list(i.aliases), i.plugin) for i in sparsekit.list_components()]
    assert [
        (c["family"], c["name"], c["aliases"], c["plugin"]) for c in data["components"]
    ] == expected
    rbf = next(c for c in data["components"] if c["name"] == "rbf")
    assert rbf["accepts"] == "vectors" and "gaussian" in rbf["aliases"]
    assert isinstance(data["skipped"], list)
    assert main(["list", "--json", "--family", "solver"]) == 0
    assert {c["family"] for c in json.loads(capsys.readouterr().out)["components"]} == {"solver"}


def test_python_dash_m_sparsekit():
    out = subprocess.run(
        [sys.executable, "-m", "sparsekit", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == f"sparsekit {sparsekit.__version__}"


def test_list_escapes_pipes_in_summaries(capsys):
    from sparsekit import Registry
    from sparsekit.plugins import Registration, hookimpl

    class Plugin:
        @hookimpl
        def sparsekit_kernels(self):
            yield Registration("normed", object, summary="<x, z> / (||x|| ||z||)")

    reg = Registry(entry_points=False, plugins=[Plugin()])
    import sparsekit.cli as cli

    original = cli.default_registry
    cli.default_registry = lambda: reg
    try:
        assert main(["list", "--family", "kernel"]) == 0
    finally:
        cli.default_registry = original
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert len({line.count("|") - line.count("\\|") for line in rows}) == 1
    assert r"<x, z> / (\|\|x\|\| \|\|z\|\|)" in next(line for line in rows if "normed" in line)


def test_nystrom_reading_notes_explain_rls_losing_to_uniform():
    from sparsekit.experiments import demo, nystrom_tables as exp
    from sparsekit.run.data import generated_dataset

    X = generated_dataset(n=300, d=5, random_state=0)
    table = exp.ErrorTable("data", 300, 300, [5, 30], ["uniform", "dac-rls", "rls", "greedy-trace"])
    table.errors = {
        ("uniform", 5): np.array([10.0]),
        ("dac-rls", 5): np.array([12.0]),
        ("rls", 5): np.array([9.0]),
        ("greedy-trace", 5): np.array([3.0]),
    }
    notes = demo.reading_notes(table, X)
    line = next(n for n in notes if "lose to uniform" in n)
    d_eff = exp.make_sampler("rls", lam=exp.LAM).effective_dimension(
        X, exp.experiment_kernel().fit(X)
    )
    assert line.startswith("dac-rls lose to uniform at |S| = 5:")  # rls beat uniform here
    assert f"(d_eff = {d_eff:.0f} here)" in line
    assert any(n.startswith("greedy-trace: deterministic") for n in notes)
    table.errors[("dac-rls", 5)] = np.array([8.0])
    assert not any("lose to uniform" in n for n in demo.reading_notes(table, X))


def test_demo_graphs_section_prints_a_table():
    from sparsekit.experiments import demo

    table = demo.graph_kernel_table(n_graphs=40)
    rows = [line for line in table.splitlines() if line.startswith(("| True", "| False"))]
    assert len(rows) == 4 and "Gram 40x40" in table
    normalized_medians = [float(r.split("|")[4]) for r in rows if r.split("|")[2].strip() == "True"]
    assert all(0 < m <= 1 for m in normalized_medians)


def test_demo_unknown_section(capsys):
    assert main(["demo", "nope"]) == 2
    assert "unknown demo section" in capsys.readouterr().err


def test_console_script_entry_point_runs():
    out = subprocess.run(
        [sys.executable, "-m", "sparsekit.cli", "list", "--family", "kernel"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "| rbf " in out


def test_demo_solvers_section_recovers_supports():
    from sparsekit.experiments.demo import solver_table

    table = solver_table(n_features=64, n_atoms=128, n_nonzero=2, n_signals=20)
    rows = {
        line.split("|")[1].strip(): line.split("|")
        for line in table.splitlines()[3:]
        if line.startswith("|")
    }
    assert set(rows) == {"omp", "mp", "nn-omp", "frank-wolfe"}
    assert rows["omp"][3].strip() == "100.0%" and float(rows["omp"][4]) < 1e-10
    bound = table.splitlines()[0].split("guaranteed recovery below m = ")[1].rstrip(")")
    assert (
        f"- guaranteed recovery below m = {bound}: for m < (1 + 1/coherence)/2 OMP recovers every"
        in table
    )
    assert "random supports are recovered far above the worst-case bound" in table


def test_installed_console_script():
    import os
    import shutil

    exe = shutil.which("sparsekit", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("the sparsekit console script is not installed next to this Python")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"sparsekit {sparsekit.__version__}"


SPEC_4_RUNS = """\
task = "gram"
[data]
source = "blobs"
n_samples = 20
[kernel]
name = "linear"
[params]
n_eig = [2, 3, 4, 5]
"""


def test_run_max_runs_and_out_on_a_real_run(tmp_path, monkeypatch, capsys):
    """Oracles: the grid counted by hand (4 values of n_eig, 1 repeat: 4 runs) against
    ``--max-runs``; the files on disk: everything written lies under ``--out``, nothing in the
    working directory."""
    import json

    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(SPEC_4_RUNS)
    out = tmp_path / "o"
    assert main(["run", str(spec_file), "--out", str(out), "--max-runs", "3"]) == 2
    assert "4 runs, more than the limit of 3" in capsys.readouterr().err
    assert not out.exists()
    assert main(["run", str(spec_file), "--out", str(out), "--max-runs", "4"]) == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["params.n_eig"] for r in rows) == [2, 3, 4, 5]
    assert list(cwd.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "o", "s.toml"]


def test_run_repeat_alone_and_the_seed_and_repeat_bounds(tmp_path, capsys):
    """Oracle: the grid counted by hand (2 points x 2 repeats = 4 runs, seeds 0 and 1); the
    boundaries --seed >= 0 and --repeat >= 1 (0 allowed for the seed, not for the repeat)."""
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(SPEC_4_RUNS.replace("[2, 3, 4, 5]", "[2, 3]"))
    assert main(["run", str(spec_file), "--dry-run", "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 grid point(s) x 2 repeat(s) = 4 run(s)" in out and "seed=1" in out
    assert main(["run", str(spec_file), "--dry-run", "--seed", "0"]) == 0
    capsys.readouterr()
    for bad in (["--seed", "-1"], ["--repeat", "0"]):
        assert main(["run", str(spec_file), "--dry-run", *bad]) == 2
        assert "--repeat must be >= 1 and --seed >= 0" in capsys.readouterr().err


@pytest.fixture
def fake_run_spec(monkeypatch):
    """Replace the runner by a recorder: ``calls`` gets its keyword arguments; ``outcome`` is
    the statuses of the rows it writes, or an exception to raise."""
    import json
    from pathlib import Path

    import sparsekit.run as run_pkg

    state = {"calls": [], "outcome": ["ok"]}

    def fake(spec, out=None, **kwargs):
        state["calls"].append({"out": out, **kwargs})
        if isinstance(state["outcome"], BaseException):
            raise state["outcome"]
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "results.jsonl", "w") as fh:
            for k, status in enumerate(state["outcome"]):
                fh.write(json.dumps({"run_id": f"r{k}", "status": status}) + "\n")
        return out

    monkeypatch.setattr(run_pkg, "run_spec", fake)
    return state


def test_run_exit_codes(tmp_path, fake_run_spec, capsys):
    """Oracle: the documented exit statuses: 0 when every run is ok, 1 when one failed or the
    machine failed (permissions, no space), 2 for a bad spec or input, 130 when interrupted."""
    from sparsekit.run.results import NoSpaceError
    from sparsekit.run.runner import Interrupted

    spec_file = tmp_path / "s.toml"
    spec_file.write_text(SPEC_4_RUNS)
    args = ["run", str(spec_file), "--out", str(tmp_path / "o"), "--yes"]
    for outcome, code in (
        (["ok", "ok"], 0),
        (["ok", "error"], 1),
        (["error", "ok"], 1),
        (PermissionError("denied"), 1),
        (NoSpaceError("disk full"), 1),
        (FileNotFoundError("no data"), 2),
        (ValueError("bad value"), 2),
        (Interrupted("2 runs recorded"), 130),
        (KeyboardInterrupt(), 130),
    ):
        fake_run_spec["outcome"] = outcome
        assert main(args) == code, outcome
    assert "denied" in capsys.readouterr().err


def test_run_forwards_every_option(tmp_path, fake_run_spec, monkeypatch):
    """Oracle: the command line itself: each option reaches the runner unchanged."""
    import sparsekit.run.runner as runner

    monkeypatch.setattr(runner, "check_scheduler", lambda address: None)
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(SPEC_4_RUNS)
    out = str(tmp_path / "o")
    assert main(["run", str(spec_file), "--out", out]) == 0
    assert (
        main(
            [
                "run",
                str(spec_file),
                "--out",
                out,
                "--yes",
                "--max-runs",
                "7",
                "--allow-pickle",
                "--scheduler",
                "tcp://h:1",
            ]
        )
        == 0
    )
    default, given = fake_run_spec["calls"]
    assert (default["out"], default["yes"], default["max_runs"]) == (out, False, None)
    assert (default["allow_pickle"], default["scheduler"]) == (False, None)
    assert (given["out"], given["yes"], given["max_runs"]) == (out, True, 7)
    assert (given["allow_pickle"], given["scheduler"]) == (True, "tcp://h:1")


def test_unknown_name_after_known_ones_runs_nothing(capsys, monkeypatch):
    """Every name is checked before anything runs; the closest name is suggested."""
    import sparsekit._warmup as warmup

    monkeypatch.setattr(warmup, "warm_up", lambda families: pytest.fail("warm_up ran"))
    assert main(["demo", "kernels", "solver"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "['solver']" in captured.err
    assert "Did you mean 'solvers'?" in captured.err
    assert main(["warmup", "kernels", "graph"]) == 2
    assert "Did you mean 'graphs'?" in capsys.readouterr().err


def test_warmup_compiles_the_named_families_only(capsys, monkeypatch):
    """Oracle: the command line: the families given (all of them by default) reach warm_up."""
    import sparsekit._warmup as warmup

    seen = []
    monkeypatch.setattr(warmup, "warm_up", lambda families: seen.append(families) or 0.0)
    assert main(["warmup", "graphs", "solvers"]) == 0
    assert main(["warmup"]) == 0
    assert seen == [["graphs", "solvers"], list(warmup.FAMILIES)]
    assert "(graphs, solvers; float64 and float32)" in capsys.readouterr().out


def test_list_one_family_leaves_out_the_tasks(capsys):
    import json

    assert main(["list", "--family", "kernel"]) == 0
    assert "tasks of `sparsekit run`" not in capsys.readouterr().out
    assert main(["list", "--json", "--family", "kernel"]) == 0
    assert json.loads(capsys.readouterr().out)["tasks"] == []
    assert main(["list", "--json"]) == 0
    assert {"quickmeans", "nystrom"} <= {
        t["name"] for t in json.loads(capsys.readouterr().out)["tasks"]
    }


def test_no_command_prints_the_help(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: sparsekit") and "{list,demo,warmup,run}" in out


def test_help_texts_say_what_the_commands_do(capsys):
    """Oracles: the keys of ``list --json``'s output, the run limit of the spec module and the
    warm-up families, each named in the help."""
    import json

    from sparsekit._warmup import FAMILIES
    from sparsekit.run.spec import DEFAULT_MAX_RUNS

    def help_of(*command):
        with pytest.raises(SystemExit) as exit_:
            main([*command, "--help"])
        assert exit_.value.code == 0
        return " ".join(capsys.readouterr().out.split())

    assert main(["list", "--json"]) == 0
    keys = json.loads(capsys.readouterr().out)
    text = help_of("list")
    assert all(f"'{key}'" in text for key in keys), text
    assert f"(default {DEFAULT_MAX_RUNS})" in help_of("run")
    assert f"(default: all of {', '.join(FAMILIES)})" in help_of("warmup")


def _recorded_demo_calls(monkeypatch):
    """Replace the demo's ``run_task`` with a recorder returning a fixed row."""
    from sparsekit.experiments import demo

    calls = []

    def record(task, params, data, components, seed=0):
        calls.append({"task": task, "params": params, "data": data, "components": components})
        return {
            "time": 0.0,
            "max_asym": 0.0,
            "min_eig": 0.0,
            "median": 0.5,
            "support_recovery": 1.0,
            "median_rel_residual": 0.0,
        }

    monkeypatch.setattr(demo, "run_task", record)
    return demo, calls


def test_demo_kernel_table_draws_its_data_from_the_seed_and_times_float32(monkeypatch):
    """Oracle: NumPy's draw, ``default_rng(random_state).random((n, d))`` (uniform on [0, 1]^d);
    each kernel gets a float64 and a float32 run, in that order."""
    demo, calls = _recorded_demo_calls(monkeypatch)
    demo.kernel_table(n=7, d=3, random_state=5)
    np.testing.assert_array_equal(calls[0]["data"]["X"], np.random.default_rng(5).random((7, 3)))
    assert [c["params"].get("dtype") for c in calls[:2]] == ["float64", "float32"]
    assert {c["params"]["dtype"] for c in calls[1::2]} == {"float32"}


def test_demo_graph_table_draws_its_graphs_from_the_seed(monkeypatch):
    """Oracle: an invariance: the same seed draws the same graphs, another seed others."""
    demo, calls = _recorded_demo_calls(monkeypatch)
    for seed in (1, 1, 2):
        demo.graph_kernel_table(n_graphs=3, random_state=seed)
    first, again, other = (calls[k]["data"]["graphs"] for k in (0, 4, 8))

    def same(a, b):
        return all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) for x, y in zip(a, b))

    assert same(first, again) and not same(first, other)


def test_demo_solver_table_gives_non_negative_signals_to_nn_omp_only(monkeypatch):
    """Oracle: the documented protocol: NN-OMP alone gets the non-negative signals."""
    demo, calls = _recorded_demo_calls(monkeypatch)
    demo.solver_table(n_features=8, n_atoms=12, n_nonzero=1, n_signals=2)
    assert {c["components"]["solver"]["name"]: c["params"]["nonnegative"] for c in calls} == {
        "omp": False,
        "mp": False,
        "nn-omp": True,
        "frank-wolfe": False,
    }
