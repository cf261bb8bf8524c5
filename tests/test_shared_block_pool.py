"""The samplers' row and DAC blocks and Isomap's Dijkstra rows run on the library's one block
scheduler (:func:`sparsekit._runtime.pools.run_blocks`, threads named ``sparsekit-rows``).

Oracles: the thread names seen inside the blocks, the same computation on one thread (results
must be bitwise equal: the cuts do not depend on the thread count), scikit-learn's Isomap.
"""

import sys
import threading
import time

import numpy as np
import pytest
from sklearn import manifold as skm

import sparsekit
from sparsekit._runtime import pools as _pools, threads as _threads
from sparsekit.manifold import Isomap, _graph_cpu
from sparsekit.samplers import (
    greedy as greedy_module,
    recursive as recursive_module,
    rls as rls_module,
)

from .samplers.conftest import clustered

POOL_PREFIX = "sparsekit-rows"


def _record_threads(monkeypatch, module, name):
    """Wrap ``module.name`` to record the thread of each call; in its second block of a pool
    the calling thread waits (up to 10 s) for a pool thread to take a block, so that whether
    the pool takes part does not depend on timing."""
    original = getattr(module, name)
    seen, in_pool = [], []
    pool_ran = threading.Event()
    main = threading.get_ident()

    def spy(*args, **kwargs):
        thread = threading.current_thread()
        seen.append(thread.name)
        if thread.name.startswith(POOL_PREFIX):
            pool_ran.set()
        elif threading.get_ident() == main and getattr(_pools._IN_WORKER, "active", False):
            in_pool.append(1)
            if len(in_pool) == 2:  # (block 0 may run before the pool starts) wait once
                pool_ran.wait(10.0)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return seen


SAMPLERS = [
    ("dac-rls", {"block_size": 100}, rls_module, "_gram64"),
    ("two-pass-rls", {}, rls_module, "_gram64"),
    ("recursive-rls", {}, recursive_module, "_gram64"),
    ("greedy-trace", {"cache_gram": False}, greedy_module, "_gram64"),
]


@pytest.mark.parametrize("name, params, module, attr", SAMPLERS)
def test_sampler_blocks_run_on_the_shared_pool_and_do_not_depend_on_the_threads(
    monkeypatch, name, params, module, attr
):
    monkeypatch.setattr(rls_module, "MIN_BLOCK_ROWS", 1)  # several row blocks at this size
    X = clustered(600, d=3, seed=4)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    if name == "greedy-trace":
        monkeypatch.setattr(rls_module, "ROW_BLOCK_BYTES", 8 * 600 * 50)  # 50-row blocks
        with sparsekit.thread_limit(1):
            one = sparsekit.get_sampler(name, **params).sample(X, kernel, 20, random_state=3)
        seen = _record_threads(monkeypatch, module, attr)
        with sparsekit.thread_limit(2):
            two = sparsekit.get_sampler(name, **params).sample(X, kernel, 20, random_state=3)
        np.testing.assert_array_equal(one.indices, two.indices)
        np.testing.assert_array_equal(one.weights, two.weights)
    else:
        one = sparsekit.get_sampler(name, n_jobs=1, **params).scores(X, kernel, random_state=3)
        seen = _record_threads(monkeypatch, module, attr)
        two = sparsekit.get_sampler(name, n_jobs=2, **params).scores(X, kernel, random_state=3)
        np.testing.assert_array_equal(one, two)
    assert any(s.startswith(POOL_PREFIX) for s in seen), seen


@pytest.mark.parametrize("name", ["dac-rls", "two-pass-rls", "recursive-rls"])
def test_a_sampler_without_n_jobs_takes_the_threads_of_thread_limit(monkeypatch, name):
    """n_jobs=None is the library-wide setting (here ``thread_limit(2)``), also where the
    sampler runs its small factorizations on one thread."""
    seen = []
    original = _pools.run_blocks

    def spy(work, n_blocks, **kwargs):
        seen.append(kwargs["n_jobs"])
        return original(work, n_blocks, **kwargs)

    monkeypatch.setattr(rls_module, "run_blocks", spy)
    monkeypatch.setattr(recursive_module, "run_blocks", spy)
    X = clustered(600, d=3, seed=4)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    with sparsekit.thread_limit(2):
        sparsekit.get_sampler(name).scores(X, kernel, random_state=0)
    assert seen and set(seen) == {min(2, _threads.usable_cpus())}


def test_a_sampler_block_error_reaches_the_caller(monkeypatch):
    original = rls_module._gram64
    calls = []

    def failing(*args):
        calls.append(1)
        if len(calls) == 3:
            raise FloatingPointError("block 3")
        return original(*args)

    monkeypatch.setattr(rls_module, "_gram64", failing)
    X = clustered(600, d=3, seed=4)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    with pytest.raises(FloatingPointError, match="block 3"):
        sparsekit.get_sampler("dac-rls", block_size=50, n_jobs=2).scores(X, kernel, random_state=0)


def test_a_sampler_called_inside_a_block_runs_inline():
    X = clustered(400, d=3, seed=1)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    ref = sparsekit.get_sampler("dac-rls", block_size=50, n_jobs=1).scores(
        X, kernel, random_state=0
    )
    out, threads = {}, {}

    def work(i):
        threads[i] = threading.get_ident()
        sampler = sparsekit.get_sampler("dac-rls", block_size=50, n_jobs=2)
        out[i] = sampler.scores(X, kernel, random_state=0)

    seen_inner = []
    original = rls_module.rls_from_gram

    def spy(*args, **kwargs):
        seen_inner.append(threading.get_ident())
        return original(*args, **kwargs)

    rls_module.rls_from_gram = spy
    try:
        _pools.run_blocks(work, 1, n_jobs=2)
    finally:
        rls_module.rls_from_gram = original
    assert set(seen_inner) == {threads[0]}
    np.testing.assert_array_equal(out[0], ref)


def test_numba_regions_under_the_workqueue_layer_run_every_block_on_the_caller(monkeypatch):
    monkeypatch.setattr(_pools, "_threads_may_launch_numba", lambda: False)
    seen = []
    _pools.run_blocks(lambda i: seen.append(threading.get_ident()), 9, n_jobs=2, numba_regions=True)
    assert set(seen) == {threading.get_ident()} and len(seen) == 9


def test_numba_regions_stop_after_a_failing_block():
    seen = []

    def work(i):
        seen.append(i)
        if i == 0:
            raise KeyError("first")
        time.sleep(0.05)  # the other thread is still on its block when block 0 fails

    with pytest.raises(KeyError, match="first"):
        _pools.run_blocks(work, 6, n_jobs=2, numba_regions=True)
    assert set(seen) <= {0, 1}  # no block starts after the failure


@pytest.mark.parametrize(
    ("layer", "priority", "loads", "expected"),
    [
        ("workqueue", None, {"tbb", "omp"}, "workqueue"),
        ("omp", None, set(), "omp"),
        ("default", ["tbb", "omp", "workqueue"], {"omp"}, "omp"),
        ("default", ["tbb", "omp", "workqueue"], set(), "workqueue"),
        ("default", ["workqueue", "omp", "tbb"], {"tbb", "omp"}, "workqueue"),
        ("threadsafe", None, set(), None),
        ("forksafe", None, {"omp"}, "workqueue" if sys.platform.startswith("linux") else "omp"),
    ],
)
def test_the_layer_numba_will_select_is_predicted_before_it_starts(
    monkeypatch, layer, priority, loads, expected
):
    from numba import config

    monkeypatch.setattr(config, "THREADING_LAYER", layer)
    if priority is not None:
        monkeypatch.setattr(config, "THREADING_LAYER_PRIORITY", priority)
    monkeypatch.setattr(_pools, "_layer_loads", lambda name: name in loads)
    assert _pools._predicted_layer() == expected


def test_numba_regions_run_on_the_caller_when_workqueue_will_be_selected(monkeypatch):
    import numba
    from numba import config

    def not_started():
        raise ValueError("Threading layer is not initialized.")

    monkeypatch.setattr(numba, "threading_layer", not_started)
    monkeypatch.setattr(config, "THREADING_LAYER", "workqueue")
    monkeypatch.setattr(_pools, "_PREDICTED_SAFE", None)
    seen = []
    _pools.run_blocks(lambda i: seen.append(threading.get_ident()), 9, n_jobs=2, numba_regions=True)
    assert set(seen) == {threading.get_ident()} and len(seen) == 9
    monkeypatch.setattr(config, "THREADING_LAYER", "omp")
    monkeypatch.setattr(_pools, "_PREDICTED_SAFE", None)
    seen.clear()

    def slow(i):
        seen.append(threading.get_ident())
        time.sleep(0.02)

    _pools.run_blocks(slow, 9, n_jobs=2, numba_regions=True)
    assert len(set(seen)) == 2  # a layer that takes regions from several threads: both run


def test_isomap_dijkstra_rows_run_on_the_shared_pool_and_match_one_thread(monkeypatch):
    rng = np.random.default_rng(0)
    t = rng.uniform(0, 3 * np.pi, 500)
    X = np.c_[t * np.cos(t), rng.uniform(0, 5, 500), t * np.sin(t)]
    one = Isomap(2, n_neighbors=10, n_landmarks=60, random_state=0, n_jobs=1).fit(X)
    seen = _record_threads(monkeypatch, _graph_cpu, "dijkstra_rows")
    two = Isomap(2, n_neighbors=10, n_landmarks=60, random_state=0, n_jobs=2).fit(X)
    assert any(s.startswith(POOL_PREFIX) for s in seen), seen
    np.testing.assert_array_equal(one.embedding_, two.embedding_)
    # every point a landmark: the embedding is scikit-learn's (up to the sign of each axis)
    full = Isomap(2, n_neighbors=10, n_landmarks=500, random_state=0, n_jobs=2).fit(X)
    ref = skm.Isomap(n_components=2, n_neighbors=10, eigen_solver="dense").fit(X).embedding_
    signs = np.sign((full.embedding_ * ref).sum(axis=0))
    np.testing.assert_allclose(full.embedding_ * signs, ref, rtol=0, atol=1e-6 * np.abs(ref).max())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_empty_touched_maps_large_outputs_on_the_pool(monkeypatch, dtype):
    calls = []
    real = _pools.run_blocks
    monkeypatch.setattr(
        _pools, "run_blocks", lambda *a, **k: (calls.append(a[1]), real(*a, **k))[1]
    )
    monkeypatch.setattr(_pools, "TOUCH_MIN_BYTES", 1 << 12)
    with sparsekit.thread_limit(2):
        out = _pools.empty_touched((300, 70), dtype)
    assert calls == [8]  # 4 blocks per thread, every page in one of them
    assert out.shape == (300, 70) and out.dtype == dtype and out.flags.c_contiguous
    out[...] = 1.0  # an ordinary writable array
    with sparsekit.thread_limit(1):
        _pools.empty_touched((300, 70), dtype)
    with sparsekit.thread_limit(2):
        _pools.empty_touched((3, 7), dtype)  # below the threshold
        _pools.run_blocks(lambda i: _pools.empty_touched((300, 70), dtype), 1)  # in a block
    assert calls == [8, 1]  # only the outer run_blocks of the last line


def test_gram_and_nystroem_outputs_come_from_empty_touched(monkeypatch):
    from sparsekit.features import nystrom as nystrom_module
    from sparsekit.kernels import base as kernel_base

    seen = []
    real = _pools.empty_touched
    for module in (kernel_base, nystrom_module):
        monkeypatch.setattr(
            module, "empty_touched", lambda *a, **k: (seen.append(a), real(*a, **k))[1]
        )
    X = np.random.default_rng(0).standard_normal((500, 3))
    gram = sparsekit.get_kernel("rbf", gamma=0.5)(X)
    ny = sparsekit.Nystroem("rbf", n_components=20, kernel_params={"gamma": 0.5}, random_state=0)
    ny.fit(X).transform(X)
    shapes = [s[0] for s in seen]
    assert shapes[0] == (500, 500) and (500, 20) in shapes  # the Gram, the features
    np.testing.assert_allclose(np.diag(gram), 1.0)
