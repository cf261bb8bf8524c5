"""Every entry point that starts a pool works again in a child forked after it ran.

A child made by ``fork`` has only the thread that forked: a pool object inherited from the
parent has no workers there, so the child's first task would wait forever. Each test runs an
entry point in the parent at a size where it really starts a pool (two threads allowed), then
the same call in a forked child, which must finish within ``TIMEOUT`` seconds with the
parent's result (the oracle: the parent's own result for the same input).
"""

import multiprocessing as mp
import queue
import threading
import time

import numba
import numpy as np
import pytest
import scipy.sparse as sp

import sparsekit
from sparsekit import _row_ranges, _threads

pytestmark = pytest.mark.skipif(
    "fork" not in mp.get_all_start_methods(), reason="needs the fork start method"
)

#: seconds a child may take (its work takes well under one second; a stuck pool never ends)
TIMEOUT = 15.0


@pytest.fixture
def two_threads(monkeypatch):
    """Two threads for the library's pools, on any runner; record the pools started."""
    blas_threads = _threads.blas_threads
    monkeypatch.setattr(_threads, "usable_cpus", lambda: 2)
    monkeypatch.setattr(numba, "get_num_threads", lambda: 2)
    # the library's own blas_limit(1) (block workers) still reads as 1
    monkeypatch.setattr(
        _threads,
        "blas_threads",
        lambda: min(2, blas_threads()) if _threads._BLAS_LIMITS._held else 2,
    )
    started = []
    pool = _row_ranges._pool
    monkeypatch.setattr(_row_ranges, "_pool", lambda n: started.append(n) or pool(n))
    return started


def _in_forked_child(fn):
    """``fn()`` in a forked child: ("ok", result), ("error", text) or, when the child gave no
    result within ``TIMEOUT`` (stuck, or killed), ("no result", its exit code)."""
    ctx = mp.get_context("fork")
    results = ctx.Queue()

    def child():
        try:
            results.put(("ok", fn()))
        except BaseException as exc:  # reported to the parent, which fails the test
            results.put(("error", repr(exc)))

    proc = ctx.Process(target=child, daemon=True)
    proc.start()
    deadline = time.monotonic() + TIMEOUT
    outcome = None
    while outcome is None and time.monotonic() < deadline:
        try:  # read before joining: a large result fills the pipe until it is read
            outcome = results.get(timeout=0.1)
        except queue.Empty:
            if not proc.is_alive():
                break
    proc.join(2.0)
    if proc.is_alive():
        proc.kill()
        proc.join()
    return outcome or ("no result", proc.exitcode)


def _check_fork(fn, started, rtol=1e-12):
    expected = fn()
    assert started, "the call did not start a pool in the parent: the test checks nothing"
    status, value = _in_forked_child(fn)
    assert status == "ok", f"forked child: {status} {value}"
    np.testing.assert_allclose(value, expected, rtol=rtol, atol=0)


@pytest.fixture
def X():
    return np.random.default_rng(0).normal(size=(600, 5))


@pytest.mark.parametrize("name", ["rbf", "laplacian", "chi2"])
def test_dense_kernels_run_in_a_forked_child(two_threads, X, name):
    """The Gram (360,000 entries: the exp step and the row-range loops split) is the parent's."""
    k = sparsekit.get_kernel(name)
    data = np.abs(X) if name == "chi2" else X
    _check_fork(lambda: k(data), two_threads)


@pytest.mark.parametrize("name", ["rbf", "laplacian"])
def test_sparse_kernels_run_in_a_forked_child(two_threads, name):
    """The CSR-input Gram (shared-column sums over row ranges) is the parent's."""
    X = sp.random(400, 50, density=0.1, format="csr", random_state=0)
    k = sparsekit.get_kernel(name, gamma=0.1)
    _check_fork(lambda: k(X), two_threads)


@pytest.mark.parametrize("name", ["dac-rls", "recursive-rls"])
def test_rls_samplers_run_in_a_forked_child(two_threads, X, name):
    """The landmarks (indices and weights) drawn with a fixed seed are the parent's."""
    k = sparsekit.get_kernel("rbf", gamma=0.1)
    # recursive-rls streams blocks of at least 1,024 rows: 2,100 rows make three
    data = X if name == "dac-rls" else np.random.default_rng(4).normal(size=(2100, 5))
    params = {"block_size": 100} if name == "dac-rls" else {}
    sampler = sparsekit.get_sampler(name, n_jobs=2, **params)

    def draw():
        lm = sampler.sample(data, k, 30, random_state=0)
        return np.concatenate([lm.indices, lm.weights])

    _check_fork(draw, two_threads)


def test_omp_batch_runs_in_a_forked_child(two_threads):
    """The coefficients of a batch of 400 signals are the parent's."""
    rng = np.random.default_rng(1)
    D = rng.normal(size=(40, 120))
    D /= np.linalg.norm(D, axis=0)
    Y = rng.normal(size=(40, 400))
    solver = sparsekit.get_solver("omp", n_nonzero_coefs=5)
    _check_fork(lambda: np.asarray(solver.solve(D, Y).coef), two_threads)


def test_exact_mmd_runs_in_a_forked_child(two_threads, X):
    """The exact biased MMD² (kernel sums over blocks on the pool) is the parent's."""
    from sparsekit.stats import mmd2_biased

    Y = X[:400] + 0.5
    _check_fork(lambda: mmd2_biased(X, Y, kernel_params={"gamma": 0.2}, n_jobs=2), two_threads)


def test_landmark_isomap_runs_in_a_forked_child(two_threads):
    """The landmark Isomap embedding (neighbour search on the pool) is the parent's."""
    from sparsekit.manifold import Isomap

    t = np.random.default_rng(2).uniform(0, 3 * np.pi, 600)
    X = np.column_stack([t * np.cos(t), 10 * np.random.default_rng(3).random(600), t * np.sin(t)])
    iso = Isomap(2, n_neighbors=8, n_landmarks=150, sampler="uniform", random_state=0)
    # an eigenvector's sign may differ between two solves: compare up to sign per column
    _check_fork(lambda: np.abs(iso.fit_transform(X)), two_threads, rtol=1e-8)


def test_nystroem_transform_runs_in_a_forked_child(two_threads, X):
    """The Nystroem features of 600 rows are the parent's."""
    from sparsekit.features.nystrom import Nystroem

    ny = Nystroem("rbf", n_components=300, kernel_params={"gamma": 0.1}, random_state=0).fit(X)
    _check_fork(lambda: ny.transform(X), two_threads)


def test_pool_workers_leave_the_thread_limits_as_they_were(X):
    """Numba's and BLAS's thread settings, seen from the caller and from the pool's workers,
    are the same after a pooled call as before (oracle: the values read before the call)."""
    pool = _row_ranges._pool(2)

    def settings():
        return numba.get_num_threads(), _threads.blas_threads()

    before = settings(), pool.submit(settings).result()
    sparsekit.get_kernel("rbf", gamma=0.1)(X)
    sparsekit.get_sampler("dac-rls", block_size=100, n_jobs=2).sample(
        X, sparsekit.get_kernel("rbf"), 30, random_state=0
    )
    workers = {pool.submit(settings).result() for _ in range(8)}
    assert (settings(), *workers) == before


def test_a_forked_child_forgets_the_blas_limits_of_the_parents_other_threads():
    """A BLAS limit held by another thread of the parent at the fork does not bind the child,
    which has no such thread (oracle: the child's own request, ``thread_limit(2)``), and the
    limit the child saw at its start is back after its own limit ends."""
    if _threads.blas_threads() < 2:
        pytest.skip("needs a BLAS library that runs two threads")
    entered, release = threading.Event(), threading.Event()

    def hold():
        with _threads.blas_limit(1):
            entered.set()
            release.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    entered.wait()

    def child():
        at_start = _threads.blas_threads()
        with sparsekit.thread_limit(2):
            inside = _threads.blas_threads()
        return np.array([at_start, inside, _threads.blas_threads()])

    try:
        status, value = _in_forked_child(child)
    finally:
        release.set()
        holder.join()
    assert status == "ok", f"forked child: {status} {value}"
    assert value.tolist() == [1, 2, 1]
