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
    from sparsekit import Registration, Registry, hookimpl

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
    from sparsekit.run import demo, nystrom_tables as exp

    X = exp.generated_dataset(n=300, d=5, random_state=0)
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
    from sparsekit.run import demo

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
    from sparsekit.run.demo import solver_table

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
