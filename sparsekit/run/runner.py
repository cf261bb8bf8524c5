"""Execute a spec: expand the grid, run each point (here or on a Dask cluster), record rows.

Output folder (``--out``, default ``runs/<spec-name>-<UTC timestamp>/``):

- ``results.jsonl``: one JSON object per finished run, appended as soon as it finishes (a crash
  loses nothing that finished; NaN and infinities are written as ``null``, strict JSON);
  ``results.csv``: the same rows as a table, rewritten after each;
- ``spec.json``: the resolved spec (after ``--set``, ``--repeat``, ``--seed``);
- ``meta.json``: library version, Python, platform, machine name, CPUs, thread count, scheduler.

Each row holds ``run_id`` (a hash of the grid point, repeat index and seed), ``task``, the grid
point's values as dotted columns (``sampler.name``, ``params.n_components``, ...), ``repeat``,
``seed``, ``status`` (``ok`` or ``error``), ``error`` and the task's metrics. A task that
returns a list of metric dicts (several rows from one run, e.g. one per estimator on the same
draws) gives one row each, with the same ``run_id``, their index ``row`` and their count
``n_rows``; they are written together. Running again into the same folder skips the run ids
already recorded with status ``ok`` and all their rows (resume).
"""
from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import platform
import re
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from .spec import Spec, SpecError, expand

#: seconds to wait for a Dask scheduler before giving up
SCHEDULER_TIMEOUT_S = 10
#: seconds to wait for its first worker
WORKER_TIMEOUT_S = 60


def flatten(point: dict) -> dict:
    """``{"sampler": {"name": "x"}}`` -> ``{"sampler.name": "x"}`` (data source first)."""
    return {f"{sec}.{key}": value for sec, table in point.items() for key, value in table.items()}


def run_id(point: dict, repeat: int, seed: int) -> str:
    blob = json.dumps({"point": point, "repeat": repeat, "seed": seed}, sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:12]


def plan(spec: Spec) -> list[dict]:
    """Every run of the spec: ``{"run_id", "point", "repeat", "seed"}`` in execution order."""
    runs = []
    for point in expand(spec):
        for r in range(spec.repeat):
            seed = spec.seed + r
            runs.append({"run_id": run_id(point, r, seed), "point": point, "repeat": r, "seed": seed})
    return runs


def execute_point(task_name: str, point: dict, seed: int, allow_pickle: bool = False) -> dict:
    """Run one grid point and return its metrics (raises on failure). Runs on Dask workers too."""
    from . import data as data_mod
    from .tasks import get_task, run_task

    task = get_task(task_name)
    data = data_mod.load(point["data"], seed=seed, allow_pickle=allow_pickle)
    return run_task(task.name, point.get("params", {}), data,
                    {f: point.get(f, {}) for f in task.components}, seed=seed)


def _safe_point(task_name, point, seed, allow_pickle):
    """``(status, metrics or message)``: a failed run becomes a row, not a crash of the sweep."""
    try:
        return "ok", execute_point(task_name, point, seed, allow_pickle)
    except Exception as exc:  # recorded in the row with its type
        return "error", f"{type(exc).__name__}: {exc}"


def default_out(spec: Spec) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{spec.name}-{stamp}"


def machine_info(scheduler=None) -> dict:
    from .. import __version__
    from .._threads import effective_n_jobs, usable_cpus

    return {"sparsekit": __version__, "python": platform.python_version(),
            "platform": platform.platform(), "machine": platform.node(),
            "processor": platform.processor() or platform.machine(), "cpus": usable_cpus(),
            "threads": effective_n_jobs(), "scheduler": scheduler,
            "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}


class Recorder:
    """Rows on disk (JSON Lines + CSV) and on the terminal, as they come in."""

    def __init__(self, out: Path, stream=None):
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.jsonl = self.out / "results.jsonl"
        self.csv = self.out / "results.csv"
        self.stream = stream or sys.stdout
        self.rows = []
        if self.jsonl.exists():
            with open(self.jsonl, encoding="utf-8") as fh:
                for line in fh:
                    line = line.strip()
                    if line:
                        try:
                            self.rows.append(json.loads(line))
                        except json.JSONDecodeError:  # a line cut by a crash
                            continue
            # drop the rows of a run cut between two of its rows (it runs again), and rewrite
            # without a cut line, so that appended rows start on a line of their own
            done = self.done()
            self.rows = [r for r in self.rows if r.get("status") != "ok" or r["run_id"] in done]
            with open(self.jsonl, "w", encoding="utf-8") as fh:
                fh.writelines(_json_line(r) for r in self.rows)
        self._columns = None

    def done(self) -> set:
        """Run ids recorded with status ``ok`` and all their rows (a run cut between two of its
        rows runs again)."""
        count, expected = {}, {}
        for r in self.rows:
            if r.get("status") == "ok":
                count[r["run_id"]] = count.get(r["run_id"], 0) + 1
                expected[r["run_id"]] = r.get("n_rows", 1)
        return {rid for rid, c in count.items() if c >= expected[rid]}

    def add(self, row: dict) -> None:
        self.add_rows([row])

    def add_rows(self, rows: list) -> None:
        """Record the rows of one run (they replace any earlier rows of its run id)."""
        ids = {r["run_id"] for r in rows}
        self.rows = [r for r in self.rows if r["run_id"] not in ids] + list(rows)
        with open(self.jsonl, "a", encoding="utf-8") as fh:
            fh.write("".join(_json_line(r) for r in rows))
            fh.flush()
            os.fsync(fh.fileno())
        self._write_csv()
        for r in rows:
            self._print(r)

    def _write_csv(self):
        columns = []
        for r in self.rows:
            columns += [c for c in r if c not in columns]
        tmp = self.csv.with_suffix(".csv.tmp")
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns)
            writer.writeheader()
            for r in self.rows:
                writer.writerow({k: _cell(v) for k, v in r.items()})
        os.replace(tmp, self.csv)

    def header(self, varying: list) -> None:
        self._varying = varying

    def _print(self, row):
        keys = [k for k in getattr(self, "_varying", [])] + ["repeat"]
        metrics = [k for k in row if k not in ("run_id", "task", "status", "error", "seed", "repeat",
                                                "row", "n_rows") and "." not in k]
        columns = keys + (["status"] if row["status"] != "ok" else metrics)
        if self._columns != columns:
            self._columns = columns
            print("  ".join(f"{c[:20]:>20}" for c in columns), file=self.stream, flush=True)
        cells = [_short(row.get(c)) for c in columns[:-1]] + [
            (row["error"][:120] if row["status"] != "ok" else _short(row.get(columns[-1])))]
        print("  ".join(f"{c:>20}" for c in cells), file=self.stream, flush=True)


def _json_line(row: dict) -> str:
    """One row as strict JSON (``allow_nan=False``): NaN and infinities become ``null``, since
    standard JSON has no such numbers and strict readers (``jq``, JavaScript) reject them."""
    return json.dumps(_finite_or_none(row), default=_jsonable, allow_nan=False) + "\n"


def _finite_or_none(v):
    if isinstance(v, float):  # NumPy float64 included
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _finite_or_none(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite_or_none(x) for x in v]
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return v
    if isinstance(v, np.floating):
        return float(v) if np.isfinite(v) else None
    if isinstance(v, np.ndarray) and v.dtype.kind in "fc":
        return _finite_or_none(v.tolist())
    return v


def _jsonable(v):
    try:
        import numpy as np

        if isinstance(v, np.generic):
            return v.item()
        if isinstance(v, np.ndarray):
            return v.tolist()
    except ImportError:  # pragma: no cover
        pass
    return str(v)


def _cell(v):
    return json.dumps(v) if isinstance(v, (list, dict)) else v


def _short(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)[:20] if v is not None else "-"


def check_size(spec: Spec, n_runs: int, yes: bool) -> None:
    if n_runs > spec.max_runs and not yes:
        raise SpecError(f"{spec.source}: the sweep expands to {n_runs} runs, more than the limit "
                        f"of {spec.max_runs}; pass --yes to run them all (or set max_runs = "
                        f"{n_runs} in the spec)")


def dry_run(spec: Spec, stream=None) -> list[dict]:
    """Print the expanded grid (one line per run) and return the plan."""
    stream = stream or sys.stdout
    runs = plan(spec)
    grid = [flatten(r["point"]) for r in runs]
    varying = [k for k in grid[0] if len({json.dumps(g[k], default=str) for g in grid}) > 1] if grid else []
    print(f"{spec.name}: task {spec.task!r}, {len(expand(spec))} grid point(s) x {spec.repeat} "
          f"repeat(s) = {len(runs)} run(s)", file=stream)
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
    try:
        from distributed import Client, LocalCluster
        from distributed.comm import CommClosedError
    except ModuleNotFoundError:
        raise ModuleNotFoundError("--scheduler needs Dask: pip install 'sparsekit[dask]'") from None
    cluster = None
    if scheduler.startswith("local:"):
        count = scheduler.split(":", 1)[1]
        if not re.fullmatch(r"[0-9]+", count) or int(count) < 1:
            raise ValueError(f"--scheduler {scheduler!r}: expected local:N with N an integer "
                             ">= 1 (the number of worker processes), e.g. local:4")
        try:
            cluster = LocalCluster(n_workers=int(count), threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster)
        except Exception as exc:  # noqa: BLE001 (whatever Dask raised, one clear error)
            if cluster is not None:
                cluster.close()
            raise ConnectionError(f"could not start the local Dask cluster {scheduler!r} "
                                  f"({type(exc).__name__}: {exc})") from None
    else:
        try:
            kind = _scheduler_identity(scheduler, timeout).get("type")
            if "Scheduler" not in str(kind):
                raise ValueError(f"it says it is a {kind!r}")
            client = Client(scheduler, timeout=timeout)
        except Exception as exc:  # noqa: BLE001 (garbage from a non-Dask server raises anything)
            why = f"{type(exc).__name__}: {str(exc)[:200]}"
            if isinstance(exc, CommClosedError):
                what = (f"the server at {scheduler!r} closed the connection during Dask's "
                        "handshake (is it a Dask scheduler?)")
            elif isinstance(exc, (OSError, TimeoutError)):
                what = f"could not reach the Dask scheduler at {scheduler!r} within {timeout:g} s"
            else:  # it answered, with bytes that are not Dask's protocol
                what = f"the server at {scheduler!r} is not a Dask scheduler"
            raise ConnectionError(f"{what} ({why}); check the address (tcp://HOST:PORT) and that "
                                  "a Dask scheduler is running there") from None
    try:
        client.wait_for_workers(1, timeout=worker_timeout)
    except Exception as exc:  # noqa: BLE001
        client.close()
        if cluster is not None:
            cluster.close()
        raise ConnectionError(
            f"the Dask scheduler at {scheduler!r} has no worker after {worker_timeout:g} s "
            f"({type(exc).__name__}); start workers with `dask worker {scheduler}`") from None
    return client, cluster


def run_spec(spec: Spec, *, out=None, yes=False, allow_pickle=False, scheduler=None,
             stream=None, progress=None) -> Path:
    """Run every point of the spec not already in ``out``; returns the output folder.

    Rows are recorded as runs finish. With ``scheduler``, grid points run as Dask tasks
    (``execute_point`` on the workers; task plugins must be installed there, as entry points).
    """
    from .._progress import Progress

    runs = plan(spec)
    check_size(spec, len(runs), yes)
    client = cluster = None
    if scheduler is not None:  # fail fast, before any output is written
        client, cluster = connect(scheduler)
    out = Path(out) if out is not None else default_out(spec)
    rec = Recorder(out, stream)
    (out / "spec.json").write_text(json.dumps(spec.resolved(), indent=2, default=str) + "\n")
    (out / "meta.json").write_text(json.dumps(machine_info(scheduler), indent=2) + "\n")
    done = rec.done()
    todo = [r for r in runs if r["run_id"] not in done]
    grid = [flatten(r["point"]) for r in runs]
    varying = [k for k in grid[0] if len({json.dumps(g[k], default=str) for g in grid}) > 1] if grid else []
    rec.header(varying)
    stream = stream or sys.stdout
    print(f"{spec.name}: {len(runs)} run(s), {len(runs) - len(todo)} already in {out}, "
          f"{len(todo)} to run", file=stream, flush=True)

    def record(r, status, result, elapsed):
        row = {"run_id": r["run_id"], "task": spec.task, **flatten(r["point"]),
               "repeat": r["repeat"], "seed": r["seed"], "status": status,
               "error": result if status != "ok" else "", "wall_time": elapsed}
        if isinstance(result, list) and not result:  # a run with nothing to report
            rec.add_rows([{**row, "n_rows": 0}])
        elif status != "ok" or isinstance(result, dict):
            rec.add_rows([{**row, **(result if status == "ok" else {})}])
        else:  # several rows from one run
            rec.add_rows([{**row, "row": i, "n_rows": len(result), **metrics}
                          for i, metrics in enumerate(result)])

    with Progress(len(todo), f"{spec.name} runs", unit="run", verbose=progress) as bar:
        if scheduler is None:
            for r in todo:
                t0 = time.perf_counter()
                status, result = _safe_point(spec.task, r["point"], r["seed"], allow_pickle)
                record(r, status, result, time.perf_counter() - t0)
                bar.update(1)
        else:
            from distributed import as_completed

            try:
                futures = {client.submit(_timed_point, spec.task, r["point"], r["seed"], allow_pickle,
                                         pure=False): r for r in todo}
                for fut in as_completed(futures):
                    status, result, elapsed = fut.result()
                    record(futures[fut], status, result, elapsed)
                    bar.update(1)
            finally:
                client.close()
                if cluster is not None:
                    cluster.close()
    for plot in spec.plots:
        from .plots import draw

        try:
            print(f"plot: {draw(plot, rec.rows, out)}", file=stream, flush=True)
        except (ValueError, ImportError) as exc:
            print(f"plot not drawn: {exc}", file=stream, flush=True)
    failed = [r for r in rec.rows if r.get("status") != "ok"]
    print(f"results: {out / 'results.csv'} and {out / 'results.jsonl'}"
          + (f" ({len(failed)} failed run(s))" if failed else ""), file=stream, flush=True)
    return out


def _timed_point(task_name, point, seed, allow_pickle):
    t0 = time.perf_counter()
    status, result = _safe_point(task_name, point, seed, allow_pickle)
    return status, result, time.perf_counter() - t0
