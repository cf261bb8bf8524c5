"""``examples/nn_nystrom.py`` writes its figure and tables under ``--out``."""

import importlib.util
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "nn_nystrom.py"


def _load():
    spec = importlib.util.spec_from_file_location("example_nn_nystrom", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_writes_figure_and_tables_under_out(tmp_path, monkeypatch, capsys):
    example = _load()
    real = example.sizes

    def tiny(args):
        par, few, _ = real(args)
        par.update(
            n_repeats=1,
            pretrain_epochs=0,
            epochs=1,
            widths=[2],
            n_landmarks=[3],
            kernels=["rbf"],
            adaptive=[True, False],
        )
        few.update(
            n_repeats=2,
            pretrain_epochs=0,
            epochs=1,
            n_per_class=[2],
            width=2,
            n_landmarks=3,
            kernels=["linear"],
        )
        return par, few, 60

    monkeypatch.setattr(example, "sizes", tiny)
    out = tmp_path / "nn"
    par, few = example.main(["--out", str(out)])
    assert sorted(p.name for p in out.iterdir()) == ["nn_nystrom.md", "nn_nystrom_parameters.png"]
    text = (out / "nn_nystrom.md").read_text()
    assert "| digits | nystrom rbf fixed | 3 |" in text
    assert "| nystrom linear adaptive |" in text and "image patches 2" in text
    # the gallery includes the file inside the example's page: no Markdown heading of its own
    assert not [line for line in text.splitlines() if line.startswith("#")]
    assert [len(rows) for _, rows in par] == [3, 3] and [len(rows) for _, rows in few] == [4, 4]
    assert f"files written to {out}" in capsys.readouterr().out


def test_quick_sizes_are_those_the_docstring_states():
    """The gallery's ``--quick`` run trains every model properly (its accuracies are the point
    of the page): every point of both data sets, 15 pretraining epochs, widths and L of 16 and
    64, as the example's docstring states (the oracle: the docstring's own words)."""
    example = _load()
    args = example.argparse.Namespace(
        full=False,
        repeats=None,
        few_shot_repeats=None,
        widths=None,
        landmarks=None,
        n_samples=None,
    )
    par, few, n_samples = example.sizes(args)
    doc = " ".join(example.__doc__.split())
    assert n_samples is None and "every point of both data sets" in doc
    assert par["pretrain_epochs"] == few["pretrain_epochs"] == 15 and "15 epochs" in doc
    assert par["widths"] == par["n_landmarks"] == [16, 64] and "L of 16 and 64" in doc
    assert few["n_per_class"] == [5] and "5 points per class" in doc
