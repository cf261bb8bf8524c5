"""QuicK-means: Proposition 1 (monotone objective), equality with K-means for exact factors,
inference through the sparse factors, bad input."""

import pickle

import numpy as np
import pytest

from sparsekit import QuicKMeans, SparseFactors
from sparsekit.exceptions import UnknownComponentError


def blobs(n=300, d=12, k=6, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((k, d)) * 5
    return centers[rng.integers(k, size=n)] + rng.standard_normal((n, d))


def kmeans_objective(X, V, labels):
    return float(((X - V[labels]) ** 2).sum())


@pytest.fixture(scope="module")
def fitted():
    X = blobs()
    qk = QuicKMeans(8, sparsity=2, max_iter=15, palm_iter=40, random_state=0).fit(X)
    return X, qk


def test_objective_non_increasing_and_attributes(fitted):
    X, qk = fitted
    h = qk.objective_history_
    assert h.size == qk.n_iter_ >= 2
    assert np.all(np.diff(h) <= 1e-9 * h[0])  # Proposition 1 with the safeguard
    V = qk.cluster_centers_
    assert isinstance(V, SparseFactors) and V.shape == (8, 12)
    np.testing.assert_allclose(qk.mean_, X.mean(0), rtol=1e-12)
    Vd = qk.mean_ + V.toarray()
    # labels_ / inertia_ are the assignment to, and the objective of, the final operator
    d2 = ((X[:, None, :] - Vd[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(qk.labels_, d2.argmin(1))
    assert qk.inertia_ == pytest.approx(d2.min(1).sum(), rel=1e-10)
    assert qk.inertia_ <= h[-1] * (1 + 1e-12)
    np.testing.assert_array_equal(qk.predict(X), qk.labels_)
    np.testing.assert_allclose(qk.transform(X), np.sqrt(d2), rtol=1e-6, atol=1e-6)
    assert qk.score(X) == pytest.approx(-qk.inertia_)
    # sparsity: every factor keeps at least `sparsity` per row, far fewer than dense
    assert V.nnz < sum(F.shape[0] * F.shape[1] for F in V.factors)


def test_unconstrained_factors_equal_kmeans():
    from sklearn.cluster import KMeans

    X = blobs(n=240, d=5, k=4, seed=1)
    init = X[[0, 50, 100, 150]]
    km = KMeans(4, init=init, n_init=1, max_iter=20, tol=0, algorithm="lloyd").fit(X)
    qk = QuicKMeans(
        4,
        n_factors=1,
        projection="identity",
        init=init,
        max_iter=20,
        tol=0,
        palm_iter=2000,
        palm_tol=0,
    ).fit(X)
    np.testing.assert_array_equal(qk.labels_, km.labels_)
    np.testing.assert_allclose(
        qk.mean_ + qk.cluster_centers_.toarray(), km.cluster_centers_, atol=1e-8
    )
    assert qk.inertia_ == pytest.approx(km.inertia_, rel=1e-10)


def test_factorizer_by_name_and_float32_pickle():
    X = blobs(n=120, d=6, k=3, seed=2).astype(np.float32)
    qk = QuicKMeans(4, sparsity=2, max_iter=4, palm_iter=10, factorizer="palm", random_state=1).fit(
        X
    )
    assert qk.cluster_centers_.dtype == np.float32
    assert qk.transform(X).dtype == np.float32
    again = pickle.loads(pickle.dumps(qk))
    np.testing.assert_array_equal(again.predict(X), qk.predict(X))
    with pytest.raises(UnknownComponentError, match="Did you mean 'palm4msa'"):
        QuicKMeans(2, factorizer="palm4ms").fit(X)


def test_empty_cluster_reseeded():
    from sparsekit.cluster._lloyd import reseed_from_largest as _reseed_empty

    X = np.array([[0.0], [1.0], [10.0], [11.0], [12.0]])
    labels = np.array([0, 0, 1, 1, 1])
    counts = np.bincount(labels, minlength=3)
    V = np.array([[0.5], [11.0], [-5.0]])
    new, c = _reseed_empty(X, labels, counts, V)
    # cluster 2 gets the point of the largest cluster (1) farthest from its centroid (-5)
    np.testing.assert_array_equal(new, [0, 0, 1, 1, 2])
    np.testing.assert_array_equal(c, [2, 2, 1])


def test_bad_input():
    X = blobs(n=20, d=3, k=2)
    with pytest.raises(ValueError, match="n_clusters=30 > n_samples=20"):
        QuicKMeans(30).fit(X)
    with pytest.raises(ValueError, match="contains NaN"):
        QuicKMeans(2).fit(np.where(np.eye(20, 3) > 0, np.nan, X))
    with pytest.raises(ValueError, match="not fitted yet"):
        QuicKMeans(2).predict(X)
    qk = QuicKMeans(2, max_iter=2, palm_iter=5, random_state=0).fit(X)
    with pytest.raises(ValueError, match="X has 4 features, but QuicKMeans is expecting 3"):
        qk.predict(np.ones((2, 4)))
    with pytest.raises(ValueError, match="sparsity must be >= 1"):
        QuicKMeans(2, sparsity=0).fit(X)
    with pytest.raises(ValueError, match="refit_iter must be >= 1"):
        QuicKMeans(2, refit_iter=0).fit(X)
    with pytest.raises(ValueError, match="unknown projection"):
        QuicKMeans(2, projection="splincool").fit(X)
    with pytest.raises(ValueError, match="init has shape"):
        QuicKMeans(2, init=np.ones((3, 3))).fit(X)


def test_safeguard_keeps_previous_factors_when_the_refit_is_worse():
    """A registered factorizer whose refits are worse than its warm start: the safeguard keeps
    the previous factors, so the objective still never increases (Proposition 1)."""
    from sparsekit import Registry
    from sparsekit.factorizers.base import FactorizationResult, Factorizer
    from sparsekit.plugins import Registration, hookimpl

    class Scrambler(Factorizer):
        name = "scrambler"

        def __init__(self, n_iter=1, tol=0.0):
            self.n_iter, self.tol = n_iter, tol

        def factorize(self, M, constraints, *, init_factors=None, init_scale=1.0):
            rng = np.random.default_rng(int(abs(M).sum() * 1e3) % 2**32)
            factors = [init_factors[0]] + [rng.standard_normal(c.shape) for c in constraints[1:]]
            return FactorizationResult(SparseFactors(factors, init_scale), np.array([1.0]), 1)

    class Plugin:
        @hookimpl
        def sparsekit_factorizers(self):
            yield Registration("scrambler", Scrambler)

    reg = Registry(entry_points=False, plugins=[Plugin()])
    X = blobs(n=200, d=6, k=4, seed=3)
    qk = QuicKMeans(
        4,
        sparsity=2,
        max_iter=6,
        palm_iter=20,
        tol=0,
        factorizer="scrambler",
        random_state=0,
        registry=reg,
    ).fit(X)
    h = qk.objective_history_
    assert h.size >= 2 and np.all(np.diff(h) <= 1e-9 * h[0])


def test_centring_makes_the_fit_translation_invariant():
    """The K-means objective does not change under a translation of the data; with centring
    (the reference implementation's preprocessing) neither do the factors nor the labels."""
    X = blobs(n=200, d=6, k=4, seed=4)
    init = X[[0, 40, 80, 120, 160]]
    shift = np.linspace(50.0, 500.0, 6)
    kw = dict(sparsity=2, max_iter=5, palm_iter=30, tol=0)
    a = QuicKMeans(5, init=init, **kw).fit(X)
    b = QuicKMeans(5, init=init + shift, **kw).fit(X + shift)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_allclose(b.mean_ - a.mean_, shift, rtol=1e-12)
    np.testing.assert_allclose(
        a.cluster_centers_.toarray(), b.cluster_centers_.toarray(), atol=1e-6
    )
    assert b.inertia_ == pytest.approx(a.inertia_, rel=1e-6)
    np.testing.assert_array_equal(b.predict(X + shift), a.predict(X))
    np.testing.assert_allclose(b.transform(X + shift), a.transform(X), rtol=1e-6, atol=1e-6)
    # uncentred, the sparse factors must also carry the shared offset: a worse fit here
    c = QuicKMeans(5, init=init + shift, center=False, **kw).fit(X + shift)
    assert c.inertia_ > 1.05 * a.inertia_


def _recording_factorizer(stop_reason):
    """A factorizer whose refits never improve on the warm start (it is returned as the best
    iterate) and whose last iterate, in ``extra["last"]``, is the warm start scaled by 2."""
    from sparsekit.factorizers.base import FactorizationResult, Factorizer

    class NoProgress(Factorizer):
        name = "no-progress"
        calls = []

        def __init__(self, n_iter=1, tol=0.0):
            self.n_iter, self.tol = n_iter, tol

        def factorize(self, M, constraints, *, init_factors=None, init_scale=1.0):
            init = [np.asarray(f, dtype=float) for f in init_factors]
            NoProgress.calls.append(init)
            last = SparseFactors(init[:1] + [2.0 * f for f in init[1:]], init_scale)
            return FactorizationResult(
                SparseFactors(init, init_scale),
                np.array([1.0]),
                1,
                stop_reason=stop_reason,
                extra={"last": last},
            )

    return NoProgress


@pytest.mark.parametrize("stop_reason", ["max_iter", "tol"])
def test_rejected_refit_goes_on_from_its_last_iterate(stop_reason):
    """A refit that does not improve keeps the previous factors (Proposition 1); unless it
    converged, the next refit starts from its last iterate instead of the iterations stopping."""
    from sparsekit import Registry
    from sparsekit.plugins import Registration, hookimpl

    NoProgress = _recording_factorizer(stop_reason)

    class Plugin:
        @hookimpl
        def sparsekit_factorizers(self):
            yield Registration("no-progress", NoProgress)

    reg = Registry(entry_points=False, plugins=[Plugin()])
    X = blobs(n=200, d=6, k=4, seed=3)
    qk = QuicKMeans(
        4,
        sparsity=2,
        max_iter=4,
        palm_iter=20,
        factorizer="no-progress",
        random_state=0,
        registry=reg,
    ).fit(X)
    calls = NoProgress.calls
    h = qk.objective_history_
    assert np.all(h == h[0])  # nothing accepted: the objective stays where it started
    if stop_reason == "tol":  # converged to no better point: stop at the second iteration
        assert qk.n_iter_ == 2 and len(calls) == 2
        for a, b in zip(calls[0][1:], calls[1][1:]):
            np.testing.assert_array_equal(a, b)
    else:  # every refit starts from the previous refit's last iterate
        assert qk.n_iter_ == 4 and len(calls) == 4
        for prev, nxt in zip(calls, calls[1:]):
            for a, b in zip(prev[1:], nxt[1:]):
                np.testing.assert_allclose(b, 2.0 * a, rtol=1e-12)


def test_feature_names_and_pandas_output_as_scikit_learn_estimators():
    """The shared TransformerMixin: feature names recorded in fit and checked afterwards (as
    scikit-learn's KMeans), output names and DataFrame output of transform."""
    pd = pytest.importorskip("pandas")
    X = blobs(n=60, d=3, k=3)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    qk = QuicKMeans(3, max_iter=2, palm_iter=5, random_state=0).fit(df)
    np.testing.assert_array_equal(qk.feature_names_in_, ["a", "b", "c"])
    np.testing.assert_array_equal(
        qk.get_feature_names_out(), ["quickmeans0", "quickmeans1", "quickmeans2"]
    )
    with pytest.raises(ValueError, match="feature names should match"):
        qk.predict(df[["b", "a", "c"]])
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        qk.predict(X)
    out = qk.set_output(transform="pandas").transform(df)
    assert list(out.columns) == list(qk.get_feature_names_out())
    np.testing.assert_allclose(out.to_numpy(), qk.set_output(transform="default").transform(df))


def _recording_registry(seen):
    """A private registry whose ``"recording-palm"`` is Palm4MSA recording, for every call,
    the iterations and tolerance it holds, the iterations it ran and its stop reason."""
    from sparsekit.factorizers.palm4msa import Palm4MSA
    from sparsekit.plugins import Registration, Registry, hookimpl

    class Recording(Palm4MSA):
        def factorize(self, M, constraints, **kw):
            res = super().factorize(M, constraints, **kw)
            seen.append((self.n_iter, self.tol, res.n_iter, res.stop_reason))
            return res

    class Plugin:
        @hookimpl
        def sparsekit_factorizers(self):
            yield Registration("recording-palm", Recording)

    return Registry(entry_points=False, plugins=[Plugin()])


def test_palm_iter_refit_iter_and_palm_tol_reach_the_refits():
    """``refit_iter`` is the count of the refits while the assignment moves, ``palm_iter``
    that of the refits once it has settled and at the last iteration, and ``palm_tol`` stops
    every refit (it is not ignored: with 0.25 the refits stop on it before their count).
    Oracle: the parameters the factorizer holds when QuicK-means calls it and what it ran
    (a Palm4MSA registered in a private registry that records them)."""
    seen = []
    kw = dict(sparsity=2, max_iter=6, tol=0, random_state=0, factorizer="recording-palm")
    X = blobs(n=80, d=6, k=4)
    QuicKMeans(
        4, palm_iter=7, refit_iter=3, palm_tol=0.25, registry=_recording_registry(seen), **kw
    ).fit(X)
    counts = [c[0] for c in seen]
    assert set(c[1] for c in seen) == {0.25}
    assert counts[0] == 3 and counts[-1] == 7  # the first refit moves, the last is full
    assert any(c[3] == "tol" and c[2] < c[0] for c in seen)
    seen.clear()
    QuicKMeans(
        4, palm_iter=7, refit_iter=3, palm_tol=0.0, registry=_recording_registry(seen), **kw
    ).fit(X)
    assert all(c[2] == c[0] for c in seen)  # palm_tol=0: every refit runs its count


def test_thesis_schedule_is_reachable_and_unchanged():
    """``refit_iter=None`` gives every refit ``palm_iter`` Palm4MSA iterations, the thesis'
    schedule (Giffon 2020, §3.3.5.2: 300 iterations or a relative change below 1e-6 at every
    refit), and the fit is the one QuicK-means computed before the adaptive schedule. Oracle:
    the objective history of that code (sparsekit at e057aad) on this input, to 1e-6
    relative (the same arithmetic; BLAS rounding may move the last digits)."""
    before = [
        6388.566914672294, 6291.7277025387875, 6109.894236248179, 6061.642085579162,
        6051.103426771024, 6044.4869331481505, 6040.060785842443, 5851.610887811182,
        5768.475184682906, 5764.825761466211, 5763.462874459756, 5762.734216286663,
        5762.315330937127, 5762.06814697529, 5761.92093148359,
    ]  # fmt: skip
    seen = []
    qk = QuicKMeans(
        8,
        sparsity=2,
        max_iter=15,
        palm_iter=40,
        refit_iter=None,
        random_state=0,
        factorizer="recording-palm",
        registry=_recording_registry(seen),
    ).fit(blobs())
    assert {c[0] for c in seen} == {40}
    np.testing.assert_allclose(qk.objective_history_, before, rtol=1e-6)
    assert qk.inertia_ == pytest.approx(before[-1], rel=1e-6)


@pytest.mark.parametrize(
    "X, K, sparsity",
    [(blobs(), 8, 2), (blobs(n=400, d=10, k=5, seed=3), 6, 3)],
    ids=["blobs-K8", "blobs-K6"],
)
def test_adaptive_schedule_reaches_the_objective_of_the_thesis_schedule(X, K, sparsity):
    """The default schedule (``refit_iter`` Palm4MSA iterations while the assignment moves)
    ends within 1 % of the thesis' schedule (``refit_iter=None``) from the same start, and
    keeps Proposition 1: its objective never increases across the iterations (keep-best
    refits and the safeguard). Oracles: the thesis schedule's own fit, and scikit-learn's
    ``KMeans`` (10 starts) as a floor that neither can go below by more than rounding."""
    from sklearn.cluster import KMeans

    kw = dict(sparsity=sparsity, max_iter=15, palm_iter=40, random_state=0)
    thesis = QuicKMeans(K, refit_iter=None, **kw).fit(X)
    adaptive = QuicKMeans(K, **kw).fit(X)
    floor = KMeans(K, n_init=10, random_state=0).fit(X).inertia_
    assert adaptive.inertia_ <= 1.01 * thesis.inertia_
    assert min(adaptive.inertia_, thesis.inertia_) >= floor * (1 - 1e-9)
    h = adaptive.objective_history_
    assert np.all(np.diff(h) <= 1e-9 * h[0])


@pytest.mark.parametrize("hierarchical", [True, False])
def test_hierarchical_init_chooses_the_first_factorization(monkeypatch, hierarchical):
    """``hierarchical_init`` is not ignored: the initial centroids are factorized by
    hierarchical Palm4MSA (thesis §3.3.5.1) only when it is True. Oracle: the calls QuicK-means
    makes to ``hierarchical_dense`` (wrapped here to count them)."""
    from sparsekit.cluster import quickmeans as qkm

    calls = []
    real = qkm.hierarchical_dense

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(qkm, "hierarchical_dense", counted)
    kw = dict(sparsity=2, max_iter=1, palm_iter=5, random_state=0)
    QuicKMeans(4, hierarchical_init=hierarchical, **kw).fit(blobs(n=60, d=6, k=4))
    assert len(calls) == (1 if hierarchical else 0)


@pytest.mark.parametrize("refit_iter, expected", [(3, (7, 3)), (None, (7, 7))])
def test_hierarchical_init_splits_get_palm_iter_and_refinements_refit_iter(
    monkeypatch, refit_iter, expected
):
    """Each split of the initial hierarchical factorization runs ``palm_iter`` iterations and
    each global refinement ``refit_iter``; ``refit_iter=None`` (the thesis' schedule) gives
    both ``palm_iter``. Oracle: the counts QuicK-means passes to ``hierarchical_dense``, and
    the Palm4MSA runs it makes with them (their iterations, ``palm_tol=0``)."""
    from sparsekit.cluster import quickmeans as qkm
    from sparsekit.factorizers import hierarchical

    seen, runs = [], []
    real, real_palm = qkm.hierarchical_dense, hierarchical.run_palm

    def counted(*args, **kwargs):
        seen.append((kwargs["n_iter"], kwargs["n_iter_global"]))
        return real(*args, **kwargs)

    def palm(*args, **kwargs):
        out = real_palm(*args, **kwargs)
        runs.append((len(args[1]), out[3]))  # factors of the run, iterations it ran
        return out

    monkeypatch.setattr(qkm, "hierarchical_dense", counted)
    monkeypatch.setattr(hierarchical, "run_palm", palm)
    kw = dict(sparsity=2, max_iter=1, palm_iter=7, palm_tol=0.0, random_state=0)
    QuicKMeans(8, n_factors=3, refit_iter=refit_iter, **kw).fit(blobs(n=80, d=16, k=8))
    assert seen == [expected]
    # split 1 (2 factors), global 1 (2), split 2 (2), global 2 (3 factors)
    assert runs == [(2, expected[0]), (2, expected[1]), (2, expected[0]), (3, expected[1])]


@pytest.mark.parametrize("K, d", [(4, 64), (16, 5)])
def test_default_number_of_factors_follows_the_larger_dimension(K, d):
    """Default ``Q = max(2, ⌊log2 max(K, D)⌋)`` factors of shapes ``K × A``, ``A × A``, …,
    ``A × D`` with ``A = min(K, D)``. Oracle: that closed form (Giffon 2020, thesis
    §3.3.5.1), computed here."""
    X = np.random.default_rng(0).standard_normal((3 * K, d))
    qk = QuicKMeans(K, sparsity=2, max_iter=1, palm_iter=3, random_state=0).fit(X)
    Q, A = max(2, int(np.floor(np.log2(max(K, d))))), min(K, d)
    shapes = [F.shape for F in qk.cluster_centers_.factors]
    assert shapes == [(K, A)] + [(A, A)] * (Q - 2) + [(A, d)]
