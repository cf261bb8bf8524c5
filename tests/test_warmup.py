"""``sparsekit warmup`` fills Numba's cache: a later process loads every kernel, compiles none."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sparsekit import _warmup
from sparsekit.cli import main

ROOT = Path(__file__).resolve().parents[1]

#: a fresh process calls the vector kernels and reports, per compiled function, (hits, misses)
CHECK = """
import numpy as np, sparsekit
from sparsekit.kernels import _cpu
X = np.random.default_rng(0).random((30, 4))
for dt in (np.float64, np.float32):
    for name in ("rbf", "laplacian", "chi2"):
        sparsekit.get_kernel(name)(X.astype(dt))
for f in (_cpu._scaled_sq_dist_rows, _cpu._l1_distances_rows, _cpu._chi2_sums_rows):
    print(f.__name__, sum(f.stats.cache_hits.values()), sum(f.stats.cache_misses.values()))
"""


def _run(args, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, cwd=ROOT, timeout=600
    )


def test_warmup_fills_the_cache_for_both_dtypes(tmp_path):
    cache = tmp_path / "numba-cache"
    done = _run(["-m", "sparsekit.cli", "warmup", "kernels"], cache)
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("compiled sparsekit's Numba kernels (kernels;") and " s; cache: " in last
    assert last.endswith(str(cache))
    assert "[1/10] kernel rbf float64" in done.stderr  # plain progress lines off a terminal
    assert list(cache.rglob("*.nbi")) and list(cache.rglob("*.nbc"))
    check = _run(["-c", CHECK], cache)
    assert check.returncode == 0, check.stderr
    counts = {
        name: (int(h), int(m))
        for name, h, m in (line.split() for line in check.stdout.strip().splitlines())
    }
    assert len(counts) == 3
    for name, (hits, misses) in counts.items():
        assert misses == 0 and hits == 2, (name, hits, misses)  # float64 and float32 loaded


def test_warmup_rejects_an_unknown_family(capsys):
    assert main(["warmup", "solver"]) == 2
    assert "unknown warm-up famil" in capsys.readouterr().err
    with pytest.raises(ValueError, match="choose from"):
        _warmup.entry_points(["kernel"])


def test_every_family_has_entry_points_with_unique_labels():
    labels = [label for label, _ in _warmup.entry_points()]
    assert len(labels) == len(set(labels))
    for word in (
        "omp",
        "nn-omp",
        "frank-wolfe",
        "mp",
        "shortest-path",
        "Fastfood",
        "greedy-trace",
        "chi2",
    ):
        assert any(word in label for label in labels), word
