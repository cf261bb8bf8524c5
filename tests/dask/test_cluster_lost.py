"""`sparsekit run --scheduler`: a cluster lost mid-sweep (every worker gone, or the scheduler
gone) stops the sweep within a deadline, with one clear error that counts the recorded runs and
says how to resume; the same command on a working cluster then runs the rest, once each."""

import json
import re
import threading
import time

import pytest

distributed = pytest.importorskip("distributed")

from sparsekit.cli import main  # noqa: E402
from sparsekit.run import Task, runner  # noqa: E402

N_RUNS = 6
#: the most seconds `sparsekit run` may take to stop once the cluster is lost: the worker
#: deadline set below (1 s), plus closing the client
STOP_WITHIN_S = 20


@pytest.fixture
def slow_task(private_registry):
    """A task that takes 0.3 s, in a private registry that stands in for the process-wide one
    (``sparsekit run`` and the worker threads of the in-process cluster look there)."""

    def run(ctx):
        time.sleep(0.3)
        return {"k": ctx.params["k"]}

    private_registry(Task("test-slow", run, {"k": 0}), process_wide=True)


def _cluster():
    # worker threads of this process: they see the task registered here
    return distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    )


def _ids(out):
    lines = (out / "results.jsonl").read_text().splitlines()
    return [json.loads(line)["run_id"] for line in lines]


def _run_and_lose(tmp_path, cluster, lose):
    """``sparsekit run`` on ``cluster``; ``lose(cluster)`` once the first run is recorded.
    Returns the exit code (None: still running after STOP_WITHIN_S), the seconds it took from
    the loss, and the folder."""
    spec, out = tmp_path / "spec.toml", tmp_path / "out"
    spec.write_text(
        'task = "test-slow"\n[data]\nsource = "uniform"\nn_samples = 4\n'
        f"n_features = 2\n[params]\nk = {list(range(N_RUNS))}\n"
    )
    args = ["run", str(spec), "--out", str(out), "--scheduler", cluster.scheduler_address]
    outcome = {}
    sweep = threading.Thread(target=lambda: outcome.update(rc=main(args)), daemon=True)
    sweep.start()
    while not ((out / "results.jsonl").exists() and _ids(out)):
        assert sweep.is_alive(), outcome
        time.sleep(0.02)
    lose(cluster)
    lost_at = time.monotonic()
    sweep.join(STOP_WITHIN_S)
    return outcome.get("rc"), time.monotonic() - lost_at, out, args


def _resume(args, out):
    """The same command on a working cluster (a new address) completes the sweep."""
    cluster = _cluster()
    try:
        assert main([*args[:-1], cluster.scheduler_address]) == 0
    finally:
        cluster.close()
    assert len(_ids(out)) == len(set(_ids(out))) == N_RUNS


def _no_workers(cluster):
    cluster.scale(0)


def _no_scheduler(cluster):
    cluster.close()  # the scheduler, and its workers


@pytest.mark.parametrize(
    "lose, says",
    [
        (_no_workers, "the Dask cluster has had no worker for 1 s"),
        (_no_scheduler, "lost the Dask scheduler mid-sweep"),
    ],
)
def test_cluster_lost_mid_sweep_stops_with_a_resume_hint(
    tmp_path, capsys, monkeypatch, slow_task, lose, says
):
    """Oracle: the contract of `sparsekit run` (exit 2 with one error line, never a hang or a
    traceback; the recorded runs stay, and resuming runs each of the others once), with the
    run ids counted from results.jsonl."""
    monkeypatch.setattr(runner, "WORKER_TIMEOUT_S", 1)
    cluster = _cluster()
    try:
        rc, took, out, args = _run_and_lose(tmp_path, cluster, lose)
    finally:
        cluster.close()
    assert rc == 2, f"still running {STOP_WITHIN_S} s after the loss" if rc is None else rc
    assert took < STOP_WITHIN_S
    err = capsys.readouterr().err
    recorded = len(_ids(out))
    assert 1 <= recorded < N_RUNS
    assert says in err
    assert f"{recorded} of {N_RUNS} runs are recorded in {out}" in err
    assert "with the cluster working again, re-run the same command to resume" in err
    assert "Traceback" not in err
    _resume(args, out)


class _FakeClient:
    """A client whose scheduler has no worker: as a release of distributed before
    ``identity(n_workers=...)`` answers (every worker's details, no count), or no connection."""

    def __init__(self, status):
        self.status = status

    def scheduler_info(self, **kwargs):
        return {"type": "Scheduler", "workers": {}}


class _NeverDone:
    """``distributed.as_completed`` over futures that never finish."""

    def __init__(self, futures):
        pass

    def is_empty(self):
        return False

    def next_batch(self, block=True):
        return []


@pytest.mark.parametrize(
    "status, says",
    [
        ("running", "the Dask cluster has had no worker for 0.3 s"),
        ("connecting", "lost the Dask scheduler mid-sweep (no connection for 0.3 s)"),
    ],
)
def test_no_worker_or_no_connection_stops_waiting_at_the_deadline(monkeypatch, status, says):
    """Oracle: the deadline (0.3 s) measured by the clock, and the reason the client shows."""
    from sparsekit.run._dask import ClusterLostError, completed

    monkeypatch.setattr(distributed, "as_completed", _NeverDone)
    start = time.monotonic()
    with pytest.raises(ClusterLostError, match=re.escape(says)):
        next(completed(_FakeClient(status), [object()], worker_timeout=0.3, poll=0.01))
    assert 0.3 <= time.monotonic() - start < 5


class _Clock:
    """``time`` of the waiting loop: one second passes at every poll."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.now += 1.0


class _FlakyClient:
    """A client whose scheduler answers with no worker at some polls (a worker restarting)."""

    status = "running"

    def __init__(self, workers):
        self.workers = iter(workers)

    def scheduler_info(self, n_workers=0):
        return {"type": "Scheduler", "n_workers": next(self.workers), "workers": {}}


class _DoneAfter:
    """``distributed.as_completed`` whose one future finishes at poll ``n``."""

    n = 0

    def __init__(self, futures):
        self.futures, self.polls = list(futures), 0

    def is_empty(self):
        return not self.futures

    def next_batch(self, block=True):
        self.polls += 1
        if self.polls < self.n:
            return []
        batch, self.futures = self.futures, []
        return batch


class _Done:
    def result(self):
        return "ok"


def test_the_worker_deadline_counts_from_the_last_poll_with_a_worker(monkeypatch):
    """Oracle: the documented deadline, "seconds the cluster may have no worker", on a clock
    that advances one second a poll: gaps of 2 s without a worker, with workers between them
    (as ``scheduler_info(n_workers=0)`` reports them: a count, no details), never reach a
    deadline of 2.5 s."""
    from sparsekit.run import _dask

    monkeypatch.setattr(_dask, "time", _Clock())
    monkeypatch.setattr(_DoneAfter, "n", 12)
    monkeypatch.setattr(distributed, "as_completed", _DoneAfter)
    client = _FlakyClient([0, 0, 0, 2] * 5)
    fut = _Done()
    assert list(_dask.completed(client, [fut], worker_timeout=2.5)) == [(fut, "ok")]
