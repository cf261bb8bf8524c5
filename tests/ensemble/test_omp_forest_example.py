"""The OMP forest example runs end to end at its quick size and writes its files under --out."""

import csv
import importlib.util
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "omp_forest.py"


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_quick_run_writes_figures_and_scores(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("omp_forest_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--quick", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "NN-OMP stopped by itself" in out
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs == [
        "omp_forest_breast_cancer.png",
        "omp_forest_diabetes.png",
        "omp_forest_friedman_1.png",
    ]
    rows = list(csv.DictReader(open(tmp_path / "omp_forest.csv")))
    full = [
        float(r["score"])
        for r in rows
        if r["method"] == "full forest" and r["dataset"] == "breast cancer"
    ]
    assert min(full) > 0.85  # a 40-tree forest on breast cancer is > 85 % accurate
    omp20 = [
        float(r["score"])
        for r in rows
        if r["method"] == "OMP" and r["trees"] == "20" and r["dataset"].startswith("Friedman")
    ]
    assert min(omp20) > 0.8  # 20 OMP-selected trees keep R² > 0.8 on Friedman #1
