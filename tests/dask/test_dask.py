"""The Dask backend on a local cluster of 2 worker processes equals the in-memory results."""

import sys
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import sparsekit  # noqa: E402
import sparsekit.dask as skd  # noqa: E402
from sparsekit.samplers import _draw  # noqa: E402
from sparsekit.samplers.rls import DACRLSSampler  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((600, 5))
    return X, da.from_array(X, chunks=(150, -1))


KERNEL = sparsekit.get_kernel("rbf", gamma=0.2)


def test_gram_blocks_equal_in_memory(client, data):
    X, Xd = data
    Yd = da.from_array(X[:130], chunks=(40, 3))  # feature chunks are merged
    G = skd.gram(KERNEL, Xd, Yd)
    assert G.chunks == (Xd.chunks[0], (40, 40, 40, 10))
    np.testing.assert_allclose(G.compute(), KERNEL(X, X[:130]), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        skd.gram("rbf", Xd[:50], kernel_params={"gamma": 0.1}).compute(),
        sparsekit.get_kernel("rbf", gamma=0.1)(X[:50]),
        rtol=1e-12,
    )


def test_dac_rls_scores_equal_in_memory_partition(client, data):
    X, Xd = data
    scores = skd.dac_rls_scores(Xd, KERNEL, lam=0.05, random_state=7)
    assert isinstance(scores, da.Array)
    blocks = skd.dac_rls_partition(Xd.chunks[0], random_state=7)
    # the documented partition: ceil(sqrt(600)) = 25 rows, inside chunks of 150
    assert all(len(b) == 25 for b in blocks)
    assert all(b.min() // 150 == b.max() // 150 for b in blocks)
    ref = DACRLSSampler(lam=0.05).scores_for_partition(X, KERNEL, blocks)
    np.testing.assert_allclose(scores.compute(), ref, rtol=1e-10, atol=1e-13)
    # a different seed gives a different partition, hence different scores
    assert not np.allclose(skd.dac_rls_scores(Xd, KERNEL, lam=0.05, random_state=8).compute(), ref)


def test_nystroem_uniform_equals_in_memory(client, data):
    X, Xd = data
    ny = skd.nystroem_fit(Xd, "rbf", "uniform", 40, kernel_params={"gamma": 0.2}, random_state=3)
    ref = sparsekit.Nystroem(
        "rbf", "uniform", 40, kernel_params={"gamma": 0.2}, random_state=3
    ).fit(X)
    np.testing.assert_array_equal(ny.component_indices_, ref.component_indices_)
    np.testing.assert_allclose(ny.normalization_, ref.normalization_, rtol=1e-10, atol=1e-12)
    Z = skd.nystroem_transform(ny, Xd)
    assert Z.chunks == (Xd.chunks[0], (40,))
    np.testing.assert_allclose(Z.compute(), ref.transform(X), rtol=1e-10, atol=1e-12)


def test_nystroem_dac_rls_draws_from_chunked_scores(client, data):
    X, Xd = data
    ny = skd.nystroem_fit(Xd, KERNEL, "dac-rls", 30, sampler_params={"lam": 0.05}, random_state=4)
    scores = DACRLSSampler(lam=0.05).scores_for_partition(
        X, KERNEL, skd.dac_rls_partition(Xd.chunks[0], random_state=4)
    )
    idx, weights = _draw.fixed_size(scores, 30, np.random.default_rng(4))
    np.testing.assert_array_equal(ny.component_indices_, idx)
    np.testing.assert_allclose(ny.landmark_weights_, weights)
    np.testing.assert_allclose(ny.components_, X[idx])


def test_nystroem_recursive_rls_on_one_worker_equals_in_memory(client, data):
    X, Xd = data
    kw = dict(kernel_params={"gamma": 0.2}, random_state=5)
    ny = skd.nystroem_fit(Xd, "rbf", "recursive-rls", 25, **kw)
    ref = sparsekit.Nystroem("rbf", "recursive-rls", 25, **kw).fit(X)
    np.testing.assert_array_equal(ny.component_indices_, ref.component_indices_)
    np.testing.assert_allclose(
        skd.nystroem_transform(ny, Xd).compute(), ref.transform(X), rtol=1e-9, atol=1e-11
    )


@pytest.mark.parametrize(
    "name, params",
    [
        ("omp", {"n_nonzero_coefs": 3}),
        ("mp", {"max_iter": 12}),
        ("frank-wolfe", {"max_iter": 40}),
    ],
)
def test_batched_solvers_equal_in_memory(client, name, params):
    from sparsekit.solvers.dictionaries import make_sparse_coding_problem

    D, Y, C = make_sparse_coding_problem(32, 64, 3, 50, 0)
    if name == "frank-wolfe":
        params = {**params, "beta": 2 * np.abs(C).sum(0)}  # per signal: split with the columns
    coef = skd.solve(name, D, da.from_array(Y, chunks=(-1, 12)), **params)
    ref = sparsekit.get_solver(name, **params).solve(D, Y).coef
    np.testing.assert_allclose(coef.compute(), ref, rtol=1e-12, atol=1e-14)


def test_bad_inputs(data):
    X, Xd = data
    with pytest.raises(ValueError, match="Y has 4 features but 5 are expected"):
        skd.gram(KERNEL, Xd, da.from_array(X[:, :4], chunks=(100, -1)))
    with pytest.raises(TypeError, match="dask.array.Array"):
        skd.gram(KERNEL, X)
    with pytest.raises(ValueError, match="bandwidth rule 'median'"):
        skd.gram(sparsekit.get_kernel("rbf", bandwidth="median"), Xd)
    # chunks whose real width differs from the declared one (built from delayed pieces)
    import dask

    pieces = [
        da.from_delayed(dask.delayed(lambda w=w: np.ones((10, w)))(), (10, 5), float)
        for w in (5, 4)
    ]
    lying = da.concatenate(pieces)
    with pytest.raises(ValueError, match=r"a chunk of X has shape \(10, 4\) but X declares 5"):
        skd.gram(KERNEL, lying).compute(scheduler="sync")
    with pytest.raises(ValueError, match="mode='fixed'"):
        skd.nystroem_fit(Xd, KERNEL, "dac-rls", 5, sampler_params={"lam": 0.1, "mode": "bernoulli"})
    with pytest.raises(TypeError, match="lam must be a number"):
        skd.dac_rls_scores(Xd, KERNEL, lam="inverse-mean-norm")


def test_fitted_bandwidth_rule_is_frozen(client, data):
    X, Xd = data
    k = sparsekit.get_kernel("rbf", bandwidth="median").fit(X)
    np.testing.assert_allclose(skd.gram(k, Xd[:60]).compute(), k(X[:60]), rtol=1e-12)
    ny = skd.nystroem_fit(Xd, k, "uniform", 20, random_state=0)
    assert ny.kernel_.gamma_ == pytest.approx(k.gamma_)


def test_runner_on_the_cluster_equals_local(client, tmp_path):
    from sparsekit.run import load_spec, run_spec

    text = (
        'task = "nystrom"\n[data]\nsource = "blobs"\nn_samples = 80\n[kernel]\nname = "rbf"\n'
        'gamma = 0.3\n[sampler]\nname = "uniform"\n[params]\nn_components = [5, 10]\n'
    )
    spec = load_spec("s.toml", text=text)
    run_spec(spec, out=tmp_path / "local")
    run_spec(spec, out=tmp_path / "dask", scheduler=client.scheduler.address)
    import json

    def rows(p):
        return sorted(
            (json.loads(line) for line in open(p / "results.jsonl")), key=lambda r: r["run_id"]
        )

    for a, b in zip(rows(tmp_path / "local"), rows(tmp_path / "dask")):
        assert a["run_id"] == b["run_id"] and b["status"] == "ok"
        assert a["error_fro"] == pytest.approx(b["error_fro"], rel=1e-10)


def test_unreachable_scheduler_is_a_clear_error():
    from sparsekit.run.runner import connect

    t0 = time.perf_counter()
    with pytest.raises(ConnectionError, match="could not reach the Dask scheduler"):
        connect("tcp://127.0.0.1:9", timeout=1)
    assert time.perf_counter() - t0 < 30


# -- kernel k-means and the Nyström MMD ------------------------------------------------------
@pytest.fixture(scope="module")
def blobs():
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(240, centers=4, cluster_std=1.5, random_state=1)
    return X, da.from_array(X, chunks=(70, -1))  # chunks of 70, 70, 70, 30 rows


@pytest.mark.parametrize("sampler, init", [("uniform", "k-means++"), ("recursive-rls", "random")])
def test_kernel_kmeans_equals_in_memory(client, blobs, sampler, init):
    X, Xd = blobs
    kw = dict(
        n_clusters=4,
        sampler=sampler,
        n_landmarks=20,
        n_init=2,
        init=init,
        kernel_params={"gamma": 0.1},
        random_state=3,
    )
    ref = sparsekit.KernelKMeans(method="nystrom", **kw).fit(X)
    km = skd.kernel_kmeans_fit(Xd, **kw)
    # recursive-rls runs on one worker: the seeding after it draws from the same generator state
    np.testing.assert_array_equal(km.nystroem_.component_indices_, ref.nystroem_.component_indices_)
    assert isinstance(km.labels_, da.Array) and km.labels_.chunks == Xd.chunks[:1]
    np.testing.assert_array_equal(km.labels_.compute(), ref.labels_)
    assert km.n_iter_ == ref.n_iter_
    assert km.inertia_ == pytest.approx(ref.inertia_, rel=1e-10)
    assert km.residual_trace_ == pytest.approx(ref.residual_trace_, rel=1e-10, abs=1e-10)
    np.testing.assert_allclose(km.cluster_centers_, ref.cluster_centers_, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(km.predict(X[:50]), ref.predict(X[:50]))


@pytest.mark.parametrize("stop", [{"tol": 0.05}, {"max_iter": 2}])
def test_kernel_kmeans_stopped_early_reports_one_partition(client, blobs, stop):
    """labels_, cluster_centers_ and inertia_ describe one partition (scikit-learn's rule), as
    in memory: inertia_ is -score of the training data, labels_ its predictions."""
    X, Xd = blobs
    kw = dict(n_clusters=6, n_landmarks=30, kernel_params={"gamma": 0.02}, random_state=0, **stop)
    ref = sparsekit.KernelKMeans(method="nystrom", **kw).fit(X)
    km = skd.kernel_kmeans_fit(Xd, **kw)
    labels = km.labels_.compute()
    assert km.inertia_ == pytest.approx(-km.score(X), rel=1e-9)
    np.testing.assert_array_equal(km.predict(X), labels)
    np.testing.assert_array_equal(labels, ref.labels_)
    np.testing.assert_allclose(km.cluster_centers_, ref.cluster_centers_, rtol=1e-10, atol=1e-12)
    assert ref.inertia_ == pytest.approx(-ref.score(X), rel=1e-9)


def test_kernel_kmeans_reseeds_empty_clusters_as_in_memory(client):
    # two seeds on the same point: the second cluster is empty after the first assignment
    X = np.concatenate([np.zeros((5, 2)), np.ones((5, 2)) * 3, np.ones((5, 2)) * [6, 0]])
    X = X + np.random.default_rng(0).normal(scale=0.01, size=X.shape)
    X[1] = X[0]
    kw = dict(
        n_clusters=3, kernel="linear", n_landmarks=4, init=np.array([0, 1, 5]), random_state=0
    )
    ref = sparsekit.KernelKMeans(method="nystrom", **kw).fit(X)
    km = skd.kernel_kmeans_fit(da.from_array(X, chunks=(4, -1)), persist=False, **kw)
    labels = km.labels_.compute()
    np.testing.assert_array_equal(labels, ref.labels_)
    assert np.bincount(labels, minlength=3).min() >= 1
    assert km.inertia_ == pytest.approx(ref.inertia_, rel=1e-9, abs=1e-12)


def test_nystrom_mmd_equals_in_memory(client):
    from sparsekit.stats import NystromMMD

    rng = np.random.default_rng(0)
    X, Y, W = (
        rng.standard_normal((150, 4)),
        rng.standard_normal((120, 4)) + 0.3,
        rng.standard_normal((90, 4)),
    )
    Y[:20] = X[50:70]  # points shared by two samples, in other chunks: weights merged in v
    X[100] = X[7]
    kw = dict(
        sampler="uniform", n_landmarks=15, lam=1e-3, kernel_params={"gamma": 0.3}, random_state=2
    )
    ref = NystromMMD(**kw).fit(X, Y, W)
    est = skd.nystrom_mmd_fit(*(da.from_array(A, chunks=(40, -1)) for A in (X, Y, W)), **kw)
    np.testing.assert_array_equal(
        est.nystroem_.component_indices_, ref.nystroem_.component_indices_
    )
    np.testing.assert_allclose(est.embeddings_, ref.embeddings_, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(est.support_ids_, ref.support_ids_)
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        assert est.sq_norm_v(i, j) == pytest.approx(ref.sq_norm_v(i, j), rel=1e-14)
        assert est.mmd2(i, j) == pytest.approx(ref.mmd2(i, j), rel=1e-10)
    Xd, Yd = da.from_array(X, chunks=(40, -1)), da.from_array(Y, chunks=(40, -1))
    two = NystromMMD(**kw).fit(X, Y)
    assert skd.mmd2_nystrom(Xd, Yd, **kw) == pytest.approx(two.mmd2(0, 1), rel=1e-10)


def test_distinct_ids_resolve_key_collisions_exactly():
    from sparsekit.dask.stats import distinct_ids, row_keys
    from sparsekit.stats._data import support_ids

    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, size=(60, 2)).astype(float)  # many equal rows
    X[5, 0] = -0.0 if X[5, 0] == 0 else X[5, 0]
    kernel = sparsekit.get_kernel("rbf", gamma=1.0)
    ref = support_ids(kernel, X)
    # every key equal: all rows are gathered and identified exactly
    np.testing.assert_array_equal(
        distinct_ids(kernel, np.zeros(60, dtype=np.uint64), lambda i: X[i]), ref
    )
    keys = row_keys(X)
    np.testing.assert_array_equal(distinct_ids(kernel, keys, lambda i: X[i]), ref)
    assert len(np.unique(keys)) == len(np.unique(ref))  # no collision between different rows


def test_bad_inputs_of_kernel_kmeans_and_mmd(blobs):
    X, Xd = blobs
    narrow = da.from_array(X[:, :1], chunks=(70, -1))
    with pytest.raises(ValueError, match="Y has 1 features but 2 are expected"):
        skd.nystrom_mmd_fit(Xd, narrow, kernel_params={"gamma": 0.1})
    with pytest.raises(ValueError, match="lam"):
        skd.mmd2_nystrom(Xd, Xd, lam=0.0, kernel_params={"gamma": 0.1})
    with pytest.raises(ValueError, match="n_landmarks=999 is larger than the pooled samples"):
        skd.nystrom_mmd_fit(Xd, n_landmarks=999, kernel_params={"gamma": 0.1})
    with pytest.raises(ValueError, match="n_samples=240 should be >= n_clusters=300"):
        skd.kernel_kmeans_fit(Xd, 300, kernel_params={"gamma": 0.1})
    with pytest.raises(ValueError, match="n_landmarks=500 is larger than n_samples=240"):
        skd.kernel_kmeans_fit(Xd, 3, n_landmarks=500, kernel_params={"gamma": 0.1})
    with pytest.raises(ValueError, match="init must be"):
        skd.kernel_kmeans_fit(Xd, 3, init=np.array([0, 1]), kernel_params={"gamma": 0.1})
    with pytest.raises(TypeError, match="dask.array.Array"):
        skd.kernel_kmeans_fit(X, 3)
    import dask

    pieces = [
        da.from_delayed(dask.delayed(lambda w=w: np.ones((10, w)))(), (10, 2), float)
        for w in (2, 3)
    ]
    with pytest.raises(ValueError, match=r"a chunk of X has shape \(10, 3\) but X declares 2"):
        with dask.config.set(scheduler="sync"):
            skd.kernel_kmeans_fit(da.concatenate(pieces), 2, n_landmarks=3, kernel="linear")


@pytest.mark.skipif(sys.platform != "linux", reason="glibc heap settings")
def test_chunk_tasks_keep_the_heap_in_a_nanny_worker(client):
    # a nanny starts its workers with MALLOC_TRIM_THRESHOLD_=65536 (fixed glibc thresholds):
    # without keep_heap every block-sized temporary faults its pages in again
    def faults(keep):
        import resource

        from sparsekit.dask._heap import keep_heap, startup_thresholds

        def blocks():
            for _ in range(40):
                a = np.ones(64 * 1024)  # 512 KiB, freed at once
                del a

        blocks()
        before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
        if keep:
            with keep_heap():
                blocks()
        else:
            blocks()
        return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before, startup_thresholds()

    plain, start = client.submit(faults, False, pure=False).result()
    kept, _ = client.submit(faults, True, pure=False).result()
    assert start.get("trim") == 65536
    assert plain >= 40 * 100  # 128 pages per array
    assert kept < plain / 10


def test_startup_thresholds_parse_the_initial_environment(tmp_path):
    from sparsekit.dask._heap import startup_thresholds

    env = tmp_path / "environ"
    env.write_bytes(b"PATH=/bin\0MALLOC_TRIM_THRESHOLD_=65536\0MALLOC_MMAP_THRESHOLD_=x\0")
    assert startup_thresholds(env) == {"trim": 65536}
    assert startup_thresholds(tmp_path / "missing") == {}


def test_bandwidth_rule_out_of_the_float64_range_names_the_data_scale(data):
    """A rule fitted on data at 1e-300 has no float64 gamma: say why, not "gamma must be finite"."""
    X, _ = data
    Xs = X * 1e-300
    k = sparsekit.get_kernel("rbf", bandwidth="median").fit(Xs)
    with pytest.raises(ValueError, match=r"scale 1e-300"):
        skd.gram(k, da.from_array(Xs, chunks=(150, -1)))


def test_kernel_kmeans_on_duplicate_points_labels_and_warns_as_in_memory(client):
    """Oracle: scikit-learn's KMeans on the same data warns with these words and finds one
    cluster per distinct point; the chunked fit gives the in-memory labels, and predict on the
    training data gives them back (duplicate points split over clusters with equal centres are
    labelled with the lowest)."""
    from sklearn.cluster import KMeans

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3, 2))[rng.integers(0, 3, size=30)]
    kw = dict(n_clusters=5, kernel="rbf", n_landmarks=10, random_state=1)
    with pytest.warns(UserWarning, match="Possibly due to duplicate points") as ref_warn:
        KMeans(5, n_init=1, random_state=1).fit(X)
    with pytest.warns(UserWarning, match="Possibly due to duplicate points"):
        ref = sparsekit.KernelKMeans(method="nystrom", **kw).fit(X)
    with pytest.warns(UserWarning, match="Possibly due to duplicate points") as ours:
        km = skd.kernel_kmeans_fit(da.from_array(X, chunks=(7, -1)), **kw)
    assert [str(w.message) for w in ours] == [str(w.message) for w in ref_warn]
    labels = km.labels_.compute()
    np.testing.assert_array_equal(labels, ref.labels_)
    np.testing.assert_array_equal(km.predict(X), labels)
    assert len(np.unique(labels)) == 3
    assert km.inertia_ == pytest.approx(ref.inertia_, rel=1e-9, abs=1e-12)


class _Mallopt:
    """A C library that records ``mallopt`` and ``malloc_trim`` calls."""

    def __init__(self):
        self.calls = []

    def mallopt(self, param, value):
        self.calls.append(("mallopt", param, value))

    def malloc_trim(self, pad):
        self.calls.append(("malloc_trim", pad))


def test_keep_heap_raises_thresholds_once_and_restores_after_the_last_task(monkeypatch):
    """Oracle: mallopt(3). M_MMAP_THRESHOLD (-3) is raised to the larger of the task threshold
    and the process's own, M_TRIM_THRESHOLD (-1) to the task threshold, when the first of
    overlapping tasks starts; the process's values come back, then malloc_trim(0), only when the
    last one ends."""
    from sparsekit.dask import _heap

    libc = _Mallopt()
    monkeypatch.setattr(_heap, "_libc", libc)
    monkeypatch.setattr(_heap, "_restore", {-1: 65536, -3: 64 * 2**20})  # mmap above 32 MiB
    monkeypatch.setattr(_heap, "_active", 0)
    with _heap.keep_heap():
        with _heap.keep_heap():
            assert libc.calls == [("mallopt", -3, 64 * 2**20), ("mallopt", -1, 64 * 2**20)]
        assert len(libc.calls) == 2  # one task still runs
    assert libc.calls[2:] == [
        ("mallopt", -1, 65536),
        ("mallopt", -3, 64 * 2**20),
        ("malloc_trim", 0),
    ]
    assert _heap._active == 0


@pytest.mark.skipif(sys.platform != "linux", reason="glibc heap settings")
def test_heap_restore_values_default_to_glibc_thresholds(monkeypatch):
    """Oracle: mallopt(3): without MALLOC_MMAP_THRESHOLD_ glibc starts at 128 KiB
    (DEFAULT_MMAP_THRESHOLD_MIN); the trim threshold to restore is the one the process read."""
    import platform

    from sparsekit.dask import _heap

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc only")
    monkeypatch.setattr(_heap, "_restore", None)
    monkeypatch.setattr(_heap, "_libc", None)
    monkeypatch.setattr(_heap, "startup_thresholds", lambda: {"trim": 65536})
    _heap._setup()
    assert _heap._restore == {-1: 65536, -3: 128 * 1024}
