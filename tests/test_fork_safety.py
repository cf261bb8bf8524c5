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
from sparsekit._runtime import pools as _pools, threads as _threads

pytestmark = pytest.mark.skipif(
    "fork" not in mp.get_all_start_methods(), reason="needs the fork start method"
)

#: seconds the parent waits for the child (its work takes well under one second; a stuck pool
#: never ends)
TIMEOUT = 30.0


@pytest.fixture
def two_threads(monkeypatch):
    """Two threads for the library's pools, on any runner; record the pools started."""
    monkeypatch.setattr(_threads, "usable_cpus", lambda: 2)
    monkeypatch.setattr(_threads, "default_threads", lambda: 2)
    started = []
    pool = _pools._pool
    monkeypatch.setattr(_pools, "_pool", lambda n: started.append(n) or pool(n))
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


def _X():
    return np.random.default_rng(0).normal(size=(600, 5))


def _snippet():
    """The call of the fork-hang report: an RBF Gram of 600 points (the exp step splits)."""
    k, X = sparsekit.get_kernel("rbf", gamma=0.1), _X()
    return lambda: k(X)


def _dense(name):
    k, X = sparsekit.get_kernel(name), _X()
    data = np.abs(X) if name == "chi2" else X
    return lambda: k(data)


def _sparse(name):
    """A CSR-input Gram (shared-column sums over row ranges)."""
    X = sp.random(400, 50, density=0.1, format="csr", random_state=0)
    k = sparsekit.get_kernel(name, gamma=0.1)
    return lambda: k(X)


def _shortest_path():
    """Floyd-Warshall over the graphs of a batch, on row ranges of graphs."""
    import networkx as nx

    graphs = [nx.gnp_random_graph(12, 0.3, seed=i) for i in range(64)]
    k = sparsekit.get_kernel("shortest-path", with_labels=False)
    return lambda: k(graphs)


def _sampler(name):
    """Landmarks (indices and weights) drawn with a fixed seed."""
    k = sparsekit.get_kernel("rbf", gamma=0.1)
    params = {
        "dac-rls": {"block_size": 100, "n_jobs": 2},
        "recursive-rls": {"n_jobs": 2},  # blocks of at least 1,024 rows: 2,100 rows make three
        "bless": {"lam": 1e-3, "n_jobs": 2},
        "greedy-trace": {},
    }[name]
    data = np.random.default_rng(4).normal(size=(2100, 5)) if name != "dac-rls" else _X()
    sampler = sparsekit.get_sampler(name, **params)

    def draw():
        lm = sampler.sample(data, k, 30, random_state=0)
        return np.concatenate([lm.indices, lm.weights])

    return draw


def _solver(name):
    """Coefficients of a batch of 400 signals."""
    rng = np.random.default_rng(1)
    D = rng.normal(size=(40, 120))
    D /= np.linalg.norm(D, axis=0)
    Y = rng.normal(size=(40, 400))
    if name == "nn-omp":
        D, Y = np.abs(D), np.abs(Y)
    params = {"frank-wolfe": {"beta": 5.0}, "mp": {"max_iter": 5}}.get(name, {"n_nonzero_coefs": 5})
    solver = sparsekit.get_solver(name, **params)
    return lambda: np.asarray(solver.solve(D, Y).coef)


def _mmd(which):
    from sparsekit.stats import mmd2_biased, mmd2_nystrom

    X = _X()
    Y = X[:400] + 0.5
    if which == "exact":
        return lambda: mmd2_biased(X, Y, kernel_params={"gamma": 0.2}, n_jobs=2)
    X = np.random.default_rng(0).normal(size=(10_000, 5))  # K(X, S) of more than one block
    return lambda: mmd2_nystrom(X, X[:400] + 0.5, n_landmarks=300, random_state=0, n_jobs=2)


def _isomap():
    """The landmark Isomap embedding (neighbour search and geodesics on the pool); an
    eigenvector's sign may differ between two solves, so its absolute value is compared."""
    from sparsekit.manifold import Isomap

    t = np.random.default_rng(2).uniform(0, 3 * np.pi, 600)
    X = np.column_stack([t * np.cos(t), 10 * np.random.default_rng(3).random(600), t * np.sin(t)])
    iso = Isomap(2, n_neighbors=8, n_landmarks=150, sampler="uniform", random_state=0)
    return lambda: np.abs(iso.fit_transform(X))


def _nystroem():
    X = _X()
    ny = sparsekit.Nystroem("rbf", n_components=300, kernel_params={"gamma": 0.1}, random_state=0)
    ny.fit(X)
    return lambda: ny.transform(X)


def _kernel_kmeans():
    X = _X()
    km = sparsekit.KernelKMeans(4, kernel_params={"gamma": 0.1}, method="exact", random_state=0)
    return lambda: km.fit(X).labels_


def _sparse_coder():
    rng = np.random.default_rng(1)
    atoms = rng.normal(size=(120, 40))
    coder = sparsekit.SparseCoder(atoms, solver_params={"n_nonzero_coefs": 5})
    X = rng.normal(size=(400, 40))
    return lambda: coder.fit_transform(X)


def _fastfood():
    from sparsekit.features.fastfood import Fastfood

    X = np.random.default_rng(5).normal(size=(2000, 16))
    ff = Fastfood(n_components=256, random_state=0).fit(X)
    return lambda: ff.transform(X)


def _rff():
    from sparsekit.features.rff import RandomFourierFeatures

    X = np.random.default_rng(5).normal(size=(2000, 16))
    rff = RandomFourierFeatures(n_components=256, random_state=0).fit(X)
    return lambda: rff.transform(X)


def _nystrom_ridge():
    """The predictions of a Nystrom kernel ridge fit (K_nm passes over row blocks)."""
    from sparsekit.learning import NystromRidge

    rng = np.random.default_rng(6)
    X = rng.normal(size=(4000, 5))
    ridge = NystromRidge(n_components=200, alpha=1e-3, solver="direct", random_state=0)
    return lambda: ridge.fit(X, np.sin(X[:, 0])).predict(X)


def _quickmeans():
    # more entries than ONE_BLOCK_ENTRIES: the assignment runs blocks of rows on the pool
    X = np.random.default_rng(7).normal(size=(4000, 32))
    qkm = sparsekit.QuicKMeans(8, random_state=0)
    return lambda: qkm.fit(X).labels_


#: every public entry point that starts one of the library's pools, with the tolerance of the
#: comparison (the oracle: the parent's result for the same call)
ENTRY_POINTS = {
    "fork-hang report (RBF Gram)": (_snippet, 1e-12),
    "laplacian Gram": (lambda: _dense("laplacian"), 1e-12),
    "chi2 Gram": (lambda: _dense("chi2"), 1e-12),
    "sparse RBF Gram": (lambda: _sparse("rbf"), 1e-12),
    "sparse laplacian Gram": (lambda: _sparse("laplacian"), 1e-12),
    "shortest-path graph kernel": (_shortest_path, 1e-12),
    "dac-rls sampler": (lambda: _sampler("dac-rls"), 1e-12),
    "recursive-rls sampler": (lambda: _sampler("recursive-rls"), 1e-12),
    "bless sampler": (lambda: _sampler("bless"), 1e-12),
    "greedy-trace sampler": (lambda: _sampler("greedy-trace"), 1e-12),
    "omp solver": (lambda: _solver("omp"), 1e-12),
    "mp solver": (lambda: _solver("mp"), 1e-12),
    "nn-omp solver": (lambda: _solver("nn-omp"), 1e-12),
    "frank-wolfe solver": (lambda: _solver("frank-wolfe"), 1e-12),
    "exact MMD": (lambda: _mmd("exact"), 1e-12),
    "Nystrom MMD": (lambda: _mmd("nystrom"), 1e-12),
    "landmark Isomap": (_isomap, 1e-8),
    "Nystroem.transform": (_nystroem, 1e-12),
    "KernelKMeans.fit": (_kernel_kmeans, 0),
    "SparseCoder.fit_transform": (_sparse_coder, 1e-12),
    "Fastfood.transform": (_fastfood, 1e-12),
    "RandomFourierFeatures.transform": (_rff, 1e-12),
    "NystromRidge.fit/predict": (_nystrom_ridge, 1e-10),
    "QuicKMeans.fit": (_quickmeans, 0),
}


@pytest.mark.parametrize("name", list(ENTRY_POINTS))
def test_entry_point_runs_again_in_a_forked_child(two_threads, name):
    """The parent calls the entry point (starting a pool of two threads), then a child forked
    from it calls it again: the child finishes within ``TIMEOUT`` with the parent's result
    (the oracle: the parent's own result for the same input)."""
    make, rtol = ENTRY_POINTS[name]
    call = make()
    expected = call()
    assert two_threads, "the call did not start a pool in the parent: the test checks nothing"
    status, value = _in_forked_child(call)
    assert status == "ok", f"forked child: {status} {value}"
    np.testing.assert_allclose(value, expected, rtol=rtol, atol=0)


def test_pool_workers_leave_the_thread_limits_as_they_were():
    """Numba's and BLAS's thread settings, seen from the caller and from the pool's workers,
    are the same after a pooled call as before (oracle: the values read before the call)."""
    pool = _pools._pool(2)

    def settings():
        return numba.get_num_threads(), _threads.blas_threads()

    X = _X()
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
