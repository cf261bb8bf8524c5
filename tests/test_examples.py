"""The example scripts write every file under one --out folder (default examples/output/)."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(script, *args):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )


def test_output_folder_is_ignored_by_git():
    assert "examples/output/" in (ROOT / ".gitignore").read_text().splitlines()


def test_frank_wolfe_example_writes_under_out(tmp_path):
    out = tmp_path / "fw"
    run = _run(
        "frank_wolfe_recovery.py",
        "--n-features",
        "60",
        "--n-atoms",
        "120",
        "--dictionaries",
        "1",
        "--signals",
        "3",
        "--iters",
        "60",
        "--out",
        str(out),
    )
    assert run.returncode == 0, run.stderr
    written = sorted(p.name for p in out.iterdir())
    assert written == [
        "frank_wolfe_recovery.md",
        "frank_wolfe_recovery.png",
        "frank_wolfe_vs_greedy.png",
    ]
    assert f"files written to {out}" in run.stdout
    assert "inside the hypotheses: dictionary 1/1" in run.stderr  # progress on stderr
    assert "examples/output/" in _run("frank_wolfe_recovery.py", "--help").stdout


def test_nystrom_example_writes_under_out(tmp_path, monkeypatch, capsys):
    example = _load("nystrom_samplers")
    assert example.DEFAULT_OUT == str(EXAMPLES / "output")
    small = np.random.default_rng(0).random((520, 4))  # >= 500: one timing point

    class Digits:
        data = small * 16.0

    monkeypatch.setattr(example, "load_digits", lambda: Digits)
    monkeypatch.setattr(example, "generated_dataset", lambda **kw: small[:510].copy())
    monkeypatch.setattr(example.exp, "SAMPLERS", ("uniform", "diagonal"))
    monkeypatch.setattr(
        example.exp.frobenius_error_table,
        "__defaults__",
        (("uniform", "diagonal"),) + example.exp.frobenius_error_table.__defaults__[1:],
    )
    monkeypatch.setattr(
        example.exp.score_timing_table,
        "__defaults__",
        (("diagonal",),) + example.exp.score_timing_table.__defaults__[1:],
    )
    out = tmp_path / "ny"
    example.main(quick=True, out=str(out))
    assert sorted(p.name for p in out.iterdir()) == [
        "nystrom_error_digits.png",
        "nystrom_error_generated.png",
        "nystrom_score_time_digits.png",
        "nystrom_score_time_generated.png",
    ]
    captured = capsys.readouterr()
    assert f"figures written to {out}" in captured.out
    assert f"writing the figures to {out}" in captured.err


def test_label_cost_example_writes_under_out(tmp_path):
    """The example's quick size writes its table and figure under --out, and nothing else."""
    out = tmp_path / "lc"
    tables = _load("label_cost").main(["--quick", "--out", str(out)])
    assert sorted(p.name for p in out.iterdir()) == ["label_cost.md", "label_cost.png"]
    assert [t.metric for t in tables] == ["mse", "accuracy"]
    text = (out / "label_cost.md").read_text()
    assert "diabetes (2 repetitions)" in text and "breast-cancer (2 repetitions)" in text
    assert text.count("| best") == 2 and "quickmeans" in text
