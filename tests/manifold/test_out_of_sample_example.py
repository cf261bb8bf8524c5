"""The out-of-sample example runs at its quick size and writes its files under --out."""

import csv
import importlib.util
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "out_of_sample.py"


def load():
    spec = importlib.util.spec_from_file_location("out_of_sample_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_affine_alignment_recovers_an_affine_map():
    from sparsekit.run.task_out_of_sample import align

    rng = np.random.default_rng(0)
    E = rng.normal(size=(50, 2))
    A, b = np.array([[2.0, -1.0], [0.5, 3.0]]), np.array([1.0, -2.0])
    np.testing.assert_allclose(align(E, E @ A + b)(E[:5]), E[:5] @ A + b, atol=1e-12)


def test_quick_run_writes_figures_and_differences(tmp_path, capsys):
    load().main(["--quick", "--out", str(tmp_path)])
    assert "d_var - d_oos" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.glob("*.png")) == [
        "out_of_sample_digits.png",
        "out_of_sample_swiss_roll.png",
    ]
    rows = list(csv.DictReader(open(tmp_path / "out_of_sample.csv")))
    methods = {r["method"] for r in rows}
    assert methods == {"MDS", "Isomap", "LLE", "spectral", "kernel PCA"}
    values = np.array([float(r["difference"]) for r in rows])
    assert np.isfinite(values).all() and np.abs(values).max() < 5
