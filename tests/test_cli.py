"""The ``sparsekit`` command line."""
import subprocess
import sys

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
        row = next(l for l in out.splitlines() if f"| {info.name} " in l)
        assert info.family in row and info.plugin in row


def test_list_one_family(capsys):
    assert main(["list", "--family", "kernel"]) == 0
    assert "| solver" not in capsys.readouterr().out


def test_demo_kernels_section_prints_a_table(capsys):
    assert main(["demo", "kernels"]) == 0
    out = capsys.readouterr().out
    assert "| rbf " in out and "| chi2 " in out and "min eig" in out


def test_demo_graphs_section_prints_a_table():
    from sparsekit.experiments import kernels

    table = kernels.graph_kernel_table(n_graphs=40)
    rows = [line for line in table.splitlines() if line.startswith(("| True", "| False"))]
    assert len(rows) == 4 and "Gram 40x40" in table
    normalized_medians = [float(r.split("|")[4]) for r in rows if r.split("|")[2].strip() == "True"]
    assert all(0 < m <= 1 for m in normalized_medians)


def test_demo_unknown_section(capsys):
    assert main(["demo", "nope"]) == 2
    assert "unknown demo section" in capsys.readouterr().err


def test_console_script_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "sparsekit.cli", "list", "--family", "kernel"],
                         capture_output=True, text=True, check=True).stdout
    assert "| rbf " in out


def test_demo_solvers_section_recovers_supports():
    from sparsekit.experiments.solvers import solver_table

    table = solver_table(n_features=64, n_atoms=128, n_nonzero=2, n_signals=20)
    rows = {line.split("|")[1].strip(): line.split("|") for line in table.splitlines()[3:]}
    assert set(rows) == {"omp", "mp", "nn-omp", "frank-wolfe"}
    assert rows["omp"][3].strip() == "100.0%" and float(rows["omp"][4]) < 1e-10


def test_installed_console_script():
    import os
    import shutil

    exe = shutil.which("sparsekit", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("the sparsekit console script is not installed next to this Python")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"sparsekit {sparsekit.__version__}"
