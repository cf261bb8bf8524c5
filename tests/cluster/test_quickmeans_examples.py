"""The QuicK-means and Hadamard examples run at quick size and write their table and figures."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load(name):
    spec = importlib.util.spec_from_file_location(
        f"example_{name}", ROOT / "examples" / f"{name}.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_hadamard_example(tmp_path):
    rows = load("hadamard").main(["--quick", "--out", str(tmp_path)])
    assert [r["size"] for r in rows] == ["8", "16", "32"]
    assert all(float(r["err"]) < 1e-8 for r in rows)  # exact recovery
    assert [r["nnz"] for r in rows] == ["48", "128", "320"]  # 2 per row and column, k factors
    assert (tmp_path / "hadamard.png").stat().st_size > 1000
    assert "| size |" in (tmp_path / "hadamard.md").read_text()


def test_quickmeans_example(tmp_path):
    pytest.importorskip("sklearn")
    rows = load("quickmeans").main(["--quick", "--out", str(tmp_path)])
    assert len(rows) == 6
    for km, qk in zip(rows[::2], rows[1::2]):
        assert km["algorithm"] == "K-means" and qk["algorithm"] == "QuicK-means"
        nnz = int(qk["nnz"].replace(",", ""))
        assert int(qk["flops"].replace(",", "")) == 2 * nnz
        assert float(qk["compression"]) == pytest.approx(
            int(km["nnz"].replace(",", "")) / nnz, abs=0.051
        )
        assert 0 <= float(qk["nn1"]) <= 1 and 0 <= float(qk["nystrom"]) < 1
    for f in ("quickmeans.md", "quickmeans_objective.png", "quickmeans_flops.png"):
        assert (tmp_path / f).stat().st_size > 100
