"""The memory check's rules against outside oracles: the address-space headroom, the cgroup
v1 and v2 files (inactive file cache, v1's "no limit" value) and the warn / refuse fractions at
their boundaries."""

import warnings

import pytest

from sparsekit._runtime import memory as _memory

MiB = 2**20


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_rlimit_headroom_is_the_soft_limit_less_the_space_in_use(monkeypatch):
    """Oracle: ``RLIMIT_AS - VmSize`` from the values given (``/proc/self/status`` faked)."""
    import resource

    limits = {resource.RLIMIT_AS: (3000 * MiB, resource.RLIM_INFINITY)}
    monkeypatch.setattr(
        resource, "getrlimit", lambda which: limits.get(which, (resource.RLIM_INFINITY,) * 2)
    )
    monkeypatch.setattr(_memory, "_status_bytes", {"VmSize": 1200 * MiB, "VmData": 7}.get)
    assert _memory._rlimit_headroom() == [1800 * MiB]


def test_cgroup_v2_counts_the_inactive_file_cache_of_memory_stat(tmp_path):
    """Oracle: limit - current + inactive_file of the cgroup v2 files written (the v1 key
    ``total_inactive_file`` is not read in a v2 ``memory.stat``)."""
    self_cgroup = tmp_path / "self_cgroup"
    self_cgroup.write_text("0::/\n")
    root = tmp_path / "cgroup"
    _write(root / "memory.max", f"{1000 * MiB}\n")
    _write(root / "memory.current", f"{900 * MiB}\n")
    _write(root / "memory.stat", f"total_inactive_file {500 * MiB}\ninactive_file {60 * MiB}\n")
    got = _memory._cgroup_headroom(_memory._cgroup_limits(str(root), str(self_cgroup)))
    assert got == [160 * MiB]


@pytest.mark.parametrize(
    "nbytes, outcome",
    [(500, None), (501, "warn"), (900, "warn"), (901, "raise")],
)
def test_warn_and_refuse_only_above_their_fractions(monkeypatch, nbytes, outcome):
    """Oracle: the documented rule — warn when the need *exceeds* half of the available memory,
    refuse when it exceeds 90 % (available memory faked at 1000 bytes)."""
    monkeypatch.setattr(_memory, "available_memory", lambda: 1000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if outcome == "raise":
            with pytest.raises(_memory.InsufficientMemoryError, match="use less"):
                _memory.check_allocation(nbytes, "the test", "use less")
        else:
            _memory.check_allocation(nbytes, "the test", "use less")
    warned = [w for w in caught if issubclass(w.category, _memory.LargeAllocationWarning)]
    assert len(warned) == (1 if outcome == "warn" else 0)


def test_cgroup_v1_no_limit_value_gives_no_headroom(tmp_path):
    """Oracle: cgroup v1 writes "no limit" as the page-rounded ``2**63 - 1``
    (9223372036854771712): such a cgroup bounds nothing, so it gives no entry, while a real
    limit below it does."""
    self_cgroup = tmp_path / "self_cgroup"
    self_cgroup.write_text("4:memory:/job\n")
    mem = tmp_path / "cgroup" / "memory"
    _write(mem / "memory.limit_in_bytes", "9223372036854771712\n")
    _write(mem / "memory.usage_in_bytes", f"{5000 * MiB}\n")
    _write(mem / "job" / "memory.limit_in_bytes", "9223372036854771712\n")
    _write(mem / "job" / "memory.usage_in_bytes", f"{100 * MiB}\n")
    assert (
        _memory._cgroup_headroom(_memory._cgroup_limits(str(tmp_path / "cgroup"), str(self_cgroup)))
        == []
    )
    _write(mem / "job" / "memory.limit_in_bytes", f"{300 * MiB}\n")
    assert _memory._cgroup_headroom(
        _memory._cgroup_limits(str(tmp_path / "cgroup"), str(self_cgroup))
    ) == [200 * MiB]
