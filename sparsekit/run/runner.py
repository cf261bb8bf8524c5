"""Execute a spec: expand the grid, run each point (here or on a Dask cluster), record rows.

Output folder (``--out``, default ``runs/<spec-name>-<UTC timestamp>/``):

- ``results.jsonl``: one JSON object per finished run, appended as soon as it finishes (a crash
  loses nothing that finished; NaN and infinities are written as ``null``, strict JSON);
  ``results.csv``: the same rows as a table, rewritten after each;
- ``spec.json``: the resolved spec (after ``--set``, ``--repeat``, ``--seed``);
  ``spec.sha256``: its digest (:meth:`~sparsekit.run.spec.Spec.digest`): a folder holds the
  runs of one spec, and running another spec into it is refused;
- ``meta.json``: library version, Python, platform, machine name, CPUs, thread count, scheduler;
- ``.lock``: held by the process writing into the folder (a second one is refused); see
  :mod:`sparsekit.run.results` for how each file is written.

Each row holds ``run_id`` (a hash of the grid point, its data path as the spec writes it, so
that moving the spec's folder keeps it, repeat index and seed), ``task``, the grid
point's values as dotted columns (``sampler.name``, ``params.n_components``, ...), ``repeat``,
``seed``, ``status`` (``ok`` or ``error``), ``error`` and the task's metrics. A task that
returns a list of metric dicts (several rows from one run, e.g. one per estimator on the same
draws) gives one row each, with the same ``run_id``, their index ``row`` and their count
``n_rows``; they are written together. Running again into the same folder skips the run ids
already recorded with status ``ok`` and all their rows (resume); a failed run runs again and its
latest outcome replaces the earlier one (one outcome per run id, in both files).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ._dask import ClusterLostError
from .results import (
    _NOFOLLOW,
    NO_SPACE,
    FolderLock,
    NoSpaceError,
    Recorder,
    read_results,
    write_atomic,
)
from .spec import DEFAULT_MAX_RUNS, Spec, SpecError, count_points, count_runs, expand

if TYPE_CHECKING:
    from ..registry import Registry

#: local:N starts N worker processes: at most this many per CPU (a typo such as local:4000
#: would otherwise fork thousands of interpreters)
MAX_LOCAL_WORKERS_PER_CPU = 4
#: the file of the output folder that holds the digest of its spec (:meth:`Spec.digest`)
SPEC_DIGEST = "spec.sha256"
#: seconds to wait for a Dask scheduler before giving up
SCHEDULER_TIMEOUT_S = 10
#: seconds to wait for its first worker, and for a worker again when all are gone mid-sweep
WORKER_TIMEOUT_S = 60


def flatten(point: dict) -> dict:
    """``{"sampler": {"name": "x"}}`` -> ``{"sampler.name": "x"}`` (data source first)."""
    return {f"{sec}.{key}": value for sec, table in point.items() for key, value in table.items()}


def run_id(point: dict, repeat: int, seed: int) -> str:
    blob = json.dumps({"point": point, "repeat": repeat, "seed": seed}, sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:12]


def plan(spec: Spec) -> list[dict]:
    """List every run of the spec.

    Parameters
    ----------
    spec : Spec
        A spec from :func:`~sparsekit.run.spec.load_spec`.

    Returns
    -------
    list of dict
        ``{"run_id", "point", "repeat", "seed"}`` for every run, in execution order.
    """
    runs = []
    for point in expand(spec):
        for r in range(spec.repeat):
            seed = spec.seed + r
            rid = run_id(spec.as_written(point), r, seed)
            runs.append({"run_id": rid, "point": point, "repeat": r, "seed": seed})
    return runs


def execute_point(
    task_name: str,
    point: dict,
    seed: int,
    allow_pickle: bool = False,
    registry: Registry | None = None,
) -> dict[str, Any] | list[dict[str, Any]]:
    """Run one grid point and return its metrics (raises on failure).

    Runs on Dask workers too.

    Parameters
    ----------
    task_name : str
        A registered task.
    point : dict
        One grid point: ``{section: {key: value}}`` without lists.
    seed : int
        The run's seed.
    allow_pickle : bool, default False
        Let a ``file`` data source read pickled objects.
    registry : Registry, optional
        Where the task and its components are looked up (default: the default registry).

    Returns
    -------
    dict or list of dict
        The task's metrics.
    """
    from . import data as data_mod
    from .tasks import get_task, run_task

    task = get_task(task_name, registry)
    data = data_mod.load(point["data"], seed=seed, allow_pickle=allow_pickle)
    return run_task(
        task.name,
        point.get("params", {}),
        data,
        {f: point.get(f, {}) for f in task.components},
        seed=seed,
        registry=registry,
    )


def _safe_point(task_name, point, seed, allow_pickle, registry=None):
    """``(status, metrics or message)``: a failed run becomes a row, not a crash of the sweep."""
    try:
        return "ok", execute_point(task_name, point, seed, allow_pickle, registry)
    except Exception as exc:  # recorded in the row with its type
        return "error", f"{type(exc).__name__}: {exc}"


def default_out(spec: Spec) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{spec.name}-{stamp}"


def machine_info(scheduler=None) -> dict:
    from .. import __version__
    from .._runtime.threads import effective_n_jobs, usable_cpus

    return {
        "sparsekit": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.node(),
        "processor": platform.processor() or platform.machine(),
        "cpus": usable_cpus(),
        "threads": effective_n_jobs(),
        "scheduler": scheduler,
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def check_size(spec: Spec, yes: bool, max_runs: int | None = None) -> None:
    """Refuse, unless ``yes``, a spec of more runs than the limit: the smaller of the caller's
    ``max_runs`` and the spec's own (a spec can lower the limit, never raise it). The runs are
    counted from the lengths of its lists (:func:`~sparsekit.run.spec.count_runs`), before any
    grid is built."""
    max_runs = DEFAULT_MAX_RUNS if max_runs is None else max_runs
    if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
        raise ValueError(f"max_runs (--max-runs) must be an integer >= 1, got {max_runs!r}")
    n_runs = count_runs(spec)
    limit = min(max_runs, spec.max_runs)
    if n_runs > limit and not yes:
        raise SpecError(
            f"{spec.source}: the sweep of {count_points(spec):,} grid point(s) x "
            f"{spec.repeat} repeat(s) expands to {n_runs:,} runs, more than the limit "
            f"of {limit:,}; pass --yes to go ahead, or raise the limit with --max-runs N "
            "(a spec's max_runs can only lower it)"
        )


def dry_run(
    spec: Spec, stream: TextIO | None = None, yes: bool = False, max_runs: int | None = None
) -> list[dict]:
    """Print the expanded grid (one line per run) and return the plan.

    A sweep of more runs than the limit needs ``yes``, as for :func:`run_spec`.

    Parameters
    ----------
    spec : Spec
        A spec from :func:`~sparsekit.run.spec.load_spec`.
    stream : file-like, optional
        Where to print (default ``sys.stdout``).
    yes : bool, default False
        Accept a sweep of more runs than the limit.
    max_runs : int, optional
        The limit (default 200); the spec's own ``max_runs`` can lower it, not raise it.

    Returns
    -------
    list of dict
        The plan (:func:`plan`).
    """
    check_size(spec, yes, max_runs)
    stream = stream or sys.stdout
    runs = plan(spec)
    grid = [flatten(r["point"]) for r in runs]
    varying = (
        [k for k in grid[0] if len({json.dumps(g[k], default=str) for g in grid}) > 1]
        if grid
        else []
    )
    print(
        f"{spec.name}: task {spec.task!r}, {count_points(spec)} grid point(s) x {spec.repeat} "
        f"repeat(s) = {len(runs)} run(s)",
        file=stream,
    )
    for i, (r, g) in enumerate(zip(runs, grid)):
        desc = ", ".join(f"{k}={g[k]!r}" for k in varying) or "(single point)"
        print(f"  [{i}] {r['run_id']} seed={r['seed']} {desc}", file=stream)
    return runs


def _scheduler_identity(address: str, timeout: float) -> dict:
    """The Dask ``identity`` of the server at ``address``, all within ``timeout`` seconds.

    ``distributed.Client`` waits for the handshake's reply without a time limit (a server that
    accepts and never answers hangs it), so the first exchange is made here under one deadline,
    in a thread of its own (the caller may be running an event loop).
    """
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.comm import connect as open_comm
    from distributed.core import send_recv

    async def identity():
        comm = await open_comm(address, timeout=timeout)
        try:
            return await send_recv(comm, op="identity")
        finally:
            comm.abort()

    async def bounded():
        return await asyncio.wait_for(identity(), timeout)

    with ThreadPoolExecutor(1) as pool:
        info = pool.submit(asyncio.run, bounded()).result()
    if not isinstance(info, dict):
        raise ValueError(f"its identity is a {type(info).__name__}, not a dict")
    return info


def check_scheduler(scheduler: str) -> None:
    """Check a ``--scheduler`` value without connecting: Dask installed, and ``local:N`` (N an
    integer from 1 to :data:`MAX_LOCAL_WORKERS_PER_CPU` per CPU) or an address Dask reads
    (``tcp://HOST:PORT``, ``HOST:PORT``, ...); else ``ValueError`` (``ModuleNotFoundError``
    without Dask), as ``--dry-run`` does."""
    try:
        from distributed.comm.addressing import get_address_host_port, parse_address
    except ModuleNotFoundError:
        raise ModuleNotFoundError("--scheduler needs Dask: pip install 'sparsekit[dask]'") from None
    if not isinstance(scheduler, str):
        raise TypeError(f"--scheduler must be a string, got {type(scheduler).__name__}")
    if scheduler.startswith("local:"):
        count = scheduler.split(":", 1)[1]
        if not re.fullmatch(r"[0-9]+", count) or int(count) < 1:
            raise ValueError(
                f"--scheduler {scheduler!r}: expected local:N with N an integer "
                ">= 1 (the number of worker processes), e.g. local:4"
            )
        cpus = os.cpu_count() or 1
        if int(count) > MAX_LOCAL_WORKERS_PER_CPU * cpus:
            raise ValueError(
                f"--scheduler {scheduler!r}: {int(count):,} worker processes on a "
                f"machine with {cpus} CPU(s); local:N takes at most "
                f"{MAX_LOCAL_WORKERS_PER_CPU * cpus} (each worker is a process "
                f"of its own), e.g. local:{cpus}"
            )
        return
    try:
        if parse_address(scheduler)[0] != "inproc":  # inproc: within this process only
            get_address_host_port(scheduler)
    except ValueError as exc:
        raise ValueError(
            f"--scheduler {scheduler!r}: not a Dask scheduler address ({exc}); give "
            "tcp://HOST:PORT or local:N"
        ) from None


def connect(scheduler: str, timeout: float | None = None, worker_timeout: float | None = None):
    """A ``distributed.Client`` for ``ADDRESS`` or ``local:N`` (a local cluster of N >= 1 worker
    processes), with at least one worker.

    ``local:N`` with anything but an integer N >= 1 raises ``ValueError``. Any failure to reach
    the scheduler within ``timeout`` seconds (default ``SCHEDULER_TIMEOUT_S``), or to complete
    Dask's handshake with it (a server that is not a Dask scheduler), and a cluster with no
    worker after ``worker_timeout`` seconds (default ``WORKER_TIMEOUT_S``) raise
    ``ConnectionError`` naming the address.
    """
    timeout = SCHEDULER_TIMEOUT_S if timeout is None else timeout
    worker_timeout = WORKER_TIMEOUT_S if worker_timeout is None else worker_timeout
    check_scheduler(scheduler)
    from distributed import Client, LocalCluster
    from distributed.comm import CommClosedError

    cluster = None
    if scheduler.startswith("local:"):
        count = scheduler.split(":", 1)[1]
        try:
            cluster = LocalCluster(
                n_workers=int(count), threads_per_worker=1, processes=True, dashboard_address=None
            )
            client = Client(cluster)
        except Exception as exc:  # noqa: BLE001 (whatever Dask raised, one clear error)
            if cluster is not None:
                cluster.close()
            raise ConnectionError(
                f"could not start the local Dask cluster {scheduler!r} "
                f"({type(exc).__name__}: {exc})"
            ) from None
    else:
        try:
            kind = _scheduler_identity(scheduler, timeout).get("type")
            if "Scheduler" not in str(kind):
                raise ValueError(f"it says it is a {kind!r}")
            client = Client(scheduler, timeout=timeout)
        except Exception as exc:  # noqa: BLE001 (garbage from a non-Dask server raises anything)
            why = f"{type(exc).__name__}: {str(exc)[:200]}"
            if isinstance(exc, CommClosedError):
                what = (
                    f"the server at {scheduler!r} closed the connection during Dask's "
                    "handshake (is it a Dask scheduler?)"
                )
            elif isinstance(exc, (OSError, TimeoutError)):
                what = f"could not reach the Dask scheduler at {scheduler!r} within {timeout:g} s"
            else:  # it answered, with bytes that are not Dask's protocol
                what = f"the server at {scheduler!r} is not a Dask scheduler"
            raise ConnectionError(
                f"{what} ({why}); check the address (tcp://HOST:PORT) and that "
                "a Dask scheduler is running there"
            ) from None
    try:
        client.wait_for_workers(1, timeout=worker_timeout)
    except Exception as exc:  # noqa: BLE001
        client.close()
        if cluster is not None:
            cluster.close()
        raise ConnectionError(
            f"the Dask scheduler at {scheduler!r} has no worker after {worker_timeout:g} s "
            f"({type(exc).__name__}); start workers with `dask worker {scheduler}`"
        ) from None
    return client, cluster


class Interrupted(KeyboardInterrupt):
    """Raised by Ctrl-C during :func:`run_spec`.

    The message says how many runs are recorded and how to resume (a ``KeyboardInterrupt``, so
    that callers that stop on Ctrl-C still do).
    """


def run_spec(
    spec: Spec,
    *,
    out: str | os.PathLike[str] | None = None,
    yes: bool = False,
    max_runs: int | None = None,
    allow_pickle: bool = False,
    scheduler: str | None = None,
    stream: TextIO | None = None,
    progress: bool | None = None,
    registry: Registry | None = None,
) -> Path:
    """Run every point of the spec not already in ``out``.

    Rows are recorded as runs finish. With ``scheduler``, grid points run as Dask tasks
    (``execute_point`` on the workers; task plugins must be installed there, as entry points);
    rows are recorded by this process on both paths.

    In each error case below, what finished stays recorded, and running again resumes.

    Parameters
    ----------
    spec : Spec
        A spec from :func:`~sparsekit.run.spec.load_spec`.
    out : str or Path, optional
        The output folder (default: derived from the spec's name).
    yes : bool, default False
        Accept a sweep of more runs than the limit.
    max_runs : int, optional
        The limit (default 200); the spec's own ``max_runs`` can lower it, not raise it.
    allow_pickle : bool, default False
        Let a ``file`` data source read pickled objects.
    scheduler : str or dask.distributed.Client, optional
        Run the grid points as Dask tasks (an address, ``"local"`` or a client).
    stream : file-like, optional
        Where to print progress lines (default ``sys.stdout``).
    progress : bool, optional
        Show a progress bar (default: on a terminal).
    registry : Registry, optional
        Where tasks and components are looked up: pass the one given to
        :func:`~sparsekit.run.spec.load_spec` (default: the default registry). Not with
        ``scheduler``: Dask workers look names up in their own default registry.

    Returns
    -------
    Path
        The output folder.

    Raises
    ------
    SpecError
        More runs than the limit without ``yes``; ``out`` holds the runs of another spec
        (its ``spec.sha256`` differs from :meth:`~sparsekit.run.spec.Spec.digest`).
    FolderInUseError
        Another process writes into ``out``.
    NoSpaceError
        The folder's disk, quota or file-size limit is full (an ``OSError``).
    Interrupted
        Ctrl-C; what finished stays recorded, and running again resumes.
    ClusterLostError
        With ``scheduler``: the cluster had no worker for ``WORKER_TIMEOUT_S`` seconds, or its
        scheduler was lost, mid-sweep (a ``ConnectionError``); the message says how many runs
        are recorded and how to resume.
    """
    if registry is not None and scheduler is not None:
        raise ValueError(
            "registry= runs in this process only; with scheduler= the workers use their "
            "default registry: install the plugin there (entry points) and drop registry="
        )
    check_size(spec, yes, max_runs)
    runs = plan(spec)
    client = cluster = None
    if scheduler is not None:  # fail fast, before any output is written
        client, cluster = connect(scheduler)
    resume = (
        "re-run the same command to resume"
        if out is not None
        else "re-run the same command with --out {} to resume"
    )
    out = Path(out) if out is not None else default_out(spec)
    resume = resume.format(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        with FolderLock(out):
            _run_locked(
                spec, runs, out, client, scheduler, allow_pickle, stream, progress, resume, registry
            )
    except OSError as exc:
        if exc.errno in NO_SPACE and not isinstance(exc, NoSpaceError):
            err = NoSpaceError(f"no space left in {out}; free space and {resume}")
            err.errno = exc.errno
            raise err from exc
        raise
    finally:
        if client is not None:
            client.close()
            if cluster is not None:
                cluster.close()
    return out


def _check_folder(spec, runs, out) -> None:
    """Refuse ``out`` when it holds the runs of another spec: its ``spec.sha256`` differs
    from the spec's digest or, in a folder without one, a recorded run id is no run of the
    spec. Otherwise record the digest."""
    digest_file = out / SPEC_DIGEST
    try:  # as the result files: no link followed, and a FIFO does not block
        fd = os.open(digest_file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW)
    except FileNotFoundError:
        theirs = None
    else:
        try:
            theirs = os.read(fd, 200).decode("ascii", "replace").strip()
        finally:
            os.close(fd)
    ours = spec.digest()
    if theirs is None:
        ids = {r["run_id"] for r in runs}
        jsonl = out / "results.jsonl"
        recorded = {r["run_id"] for r in read_results(jsonl)[0]} if jsonl.exists() else set()
        if recorded <= ids:
            write_atomic(digest_file, ours + "\n")
            return
    if theirs != ours:
        raise SpecError(
            f"{out} holds the runs of another spec (see {out / 'spec.json'}): a folder holds "
            "the runs of one spec (same task, data, components, parameters, sweep, repeat and "
            "seed). Write into a new folder with --out, or run that spec again to resume"
        )


def _run_locked(
    spec, runs, out, client, scheduler, allow_pickle, stream, progress, resume, registry=None
):
    _check_folder(spec, runs, out)
    rec = Recorder(out, stream)
    write_atomic(out / "spec.json", json.dumps(spec.resolved(), indent=2, default=str) + "\n")
    write_atomic(out / "meta.json", json.dumps(machine_info(scheduler), indent=2) + "\n")
    done = rec.done()
    todo = [r for r in runs if r["run_id"] not in done]
    grid = [flatten(r["point"]) for r in runs]
    varying = (
        [k for k in grid[0] if len({json.dumps(g[k], default=str) for g in grid}) > 1]
        if grid
        else []
    )
    rec.header(varying)
    stream = stream or sys.stdout
    print(
        f"{spec.name}: {len(runs)} run(s), {len(runs) - len(todo)} already in {out}, "
        f"{len(todo)} to run",
        file=stream,
        flush=True,
    )
    try:
        _execute(spec, todo, rec, client, allow_pickle, progress, registry)
        for plot in spec.plots:
            from .plots import draw

            try:
                print(f"plot: {draw(plot, rec.rows, out)}", file=stream, flush=True)
            except (ValueError, ImportError) as exc:
                print(f"plot not drawn: {exc}", file=stream, flush=True)
    except KeyboardInterrupt:
        recorded = {r["run_id"] for r in rec.rows} & {r["run_id"] for r in runs}
        raise Interrupted(
            f"interrupted after {len(recorded)} of {len(runs)} runs; {resume}"
        ) from None
    except ClusterLostError as exc:
        recorded = {r["run_id"] for r in rec.rows} & {r["run_id"] for r in runs}
        raise ClusterLostError(
            f"{exc}; {len(recorded)} of {len(runs)} runs are recorded in {out}; with the "
            f"cluster working again, {resume}"
        ) from None
    failed = [r for r in rec.rows if r.get("status") != "ok"]
    print(
        f"results: {out / 'results.csv'} and {out / 'results.jsonl'}"
        + (f" ({len(failed)} failed run(s))" if failed else ""),
        file=stream,
        flush=True,
    )


def _execute(spec, todo, rec, client, allow_pickle, progress, registry=None):
    """Run ``todo`` here (``client`` None) or as Dask tasks, recording each run as it ends."""
    from .._runtime.progress import Progress

    def record(r, status, result, elapsed):
        row = {
            "run_id": r["run_id"],
            "task": spec.task,
            **flatten(r["point"]),
            "repeat": r["repeat"],
            "seed": r["seed"],
            "status": status,
            "error": result if status != "ok" else "",
            "wall_time": elapsed,
        }
        if isinstance(result, list) and not result:  # a run with nothing to report
            rec.add_rows([{**row, "n_rows": 0}])
        elif status != "ok" or isinstance(result, dict):
            rec.add_rows([{**row, **(result if status == "ok" else {})}])
        else:  # several rows from one run
            rec.add_rows(
                [
                    {**row, "row": i, "n_rows": len(result), **metrics}
                    for i, metrics in enumerate(result)
                ]
            )

    with Progress(len(todo), f"{spec.name} runs", unit="run", verbose=progress) as bar:
        if client is None:
            for r in todo:
                t0 = time.perf_counter()
                status, result = _safe_point(
                    spec.task, r["point"], r["seed"], allow_pickle, registry
                )
                record(r, status, result, time.perf_counter() - t0)
                bar.update(1)
        else:
            from ._dask import completed

            futures = {
                client.submit(
                    _timed_point, spec.task, r["point"], r["seed"], allow_pickle, pure=False
                ): r
                for r in todo
            }
            for fut, (status, result, elapsed) in completed(client, futures, WORKER_TIMEOUT_S):
                record(futures[fut], status, result, elapsed)
                bar.update(1)


def _timed_point(task_name, point, seed, allow_pickle):
    t0 = time.perf_counter()
    status, result = _safe_point(task_name, point, seed, allow_pickle)
    return status, result, time.perf_counter() - t0


__all__ = ["run_spec", "dry_run", "plan", "execute_point", "Interrupted"]
