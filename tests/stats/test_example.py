"""The three-sample example runs at its quick size and writes its tables and figures."""

import importlib.util
from pathlib import Path


def load(name):
    path = Path(__file__).resolve().parents[2] / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{name}_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_three_sample_example_quick(tmp_path, capsys):
    written = load("three_sample_test").main(quick=True, out=str(tmp_path))
    out = capsys.readouterr().out
    assert [Path(p).name for p in written] == [
        "three_sample_gaussians.png",
        "three_sample_digits.png",
        "three_sample_graphs.png",
    ]
    assert all(Path(p).stat().st_size > 5000 for p in written)
    for name in ("gaussians", "digits", "graphs"):
        assert f"## {name}" in out
    # the exact MMD is its own reference: Δ = 0 in every exact row
    exact_rows = [line for line in out.splitlines() if line.startswith("| exact |")]
    assert len(exact_rows) == 6 and all("| 0.00e+00 |" in line for line in exact_rows)
    assert "| rff |" in out.split("## graphs")[0] and "| rff |" not in out.split("## graphs")[1]
