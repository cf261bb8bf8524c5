"""``sparsekit warmup`` fills Numba's cache: a later process loads every kernel, compiles none."""

import io
import os
import subprocess
import sys
import types
import warnings
from pathlib import Path

import numpy as np
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


def _labels(families):
    return [label for label, _ in _warmup.entry_points(families)]


def test_entry_points_take_each_named_family_once_in_the_canonical_order():
    """Oracle: each family's own maker (``_kernels`` for "kernels", ...): a selection is the
    concatenation of its families' makers in the order of FAMILIES, whatever the order or
    repetitions asked for."""
    own = {f: [label for label, _ in getattr(_warmup, f"_{f}")()] for f in _warmup.FAMILIES}
    assert all(own.values())
    assert _labels(_warmup.FAMILIES) == [label for f in _warmup.FAMILIES for label in own[f]]
    for f in _warmup.FAMILIES:
        assert _labels([f]) == own[f]
    assert _labels(["solvers", "graphs", "solvers"]) == own["graphs"] + own["solvers"]
    assert all(label.startswith("sampler ") for label in own["samplers"])
    assert _labels([]) == []


class _Bar:
    """Stands in for tqdm: records its total, updates, descriptions and close."""

    def __init__(self, total, file, unit, leave, **kwargs):
        self.total, self.n, self.descriptions, self.closed = total, 0, [], False

    def set_description(self, text):
        self.descriptions.append(text)

    def update(self, n):
        self.n += n

    def close(self):
        self.closed = True


@pytest.fixture
def fake_jobs(monkeypatch):
    """Two fake entry points that record their dtype and warn, as tiny data makes them do."""
    calls = []

    def job(label):
        def fn(dtype):
            calls.append((label, dtype))
            warnings.warn("tiny data", RuntimeWarning, stacklevel=2)

        return label, fn

    monkeypatch.setattr(_warmup, "entry_points", lambda families: [job("a"), job("b")])
    return calls


class _Stream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self._tty = tty

    def isatty(self):
        return self._tty


def test_warm_up_runs_each_entry_point_for_each_dtype_and_prints_to_its_stream(fake_jobs, capsys):
    """Oracle: recording fake entry points; one plain line per (entry point, dtype), counted
    from 1, on the stream given; the entry points' warnings stay inside."""
    stream = _Stream(tty=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        elapsed = _warmup.warm_up(["kernels"], dtypes=("float32", "float64"), stream=stream)
    assert caught == [] and elapsed >= 0
    assert fake_jobs == [("a", np.float32), ("a", np.float64), ("b", np.float32), ("b", np.float64)]
    assert all(type(dt) is type for _, dt in fake_jobs)
    lines = stream.getvalue().splitlines()
    heads = [line.split(":")[0] for line in lines]
    assert heads == ["[1/4] a float32", "[2/4] a float64", "[3/4] b float32", "[4/4] b float64"]
    assert capsys.readouterr().err == ""


def test_warm_up_draws_one_bar_on_a_terminal_and_closes_it(fake_jobs, monkeypatch):
    """Oracle: a recording bar in place of tqdm: total = entry points x dtypes, one update per
    job, closed at the end; off a terminal no bar is made."""
    bars = []
    module = types.ModuleType("tqdm.auto")
    module.tqdm = lambda **kwargs: bars.append(_Bar(**kwargs)) or bars[-1]
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", module)
    tty = _Stream(tty=True)
    _warmup.warm_up(["kernels"], dtypes=("float64", "float32", "float16"), stream=tty)
    (bar,) = bars
    assert bar.total == 6 and bar.n == 6 and bar.closed and tty.getvalue() == ""
    assert bar.descriptions[0] == "a float64" and bar.descriptions[-1] == "b float16"
    _warmup.warm_up(["kernels"], dtypes=("float64",), stream=_Stream(tty=False))
    assert len(bars) == 1


def test_cache_location_is_numbas_cache_dir_when_set(monkeypatch, tmp_path):
    """Oracle: ``numba.config.CACHE_DIR`` (what ``NUMBA_CACHE_DIR`` sets), made absolute."""
    from numba import config

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(config, "CACHE_DIR", "cache-here")
    assert _warmup.cache_location() == str(tmp_path / "cache-here")
    monkeypatch.setattr(config, "CACHE_DIR", "")
    assert _warmup.cache_location().endswith(" (the __pycache__ folder of each module)")


def test_warm_up_writes_plain_lines_to_a_stream_without_isatty(fake_jobs):
    """Oracle: a write-only object (a logging handler's stream has no ``isatty``) is not a
    terminal, as for the progress bars of ``sparsekit._runtime.progress``: plain lines, no error."""

    class WriteOnly:
        def __init__(self):
            self.text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    stream = WriteOnly()
    _warmup.warm_up(["kernels"], dtypes=("float64",), stream=stream)
    assert [line.split(":")[0] for line in stream.text.splitlines()] == [
        "[1/2] a float64",
        "[2/2] b float64",
    ]
