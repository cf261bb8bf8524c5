"""QuicK-means and the shared Lloyd module checked for value where the older tests did not
look: float32 distances end to end, ``keep_best`` of every refit, the unconstrained factor
shapes, ``init="random"``, the given init read in the data's dtype, the memory bound of the
assignment blocks, ``fit_transform``, the empty cluster's mean. Oracles: brute-force distances
in float64, scikit-learn's ``KMeans``, NumPy means, the warm start's error computed here."""

import numpy as np
import pytest
from sklearn.cluster import KMeans

from sparsekit import QuicKMeans, SparseFactors
from sparsekit.cluster import _lloyd, quickmeans as qkm
from sparsekit.factorizers.palm4msa import Palm4MSA
from sparsekit.plugins import FactorizationResult, Factorizer, Registration, Registry, hookimpl


def blobs(n=300, d=12, k=6, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((k, d)) * 5
    return centers[rng.integers(k, size=n)] + rng.standard_normal((n, d))


def brute_sq_dists(X, C):
    """(n, K) squared distances in float64, by differences (no expansion)."""
    X = np.asarray(X, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    return ((X[:, None, :] - C[None]) ** 2).sum(-1)


def centroids(qk):
    return qk.mean_.astype(np.float64) + qk.cluster_centers_.toarray().astype(np.float64)


# -- float32 end to end ------------------------------------------------------------------------
def test_float32_fit_reports_the_objective_of_its_own_centroids():
    """In float32 the distances of the assignment step are recomputed from the float32 scores:
    ``inertia_`` and ``score`` are the K-means objective of the float32 centroids (float64
    brute force), and the labels their nearest-centroid partition."""
    X = blobs(n=200, d=6, k=4, seed=5).astype(np.float32)
    qk = QuicKMeans(4, sparsity=2, max_iter=4, palm_iter=20, random_state=0).fit(X)
    assert qk.cluster_centers_.dtype == np.float32
    d2 = brute_sq_dists(X, centroids(qk))
    np.testing.assert_array_equal(qk.labels_, d2.argmin(1))
    ref = d2.min(1).sum()
    assert qk.inertia_ == pytest.approx(ref, rel=1e-5)
    assert qk.score(X) == pytest.approx(-ref, rel=1e-5)
    assert qk.inertia_ <= qk.objective_history_[-1] * (1 + 1e-5)
    np.testing.assert_allclose(qk.transform(X), np.sqrt(d2), rtol=1e-4, atol=1e-3)


def test_a_float64_init_is_read_in_the_dtype_of_float32_data():
    """A given init is cast to X's dtype before the first factorization: a float64 init gives
    the same float32 fit as the same init rounded to float32 beforehand."""
    X = blobs(n=200, d=6, k=4, seed=5).astype(np.float32)
    init = X[[0, 50, 100, 150]].astype(np.float64) + 0.123456789012345
    kw = dict(sparsity=2, max_iter=4, palm_iter=20, tol=0)
    a = QuicKMeans(4, init=init, **kw).fit(X)
    b = QuicKMeans(4, init=init.astype(np.float32), **kw).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_.toarray(), b.cluster_centers_.toarray())
    np.testing.assert_array_equal(a.objective_history_, b.objective_history_)


# -- the refits ---------------------------------------------------------------------------------
def _recording_palm():
    """Palm4MSA, registered under another name, recording for each refit its ``keep_best``
    and the errors ``‖M − λ S_1 ⋯ S_Q‖²`` of the warm start and of the returned factors."""

    class RecordingPalm(Palm4MSA):
        name = "recording-palm4msa"
        calls = []

        def factorize(self, M, constraints, *, init_factors=None, init_scale=1.0):
            res = super().factorize(
                M, constraints, init_factors=init_factors, init_scale=init_scale
            )
            P = np.asarray(init_factors[0], dtype=np.float64)
            for F in init_factors[1:]:
                P = P @ np.asarray(F, dtype=np.float64)
            warm = float(np.sum((M - init_scale * P) ** 2))
            got = float(np.sum((M - res.factors.toarray()) ** 2))
            RecordingPalm.calls.append((self.keep_best, warm, got))
            return res

    class Plugin:
        @hookimpl
        def sparsekit_factorizers(self):
            yield Registration("recording-palm4msa", RecordingPalm)

    return RecordingPalm, Registry(entry_points=False, plugins=[Plugin()])


@pytest.fixture(scope="module")
def recorded_fit():
    """A splincol fit on blobs where clusters empty out: ``(fitted, refit records)``."""
    RecordingPalm, reg = _recording_palm()
    X = blobs(seed=1)
    qk = QuicKMeans(
        8,
        sparsity=2,
        max_iter=8,
        palm_iter=30,
        refit_iter=None,  # a trajectory where clusters empty out and a re-seed is undone
        random_state=0,
        factorizer="recording-palm4msa",
        registry=reg,
    ).fit(X)
    return qk, list(RecordingPalm.calls)


def test_every_refit_returns_its_best_iterate_never_worse_than_its_warm_start(recorded_fit):
    """QuicK-means asks the factorizer for its best iterate (``keep_best``): splincol Palm4MSA
    is not monotone, and on these blobs its last iterate is worse than the warm start in
    several refits; the best iterate, the warm start included, never is."""
    qk, calls = recorded_fit
    assert len(calls) >= qk.n_iter_ >= 2
    for keep_best, warm, got in calls:
        assert keep_best is True
        assert got <= warm * (1 + 1e-9)


def test_a_reseed_that_would_raise_the_objective_is_undone(recorded_fit):
    """An iteration with an empty cluster refits first with the re-seeded labels; when that
    objective exceeds the previous one it is undone and the plain labels are refitted (a
    second refit in that iteration, which happens on these blobs): the objective never rises
    (Proposition 1)."""
    qk, calls = recorded_fit
    assert len(calls) > qk.n_iter_  # at least one re-seed undone
    h = qk.objective_history_
    assert np.all(np.diff(h) <= 1e-9 * h[0])


def test_unconstrained_factors_chain_k_by_a_to_a_by_d_and_reach_kmeans():
    """``projection="identity"`` with Q factors: shapes K × A, A × A, …, A × D (A = min(K, D));
    unconstrained, they represent the K-means centroids, so the fit ends at the K-means
    objective of scikit-learn's Lloyd from the same init."""
    X = blobs(n=240, d=5, k=4, seed=1)
    init = X[[0, 50, 100, 150]]
    km = KMeans(4, init=init, n_init=1, max_iter=50, tol=0, algorithm="lloyd").fit(X)
    for Q, shapes in [(2, [(4, 4), (4, 5)]), (3, [(4, 4), (4, 4), (4, 5)])]:
        qk = QuicKMeans(
            4,
            n_factors=Q,
            projection="identity",
            init=init,
            max_iter=20,
            tol=0,
            palm_iter=300,
            palm_tol=0,
        ).fit(X)
        assert [F.shape for F in qk.cluster_centers_.factors] == shapes
        np.testing.assert_array_equal(qk.labels_, km.labels_)
        assert qk.inertia_ == pytest.approx(km.inertia_, rel=1e-6)


def test_splincol_with_one_factor_is_refused_naming_the_fix():
    X = blobs(n=30, d=3, k=2)
    with pytest.raises(ValueError, match="n_factors must be >= 2 with projection='splincol'"):
        QuicKMeans(2, n_factors=1).fit(X)


def test_an_empty_cluster_is_reseeded_when_that_lowers_the_objective():
    """Three tight groups, one initial centroid far from all of them: its cluster is empty at
    the first assignment. Re-seeding it from the largest cluster lowers the objective, so it
    is kept, and (unconstrained factors) the fit ends at the three groups: the brute-force
    optimum. Without the re-seed the far centroid keeps weight 0 and stays empty."""
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(3), 10)
    X = np.array([[0.0, 0.0], [10.0, 0.0], [20.0, 0.0]])[groups]
    X = X + 0.3 * rng.standard_normal(X.shape)
    init = np.array([[5.0, 0.0], [20.0, 0.0], [1000.0, 0.0]])
    qk = QuicKMeans(
        3, n_factors=1, projection="identity", init=init, max_iter=20, palm_iter=200, tol=0
    ).fit(X)
    # the same partition as the groups, up to the names of the clusters
    assert len(set(zip(qk.labels_.tolist(), groups.tolist()))) == 3
    best = sum(((X[groups == j] - X[groups == j].mean(0)) ** 2).sum() for j in range(3))
    assert qk.inertia_ == pytest.approx(best, rel=1e-9)
    h = qk.objective_history_
    assert np.all(np.diff(h) <= 1e-9 * h[0])


class _ExactMeans(Factorizer):
    """Returns the exact cluster means ``M / w`` behind the target ``M = D_w U`` (its constant
    first factor holds ``w``): QuicK-means with it is Lloyd's K-means."""

    name = "exact-means"

    def __init__(self, n_iter=1, tol=0.0):
        self.n_iter, self.tol = n_iter, tol

    def factorize(self, M, constraints, *, init_factors=None, init_scale=1.0):
        W = np.asarray(init_factors[0], dtype=M.dtype)
        U = M / np.diag(W)[:, None]
        return FactorizationResult(
            SparseFactors([W, U], 1.0), np.array([0.0]), 1, stop_reason="tol"
        )


def test_iterations_stop_on_the_relative_change_of_the_objective_whatever_its_value():
    """With exact means the objectives are Lloyd's (brute force): here 1, then 9/16, then 9/16
    again. The first is exactly 1.0 (points on a grid of 1/4, four per cluster: every sum is
    exact): a change from 1 to 9/16 is far above ``tol``, so the iterations go on to the third,
    where the objective no longer changes."""

    class Plugin:
        @hookimpl
        def sparsekit_factorizers(self):
            yield Registration("exact-means", _ExactMeans)

    grid = [[4, 1], [0, 2], [0, 1], [4, 3], [2, 0], [0, 4], [1, 4], [3, 1]]
    grid += [[0, 4], [0, 0], [0, 2], [3, 3], [4, 3], [3, 0], [4, 4], [1, 3]]
    X = np.array(grid, dtype=np.float64) / 4
    init = np.array([[-0.147, 4.702], [1.459, 0.967], [4.854, 0.408], [2.501, 0.59]]) / 4
    labels, objectives = brute_sq_dists(X, init).argmin(1), []
    for _ in range(3):
        U = np.stack([X[labels == j].mean(0) for j in range(4)])
        objectives.append(((X - U[labels]) ** 2).sum())
        labels = brute_sq_dists(X, U).argmin(1)
    assert objectives == [1.0, 0.5625, 0.5625]
    qk = QuicKMeans(
        4,
        n_factors=1,
        projection="identity",
        init=init,
        center=False,
        factorizer="exact-means",
        registry=Registry(entry_points=False, plugins=[Plugin()]),
    ).fit(X)
    assert qk.n_iter_ == 3
    np.testing.assert_array_equal(qk.objective_history_, objectives)
    np.testing.assert_array_equal(qk.labels_, labels)


# -- initialization -----------------------------------------------------------------------------
def test_random_init_draws_among_all_samples_even_with_more_clusters_than_features():
    """``init="random"``: K distinct samples out of all n (K may exceed the number of features);
    with unconstrained factors the fit is scikit-learn's Lloyd from those samples."""
    X = blobs(n=120, d=2, k=5, seed=7)
    rows = set()
    for seed in range(4):
        qk = QuicKMeans(
            5,
            n_factors=1,
            projection="identity",
            init="random",
            max_iter=30,
            tol=0,
            palm_iter=300,
            palm_tol=0,
            random_state=seed,
        ).fit(X)
        idx = np.random.default_rng(seed).choice(len(X), 5, replace=False)
        rows.update(idx.tolist())
        km = KMeans(5, init=X[idx], n_init=1, max_iter=30, tol=0, algorithm="lloyd").fit(X)
        np.testing.assert_array_equal(qk.labels_, km.labels_)
        assert qk.inertia_ == pytest.approx(km.inertia_, rel=1e-6)
    assert max(rows) >= X.shape[1]  # seeds beyond the first d rows were drawn


# -- inference ----------------------------------------------------------------------------------
def test_fit_transform_returns_the_distances_to_the_fitted_centroids():
    X = blobs(n=150, d=4, k=3, seed=8)
    qk = QuicKMeans(3, sparsity=2, max_iter=3, palm_iter=10, random_state=0)
    out = qk.fit_transform(X)
    np.testing.assert_allclose(out, np.sqrt(brute_sq_dists(X, centroids(qk))), atol=1e-6)


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_assignment_reduces_blocks_of_rows(monkeypatch, dtype, n_jobs):
    """The assignment step reduces the scores of ``ROW_BLOCK`` points at a time (one (K, b)
    block, never the (K, n) product), the blocks together cover every point once, on one
    thread or two, and the labels and distances are those of brute force."""
    from sparsekit.linalg import sparse_factors

    X = blobs(n=103, d=3, k=5, seed=9).astype(dtype)
    qk = QuicKMeans(5, sparsity=2, max_iter=2, palm_iter=10, random_state=0).fit(X)
    K = 5
    monkeypatch.setattr(sparse_factors, "ROW_BLOCK", 7)
    monkeypatch.setattr(sparse_factors, "ONE_BLOCK_ENTRIES", 0)  # blocks even for 103 × 3
    blocks = []
    inner = qkm.nearest_from_scores

    def recording(scores, *args):
        blocks.append(scores.shape)
        return inner(scores, *args)

    monkeypatch.setattr(qkm, "nearest_from_scores", recording)
    qk.set_params(n_jobs=n_jobs)
    labels = qk.predict(X)
    assert all(k == K and b <= 7 for k, b in blocks)
    assert sum(b for _, b in blocks) == len(X) and len(blocks) == 15
    d2 = brute_sq_dists(X, centroids(qk))
    np.testing.assert_array_equal(labels, d2.argmin(1))
    tol = 1e-4 if dtype == np.float32 else 1e-9
    assert -qk.score(X) == pytest.approx(d2.min(1).sum(), rel=tol)


# -- the shared Lloyd module --------------------------------------------------------------------
def test_means_of_an_empty_cluster_are_zero():
    Z = np.random.default_rng(3).standard_normal((10, 3))
    labels = np.array([0, 0, 2, 2, 2, 0, 3, 3, 0, 2])  # cluster 1 is empty
    with np.errstate(all="raise"):
        M = _lloyd.means(Z, labels, 4)
    ref = np.stack(
        [Z[labels == j].mean(0) if (labels == j).any() else np.zeros(3) for j in range(4)]
    )
    np.testing.assert_allclose(M, ref, rtol=1e-12)


@pytest.mark.parametrize("max_iter", [1, 2, 3])
def test_max_iter_counts_centre_updates_as_kmeans_and_kernel_kmeans_do(max_iter):
    """Oracle: scikit-learn's KMeans from the same init with the same max_iter. Unconstrained
    (identity projection) QuicK-means and linear-kernel KernelKMeans both stop after max_iter
    centre updates, with KMeans' labels and n_iter_ (KernelKMeans used to make one more).
    QuicK-means runs the thesis' schedule (``refit_iter=None``): every refit gets 300
    Palm4MSA iterations, enough for the exact means that make it Lloyd's K-means."""
    from sklearn.datasets import make_blobs

    from sparsekit import KernelKMeans

    X = make_blobs(240, centers=5, cluster_std=2.2, random_state=3)[0]
    seeds = np.arange(5)
    km = KMeans(5, init=X[seeds], n_init=1, max_iter=max_iter, tol=0, algorithm="lloyd").fit(X)
    qk = QuicKMeans(
        5,
        n_factors=2,
        projection="identity",
        init=X[seeds],
        max_iter=max_iter,
        tol=0,
        palm_iter=300,
        refit_iter=None,
        palm_tol=0,
    ).fit(X)
    kk = KernelKMeans(
        5, kernel="linear", method="exact", init=seeds, n_init=1, max_iter=max_iter, tol=0
    ).fit(X)
    for fit in (qk, kk):
        assert fit.n_iter_ == km.n_iter_ == max_iter
        np.testing.assert_array_equal(fit.labels_, km.labels_)
        assert fit.inertia_ == pytest.approx(km.inertia_, rel=1e-4)


def test_the_stop_rule_is_invariant_to_the_scale_of_the_data():
    """``tol`` bounds the *relative* change of the objective: scaling the data by ``2**±10``
    (exact in floating point) scales every objective by ``2**±20`` and leaves the iterations
    unchanged. Oracle: the scale invariance of Lloyd's K-means (QuicK-means with exact means),
    the unscaled run as reference."""

    class Plugin:
        @hookimpl
        def sparsekit_factorizers(self):
            yield Registration("exact-means", _ExactMeans)

    X = np.random.default_rng(3).standard_normal((200, 2))
    init = X[:5].copy()
    runs = {}
    for e in (-10, 0, 10):
        c = 2.0**e
        runs[e] = QuicKMeans(
            5,
            n_factors=1,
            projection="identity",
            init=init * c,
            center=False,
            tol=1e-3,
            max_iter=100,
            factorizer="exact-means",
            registry=Registry(entry_points=False, plugins=[Plugin()]),
        ).fit(X * c)
    ref = runs[0]
    assert 3 <= ref.n_iter_ < 100  # stopped by tol, after a few iterations
    for e in (-10, 10):
        assert runs[e].n_iter_ == ref.n_iter_
        np.testing.assert_array_equal(runs[e].labels_, ref.labels_)
        np.testing.assert_allclose(
            runs[e].objective_history_, ref.objective_history_ * 4.0**e, rtol=1e-12
        )


@pytest.mark.parametrize("offset, exact_pass", [(0.0, False), (1e5, True)])
def test_within_cluster_sum_from_the_identity_or_a_pass_when_digits_would_cancel(
    monkeypatch, offset, exact_pass
):
    """``Σ ‖x − u‖² = Σ ‖x‖² − Σ_k ‖s_k‖² / n_k`` (no pass over X) unless more than six digits
    would cancel (clusters of spread 1 at 1e5 from the origin: ~10 digits), then the compiled
    pass. Oracle: the brute-force sum over the centred clusters, an empty cluster included."""
    rng = np.random.default_rng(12)
    X = rng.standard_normal((300, 4)) + offset
    labels = rng.integers(0, 5, 300)
    labels[labels == 3] = 4  # cluster 3 is empty
    counts = np.bincount(labels, minlength=5).astype(np.float64)
    sums = np.stack([X[labels == k].sum(0) for k in range(5)])
    U = sums / np.maximum(counts, 1)[:, None]
    passes = []
    real = qkm.within_cluster_sum
    monkeypatch.setattr(qkm, "within_cluster_sum", lambda *a: (passes.append(1), real(*a))[1])
    x_sq_total = float(np.einsum("ij,ij->", X, X))
    got = qkm._within(X, x_sq_total, sums, counts, U, labels)
    ref = sum(((X[labels == k] - U[k]) ** 2).sum() for k in range(5))
    assert got == pytest.approx(ref, rel=1e-10)
    assert bool(passes) == exact_pass
