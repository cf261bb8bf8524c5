"""Rules of the run engine against outside oracles: the seeds and run ids of a sweep, what a
resume runs again, the durability calls of the result files (``os.fsync`` spied), the rows of
failed and multi-row runs, and the sweep limit at its boundary."""

import csv
import io
import json
import os

import pytest

from sparsekit.run import Task, load_spec, plan, results, run_spec
from sparsekit.run.spec import SpecError

SPEC = """
task = "rules-echo"
repeat = 3
seed = {seed}
[data]
source = "uniform"
n_samples = 4
n_features = 2
[params]
k = [1, 2]
"""


@pytest.fixture
def echo(private_registry):
    """A task recording the seed of every call; ``k == fail`` raises. Yields the calls, the
    state and a private registry that holds the task."""
    calls = []
    state = {"fail": None}

    def run(ctx):
        calls.append((ctx.params["k"], ctx.seed))
        if ctx.params["k"] == state["fail"]:
            raise RuntimeError(f"k={ctx.params['k']} refused")
        return {"k": ctx.params["k"], "seed_seen": ctx.seed}

    return calls, state, private_registry(Task("rules-echo", run, {"k": 0}))


def _spec(registry, seed=0):
    return load_spec("rules.toml", text=SPEC.format(seed=seed), registry=registry)


def _jsonl(out):
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_each_repeat_runs_with_its_own_seed(tmp_path, echo):
    """Oracle: the rule ``seed + repeat`` — with seed 10 and 3 repeats each grid point runs
    with seeds 10, 11, 12, and the task sees the seed of its row."""
    calls, _, reg = echo
    run_spec(_spec(reg, seed=10), out=tmp_path, stream=io.StringIO(), registry=reg)
    assert sorted(calls) == [(k, s) for k in (1, 2) for s in (10, 11, 12)]
    rows = _jsonl(tmp_path)
    assert sorted((r["params.k"], r["repeat"], r["seed"]) for r in rows) == [
        (k, r, 10 + r) for k in (1, 2) for r in range(3)
    ]
    assert all(r["seed_seen"] == r["seed"] for r in rows)


def test_a_new_seed_is_a_new_run_and_a_resume_runs_nothing(tmp_path, echo):
    """Oracle: a run id names the point, the repeat *and* the seed — the plans of two seeds
    share no run id (the rows of one are never taken for the other's), while the same spec run
    again into its folder runs nothing."""
    calls, _, reg = echo
    a = {r["run_id"] for r in plan(_spec(reg, seed=0))}
    b = {r["run_id"] for r in plan(_spec(reg, seed=1))}
    assert len(a) == len(b) == 6 and not a & b
    run_spec(_spec(reg, seed=0), out=tmp_path, stream=io.StringIO(), registry=reg)
    assert {r["run_id"] for r in _jsonl(tmp_path)} == a
    run_spec(_spec(reg, seed=0), out=tmp_path, stream=io.StringIO(), registry=reg)
    assert len(calls) == 6


def test_a_failed_run_is_an_error_row_and_runs_again_on_resume(tmp_path, echo):
    """Oracle: the documented resume rule (only ``ok`` runs are skipped) — the error row names
    the exception, and once the task succeeds the run's one outcome in each file is ``ok``."""
    calls, state, reg = echo
    state["fail"] = 2
    run_spec(_spec(reg), out=tmp_path, stream=io.StringIO(), registry=reg)
    rows = _jsonl(tmp_path)
    bad = [r for r in rows if r["params.k"] == 2]
    assert len(bad) == 3 and all(r["status"] == "error" for r in bad)
    assert all(r["error"] == "RuntimeError: k=2 refused" for r in bad)
    assert all(r["status"] == "ok" and r["error"] == "" for r in rows if r["params.k"] == 1)
    state["fail"] = None
    run_spec(_spec(reg), out=tmp_path, stream=io.StringIO(), registry=reg)
    assert len(calls) == 9  # the 3 failed runs ran again, the 3 good ones did not
    lines = _jsonl(tmp_path)
    assert len(lines) == 6 and len({r["run_id"] for r in lines}) == 6  # one outcome per run
    assert all(r["status"] == "ok" for r in lines)
    with open(tmp_path / "results.csv") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 6 and {r["status"] for r in table} == {"ok"}


def test_every_recorded_run_is_fsynced_before_it_counts(tmp_path, echo, monkeypatch):
    """Oracle: ``os.fsync`` spied — each append of a run's rows and each atomic rewrite
    (temporary file and its folder) is flushed to the disk."""
    synced = []
    real_fsync = os.fsync

    def spy(fd):
        synced.append(os.readlink(f"/proc/self/fd/{fd}") if os.path.exists("/proc/self/fd") else fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    _, _, reg = echo
    run_spec(_spec(reg), out=tmp_path, stream=io.StringIO(), registry=reg)
    if not os.path.exists("/proc/self/fd"):
        pytest.skip("no /proc/self/fd to name the synced files")
    names = [os.path.basename(p) for p in synced]
    assert names.count("results.jsonl") == 6  # one append per run
    assert names.count("results.csv.tmp") == 6  # the table rewritten after each run
    assert names.count("spec.json.tmp") == names.count("meta.json.tmp") == 1
    # each rename made durable: one sync of the folder per temporary file
    renamed = sum(name.endswith(".tmp") for name in names)
    assert names.count(os.path.basename(str(tmp_path))) == renamed


def test_write_atomic_fsyncs_the_file_before_the_rename(tmp_path, monkeypatch):
    """Oracle: the order of the system calls, spied — data synced, renamed, folder synced."""
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: events.append("fsync") or real_fsync(fd))
    monkeypatch.setattr(os, "replace", lambda a, b: events.append("replace") or real_replace(a, b))
    results.write_atomic(tmp_path / "x.json", "{}\n")
    assert events == ["fsync", "replace", "fsync"]
    assert (tmp_path / "x.json").read_text() == "{}\n"


def test_a_failed_append_is_cut_back_to_the_previous_size(tmp_path, monkeypatch):
    """Oracle: the file's bytes before the append — a write that fails part-way leaves no
    partial line."""
    path = tmp_path / "results.jsonl"
    path.write_text('{"run_id": "a"}\n')
    real_write = os.write

    def half_then_full(fd, data):
        real_write(fd, bytes(data)[:5])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(OSError):
        results.append_durable(path, '{"run_id": "b", "x": 1}\n')
    monkeypatch.undo()
    assert path.read_text() == '{"run_id": "a"}\n'


def test_a_failed_rewrite_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    """Oracle: the folder's listing and the old bytes — ``write_atomic`` that fails keeps
    ``NAME`` whole and removes ``NAME.tmp``; a ``NAME.tmp`` left by a killed process does not
    stop the next rewrite."""
    path = tmp_path / "results.csv"
    path.write_text("old\n")

    def fail(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError):
        results.write_atomic(path, "new\n")
    monkeypatch.undo()
    assert path.read_text() == "old\n" and sorted(os.listdir(tmp_path)) == ["results.csv"]
    (tmp_path / "results.csv.tmp").write_text("left by a killed process")
    results.write_atomic(path, "new\n")
    assert path.read_text() == "new\n" and sorted(os.listdir(tmp_path)) == ["results.csv"]


def test_a_multi_row_run_cut_short_is_not_counted_done(tmp_path):
    """Oracle: ``n_rows`` written with the rows — two of three rows of a run are an incomplete
    set (dropped, the run runs again); all three are one whole outcome."""
    rows = [{"run_id": "r1", "status": "ok", "row": i, "n_rows": 3, "v": i} for i in range(3)]
    lines = [json.dumps(r) + "\n" for r in rows]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(lines[:2]))
    got, changed = results.read_results(path)
    assert got == [] and changed
    path.write_text("".join(lines))
    got, changed = results.read_results(path)
    assert got == rows and not changed


def test_a_list_of_metrics_gives_rows_numbered_with_their_count(tmp_path, private_registry):
    """Oracle: the list the task returned — rows ``0 .. n - 1``, each with ``n_rows = n``."""

    def three(ctx):
        return [{"part": i} for i in range(3)]

    reg = private_registry(Task("rules-three", three, {}))
    spec = load_spec("t.toml", text='task = "rules-three"\n[data]\nsource = "iris"\n', registry=reg)
    run_spec(spec, out=tmp_path, stream=io.StringIO(), registry=reg)
    rows = _jsonl(tmp_path)
    assert [(r["row"], r["n_rows"], r["part"]) for r in rows] == [(i, 3, i) for i in range(3)]


def test_resume_rebuilds_a_csv_that_lags_behind_the_jsonl(tmp_path, echo):
    """Oracle: the JSON Lines file — a crash between the two files (the CSV deleted here) is
    repaired at the next start, even with nothing left to run."""
    calls, _, reg = echo
    run_spec(_spec(reg), out=tmp_path, stream=io.StringIO(), registry=reg)
    (tmp_path / "results.csv").write_text("run_id\n")
    run_spec(_spec(reg), out=tmp_path, stream=io.StringIO(), registry=reg)
    assert len(calls) == 6
    with open(tmp_path / "results.csv") as fh:
        table = list(csv.DictReader(fh))
    assert sorted(r["run_id"] for r in table) == sorted(r["run_id"] for r in _jsonl(tmp_path))


@pytest.mark.parametrize("max_runs, refused", [(6, False), (5, True)])
def test_the_sweep_limit_refuses_only_more_runs_than_max_runs(tmp_path, echo, max_runs, refused):
    """Oracle: the count 2 points x 3 repeats = 6 — a limit of exactly 6 runs it, 5 refuses."""
    _, _, reg = echo
    text = f"max_runs = {max_runs}\n" + SPEC.format(seed=0)
    spec = load_spec("rules.toml", text=text, registry=reg)
    if refused:
        with pytest.raises(SpecError, match="6 runs, more than the limit of 5"):
            run_spec(spec, out=tmp_path / "o", stream=io.StringIO(), registry=reg)
        assert not (tmp_path / "o").exists()
    else:
        run_spec(spec, out=tmp_path / "o", stream=io.StringIO(), registry=reg)
        assert len(_jsonl(tmp_path / "o")) == 6


def test_a_second_holder_of_the_folder_lock_is_refused_at_once(tmp_path):
    """Oracle: ``flock`` semantics — a second open of the lock in the same process is another
    open file description, so a non-blocking exclusive lock must fail at once, not wait."""
    import threading

    outcome = []
    with results.FolderLock(tmp_path):

        def second():
            try:
                with results.FolderLock(tmp_path):
                    outcome.append("entered")
            except results.FolderInUseError as exc:
                outcome.append(str(exc))

        t = threading.Thread(target=second, daemon=True)
        t.start()
        t.join(10)
        assert not t.is_alive(), "the second FolderLock waited for the first"
    assert len(outcome) == 1 and f"process {os.getpid()}" in outcome[0]


def test_a_task_of_a_private_registry_runs_with_that_registry(tmp_path):
    """A task registered only in a private ``Registry`` (an embedding application's) passes
    ``load_spec(registry=)`` and runs with ``run_spec(registry=)``; the default registry does
    not know it, so every run was an error row before (oracle: the mean of iris' features
    computed with NumPy)."""
    import numpy as np
    from sklearn.datasets import load_iris

    from sparsekit.plugins import Registry, hookimpl

    def _mean(ctx):
        (X,) = ctx.need("X")
        return {"m": float(X.mean())}

    class Plugin:
        @hookimpl
        def sparsekit_tasks(self):
            yield Task("only-here", _mean, params={}).registration()

    reg = Registry(plugins=[Plugin()])
    spec = load_spec("s.toml", text='task = "only-here"\n[data]\nsource = "iris"\n', registry=reg)
    run_spec(spec, out=tmp_path, stream=io.StringIO(), registry=reg)
    (row,) = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert row["status"] == "ok", row["error"]
    assert row["m"] == pytest.approx(float(np.mean(load_iris().data)), rel=1e-12)
    with pytest.raises(ValueError, match="registry= runs in this process only"):
        run_spec(spec, out=tmp_path / "dask", registry=reg, scheduler="local:1")
