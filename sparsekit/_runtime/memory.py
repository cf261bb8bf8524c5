"""Memory estimates before a dense n x n allocation: warn, or refuse with the cheaper choice.

Available memory is the least of the limits that apply to this process:

- the machine's: ``MemAvailable`` of ``/proc/meminfo`` (Linux), else the free physical pages
  (``os.sysconf``);
- the process's address-space limit: ``RLIMIT_AS`` minus the address space in use (``VmSize``
  of ``/proc/self/status``), and likewise ``RLIMIT_DATA`` minus ``VmData`` (Linux counts large
  NumPy buffers, private anonymous mappings, against it);
- the container's: the cgroup memory limit minus the memory charged to the cgroup, for this
  process's cgroup and each of its ancestors (cgroup v2 ``memory.max`` and ``memory.current``;
  v1 ``memory.limit_in_bytes`` and ``memory.usage_in_bytes``). The inactive file cache of
  ``memory.stat`` is not counted as used: the kernel reclaims it before it kills anything.

Where none is readable nothing is checked.

The cgroup limits (which cgroups of the process have one, and its value: a walk over the
cgroup tree) are read once and kept for ``LIMITS_SECONDS`` (10 s) in the process that read
them; a reading then reads only what changes: ``MemAvailable``, the usage of the cgroups that
have a limit, and ``VmSize``/``VmData`` where a soft rlimit is set (``getrlimit``, a system call
with no file to read, is asked every time). Reading even that
costs more than a small computation, so :func:`check_allocation` reuses a reading for up to
``REUSE_SECONDS`` (0.5 s) when the allocation is at most ``REUSE_FRACTION`` (a tenth) of it: in
that time the available memory would have to fall by four fifths for the allocation to reach
the warning level. Any larger allocation reads again, and every decision to warn or refuse is
taken on a reading with the limits read again too. A forked child reads everything anew.
"""

from __future__ import annotations

import os
import sys
import time
import warnings

#: Warn when an allocation needs more than this fraction of the available memory ...
WARN_FRACTION = 0.5
#: ... and refuse it above this fraction (it would swap or be killed).
RAISE_FRACTION = 0.9
#: a reading of the available memory is reused for this many seconds ...
REUSE_SECONDS = 0.5
#: ... by an allocation of at most this fraction of it
REUSE_FRACTION = 0.1
#: the limits (cgroup and rlimit) read are kept this many seconds
LIMITS_SECONDS = 10.0
#: where the cgroup file system is mounted
CGROUP_ROOT = "/sys/fs/cgroup"
#: the process's cgroup table
SELF_CGROUP = "/proc/self/cgroup"
#: cgroup v1 writes "no limit" as a page-rounded 2**63 - 1
_V1_UNLIMITED = 2**62


class LargeAllocationWarning(UserWarning):
    """An allocation will take a large part of the available memory."""


class InsufficientMemoryError(MemoryError):
    """An allocation would not fit in the available memory."""


def available_memory(
    *, cgroup_root: str = CGROUP_ROOT, self_cgroup: str = SELF_CGROUP, fresh: bool = False
) -> int | None:
    """Bytes of memory available to new allocations, or ``None`` when unknown.

    The least of the machine's available memory, the address-space limits (``RLIMIT_AS``,
    ``RLIMIT_DATA``) less what the process uses, and the cgroup memory limits less what the
    cgroup uses (see the module's docstring). ``cgroup_root`` (where the cgroup file system is
    mounted) and ``self_cgroup`` (the process's cgroup table) can be pointed elsewhere in tests;
    the limits of the process's own files are kept (module docstring) unless ``fresh``.
    """
    if (cgroup_root, self_cgroup) == (CGROUP_ROOT, SELF_CGROUP):
        cgroups = _process_cgroup_limits(fresh)
    else:
        cgroups = _cgroup_limits(cgroup_root, self_cgroup)
    found = [
        v
        for v in (_machine_available(), *_rlimit_headroom(), *_cgroup_headroom(cgroups))
        if v is not None
    ]
    return max(min(found), 0) if found else None


# (process id, monotonic time of the reading, the cgroup limits)
_LIMITS: tuple = (None, 0.0, None)


def _process_cgroup_limits(fresh: bool = False) -> list:
    """:func:`_cgroup_limits` of this process, read again when ``fresh``, in a forked child
    or after ``LIMITS_SECONDS``."""
    global _LIMITS
    pid, when, limits = _LIMITS
    now = time.monotonic()
    if fresh or pid != os.getpid() or now - when >= LIMITS_SECONDS:
        limits = _cgroup_limits(CGROUP_ROOT, SELF_CGROUP)
        _LIMITS = (os.getpid(), now, limits)
    return limits


def _machine_available() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def _status_bytes(field: str) -> int | None:
    """A ``kB`` field of ``/proc/self/status`` (``VmSize``, ``VmData``) in bytes."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _rlimit_headroom() -> list:
    """``RLIMIT_AS - VmSize`` and ``RLIMIT_DATA - VmData`` where a soft limit is set."""
    try:
        import resource
    except ImportError:  # not on Windows
        return []
    out = []
    for limit, field in (("RLIMIT_AS", "VmSize"), ("RLIMIT_DATA", "VmData")):
        if not hasattr(resource, limit):
            continue
        soft = resource.getrlimit(getattr(resource, limit))[0]
        if soft == resource.RLIM_INFINITY or soft < 0:
            continue
        used = _status_bytes(field)
        out.append(soft - (used or 0))
    return out


def _read_int(path: str) -> int | None:
    """The integer in a cgroup file; ``None`` when absent, unreadable or ``max``."""
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _inactive_file(path: str, key: str) -> int:
    try:
        with open(path) as f:
            for line in f:
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _cgroup_dirs(base: str, rel: str) -> list:
    """``base/rel`` and each of its ancestors up to ``base`` (those that exist)."""
    parts = [p for p in rel.strip().split("/") if p]
    dirs = [os.path.join(base, *parts[:i]) for i in range(len(parts), -1, -1)]
    return [d for d in dirs if os.path.isdir(d)]


def _cgroup_limits(root: str, self_cgroup: str) -> list:
    """``(limit, usage file, memory.stat file, inactive-file key)`` of this process's cgroup
    and its ancestors that have a memory limit (v2 and v1 hierarchies)."""
    v2_path, v1_path = "/", "/"
    try:
        with open(self_cgroup) as f:
            for line in f:
                hier, _, rest = line.strip().partition(":")
                controllers, _, path = rest.partition(":")
                if hier == "0" and controllers == "":
                    v2_path = path or "/"
                elif "memory" in controllers.split(","):
                    v1_path = path or "/"
    except OSError:
        pass
    out = []
    for d in _cgroup_dirs(root, v2_path):
        limit = _read_int(os.path.join(d, "memory.max"))
        if limit is not None:
            out.append((limit, *_files(d, "memory.current", "inactive_file")))
    for d in _cgroup_dirs(os.path.join(root, "memory"), v1_path):
        limit = _read_int(os.path.join(d, "memory.limit_in_bytes"))
        if limit is not None and limit < _V1_UNLIMITED:
            out.append((limit, *_files(d, "memory.usage_in_bytes", "total_inactive_file")))
    return out


def _files(d: str, usage: str, key: str) -> tuple:
    return os.path.join(d, usage), os.path.join(d, "memory.stat"), key


def _cgroup_headroom(limits) -> list:
    """Limit minus usage (less the inactive file cache) of each cgroup of ``limits``
    (:func:`_cgroup_limits`)."""
    out = []
    for limit, usage, stat, key in limits:
        used = _read_int(usage)
        if used is not None:
            out.append(limit - used + _inactive_file(stat, key))
    return out


# (process id, the function that read it, monotonic time of the reading, bytes)
_LAST_READING: tuple[int | None, object, float, int | None] = (None, None, 0.0, None)


def _available_for(nbytes: int) -> int | None:
    """:func:`available_memory`, reused from a reading less than ``REUSE_SECONDS`` old when
    ``nbytes`` is at most ``REUSE_FRACTION`` of it. A reading counts only in the process that
    made it (not in a forked child) and from the same function (one that replaces
    ``available_memory``, a test's included, is read at once)."""
    global _LAST_READING
    pid, read, when, value = _LAST_READING
    now = time.monotonic()
    if (
        pid == os.getpid()
        and read is available_memory
        and now - when < REUSE_SECONDS
        and (value is None or nbytes <= REUSE_FRACTION * value)
    ):
        return value
    value = available_memory()
    _LAST_READING = (os.getpid(), available_memory, now, value)
    return value


_AVAILABLE_MEMORY = available_memory


def _outside_stacklevel() -> int:
    """``stacklevel`` of the first frame outside this package, for a warning issued by the
    caller of this function."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # sparsekit/
    frame, level = sys._getframe(2), 2
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(
        package
    ):
        frame, level = frame.f_back, level + 1
    return level


def _gib(nbytes: float) -> str:
    return f"{nbytes / 2**30:.1f} GiB"


def check_allocation(
    nbytes: int, what: str, instead: str, *, matrices: str = "an n x n matrix"
) -> None:
    """Warn (:class:`LargeAllocationWarning`) or raise (:class:`InsufficientMemoryError`) when
    ``nbytes`` exceeds ``WARN_FRACTION`` / ``RAISE_FRACTION`` of the available memory.

    ``what`` names the computation, ``matrices`` what it allocates and ``instead`` the cheaper
    way (all end up in the message). The warning points at the first caller outside sparsekit.
    The available memory is read again unless a recent reading leaves no doubt (see the
    module's docstring).
    """
    available = _available_for(nbytes)
    if available is None or nbytes <= WARN_FRACTION * available:
        return
    if _LAST_READING[1] is _AVAILABLE_MEMORY:  # decide on limits read now, not kept ones
        available = _AVAILABLE_MEMORY(fresh=True)
        if available is None or nbytes <= WARN_FRACTION * available:
            return
    message = (
        f"{what} needs about {_gib(nbytes)} for {matrices} and {_gib(available)} of "
        f"memory is available; {instead}"
    )
    if nbytes > RAISE_FRACTION * available:
        raise InsufficientMemoryError(message)
    warnings.warn(message, LargeAllocationWarning, stacklevel=_outside_stacklevel())


def dense_gram_bytes(n: int, itemsize: int = 8) -> int:
    """Bytes of an n x n float64 Gram matrix, plus the kernel's own block when it is float32
    (it is converted to float64 for LAPACK)."""
    return n * n * (8 + (itemsize if itemsize != 8 else 0))
