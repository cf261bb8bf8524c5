"""The kernel k-means example runs at its quick size and writes its tables and figures."""

import importlib.util
from pathlib import Path


def test_kernel_kmeans_example_quick(tmp_path, capsys):
    path = Path(__file__).resolve().parents[2] / "examples" / "kernel_kmeans.py"
    spec = importlib.util.spec_from_file_location("kernel_kmeans_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    written = example.main(quick=True, out=str(tmp_path))
    out = capsys.readouterr().out
    assert all(Path(p).stat().st_size > 5000 for p in written)
    rings = out.split("## digits")[0]
    rows = {
        line.split("|")[1].strip(): line.split("|")
        for line in rings.splitlines()
        if line.startswith("| ") and "method" not in line
    }
    assert float(rows["exact"][3]) > 0.95 and float(rows["linear k-means"][3]) < 0.1
    assert float(rows["Nyström greedy-trace"][5]) < float(rows["Nyström uniform"][5])
