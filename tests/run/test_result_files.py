"""The result files of ``sparsekit run`` under crashes, full disks, Ctrl-C, a second process and
runs that fail then succeed: nothing finished is lost, nothing is recorded twice.

Machine failures are real ones, in a child process: a file-size limit (``RLIMIT_FSIZE``; Python
ignores ``SIGXFSZ``, so writes past the limit fail with ``EFBIG`` as on a full disk) and
``SIGINT``.
"""

import csv
import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sparsekit.cli import main
from sparsekit.run import Task

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX resource limits and signals")

ROOT = Path(__file__).resolve().parents[2]

#: the child process: registers the task ``test-echo`` (sleeps $SLOW seconds) in its own
#: process-wide registry, sets the file-size limit $FSIZE (bytes) once everything is imported,
#: then runs ``sparsekit`` with its arguments
CHILD = """
import os, resource, sys, time
from sparsekit.cli import main
from sparsekit.plugins import hookimpl
from sparsekit.registry import default_registry
from sparsekit.run import Task

def echo(ctx):
    time.sleep(float(os.environ.get("SLOW", "0")))
    return {"k": ctx.params["k"], "note": "finished"}

class Echo:
    @hookimpl
    def sparsekit_tasks(self):
        yield Task("test-echo", echo, {"k": 0}).registration()

default_registry().register(Echo())
limit = int(os.environ.get("FSIZE", "0"))
if limit:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.exit(main(sys.argv[1:]))
"""


def _echo(name):
    """A task that reports its parameter ``k``."""
    return Task(name, lambda ctx: {"k": ctx.params["k"]}, {"k": 0})


def _spec(tmp_path, n_runs):
    path = tmp_path / "spec.toml"
    path.write_text(
        'task = "test-echo"\n[data]\nsource = "uniform"\nn_samples = 4\n'
        f"n_features = 2\n[params]\nk = {list(range(n_runs))}\n"
    )
    return path


def _child(args, *, fsize=0, slow=0.0, wait=True):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FSIZE": str(fsize), "SLOW": str(slow)}
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, *map(str, args)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    if not wait:
        return proc
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def _lines(out):
    return (Path(out) / "results.jsonl").read_text().splitlines()


def _ids(out):
    return [json.loads(line)["run_id"] for line in _lines(out)]


def _no_tmp(out):
    return not [p.name for p in Path(out).iterdir() if p.name.endswith(".tmp")]


def test_resume_rewrite_past_a_file_size_limit_keeps_every_finished_row(tmp_path):
    """Resume after a crash rewrites results.jsonl without its cut line; the rewrite failing
    (here: a file-size limit below the file's size) leaves the file as it was."""
    spec, out = _spec(tmp_path, 12), tmp_path / "out"
    rc, _, err = _child(["run", spec, "--out", out])
    assert rc == 0, err
    finished = _ids(out)
    assert len(set(finished)) == 12
    with open(out / "results.jsonl", "a") as fh:  # a crash in the middle of a row
        fh.write('{"run_id": "ab')
    before = (out / "results.jsonl").read_bytes()
    rc, _, err = _child(["run", spec, "--out", out], fsize=len(before) // 2)
    assert (out / "results.jsonl").read_bytes() == before and _no_tmp(out)
    assert rc == 1 and "Traceback" not in err, err
    assert f"no space left in {out}; free space and re-run the same command to resume" in err
    rc, _, err = _child(["run", spec, "--out", out])
    assert rc == 0, err
    assert sorted(_ids(out)) == sorted(finished)  # every row once, the cut line gone


def test_full_disk_while_recording_a_run_leaves_no_partial_line(tmp_path):
    """A row that does not fit is cut back out of results.jsonl (no partial line), the CSV
    and no ``.tmp`` file stay behind; the same command then resumes."""
    out, spec = tmp_path / "out", _spec(tmp_path, 6)
    rc, _, err = _child(["run", spec, "--out", out])
    assert rc == 0, err
    lines = (out / "results.jsonl").read_text().splitlines(keepends=True)
    (out / "results.jsonl").write_text("".join(lines[:3]))  # 3 runs left to do
    before = (out / "results.jsonl").read_bytes()
    rc, _, err = _child(["run", spec, "--out", out], fsize=len(before) + 10)
    assert (out / "results.jsonl").read_bytes() == before and _no_tmp(out)
    assert rc == 1 and "Traceback" not in err, err
    assert f"no space left in {out}; free space and re-run the same command to resume" in err
    rc, _, err = _child(["run", spec, "--out", out])
    assert rc == 0, err
    assert len(_ids(out)) == len(set(_ids(out))) == 6


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_a_stopped_run_keeps_what_finished_and_resume_completes_it(tmp_path, monkeypatch, sig):
    """Ctrl-C says how many runs are recorded (exit 130, no traceback); after Ctrl-C or
    ``kill -9`` the same command runs the rest, every run recorded once."""
    spec, out = _spec(tmp_path, 3), tmp_path / "out"
    proc = _child(["run", spec, "--out", out], slow=3.0, wait=False)
    try:
        deadline = time.monotonic() + 90
        while not ((out / "results.jsonl").exists() and _lines(out)):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.05)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    n = len(_lines(out))
    assert 1 <= n < 3
    if sig == signal.SIGINT:
        assert proc.returncode == 130 and "Traceback" not in err, err
        assert f"interrupted after {n} of 3 runs; re-run the same command to resume" in err
    monkeypatch.setenv("SLOW", "0")
    rc, _, err = _child(["run", spec, "--out", out])
    assert rc == 0, err
    assert len(_ids(out)) == len(set(_ids(out))) == 3 and _no_tmp(out)


def test_second_process_on_the_same_folder_is_refused(tmp_path, capsys, private_registry):
    spec, out = _spec(tmp_path, 3), tmp_path / "out"
    proc = _child(
        ["run", spec, "--out", out], slow=4.0, wait=False
    )  # 8 s left after the first row, even on a loaded machine
    try:
        deadline = time.monotonic() + 90
        while not ((out / "results.jsonl").exists() and _lines(out)):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.05)
        private_registry(_echo("test-echo"), process_wide=True)
        assert main(["run", str(spec), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"{out} is in use by process {proc.pid} on {platform.node()} (started " in err
        _, child_err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, child_err
    assert len(_ids(out)) == len(set(_ids(out))) == 3  # every run once, by the lock holder


def test_the_lock_is_released_when_its_holder_ends(tmp_path):
    from sparsekit.run.results import FolderLock

    with FolderLock(tmp_path):
        with pytest.raises(RuntimeError, match=f"process {os.getpid()} on "):
            FolderLock(tmp_path).__enter__()
    with FolderLock(tmp_path):
        pass


@pytest.mark.parametrize("scheduler", [None, "dask"])
def test_a_failed_run_that_succeeds_later_is_recorded_once_as_ok(
    tmp_path, capsys, scheduler, private_registry
):
    """One outcome per run id, the latest, in both files; the exit code follows it."""
    args = []
    if scheduler == "dask":
        distributed = pytest.importorskip("distributed")
        # worker threads of this process: they see the task registered here
        cluster = distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        )
        args = ["--scheduler", cluster.scheduler_address]
    failing = {0, 2}

    def flaky(ctx):
        if ctx.params["k"] in failing:
            raise RuntimeError(f"k = {ctx.params['k']} failed")
        return {"k": ctx.params["k"]}

    private_registry(Task("test-echo", flaky, {"k": 0}), process_wide=True)
    spec, out = _spec(tmp_path, 4), tmp_path / "out"
    args = ["run", str(spec), "--out", str(out), *args]
    try:
        assert main(args) == 1
        failing.clear()
        assert main(args) == 0
        capsys.readouterr()
        assert main(args) == 0  # and stays so, with nothing left to run
        assert "4 run(s), 4 already in" in capsys.readouterr().out
    finally:
        if scheduler == "dask":
            cluster.close()
    rows = [json.loads(line) for line in _lines(out)]
    assert len(rows) == len({r["run_id"] for r in rows}) == 4
    assert all(r["status"] == "ok" and r["error"] == "" for r in rows)
    with open(out / "results.csv") as fh:
        table = list(csv.DictReader(fh))
    assert sorted(r["run_id"] for r in table) == sorted(r["run_id"] for r in rows)
    assert {r["status"] for r in table} == {"ok"}


def test_files_with_earlier_outcomes_are_cleaned_on_resume(tmp_path):
    """A results.jsonl with an error row then an ok row for one run id (as two processes or an
    earlier version wrote them), and a run cut between two of its rows: the latest complete
    outcome stays, once."""
    from sparsekit.run.results import read_results

    path = tmp_path / "results.jsonl"
    rows = [
        {"run_id": "a", "status": "error", "error": "boom"},
        {"run_id": "b", "status": "ok", "error": "", "v": 1},
        {"run_id": "a", "status": "ok", "error": "", "v": 2},
        {"run_id": "c", "status": "ok", "error": "", "row": 0, "n_rows": 2},
        {"run_id": "c", "status": "ok", "error": "", "row": 1, "n_rows": 2},
        {"run_id": "d", "status": "ok", "error": "", "row": 0, "n_rows": 2},
        {"run_id": "b", "status": "ok", "error": "", "v": 3},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kept, changed = read_results(path)
    assert changed
    assert [(r["run_id"], r.get("v"), r.get("row")) for r in kept] == [
        ("a", 2, None),
        ("c", None, 0),
        ("c", None, 1),
        ("b", 3, None),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in kept))
    assert read_results(path) == (kept, False)


def test_planted_temporary_files_are_not_followed_and_clean_files_are_not_rewritten(
    tmp_path, private_registry
):
    """``results.csv.tmp`` and ``results.jsonl.tmp`` planted as symlinks to a file outside the
    folder: the file stays untouched and the results are regular files in the folder. A resume
    of a clean ``results.jsonl`` leaves it as it is (no rewrite)."""
    private_registry(_echo("test-echo"), process_wide=True)
    spec, out = _spec(tmp_path, 2), tmp_path / "out"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    out.mkdir()
    for name in ("results.csv.tmp", "results.jsonl.tmp"):
        (out / name).symlink_to(victim)
    assert main(["run", str(spec), "--out", str(out)]) == 0
    with open(out / "results.jsonl", "a") as fh:  # a cut line: resume rewrites the file
        fh.write('{"run_id": "ab')
    assert (out / "results.jsonl.tmp").is_symlink()  # still there: nothing rewrote the JSONL
    (out / "results.csv.tmp").symlink_to(victim)
    assert main(["run", str(spec), "--out", str(out)]) == 0
    assert victim.read_text() == "keep me\n"
    for name in ("results.csv", "results.jsonl"):
        assert not (out / name).is_symlink()
    assert _no_tmp(out) and len(_ids(out)) == 2
    clean = (out / "results.jsonl").stat()
    assert main(["run", str(spec), "--out", str(out)]) == 0
    again = (out / "results.jsonl").stat()
    assert (again.st_ino, again.st_mtime_ns) == (clean.st_ino, clean.st_mtime_ns)


def test_ctrl_c_on_the_dask_path_keeps_what_finished(
    tmp_path, capsys, monkeypatch, private_registry
):
    """Ctrl-C while waiting for Dask results (here raised after the first result): the recorded
    run stays, the message counts it, and the same command finishes the rest."""
    distributed = pytest.importorskip("distributed")

    class FirstThenCtrlC(distributed.as_completed):
        given = False

        def next_batch(self, block=True):
            if self.given:
                raise KeyboardInterrupt
            self.given = True
            return [next(self)]

    private_registry(_echo("test-echo"), process_wide=True)
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    )
    try:
        spec, out = _spec(tmp_path, 3), tmp_path / "out"
        args = ["run", str(spec), "--out", str(out), "--scheduler", cluster.scheduler_address]
        with monkeypatch.context() as m:
            m.setattr(distributed, "as_completed", FirstThenCtrlC)
            try:
                rc = main(args)
            except KeyboardInterrupt:
                pytest.fail("Ctrl-C escaped `sparsekit run` as a traceback")
            assert rc == 130
        assert len(_lines(out)) == 1
        assert (
            "interrupted after 1 of 3 runs; re-run the same command to resume"
            in capsys.readouterr().err
        )
        assert main(args) == 0
    finally:
        cluster.close()
    assert len(_ids(out)) == len(set(_ids(out))) == 3


def test_ctrl_c_while_a_run_is_recorded_keeps_it_in_both_files(
    tmp_path, monkeypatch, capsys, private_registry
):
    """SIGINT arriving between the JSONL append and the CSV rewrite is held back until the run
    is in both files (before: the row reached results.jsonl, not results.csv, and the message
    counted one run less)."""
    from sparsekit.run import results

    real_append = results.append_durable

    def append_then_interrupt(path, text):
        real_append(path, text)
        os.kill(os.getpid(), signal.SIGINT)  # delivered at once to this (main) thread

    monkeypatch.setattr(results, "append_durable", append_then_interrupt)
    private_registry(_echo("test-echo-inproc"), process_wide=True)
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'task = "test-echo-inproc"\n[data]\nsource = "uniform"\nn_samples = 4\n'
        "n_features = 2\n[params]\nk = [0, 1, 2]\n"
    )
    out = tmp_path / "out"
    assert main(["run", str(spec), "--out", str(out)]) == 130
    assert len(_lines(out)) == 1
    with open(out / "results.csv", newline="") as fh:
        assert [r["run_id"] for r in csv.DictReader(fh)] == _ids(out)
    assert "interrupted after 1 of 3 runs" in capsys.readouterr().err


def test_planted_plot_file_is_not_followed(tmp_path, capsys, private_registry):
    """The PNG of a ``[[plot]]`` named like a symlink planted in the folder (before: the link's
    target outside the folder was overwritten with the PNG): the target keeps its bytes and
    the plot is a regular PNG file in the folder (oracle: the PNG signature)."""
    private_registry(_echo("test-echo"), process_wide=True)
    spec, out = _spec(tmp_path, 2), tmp_path / "out"
    with open(spec, "a") as fh:
        fh.write('[[plot]]\nx = "params.k"\ny = "k"\nfile = "k.png"\n')
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    out.mkdir()
    (out / "k.png").symlink_to(victim)
    assert main(["run", str(spec), "--out", str(out)]) == 0
    assert victim.read_text() == "keep me\n"
    assert not (out / "k.png").is_symlink()
    assert (out / "k.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert _no_tmp(out)


def test_another_spec_into_an_existing_folder_is_refused(tmp_path, capsys, private_registry):
    """A folder holds the runs of one spec (before: a second spec's rows were mixed in and its
    ``spec.json`` overwrote the first, exit 0). Oracle: the folder's files, byte for byte,
    after the refused run; the same spec (another name, another plot) resumes."""
    private_registry(_echo("test-echo"), process_wide=True)
    spec, out = _spec(tmp_path, 2), tmp_path / "out"
    assert main(["run", str(spec), "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.name != ".lock"}
    other = tmp_path / "other.toml"
    other.write_text(spec.read_text().replace("k = [0, 1]", "k = [5, 6]"))
    for args in (
        [str(other)],
        [str(spec), "--repeat", "2"],
        [str(spec), "--set", "data.n_samples=5"],
    ):
        capsys.readouterr()
        assert main(["run", *args, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"{out} holds the runs of another spec" in err and "--out" in err
        after = {p.name: p.read_bytes() for p in out.iterdir() if p.name != ".lock"}
        assert after == before
    same = tmp_path / "renamed.toml"
    same.write_text('name = "x"\n' + spec.read_text() + '[[plot]]\nx = "params.k"\ny = "k"\n')
    assert main(["run", str(same), "--out", str(out)]) == 0
    assert "2 run(s), 2 already in" in capsys.readouterr().out


def test_folder_without_a_digest_resumes_only_its_own_runs(tmp_path, capsys, private_registry):
    """A folder written before the spec's digest was kept (no ``spec.sha256``): resumed when all
    its run ids are runs of the spec, refused when one is not (an error row of an earlier spec
    kept the exit status at 1 for ever before)."""
    private_registry(_echo("test-echo"), process_wide=True)
    spec, out = _spec(tmp_path, 2), tmp_path / "out"
    assert main(["run", str(spec), "--out", str(out)]) == 0
    (out / "spec.sha256").unlink()
    assert main(["run", str(spec), "--out", str(out)]) == 0
    assert (out / "spec.sha256").exists()
    (out / "spec.sha256").unlink()
    earlier = {"run_id": "0123456789ab", "task": "test-echo", "status": "error", "error": "x"}
    with open(out / "results.jsonl", "a") as fh:
        fh.write(json.dumps(earlier) + "\n")
    capsys.readouterr()
    assert main(["run", str(spec), "--out", str(out)]) == 2
    assert "holds the runs of another spec" in capsys.readouterr().err
