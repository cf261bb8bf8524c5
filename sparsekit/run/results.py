"""The result files of a run folder: one row set per run id, written so that a crash, a full
disk or a second process loses nothing that finished.

- ``results.jsonl`` grows by appending the rows of each new run (written, then ``fsync``: a
  failed append is cut back to the previous size); a run recorded before (a failed run that ran
  again) replaces its earlier rows, by a rewrite of the whole file.
- Every rewrite (``results.jsonl`` at resume or on replacement, ``results.csv`` after each run,
  ``spec.json``, ``meta.json``, the plots' PNG files) goes to ``NAME.tmp`` in the same folder,
  created anew (``O_CREAT | O_EXCL | O_NOFOLLOW``: a planted symlink is not followed),
  ``fsync``-ed, then renamed over ``NAME`` (``os.replace``, which replaces a symlink planted as
  ``NAME`` rather than following it): the old file stays whole until the new one is.
- ``FolderLock`` holds an exclusive ``fcntl.flock`` on ``.lock`` in the folder while a
  process writes there; the file names the holder (pid, machine, start time).
- Recording a run (its rows in both files and in memory) is not cut by Ctrl-C: a SIGINT that
  arrives meanwhile is raised once the run is recorded (``deferred_interrupt``).
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import math
import os
import platform
import signal
import sys
import threading
from datetime import datetime, timezone
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock (see FolderLock)
    fcntl = None

#: errno values that mean "no room to write": full disk, file-size limit, quota
NO_SPACE = frozenset(
    getattr(errno, name) for name in ("ENOSPC", "EFBIG", "EDQUOT") if hasattr(errno, name)
)

LOCK_NAME = ".lock"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class FolderInUseError(RuntimeError):
    """Another process holds the output folder's lock."""


class NoSpaceError(OSError):
    """A write to the output folder failed for lack of space (disk, file-size limit, quota)."""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (where the system allows opening a folder)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(path: Path, text: str | bytes) -> None:
    """Replace ``path`` with ``text`` (bytes, or text written as UTF-8) all at once: on any
    failure (no space, Ctrl-C, a planted ``path.tmp``) the old file is left as it was and no
    ``.tmp`` file stays behind; a symlink planted as ``path`` is replaced, not followed."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with contextlib.suppress(FileNotFoundError):  # left by a process killed mid-write
        os.unlink(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666)
    try:
        try:
            _write_all(fd, text.encode("utf-8") if isinstance(text, str) else text)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


@contextlib.contextmanager
def deferred_interrupt():
    """Hold back Ctrl-C (SIGINT) for the duration of the block, then raise it.

    Used around the recording of one run, so that a run whose rows reached the disk is also in
    the CSV and counted in the "interrupted after N runs" message. Only the main thread receives
    signals; elsewhere, or where SIGINT has a handler other than Python's default, the block
    runs as it is.
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    received = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt


def append_durable(path: Path, text: str) -> None:
    """Append ``text`` to ``path`` and ``fsync``; if the write fails part-way (no space,
    Ctrl-C), cut the file back to its previous size so that no partial line remains."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW, 0o666)
    try:
        size = os.fstat(fd).st_size
        try:
            _write_all(fd, text.encode("utf-8"))
            os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)


class FolderLock:
    """An exclusive, non-blocking lock on a folder (``fcntl.flock`` on ``FOLDER/.lock``),
    released when the holder exits, however it exits (the system drops the lock of a killed
    process). A second holder gets :class:`FolderInUseError` naming the first (pid, machine,
    start time). On systems without ``fcntl`` (Windows) no lock is taken."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self._fd = None

    def __enter__(self):
        if fcntl is None:  # pragma: no cover
            return self
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise FolderInUseError(
                f"{self.folder} is in use by {holder}, which holds {self.path}; wait for it "
                "to end, or write into another folder (--out)"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        try:
            me = {
                "pid": os.getpid(),
                "host": platform.node(),
                "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            }
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    def __exit__(self, *exc):
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor releases the lock
            self._fd = None
        return False


def _read_holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode("utf-8", "replace"))
        return f"process {info['pid']} on {info['host']} (started {info['started']})"
    except (OSError, ValueError, KeyError, TypeError):  # being written by its holder
        return "another process"


def read_results(path: Path) -> tuple[list, bool]:
    """Read the rows of a ``results.jsonl``, one outcome per run id.

    The rows one run writes at once are consecutive: one row (``status`` ``error``, or ``ok``
    with one metrics dict), or the rows ``row`` = 0 .. ``n_rows`` - 1 of a task reporting several.
    A run's latest complete set of rows wins; an incomplete set is dropped (the run runs again).

    Parameters
    ----------
    path : Path
        A ``results.jsonl`` file.

    Returns
    -------
    rows : list of dict
        One outcome per run id.
    needs_rewrite : bool
        Whether the file needs a rewrite to say the same (it has a cut line, the incomplete rows of
        a run cut between two of its rows, or an earlier outcome of a run recorded again).
    """
    text = Path(path).read_bytes().decode("utf-8", "replace")
    changed = bool(text) and not text.endswith("\n")
    groups = []  # [first row, ...] of each write, in file order
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:  # a line cut by a crash
            changed = True
            continue
        if not isinstance(row, dict) or "run_id" not in row:
            changed = True
            continue
        last = groups[-1] if groups else None
        if (
            last is not None
            and last[0]["run_id"] == row["run_id"]
            and "row" in last[0]
            and row.get("row") == len(last)
        ):
            last.append(row)
        else:
            groups.append([row])
    latest = {}
    for i, group in enumerate(groups):
        first = group[0]
        whole = (
            first.get("status") != "ok" or "row" not in first or len(group) == first.get("n_rows")
        )
        if not whole or first.get("row", 0) != 0:
            changed = True
            continue
        if first["run_id"] in latest:
            changed = True
        latest[first["run_id"]] = i
    order = sorted(latest.values())
    return [row for i in order for row in groups[i]], changed


class Recorder:
    """Rows on disk (JSON Lines + CSV) and on the terminal, as they come in; one outcome per
    run id (the latest). The caller holds the folder's ``FolderLock``."""

    def __init__(self, out: Path, stream=None):
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.jsonl = self.out / "results.jsonl"
        self.csv = self.out / "results.csv"
        self.stream = stream or sys.stdout
        self.rows = []
        self._columns = None
        if self.jsonl.exists():
            self.rows, changed = read_results(self.jsonl)
            if changed:  # rewrite only then, and never in place
                write_atomic(self.jsonl, "".join(_json_line(r) for r in self.rows))
            if self.rows:  # the CSV may lag behind the JSONL (a failure between the two)
                self._write_csv()

    def done(self) -> set:
        """Run ids recorded with status ``ok`` (with all their rows: incomplete ones are dropped
        when the file is read)."""
        return {r["run_id"] for r in self.rows if r.get("status") == "ok"}

    def add(self, row: dict) -> None:
        self.add_rows([row])

    def add_rows(self, rows: list) -> None:
        """Record the rows of one run; they replace any earlier rows of its run id, in both
        files (the JSONL is then rewritten whole, otherwise appended to)."""
        ids = {r["run_id"] for r in rows}
        kept = [r for r in self.rows if r["run_id"] not in ids]
        text = "".join(_json_line(r) for r in rows)
        with deferred_interrupt():
            if len(kept) < len(self.rows):
                write_atomic(self.jsonl, "".join(_json_line(r) for r in kept) + text)
            else:
                append_durable(self.jsonl, text)
            self.rows = kept + list(rows)
            self._write_csv()
        for r in rows:
            self._print(r)

    def _write_csv(self):
        columns = []
        for r in self.rows:
            columns += [c for c in r if c not in columns]
        buf = io.StringIO(newline="")
        writer = csv.DictWriter(buf, fieldnames=columns)
        writer.writeheader()
        for r in self.rows:
            writer.writerow({k: _cell(v) for k, v in r.items()})
        write_atomic(self.csv, buf.getvalue())

    def header(self, varying: list) -> None:
        self._varying = varying

    def _print(self, row):
        keys = [k for k in getattr(self, "_varying", [])] + ["repeat"]
        metrics = [
            k
            for k in row
            if k not in ("run_id", "task", "status", "error", "seed", "repeat", "row", "n_rows")
            and "." not in k
        ]
        columns = keys + (["status"] if row["status"] != "ok" else metrics)
        if self._columns != columns:
            self._columns = columns
            print("  ".join(f"{c[:20]:>20}" for c in columns), file=self.stream, flush=True)
        cells = [_short(row.get(c)) for c in columns[:-1]] + [
            (row["error"][:120] if row["status"] != "ok" else _short(row.get(columns[-1])))
        ]
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


__all__ = ["read_results", "FolderInUseError", "NoSpaceError"]
