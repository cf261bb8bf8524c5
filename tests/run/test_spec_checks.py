"""Problems of a spec that used to surface only when it ran, found when it is loaded (and so by
``--dry-run``): missing optional packages, bad parameter values, ``[[plot]]`` columns that no
run reports, a bad ``--scheduler`` or ``--set`` value."""

import sys

import pytest

from sparsekit.cli import main
from sparsekit.run import SpecError, load_spec

SPEC = """\
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
GRAM = 'task = "gram"\n[data]\nsource = "uniform"\nn_samples = 20\n[kernel]\nname = "rbf"\n'


# -- optional packages -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, hidden, where",
    [
        (SPEC, "sklearn", "line 3: data source 'blobs'"),
        (SPEC.replace('"blobs"', '"uniform"'), "sklearn", "line 1: task 'nystrom'"),
        (GRAM + '[[plot]]\nx = "data.n_samples"\ny = "time"\n', "matplotlib", "line 7: \\[\\[plot"),
    ],
    ids=["data-source", "task", "plot"],
)
def test_missing_optional_package_is_named_at_load(
    tmp_path, monkeypatch, capsys, text, hidden, where
):
    """A package a task, data source or plot imports, hidden (``sys.modules[name] = None``: its
    import fails as if it were not installed): before, every run failed alike with a bare
    ``ModuleNotFoundError`` (and the plot after the sweep); now the spec is refused with the
    ``pip install`` line."""
    monkeypatch.setitem(sys.modules, hidden, None)
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(text)
    with pytest.raises(SpecError, match=rf"s\.toml, {where}.* needs the package '{hidden}'"):
        load_spec(spec_file)
    assert main(["run", str(spec_file), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "pip install" in err and "Traceback" not in err


def test_installed_packages_pass():
    spec = load_spec("s.toml", text=SPEC + '[[plot]]\nx = "params.n_components"\ny = "fit_time"\n')
    assert spec.task == "nystrom"
