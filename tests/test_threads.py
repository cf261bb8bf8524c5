"""One thread setting: an explicit n_jobs, else the innermost thread_limit, else every CPU."""

import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import sparsekit
from sparsekit._runtime import pools as _pools, threads as _threads
from sparsekit._runtime.pools import run_blocks
from sparsekit.kernels import _cpu
from sparsekit.samplers._rls_cpu import _invert_upper_inplace, rls_from_gram


@pytest.fixture
def four_cpus(monkeypatch):
    """Pretend the process may use 4 CPUs (so the threaded paths run on any CI runner)."""
    monkeypatch.setattr(_threads, "usable_cpus", lambda: 4)
    monkeypatch.setattr(_threads, "default_threads", lambda: 4)


def test_effective_n_jobs_follows_the_library_setting_only(four_cpus):
    """Oracle: the rule of the module (explicit n_jobs, else the innermost ``thread_limit``,
    else the usable CPUs); Numba's thread count and the BLAS limit are not read back."""
    assert _threads.effective_n_jobs(3) == 3
    assert _threads.effective_n_jobs(-1) == 4
    assert _threads.effective_n_jobs() == 4
    with threadpool_limits(limits=1, user_api="blas"), _threads.numba_limit(1):
        assert _threads.effective_n_jobs() == 4
    with sparsekit.thread_limit(1) as n:
        assert n == 1 and _threads.blas_threads() == 1 and numba.get_num_threads() == 1
        assert _threads.effective_n_jobs() == 1
        assert _threads.effective_n_jobs(2) == 2  # an explicit n_jobs wins
        with sparsekit.thread_limit(3):
            assert _threads.effective_n_jobs() == 3
        assert _threads.effective_n_jobs() == 1
    assert _threads.effective_n_jobs() == 4
    with pytest.raises(ValueError, match="n_jobs"):
        _threads.effective_n_jobs(0)


def test_exp_inplace_threaded_branch_is_exact(four_cpus, monkeypatch):
    calls = []
    pool = _pools._pool
    monkeypatch.setattr(_pools, "_pool", lambda n: calls.append(n) or pool(n))
    A = np.random.default_rng(0).standard_normal((700, 400))  # 2.1 x 2^17 entries
    np.testing.assert_array_equal(_cpu.exp_inplace(A.copy()), np.exp(A))
    assert calls  # the split branch ran
    calls.clear()
    with sparsekit.thread_limit(1):  # inline, no pool
        np.testing.assert_array_equal(_cpu.exp_inplace(A.copy()), np.exp(A))
    assert not calls
    np.testing.assert_array_equal(_cpu.exp_inplace(A[:300].copy()), np.exp(A[:300]))
    assert not calls  # small arrays run inline


def test_block_workers_run_single_threaded():
    seen = []

    def work(i):
        seen.append((i, _threads.effective_n_jobs(), numba.get_num_threads()))

    run_blocks(work, 12, n_jobs=3, numba_regions=True)
    assert sorted(s[0] for s in seen) == list(range(12))
    assert {s[1:] for s in seen} == {(1, 1)}


@pytest.mark.parametrize("m", [3, 160, 357])
def test_recursive_triangular_inverse(m):
    rng = np.random.default_rng(m)
    U = np.triu(rng.uniform(-1.0, 1.0, (m, m))) / m + np.diag(1.0 + rng.random(m))
    W = np.asfortranarray(U.copy())
    assert _invert_upper_inplace(W)
    np.testing.assert_allclose(np.triu(W), np.linalg.inv(U), rtol=0, atol=1e-12)
    U[m // 2 + 1, m // 2 + 1] = 0.0
    assert not _invert_upper_inplace(np.asfortranarray(U))


def test_rls_from_gram_against_dense_inverse():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((325, 4))
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    lam = 0.3
    expected = np.diag(K @ np.linalg.inv(K + lam * np.eye(len(K))))
    np.testing.assert_allclose(rls_from_gram(K, lam), expected, rtol=0, atol=1e-12)


# --- concurrency: a limit taken in one thread never outlives its holders -------------------


def _blas_now():
    from threadpoolctl import threadpool_info

    return [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]


def _run_threads(target, n):
    import threading

    errors = []

    def guarded(i):
        try:
            target(i)
        except BaseException as exc:  # noqa: BLE001  (reported by the test below)
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    return threads, errors


def _release_blas_control():
    """threadpoolctl 3.8+ lets one thread at a time set OpenBLAS's limit (the one that set it
    last, until it lets go): let go, so that the threads of the test may set it."""
    import threadpoolctl

    for cls in vars(threadpoolctl).values():
        if isinstance(cls, type) and hasattr(cls, "clear_controlling_thread"):
            cls.clear_controlling_thread()


@pytest.fixture
def known_setting():
    """A process-wide BLAS limit of 3 (not 1, not the usual default) and the main thread's Numba
    count, both recorded; the previous BLAS limit is restored afterwards."""
    limiter = threadpool_limits(limits=3, user_api="blas")
    _release_blas_control()
    before = (_blas_now(), numba.get_num_threads())
    try:
        if not before[0] or min(before[0]) < 2:
            pytest.skip("no BLAS library that takes a limit above 1: nothing to lose")
        yield before
    finally:
        limiter.restore_original_limits()
        _release_blas_control()


def test_thread_limit_from_8_threads_restores_the_process_setting(known_setting):
    """Eight threads enter ``thread_limit(1)`` one after the other and leave in the same order
    (the interleaving where the last to leave entered while the limit was already 1); the
    process's BLAS limit and Numba's count are afterwards what they were."""
    import threading

    n = 8
    turn_in, turn_out = [0], [0]
    cond = threading.Condition()
    inside = threading.Barrier(n, timeout=30)
    seen = []

    def wait_turn(turn, i):
        with cond:
            assert cond.wait_for(lambda: turn[0] == i, timeout=30)

    def next_turn(turn):
        with cond:
            turn[0] += 1
            cond.notify_all()

    def holder(i):
        wait_turn(turn_in, i)
        with sparsekit.thread_limit(1):
            next_turn(turn_in)
            inside.wait()
            seen.append((_blas_now(), numba.get_num_threads(), _threads.effective_n_jobs()))
            inside.wait()
            wait_turn(turn_out, i)
        next_turn(turn_out)

    threads, errors = _run_threads(holder, n)
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert len(seen) == n and all(set(b) == {1} and nb == 1 and e == 1 for b, nb, e in seen)
    assert (_blas_now(), numba.get_num_threads()) == known_setting


def test_rls_sampler_from_8_threads_restores_the_process_setting(known_setting, monkeypatch):
    """The exact-RLS sampler factors small Gram matrices on one BLAS thread: eight concurrent
    calls, the first entering first and leaving while the seven others are still inside, leave
    the process's BLAS limit and Numba's count as they were."""
    import threading

    from sparsekit.samplers import rls as rls_module

    n = 8
    first_inside, first_done = threading.Event(), threading.Event()
    inside = threading.Barrier(n, timeout=30)
    original = rls_module.rls_from_gram
    seen = []

    def spy(K, lam, overwrite=False):
        seen.append(_blas_now())
        if threading.current_thread().name == "rls-0":
            first_inside.set()
            inside.wait()
        else:
            inside.wait()
            assert first_done.wait(30)
            seen.append(_blas_now())  # the first caller has left: the others' limit holds
        return original(K, lam, overwrite=overwrite)

    X = np.random.default_rng(0).random((60, 3))
    kernel = sparsekit.get_kernel("rbf", gamma=1.0)
    expected = sparsekit.get_sampler("rls").scores(X, kernel)  # also compiles before the threads
    assert (_blas_now(), numba.get_num_threads()) == known_setting
    monkeypatch.setattr(rls_module, "rls_from_gram", spy)
    results = {}

    def call(i):
        try:
            results[i] = sparsekit.get_sampler("rls").scores(X, kernel)
        finally:
            if i == 0:
                first_done.set()

    threads, errors = _run_threads(call, n)
    for i, t in enumerate(threads):
        t.name = f"rls-{i}"
    threads[0].start()
    assert first_inside.wait(30)
    for t in threads[1:]:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert (_blas_now(), numba.get_num_threads()) == known_setting
    assert len(seen) == 2 * n - 1 and all(set(b) == {1} for b in seen)
    for i in range(n):
        np.testing.assert_array_equal(results[i], expected)


def test_a_thread_limit_stays_in_force_while_another_thread_asks_for_more(known_setting):
    """BLAS's limit is process-wide: while one thread holds ``thread_limit(1)``, another
    thread's ``thread_limit(2)`` does not lift it; when the first leaves, the second's 2 holds,
    and when both have left the process's value is back."""
    import threading

    small_in, large_in, small_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def small(_):
        with sparsekit.thread_limit(1):
            small_in.set()
            assert large_in.wait(30)
            seen["small, both inside"] = _blas_now()
        small_out.set()

    def large(_):
        assert small_in.wait(30)
        with sparsekit.thread_limit(2):
            large_in.set()
            assert small_out.wait(30)
            seen["large alone"] = _blas_now()
            seen["large numba"] = numba.get_num_threads()

    threads_a, errors_a = _run_threads(small, 1)
    threads_b, errors_b = _run_threads(large, 1)
    for t in threads_a + threads_b:
        t.start()
    for t in threads_a + threads_b:
        t.join(60)
    assert not errors_a and not errors_b, errors_a + errors_b
    assert set(seen["small, both inside"]) == {1}
    assert set(seen["large alone"]) == {2}
    assert seen["large numba"] == min(2, numba.config.NUMBA_NUM_THREADS)
    assert (_blas_now(), numba.get_num_threads()) == known_setting


def test_nested_limits_in_one_thread_innermost_wins(known_setting):
    with sparsekit.thread_limit(1):
        assert set(_blas_now()) == {1}
        with sparsekit.thread_limit(2) as n:
            assert n == 2 and set(_blas_now()) == {2}
        assert set(_blas_now()) == {1} and numba.get_num_threads() == 1
    assert (_blas_now(), numba.get_num_threads()) == known_setting


@pytest.mark.parametrize("r, n", [(1, 1), (7, 0), (60, 333)])
def test_triangular_product_is_scipys_dtrmm(r, n):
    """``trmm_upper_t`` (BLAS through ctypes, GIL released) computes Uᵀ B as SciPy's wrapper of
    the same routine does, bit for bit, and reads only the upper triangle of U."""
    import ctypes

    from scipy.linalg import blas

    from sparsekit.samplers import _lapack

    rng = np.random.default_rng(r + n)
    U = np.asfortranarray(np.triu(rng.standard_normal((r, r))))
    B = np.asfortranarray(rng.standard_normal((r, n)))
    want = blas.dtrmm(1.0, U, B, side=0, lower=0, trans_a=1)
    np.testing.assert_allclose(want, U.T @ B, rtol=1e-12, atol=1e-12)
    U[np.tril_indices(r, -1)] = np.nan  # not read
    got = _lapack.trmm_upper_t(U, B)
    assert got is B
    np.testing.assert_array_equal(got, want)
    flags = type(_lapack._FUNCTIONS["dtrmm"])._flags_
    assert not flags & ctypes._FUNCFLAG_PYTHONAPI  # a plain C call: ctypes releases the GIL
    with pytest.raises(ValueError, match="Fortran-ordered"):
        _lapack.trmm_upper_t(U, np.asfortranarray(rng.standard_normal((r + 1, 2))))  # rows
    with pytest.raises(ValueError, match="Fortran-ordered"):
        _lapack.trmm_upper_t(U, np.ones((r, 3), dtype=np.float32, order="F"))
    # U itself: square, Fortran-ordered float64 (a C-ordered U would be read transposed)
    bad = [np.asfortranarray(U[:, :-1]), U.astype(np.float32, order="F")]
    bad += [np.ascontiguousarray(U)] if r > 1 else []
    for bad_U in bad:
        for factor in (_lapack.potrf_upper, _lapack.trtri_upper):
            with pytest.raises(ValueError, match="square Fortran-ordered float64"):
                factor(bad_U.copy(order="K"))
        with pytest.raises(ValueError, match="square Fortran-ordered float64"):
            _lapack.trmm_upper_t(bad_U, B)


def _count_blas_sets(monkeypatch):
    """Count the calls that set a BLAS library's limit, for each library sparsekit controls."""
    calls = []
    for lib in _threads._blas_libs():

        def counted(n, _original=lib.set):
            calls.append(n)
            return _original(n)

        monkeypatch.setattr(lib, "set", counted)
    return calls


def test_a_limit_already_in_force_is_not_set_again(known_setting, monkeypatch):
    """Entering a BLAS limit equal to the one in force calls nothing in BLAS; a different one is
    set and the process's value restored (oracle: threadpoolctl's ``threadpool_info``)."""
    calls = _count_blas_sets(monkeypatch)
    with _threads.blas_limit(1):
        assert set(_blas_now()) == {1}
        n_set = len(calls)
        assert n_set > 0
        with _threads.blas_limit(1), sparsekit.thread_limit(1):
            assert set(_blas_now()) == {1}
        assert len(calls) == n_set
        with _threads.blas_limit(2):  # the innermost request of this thread
            assert set(_blas_now()) == {2}
        assert set(_blas_now()) == {1}
    assert _blas_now() == known_setting[0]
    assert len(calls) > n_set  # restored
    with threadpool_limits(limits=1, user_api="blas"):
        _release_blas_control()
        del calls[:]
        with _threads.blas_limit(1), sparsekit.thread_limit(1):
            assert set(_blas_now()) == {1}
        assert calls == [] and set(_blas_now()) == {1}
    _release_blas_control()
    assert _blas_now() == known_setting[0]


@pytest.mark.parametrize("bad", [0, -2, -8])
def test_effective_n_jobs_refuses_every_count_below_one_but_minus_one(bad):
    """Oracle: the documented rule (a positive count, or -1 for every usable CPU)."""
    with pytest.raises(ValueError, match="n_jobs"):
        _threads.effective_n_jobs(bad)
    assert _threads.effective_n_jobs(1) == 1


def test_numba_limit_restores_the_thread_count_even_after_an_error():
    """Oracle: Numba's own ``get_num_threads`` read before the block."""
    before = numba.get_num_threads()
    with _threads.numba_limit(1):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with pytest.raises(RuntimeError), _threads.numba_limit(1):
        raise RuntimeError("inside")
    assert numba.get_num_threads() == before


def test_blas_limit_restores_the_process_value_after_an_error(known_setting):
    """Oracle: threadpoolctl's reading of the BLAS limit before the block."""
    with pytest.raises(RuntimeError), sparsekit.thread_limit(1):
        assert set(_blas_now()) == {1}
        raise RuntimeError("inside")
    assert (_blas_now(), numba.get_num_threads()) == known_setting


@pytest.mark.parametrize("bad", [0, -2])
def test_thread_limit_refuses_a_bad_count_naming_n_threads(bad, known_setting):
    """Oracle: the signature — the argument is ``n_threads``, so the error names it (not the
    ``n_jobs`` of the function it delegates to), and nothing is changed."""
    with pytest.raises(ValueError, match="n_threads must be"):
        with sparsekit.thread_limit(bad):
            pass
    assert (_blas_now(), numba.get_num_threads()) == known_setting


def _nystroem(n_jobs):
    X = np.random.default_rng(0).normal(size=(600, 5))
    ny = sparsekit.Nystroem(n_components=300, kernel_params={"gamma": 0.1}, random_state=0)
    return ny.set_params(n_jobs=n_jobs).fit(X).transform(X)


def _kernel_kmeans(n_jobs):
    X = np.random.default_rng(0).normal(size=(600, 5))
    km = sparsekit.KernelKMeans(4, kernel_params={"gamma": 0.1}, method="exact", random_state=0)
    return km.set_params(n_jobs=n_jobs).fit(X).labels_


def _sparse_coder(n_jobs):
    rng = np.random.default_rng(1)
    atoms, X = rng.normal(size=(120, 40)), rng.normal(size=(400, 40))
    coder = sparsekit.SparseCoder(atoms, solver_params={"n_nonzero_coefs": 5}, n_jobs=n_jobs)
    return coder.fit_transform(X)


@pytest.mark.parametrize("call", [_nystroem, _kernel_kmeans, _sparse_coder])
def test_estimators_that_start_threads_take_n_jobs(four_cpus, monkeypatch, call):
    """``n_jobs`` bounds the library's pools of the call: none with 1, pools of 2 threads with
    2, of at most the 4 usable CPUs by default; the result does not depend on it. Oracle: the thread
    counts the pools were asked for, and the one-thread result (rows are independent; BLAS
    sums in another order with more threads, hence the tolerance)."""
    asked = []
    pool = _pools._pool
    monkeypatch.setattr(_pools, "_pool", lambda n: asked.append(n) or pool(n))
    one = call(1)
    assert asked == []
    np.testing.assert_allclose(call(2), one, rtol=1e-7, atol=1e-9)
    assert asked and set(asked) == {2}
    asked.clear()
    np.testing.assert_allclose(call(None), one, rtol=1e-7, atol=1e-9)
    assert asked and max(asked) <= 4
    with pytest.raises(ValueError, match="n_jobs"):
        call(0)


def _public_estimators():
    """The public estimator classes (``fit`` and scikit-learn's parameters), components of the
    registry (kernels, samplers, solvers, factorizers) aside."""
    import importlib
    import inspect
    import pkgutil

    from sparsekit._base import ParamsMixin
    from sparsekit.factorizers.base import Factorizer
    from sparsekit.kernels.base import Kernel
    from sparsekit.manifold.kernels import DataDependentKernel
    from sparsekit.samplers.base import Sampler
    from sparsekit.solvers.base import Solver

    found = set()
    for info in pkgutil.walk_packages(sparsekit.__path__, "sparsekit."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        if info.name.split(".")[1] in ("nn", "dask", "experiments", "run", "cli", "__main__"):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if (
                inspect.isclass(obj)
                and issubclass(obj, ParamsMixin)
                and not issubclass(obj, (Kernel, DataDependentKernel, Sampler, Solver, Factorizer))
                and hasattr(obj, "fit")
                and not inspect.isabstract(obj)
            ):
                found.add(obj)
    return sorted(found, key=lambda c: c.__qualname__)


def test_every_public_estimator_takes_n_jobs():
    """The rule of ``sparsekit._runtime``: every estimator takes ``n_jobs`` (all of them run
    the library's pools, BLAS or Numba). Oracle: the estimators' signatures and docstrings."""
    import inspect

    estimators = _public_estimators()
    assert len(estimators) >= 19
    params = {c: inspect.signature(c.__init__).parameters for c in estimators}
    missing = [c.__qualname__ for c in estimators if "n_jobs" not in params[c]]
    assert missing == []
    undocumented = [c.__qualname__ for c in estimators if "n_jobs :" not in (c.__doc__ or "")]
    assert undocumented == []


def test_a_process_started_with_numba_num_threads_1_runs_single_threaded():
    """Outside any ``thread_limit``, the library's setting is at most the ``NUMBA_NUM_THREADS``
    the process started with (oracle: the environment variable given to the child)."""
    import os
    import subprocess
    import sys

    code = "from sparsekit._runtime.threads import effective_n_jobs as e; print(e(), e(-1) >= 1)"
    env = {**os.environ, "NUMBA_NUM_THREADS": "1", "NUMBA_ENABLE_CUDASIM": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "True"]


def _registered_limits(monkeypatch):
    """The requests that reach the process-wide BLAS controller (each one a lock and calls into
    BLAS), recorded."""
    entered = []
    enter = _threads._BLAS_LIMITS.enter
    monkeypatch.setattr(_threads._BLAS_LIMITS, "enter", lambda n: entered.append(n) or enter(n))
    return entered


def test_a_limit_equal_to_the_threads_innermost_one_is_not_registered(monkeypatch):
    """Oracle: the rule that each thread's innermost request counts; a request equal to it
    changes nothing, so only the requests that differ reach the controller."""
    entered = _registered_limits(monkeypatch)
    with _threads.blas_limit(1):
        with _threads.blas_limit(1):
            with _threads.blas_limit(2), _threads.blas_limit(2):
                pass
            with _threads.blas_limit(1):
                pass
    assert entered == [1, 2]
    assert _threads._BLAS_LIMITS._held == {}


def test_nystrom_mmd_with_few_landmarks_takes_few_blas_limits(monkeypatch):
    """With 9 landmarks every product of the landmark sums is skinny: one BLAS limit around the
    loop over the blocks of K(x, S), not one per block and product (oracle: the requests that
    reach the controller: the sums' loop, the normalization's K(S, S), the RBF kernel's column
    sums and the inverse square root; 8 when each block took its own)."""
    from sparsekit.stats import mmd2_nystrom

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(5000, 5)), rng.normal(size=(5000, 5)) + 0.1
    mmd2_nystrom(X, Y, random_state=0)
    entered = _registered_limits(monkeypatch)
    mmd2_nystrom(X, Y, random_state=0)
    assert len(entered) <= 4
