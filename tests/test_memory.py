"""The memory guard: what "available" means (machine, RLIMIT_AS, cgroups), and every path that
forms an n x n (or m x m, n x m) matrix warns above half of it and refuses above 90 %."""

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from sparsekit import KernelKMeans, Nystroem, get_kernel
from sparsekit._runtime import memory as _memory
from sparsekit.manifold import (
    MDS,
    Isomap,
    KernelPCA,
    LaplacianEigenmaps,
    LocallyLinearEmbedding,
    SpectralClustering,
    SpectralEmbedding,
)
from sparsekit.run import run_task

ROOT = Path(__file__).resolve().parents[1]
MiB = 2**20
N = 60


@pytest.fixture
def X():
    return np.random.default_rng(0).standard_normal((N, 3))


# -- what is available --------------------------------------------------------------------------
@pytest.mark.parametrize("limit, field", [("RLIMIT_AS", "VmSize"), ("RLIMIT_DATA", "VmData")])
def test_available_memory_honours_a_lowered_address_space_limit(limit, field):
    """RLIMIT_AS less the address space in use (VmSize) bounds what is available (and
    RLIMIT_DATA less VmData), and a guarded fit then refuses with the guard's message instead
    of dying in NumPy's allocator."""
    code = textwrap.dedent(f"""
        import resource, numpy as np
        from sparsekit._runtime import memory as _memory
        from sparsekit.manifold import KernelPCA
        def used():
            with open("/proc/self/status") as f:
                return next(int(l.split()[1]) * 1024 for l in f if l.startswith("{field}:"))
        free = _memory.available_memory()
        resource.setrlimit(resource.{limit}, (used() + 256 * 2**20, resource.RLIM_INFINITY))
        avail = _memory.available_memory()
        X = np.random.default_rng(0).standard_normal((6000, 3))   # 2 x 6000^2 x 8 B = 549 MiB
        try:
            KernelPCA(2).fit(X)
            outcome = "fitted"
        except MemoryError as exc:
            outcome = str(exc)
        print(free, avail)
        print(outcome)
    """)
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "PYTHONPATH": str(ROOT)}
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    assert res.returncode == 0, res.stderr
    numbers, outcome = res.stdout.strip().splitlines()[-2:]
    free, avail = map(int, numbers.split())
    assert free > 1024 * MiB  # the machine itself has more
    assert 200 * MiB < avail <= 256 * MiB
    assert "KernelPCA on 6000 samples" in outcome and "n_landmarks=" in outcome


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_available_memory_honours_cgroup_v2_limits_of_the_cgroup_and_its_ancestors(tmp_path):
    machine = _memory.available_memory(cgroup_root=str(tmp_path / "none"))
    assert machine is not None and machine > 600 * MiB
    self_cgroup = tmp_path / "self_cgroup"
    self_cgroup.write_text("0::/app/worker\n")
    root = tmp_path / "cgroup"
    # the process's own cgroup: 1 GiB, 700 MiB charged of which 100 MiB inactive file cache
    _write(root / "app" / "worker" / "memory.max", f"{1024 * MiB}\n")
    _write(root / "app" / "worker" / "memory.current", f"{700 * MiB}\n")
    _write(root / "app" / "worker" / "memory.stat", f"anon 1\ninactive_file {100 * MiB}\n")
    _write(root / "app" / "memory.max", "max\n")  # no limit one level up
    _write(root / "app" / "memory.current", f"{900 * MiB}\n")
    got = _memory.available_memory(cgroup_root=str(root), self_cgroup=str(self_cgroup))
    assert got == 424 * MiB
    # a tighter ancestor wins
    _write(root / "memory.max", f"{1000 * MiB}\n")
    _write(root / "memory.current", f"{950 * MiB}\n")
    assert _memory.available_memory(cgroup_root=str(root), self_cgroup=str(self_cgroup)) == 50 * MiB
    # a namespaced container sees its own cgroup at the root ("0::/")
    self_cgroup.write_text("0::/\n")
    assert _memory.available_memory(cgroup_root=str(root), self_cgroup=str(self_cgroup)) == 50 * MiB


def test_available_memory_honours_cgroup_v1_limits(tmp_path):
    self_cgroup = tmp_path / "self_cgroup"
    self_cgroup.write_text("5:cpu,cpuacct:/\n4:memory:/docker/abc\n0::/\n")
    mem = tmp_path / "cgroup" / "memory"
    _write(mem / "memory.limit_in_bytes", "9223372036854771712\n")  # v1's "unlimited"
    _write(mem / "memory.usage_in_bytes", f"{5000 * MiB}\n")
    _write(mem / "docker" / "abc" / "memory.limit_in_bytes", f"{512 * MiB}\n")
    _write(mem / "docker" / "abc" / "memory.usage_in_bytes", f"{300 * MiB}\n")
    _write(mem / "docker" / "abc" / "memory.stat", f"cache 5\ntotal_inactive_file {8 * MiB}\n")
    got = _memory.available_memory(
        cgroup_root=str(tmp_path / "cgroup"), self_cgroup=str(self_cgroup)
    )
    assert got == 220 * MiB


# -- every dense path is guarded ----------------------------------------------------------------
def _gram_task(X):
    return run_task("gram", {"n_eig": 5}, {"X": X}, {"kernel": {"name": "linear"}})


#: (name, fit on X, peak bytes the guard counts, words of the refusal that name the way out)
CASES = [
    ("KernelPCA", lambda X: KernelPCA(2).fit(X), 2 * 8 * N * N, "pass n_landmarks=m"),
    ("MDS", lambda X: MDS(2).fit(X), 2 * 8 * N * N, "pass n_landmarks=m"),
    ("Isomap", lambda X: Isomap(2, n_neighbors=8).fit(X), 2 * 8 * N * N, "pass n_landmarks=m"),
    (
        "SpectralEmbedding",
        lambda X: SpectralEmbedding(2).fit(X),
        3 * 8 * N * N,
        "pass n_landmarks=m",
    ),
    (
        "LaplacianEigenmaps",
        lambda X: LaplacianEigenmaps(2).fit(X),
        3 * 8 * N * N,
        "pass n_landmarks=m",
    ),
    (
        "SpectralClustering",
        lambda X: SpectralClustering(2, random_state=0).fit(X),
        3 * 8 * N * N,
        "pass n_landmarks=m",
    ),
    (
        "Isomap landmarks",
        lambda X: Isomap(2, n_neighbors=8, n_landmarks=30).fit(X),
        8 * (2 * 30 * N + 30 * 30),
        "smaller n_landmarks=",
    ),
    (
        "Nystroem",
        lambda X: Nystroem(n_components=N).fit(X),
        6 * 8 * N * N,
        r"smaller n_components=",
    ),
    (
        "KernelKMeans exact",
        lambda X: KernelKMeans(2, method="exact", random_state=0).fit(X),
        8 * N * N,  # the RBF kernel's fresh float64 Gram, symmetrised in place: no copy
        "method='nystrom' with n_landmarks=",
    ),
    ("gram task", _gram_task, 3 * 8 * N * N, "data.n_samples="),
]


@pytest.mark.parametrize("name, fit, need, option", CASES, ids=[c[0] for c in CASES])
def test_dense_paths_refuse_above_90_percent_and_name_the_way_out(
    monkeypatch, X, name, fit, need, option
):
    monkeypatch.setattr(_memory, "available_memory", lambda: int(need / 0.95))
    with pytest.raises(_memory.InsufficientMemoryError, match=option) as info:
        fit(X)
    assert isinstance(info.value, MemoryError)
    assert "memory is available" in str(info.value)


@pytest.mark.parametrize("name, fit, need, option", CASES, ids=[c[0] for c in CASES])
def test_dense_paths_warn_between_half_and_90_percent(monkeypatch, X, name, fit, need, option):
    monkeypatch.setattr(_memory, "available_memory", lambda: int(need / 0.7))
    with pytest.warns(_memory.LargeAllocationWarning, match=option) as record:
        fit(X)
    # the warning points at the caller's line, not at sparsekit's internals
    ours = [w for w in record if w.category is _memory.LargeAllocationWarning]
    assert {w.filename for w in ours} == {__file__}
    monkeypatch.setattr(_memory, "available_memory", lambda: int(need / 0.45))
    with warnings.catch_warnings():
        warnings.simplefilter("error", _memory.LargeAllocationWarning)
        fit(X)


@pytest.mark.parametrize("name, fit, need, option", CASES, ids=[c[0] for c in CASES])
def test_small_problems_do_not_warn(X, name, fit, need, option):
    with warnings.catch_warnings():
        warnings.simplefilter("error", _memory.LargeAllocationWarning)
        fit(X)


def test_lle_forms_no_dense_matrix_and_is_not_refused(monkeypatch):
    """LLE's fit uses sparse weights and a sparse eigensolver above 200 points."""
    X = np.random.default_rng(0).standard_normal((300, 3))
    monkeypatch.setattr(_memory, "available_memory", lambda: 8 * 300)
    LocallyLinearEmbedding(2, n_neighbors=8).fit(X)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_exact_rls_counts_the_n_by_n_arrays_it_holds(monkeypatch, dtype):
    """Oracle: the peak that tracemalloc measures (NumPy reports its buffers to it) while exact
    RLS samples. The guard's count is that peak up to the kernel's and the score pass's small
    temporaries: one n x n float64 matrix (factored in place), plus the kernel's float32 block
    while it is converted (the Cholesky inverse's triangle used to be copied into a second n x
    n matrix, uncounted). The guard refuses just below count / 0.9 and not just above."""
    import tracemalloc

    from sparsekit.samplers import ExactRLSSampler

    n = 1200
    X = np.random.default_rng(0).standard_normal((n, 3)).astype(dtype)
    sampler, rbf = ExactRLSSampler(lam=1.0), get_kernel("rbf", gamma=0.5)
    sampler.sample(X[:50], rbf, 5, random_state=0)  # compiles and caches outside the count
    tracemalloc.start()
    try:
        sampler.sample(X, rbf, 5, random_state=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    need = _memory.dense_gram_bytes(n, np.dtype(dtype).itemsize)
    assert need == n * n * (8 if dtype == np.float64 else 12)
    assert need <= peak <= need + 4 * MiB
    monkeypatch.setattr(_memory, "available_memory", lambda: int(need / 0.9 * 1.01))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", _memory.LargeAllocationWarning)
        sampler.sample(X, rbf, 5, random_state=0)
    monkeypatch.setattr(_memory, "available_memory", lambda: int(need / 0.9 * 0.99))
    with pytest.raises(_memory.InsufficientMemoryError, match="'dac-rls' or 'recursive-rls'"):
        sampler.sample(X, rbf, 5, random_state=0)


def _counted_reading(tmp_path, calls):
    """``available_memory`` of a cgroup v2 folder under ``tmp_path`` (400 MiB limit, 100 MiB
    charged), counting the readings."""
    self_cgroup = tmp_path / "self_cgroup"
    self_cgroup.write_text("0::/\n")
    _write(tmp_path / "cgroup" / "memory.max", f"{400 * MiB}\n")
    _write(tmp_path / "cgroup" / "memory.current", f"{100 * MiB}\n")
    real = _memory.available_memory

    def reading():
        calls.append(os.getpid())
        return real(cgroup_root=str(tmp_path / "cgroup"), self_cgroup=str(self_cgroup))

    return reading


def test_small_checks_reuse_a_recent_reading_and_decisions_read_again(tmp_path, monkeypatch):
    """A small allocation reuses a reading less than REUSE_SECONDS old; a lowered cgroup limit
    is seen by the next allocation near it (oracle: the limit written, 150 MiB less 100 MiB
    charged = 50 MiB, against the 90 % refusal rule)."""
    calls = []
    monkeypatch.setattr(_memory, "available_memory", _counted_reading(tmp_path, calls))
    monkeypatch.setattr(_memory, "REUSE_SECONDS", 3600.0, raising=False)
    for _ in range(3):
        _memory.check_allocation(MiB, "a small block", "nothing")
    assert len(calls) == 1
    _write(tmp_path / "cgroup" / "memory.max", f"{150 * MiB}\n")
    with pytest.raises(_memory.InsufficientMemoryError, match="50.0 MiB|0.0 GiB of memory"):
        _memory.check_allocation(60 * MiB, "a block", "use less")
    assert len(calls) == 2
    monkeypatch.setattr(_memory, "REUSE_SECONDS", 0.0, raising=False)
    _memory.check_allocation(MiB, "a small block", "nothing")
    assert len(calls) == 3


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_reads_its_own_available_memory(tmp_path, monkeypatch):
    """A child forked after the parent's reading reads again (oracle: the child's own cgroup
    files, 50 MiB available, under which a 60 MiB allocation is refused)."""
    calls = []
    monkeypatch.setattr(_memory, "available_memory", _counted_reading(tmp_path, calls))
    monkeypatch.setattr(_memory, "REUSE_SECONDS", 3600.0, raising=False)
    _memory.check_allocation(60 * MiB, "a block", "nothing")  # 300 MiB available: passes
    pid = os.fork()
    if pid == 0:  # the child: its cgroup has 50 MiB left
        code = 1
        try:
            _write(tmp_path / "cgroup" / "memory.max", f"{150 * MiB}\n")
            _memory.check_allocation(4 * MiB, "a block", "nothing")
        except _memory.InsufficientMemoryError:
            code = 2
        except BaseException:
            code = 3
        else:
            code = 0 if calls[-1] == os.getpid() else 4
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert calls == [os.getpid()]


def test_the_cgroup_limits_are_read_once_and_again_before_a_decision(monkeypatch):
    """The cgroup limits are read at the first reading and kept: later readings read only the
    usage; they are read again after ``LIMITS_SECONDS``, and before a warning (oracle: the
    number of times the limit reader ran, and 40 % / 60 % of a patched machine's memory
    against the 50 % warning rule)."""
    reads = []
    cgroup_limits = _memory._cgroup_limits
    monkeypatch.setattr(_memory, "_cgroup_limits", lambda *a: reads.append(a) or cgroup_limits(*a))
    monkeypatch.setattr(_memory, "_machine_available", lambda: 1000 * MiB)
    monkeypatch.setattr(_memory, "_rlimit_headroom", lambda: [])
    monkeypatch.setattr(_memory, "_LIMITS", (None, 0.0, None))
    monkeypatch.setattr(_memory, "_LAST_READING", (None, None, 0.0, None))
    monkeypatch.setattr(_memory, "REUSE_SECONDS", 0.0)  # every check reads the usage
    for _ in range(3):
        _memory.check_allocation(400 * MiB, "a block", "nothing")
    assert len(reads) == 1
    with pytest.warns(_memory.LargeAllocationWarning):
        _memory.check_allocation(600 * MiB, "a block", "nothing")
    assert len(reads) == 2  # the decision read them again
    monkeypatch.setattr(_memory, "LIMITS_SECONDS", 0.0)
    _memory.check_allocation(400 * MiB, "a block", "nothing")
    assert len(reads) == 3
