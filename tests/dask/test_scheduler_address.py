"""`--scheduler`: a bad address fails within seconds with one clear error (exit 2), never a
hang, a traceback or an allocation of exabytes. Loopback servers only."""

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from sparsekit.cli import main  # noqa: E402
from sparsekit.run import runner  # noqa: E402
from sparsekit.run.runner import connect  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SPEC = (
    'task = "nystrom"\n[data]\nsource = "blobs"\nn_samples = 40\n[kernel]\nname = "rbf"\n'
    'gamma = 0.3\n[sampler]\nname = "uniform"\n[params]\nn_components = 5\n'
)

#: what a server that is not Dask may answer: bytes read as an impossible frame count, an HTTP
#: reply (its first 8 bytes read as a 3.07 EiB frame length), one frame whose length is cut
#: short (struct.error), one byte, nothing at all
GARBAGE = {
    "ff": b"\xff" * 16,
    "http": b"HTTP/1.1 400 Bad Request\r\n\r\n",
    "frames": b"\x01" + b"\x00" * 7 + b"\xff" * 8,
    "short": b"\x01",
    "closed": b"",
}


@pytest.fixture
def garbage_server(request):
    """``tcp://127.0.0.1:PORT`` of a server that answers every connection with the given bytes
    and closes it."""
    payload = GARBAGE[request.param]
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                try:
                    conn.sendall(payload)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{srv.getsockname()[1]}"
    stop.set()
    thread.join()
    srv.close()


def _closed_port():
    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


@pytest.mark.parametrize(
    "address", ["local:0", "local:x", "local:-1", "local:", "local:1.5", "local: 2", "local:1_0"]
)
def test_local_needs_a_positive_integer_and_is_refused_at_once(address, monkeypatch):
    import distributed

    def no_cluster(*args, **kwargs):
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(distributed, "LocalCluster", no_cluster)
    with pytest.raises(ValueError, match=r"expected local:N with N an integer >= 1"):
        connect(address)


def test_local_with_thousands_of_workers_is_refused_at_once(monkeypatch):
    import distributed

    from sparsekit.run.runner import MAX_LOCAL_WORKERS_PER_CPU

    def no_cluster(*args, **kwargs):
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(distributed, "LocalCluster", no_cluster)
    limit = MAX_LOCAL_WORKERS_PER_CPU * (os.cpu_count() or 1)
    with pytest.raises(ValueError, match=rf"takes at most {limit} .*e\.g\. local:"):
        connect(f"local:{limit + 1}")


@pytest.mark.parametrize("garbage_server", list(GARBAGE), indirect=True)
def test_a_server_that_is_not_dask_is_one_clear_connection_error(garbage_server):
    t0 = time.perf_counter()
    with pytest.raises(ConnectionError, match=garbage_server) as info:
        connect(garbage_server, timeout=2)
    assert time.perf_counter() - t0 < 5.0
    assert "Dask scheduler" in str(info.value)


def test_a_closed_port_is_one_clear_connection_error():
    address = f"tcp://127.0.0.1:{_closed_port()}"
    t0 = time.perf_counter()
    with pytest.raises(ConnectionError, match=f"could not reach the Dask scheduler at '{address}'"):
        connect(address, timeout=1)
    assert time.perf_counter() - t0 < 5.0


def test_a_server_that_never_answers_times_out():
    with socket.create_server(("127.0.0.1", 0)) as srv:  # listens, never accepts or answers
        address = f"tcp://127.0.0.1:{srv.getsockname()[1]}"
        t0 = time.perf_counter()
        with pytest.raises(ConnectionError, match=address):
            connect(address, timeout=1)
        assert time.perf_counter() - t0 < 5.0


def test_a_scheduler_without_workers_is_refused_after_the_worker_timeout():
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        t0 = time.perf_counter()
        with pytest.raises(ConnectionError, match=f"scheduler at '{address}' has no worker"):
            connect(address, timeout=5, worker_timeout=1)
        assert time.perf_counter() - t0 < 5.0


@pytest.mark.parametrize("garbage_server", ["http", "frames"], indirect=True)
def test_cli_exits_2_with_the_address_and_writes_nothing(
    garbage_server, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(runner, "SCHEDULER_TIMEOUT_S", 2)
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    rc = main(["run", str(spec), "--out", str(out), "--scheduler", garbage_server])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("sparsekit run: error: ") and garbage_server in err
    assert "Traceback" not in err
    assert not out.exists()


def test_cli_local_0_exits_2_at_once(tmp_path):
    """It used to start a cluster with no workers and wait for one forever."""
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "PYTHONPATH": str(ROOT)}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "sparsekit",
            "run",
            str(spec),
            "--out",
            str(tmp_path / "out"),
            "--scheduler",
            "local:0",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 2
    assert "local:N with N an integer >= 1" in res.stderr
    assert not (tmp_path / "out").exists()


def test_local_cluster_without_a_worker_closes_its_client_and_cluster(monkeypatch):
    distributed = pytest.importorskip("distributed")

    closed = []

    class Cluster:
        def __init__(self, **kwargs):
            pass

        def close(self):
            closed.append("cluster")

    class Client:
        def __init__(self, cluster):
            pass

        def wait_for_workers(self, n, timeout):
            raise TimeoutError("no worker")

        def close(self):
            closed.append("client")

    monkeypatch.setattr(distributed, "LocalCluster", Cluster)
    monkeypatch.setattr(distributed, "Client", Client)
    with pytest.raises(ConnectionError, match="'local:1' has no worker after 0.5 s"):
        connect("local:1", worker_timeout=0.5)
    assert closed == ["client", "cluster"]


def test_scheduler_error_says_whether_the_server_closed_or_was_unreachable(monkeypatch):
    pytest.importorskip("distributed")
    import distributed.comm
    from distributed.comm import CommClosedError

    for exc, says in [
        (CommClosedError("closed"), "closed the connection during Dask's handshake"),
        (OSError("refused"), "could not reach the Dask scheduler at 'tcp://h:1' within 1 s"),
    ]:

        async def fail(*args, _exc=exc, **kwargs):
            raise _exc

        monkeypatch.setattr(distributed.comm, "connect", fail)
        with pytest.raises(ConnectionError, match=says):
            connect("tcp://h:1", timeout=1)
