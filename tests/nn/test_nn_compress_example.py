"""examples/nn_compress.py writes its table and figure under --out (tiny sizes)."""

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("keras")
pytest.importorskip("matplotlib")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "nn_compress.py"


def test_example_writes_table_and_figure_under_out(tmp_path, monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("example_nn_compress", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    digits = example.sources.SOURCES["digits"]()
    monkeypatch.setitem(
        example.sources.SOURCES, "digits", lambda: {k: v[:150] for k, v in digits.items()}
    )
    monkeypatch.setattr(
        example,
        "settings",
        lambda full: (
            [(2, 2), (3, 14)],
            {
                "epochs": 1,
                "finetune_epochs": 0,
                "select_lr": False,
                "palm_iter": 3,
                "batch_size": 64,
            },
        ),
    )
    out = tmp_path / "nn"
    rows = example.main(["--out", str(out), "--repeats", "2"])
    assert sorted(p.name for p in out.iterdir()) == ["nn_compress.md", "nn_compress.png"]
    table = (out / "nn_compress.md").read_text().splitlines()
    # header, rule, the base network once, 2 configurations x 3 variants
    assert len(table) == 2 + 1 + 6
    assert table[2].startswith("| - | - | base | ") and " ± " in table[2]
    assert len(rows) == 2 * 2 * 4  # seeds x configurations x (base + 3 variants)
    assert f"wrote {out / 'nn_compress.png'}" in capsys.readouterr().out
