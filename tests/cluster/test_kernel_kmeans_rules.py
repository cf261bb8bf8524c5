"""KernelKMeans' rules checked for value: empty-cluster repair, the tie rule, n_init, the stopping
tolerance, max_memory's switch of method="auto", random_state; against a reference Lloyd on the
Gram matrix, scikit-learn's KMeans and brute force.

What a fit stopped early by ``tol`` or ``max_iter`` reports: the reference Lloyd below ends with
an assignment step and measures its objective against the centres of the labels before that
step, as scikit-learn's ``KMeans`` does: ``labels_``, the centres and ``inertia_`` describe one
partition, checked below against scikit-learn for the linear kernel and as
``inertia_ == -score(X)`` for the others. ``max_iter`` bounds the centre updates, and
``n_iter_`` counts them, as scikit-learn does (a fit with ``max_iter=1`` used to make two
updates, equal to ``KMeans(max_iter=2)``).
"""

import warnings
from fractions import Fraction

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from sparsekit import KernelKMeans
from sparsekit.cluster._lloyd import (
    fix_empty as _fix_empty,
    kmeans_plusplus as _kmeanspp,
    reassign as _reassign,
)


def objective(K, labels):
    """Σ_i ‖φ(x_i) − c_{l_i}‖² from the Gram matrix (brute force)."""
    total = 0.0
    for j in np.unique(labels):
        m = labels == j
        total += np.trace(K[np.ix_(m, m)]) - K[np.ix_(m, m)].sum() / m.sum()
    return total


def reference_lloyd(K, seeds, max_iter, tol):
    """Lloyd on the Gram matrix written from the definitions, for data with no empty cluster
    and no tie: ``(labels, objective, n_iter)``. scikit-learn's ``KMeans`` loop: the points are
    assigned to the seeds, then each iteration moves the centres to the means and reassigns the
    points, ``max_iter`` iterations at most; a run that converges counts the iteration that
    changed no label, plus the one scikit-learn would make to see it (at most ``max_iter``)."""
    n, k = len(K), len(seeds)
    diag = np.diag(K)
    labels = np.argmin(diag[:, None] + diag[seeds][None, :] - 2 * K[:, seeds], axis=1)

    def dist(lab):
        D = np.empty((n, k))
        for j in range(k):
            m = lab == j
            D[:, j] = diag - 2 * K[:, m].mean(axis=1) + K[np.ix_(m, m)].mean()
        return D

    prev = np.inf
    for n_iter in range(1, max_iter + 1):
        obj = objective(K, labels)
        D = dist(labels)
        new = np.argmin(D, axis=1)
        # the objective of the new labels against the centres they were assigned to
        result = new, D[np.arange(n), new].sum()
        if np.array_equal(new, labels):
            return (*result, min(n_iter + 1, max_iter))
        if n_iter > 1 and prev - obj <= tol * abs(prev):
            break
        labels, prev = new, obj
    return (*result, n_iter)


@pytest.fixture
def blobs():
    X, _ = make_blobs(240, centers=5, cluster_std=2.2, random_state=3)
    return X


# -- empty clusters and ties --------------------------------------------------------------------
def test_fix_empty_moves_the_farthest_points_of_clusters_with_more_than_one():
    labels = np.array([0, 0, 0, 1, 2, 2])
    own = np.array([0.5, 9.0, 0.1, 20.0, 3.0, 4.0])
    # clusters 3 and 4 are empty; point 3 is farthest but alone in cluster 1: not moved
    new, moved = _fix_empty(labels, own, 5)
    np.testing.assert_array_equal(new, [0, 3, 0, 1, 2, 4])
    assert moved == 2
    np.testing.assert_array_equal(labels, [0, 0, 0, 1, 2, 2])  # the input is left unchanged
    same, none = _fix_empty(labels, own, 3)
    np.testing.assert_array_equal(same, labels)
    assert none == 0


def test_fix_empty_never_empties_a_cluster_and_takes_distinct_points():
    rng = np.random.default_rng(0)
    for _ in range(50):
        k = int(rng.integers(2, 6))
        labels = rng.integers(0, k - 1, size=12)  # the last cluster at least is empty
        own = rng.random(12)
        new, moved = _fix_empty(labels, own, k)
        counts = np.bincount(new, minlength=k)
        assert counts.min() >= 1
        assert (
            moved
            == int((new != labels).sum())
            == int((np.bincount(labels, minlength=k) == 0).sum())
        )
        # brute force: each moved point is the farthest one that could be moved at its turn
        moved_own = np.sort(own[new != labels])[::-1]
        movable = [
            i
            for i in range(12)
            if new[i] == labels[i] and np.bincount(new, minlength=k)[labels[i]] > 1
        ]
        # a point still movable at the end was movable at every turn
        if movable and moved_own.size:
            assert moved_own.min() >= own[movable].max()


def test_reassign_keeps_the_current_label_on_a_tie():
    D = np.array([[1.0, 1.0, 2.0], [3.0, 1.0, 1.0], [0.5, 2.0, 0.4], [2.0, 2.0, 2.0]])
    np.testing.assert_array_equal(_reassign(D, np.array([1, 2, 0, 2])), [1, 2, 2, 2])
    np.testing.assert_array_equal(_reassign(D, np.array([2, 0, 1, 0])), [0, 1, 2, 0])


def test_empty_cluster_takes_the_point_farthest_from_its_centre():
    # three seeds: 0 and 1 coincide, so cluster 1 starts empty and is given the point farthest
    # from its centre (20, the outlier); the reference Lloyd below then has no empty cluster
    X = np.array([[0.0], [0.0], [0.3], [0.2], [5.0], [5.2], [4.9], [20.0]])
    km = KernelKMeans(3, kernel="linear", method="exact", init=np.array([0, 1, 4]), tol=0)
    km.fit(X)
    np.testing.assert_array_equal(km.labels_, [0, 0, 0, 0, 2, 2, 2, 1])
    assert km.inertia_ == pytest.approx(objective(X @ X.T, km.labels_), rel=1e-12)


# -- against a reference Lloyd and scikit-learn -------------------------------------------------
@pytest.mark.parametrize("tol", [0.0, 1e-3, 0.05, 1e9])
def test_exact_lloyd_equals_the_reference_iterations(blobs, tol):
    K = blobs @ blobs.T
    seeds = np.array([0, 1, 2, 3, 4])
    km = KernelKMeans(5, kernel="linear", method="exact", init=seeds, tol=tol).fit(blobs)
    labels, obj, n_iter = reference_lloyd(K, seeds, 300, tol)
    np.testing.assert_array_equal(km.labels_, labels)
    assert km.n_iter_ == n_iter
    assert km.inertia_ == pytest.approx(obj, rel=1e-10)
    if tol == 0:
        assert km.inertia_ == pytest.approx(objective(K, km.labels_), rel=1e-10)


def test_stopping_tolerance_counts_iterations(blobs):
    seeds = np.array([0, 1, 2, 3, 4])
    loose = KernelKMeans(5, kernel="linear", method="exact", init=seeds, tol=1e9).fit(blobs)
    tight = KernelKMeans(5, kernel="linear", method="exact", init=seeds, tol=0).fit(blobs)
    assert loose.n_iter_ == 2  # the first decrease is measured at the second iteration
    assert tight.n_iter_ > 3
    one = KernelKMeans(5, kernel="linear", method="exact", init=seeds, max_iter=1).fit(blobs)
    assert one.n_iter_ == 1


@pytest.mark.parametrize("method", ["exact", "nystrom"])
def test_linear_kernel_equals_sklearn_kmeans_from_the_same_seeds(blobs, method):
    seeds = np.array([10, 60, 110, 160, 210])
    km = KernelKMeans(
        5, kernel="linear", method=method, init=seeds, tol=0, n_landmarks=2, random_state=0
    ).fit(blobs)
    ref = KMeans(5, init=blobs[seeds], n_init=1, algorithm="lloyd", tol=0).fit(blobs)
    np.testing.assert_array_equal(km.labels_, ref.labels_)
    assert km.inertia_ == pytest.approx(ref.inertia_, rel=1e-8)
    np.testing.assert_array_equal(km.predict(blobs), ref.predict(blobs))
    assert km.score(blobs) == pytest.approx(ref.score(blobs), rel=1e-8)


@pytest.mark.parametrize("method", ["exact", "nystrom"])
@pytest.mark.parametrize("max_iter", [1, 2, 3])
def test_a_fit_stopped_early_equals_sklearn_kmeans_stopped_there(blobs, method, max_iter):
    """max_iter counts the centre updates, as scikit-learn's KMeans (the oracle) does: with
    the same seeds and max_iter, the same labels, inertia, centres and n_iter_."""
    seeds = np.array([0, 1, 2, 3, 4])
    km = KernelKMeans(
        5,
        kernel="linear",
        method=method,
        init=seeds,
        n_init=1,
        tol=0,
        max_iter=max_iter,
        n_landmarks=2,
        random_state=0,
    ).fit(blobs)
    ref = KMeans(5, init=blobs[seeds], n_init=1, algorithm="lloyd", tol=0, max_iter=max_iter).fit(
        blobs
    )
    assert km.n_iter_ == ref.n_iter_ == max_iter
    np.testing.assert_array_equal(km.labels_, ref.labels_)
    assert km.inertia_ == pytest.approx(ref.inertia_, rel=1e-10)
    assert km.score(blobs) == pytest.approx(ref.score(blobs), rel=1e-10)
    np.testing.assert_array_equal(km.predict(blobs), ref.predict(blobs))
    np.testing.assert_allclose(km.transform(blobs), ref.transform(blobs), rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("method", ["exact", "nystrom"])
@pytest.mark.parametrize("stop", [{"tol": 0.05}, {"tol": 1e9}, {"max_iter": 2}])
def test_inertia_is_minus_the_score_of_the_training_data(blobs, method, stop):
    km = KernelKMeans(
        5,
        kernel="rbf",
        kernel_params={"gamma": 0.02},
        method=method,
        n_landmarks=40,
        random_state=0,
        **stop,
    ).fit(blobs)
    assert km.inertia_ == pytest.approx(-km.score(blobs), rel=1e-9)
    D = km.transform(blobs) ** 2  # brute force over the centres kept by the model
    assert km.inertia_ == pytest.approx(D[np.arange(len(blobs)), km.labels_].sum(), rel=1e-9)
    np.testing.assert_array_equal(km.predict(blobs), km.labels_)


def test_labels_follow_a_permutation_of_the_samples(blobs):
    seeds = np.array([10, 60, 110, 160, 210])
    perm = np.random.default_rng(1).permutation(len(blobs))
    inv = np.argsort(perm)
    a = KernelKMeans(
        5, kernel="rbf", kernel_params={"gamma": 0.05}, method="exact", init=seeds, tol=0
    ).fit(blobs)
    b = KernelKMeans(
        5, kernel="rbf", kernel_params={"gamma": 0.05}, method="exact", init=inv[seeds], tol=0
    ).fit(blobs[perm])
    np.testing.assert_array_equal(b.labels_, a.labels_[perm])
    assert b.inertia_ == pytest.approx(a.inertia_, rel=1e-10)


# -- seeding, n_init and random_state -----------------------------------------------------------
def test_n_init_keeps_the_lowest_objective(blobs):
    K = blobs @ blobs.T
    for seed in range(3):
        # init="random" draws k distinct indices per seeding from the fit's generator
        rng = np.random.default_rng(seed)
        draws = [rng.choice(len(blobs), 5, replace=False) for _ in range(6)]
        singles = [
            KMeans(5, init=blobs[d], n_init=1, algorithm="lloyd", tol=0).fit(blobs) for d in draws
        ]
        km = KernelKMeans(
            5, kernel="linear", method="exact", init="random", n_init=6, tol=0, random_state=seed
        ).fit(blobs)
        best = min(singles, key=lambda r: r.inertia_)
        assert km.inertia_ == pytest.approx(best.inertia_, rel=1e-8)
        assert km.inertia_ == pytest.approx(objective(K, km.labels_), rel=1e-8)


def test_given_init_gives_the_same_fit_whatever_n_init(blobs):
    seeds = np.array([10, 60, 110, 160, 210])
    one = KernelKMeans(5, kernel="linear", method="exact", init=seeds, n_init=1).fit(blobs)
    many = KernelKMeans(5, kernel="linear", method="exact", init=seeds, n_init=5).fit(blobs)
    np.testing.assert_array_equal(one.labels_, many.labels_)
    assert one.n_iter_ == many.n_iter_


def test_kmeanspp_picks_the_candidate_with_the_lowest_potential():
    X = make_blobs(60, centers=4, random_state=0)[0]

    def sqdist_to(idx):
        return ((X[:, None, :] - X[idx][None]) ** 2).sum(-1)

    seeds = _kmeanspp(len(X), 4, sqdist_to, np.random.default_rng(0))
    assert len(np.unique(seeds)) == 4
    # replay the draws: each centre is the candidate whose potential is the smallest
    rng = np.random.default_rng(0)
    first = int(rng.integers(len(X)))
    assert seeds[0] == first
    closest = sqdist_to(np.array([first]))[:, 0]
    for j in range(1, 4):
        cand = rng.choice(len(X), size=2 + int(np.log(4)), p=closest / closest.sum())
        pots = [np.minimum(closest, sqdist_to(np.array([c]))[:, 0]).sum() for c in cand]
        assert seeds[j] == cand[int(np.argmin(pots))]
        closest = np.minimum(closest, sqdist_to(np.array([seeds[j]]))[:, 0])


def test_kmeanspp_on_coincident_points_returns_distinct_indices():
    seeds = _kmeanspp(6, 3, lambda idx: np.zeros((6, len(idx))), np.random.default_rng(0))
    assert len(np.unique(seeds)) == 3


@pytest.mark.parametrize("method", ["exact", "nystrom"])
def test_random_state_makes_fits_reproducible(blobs, method):
    kw = dict(
        kernel="rbf", kernel_params={"gamma": 0.05}, method=method, n_landmarks=30, random_state=7
    )
    a, b = KernelKMeans(5, **kw).fit(blobs), KernelKMeans(5, **kw).fit(blobs)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.inertia_ == b.inertia_
    if method == "nystrom":
        np.testing.assert_array_equal(
            a.nystroem_.component_indices_, b.nystroem_.component_indices_
        )


# -- method="auto" and max_memory ---------------------------------------------------------------
def test_max_memory_switches_auto_to_the_landmark_path(blobs):
    n = len(blobs)
    at = KernelKMeans(5, method="auto", max_memory=8 * n * n, random_state=0).fit(blobs)
    below = KernelKMeans(
        5, method="auto", max_memory=8 * n * n - 1, n_landmarks=20, random_state=0
    ).fit(blobs)
    assert at.method_ == "exact" and at.nystroem_ is None and at.residual_trace_ == 0.0
    assert below.method_ == "nystrom"
    assert below.nystroem_ is not None and below.cluster_centers_.shape == (5, 20)
    assert below.residual_trace_ > 0


def test_fix_empty_counts_the_points_it_takes_away():
    # cluster 0 gives its farthest point to cluster 2 and is then down to one point: cluster 3
    # must take from cluster 1, not empty cluster 0
    new, moved = _fix_empty(np.array([0, 0, 1, 1]), np.array([5.0, 4.0, 3.0, 0.0]), 4)
    np.testing.assert_array_equal(new, [2, 0, 3, 1])
    assert moved == 2


def test_kmeanspp_seeds_do_not_depend_on_the_scale_of_the_data():
    X = make_blobs(60, centers=4, random_state=0)[0]
    for scale in (1.0, 1e-3):
        Y = X * scale

        def sqdist_to(idx, Y=Y):
            return ((Y[:, None, :] - Y[idx][None]) ** 2).sum(-1)

        seeds = _kmeanspp(len(Y), 4, sqdist_to, np.random.default_rng(0))
        if scale == 1.0:
            ref = seeds
        np.testing.assert_array_equal(seeds, ref)


def test_default_max_memory_is_256_mib():
    assert KernelKMeans().get_params()["max_memory"] == 256 * 2**20


def test_kernel_object_is_accepted_and_params_with_an_object_are_refused(blobs):
    from sparsekit.registry import default_registry

    kernel = default_registry().get("kernel", "linear")
    seeds = np.array([10, 60, 110, 160, 210])
    by_object = KernelKMeans(5, kernel=kernel, method="exact", init=seeds).fit(blobs)
    by_name = KernelKMeans(5, kernel="linear", method="exact", init=seeds).fit(blobs)
    np.testing.assert_array_equal(by_object.labels_, by_name.labels_)
    with pytest.raises(TypeError, match="kernel_params"):
        KernelKMeans(5, kernel=kernel, kernel_params={"gamma": 1.0}).fit(blobs)


def test_feature_names_are_recorded_and_checked(blobs):
    import pandas as pd

    df = pd.DataFrame(blobs, columns=["a", "b"])
    km = KernelKMeans(5, kernel="linear", method="exact", random_state=0).fit(df)
    np.testing.assert_array_equal(km.feature_names_in_, ["a", "b"])
    with pytest.raises(ValueError, match="feature names should match"):
        km.predict(pd.DataFrame(blobs, columns=["b", "a"]))
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        km.predict(blobs)
    km.fit(blobs)  # refitted on an array: the names of the previous fit are dropped
    assert not hasattr(km, "feature_names_in_")


def test_a_sampler_object_ignored_by_the_exact_path_is_named_in_the_warning(blobs):
    from sparsekit.registry import default_registry

    sampler = default_registry().get("sampler", "greedy-trace")
    with pytest.warns(UserWarning, match="sampler=.* is ignored"):
        KernelKMeans(5, sampler=sampler, random_state=0).fit(blobs)


def test_n_landmarks_must_be_an_integer(blobs):
    with pytest.raises(TypeError, match="n_landmarks"):
        KernelKMeans(5, method="nystrom", n_landmarks=20.5).fit(blobs)


def test_fit_predict_returns_the_labels_and_exact_fits_have_no_centres(blobs):
    km = KernelKMeans(5, kernel="linear", method="exact", random_state=0)
    labels = km.fit_predict(blobs)
    np.testing.assert_array_equal(labels, km.labels_)
    assert km.cluster_centers_ is None


def test_complex_data_is_refused(blobs):
    with pytest.raises(ValueError, match="Complex data"):
        KernelKMeans(5, kernel="linear").fit(blobs + 1j)


def _memory_for(memory, nbytes):
    """An ``available_memory`` under which exactly ``nbytes`` is the largest allowed request."""
    return lambda **kw: nbytes / memory.RAISE_FRACTION


def test_exact_memory_check_counts_one_gram_for_a_vector_kernel(blobs, monkeypatch):
    import sparsekit._runtime.memory as memory

    n = len(blobs)
    reference = KernelKMeans(5, kernel="linear", method="exact", random_state=0).fit(blobs)
    # a vector kernel's fresh float64 Gram is symmetrised in place: one n x n matrix in all
    monkeypatch.setattr(memory, "available_memory", _memory_for(memory, 8 * n * n))
    with pytest.warns(memory.LargeAllocationWarning, match="KernelKMeans"):
        km = KernelKMeans(5, kernel="linear", method="exact", random_state=0).fit(blobs)
    np.testing.assert_array_equal(km.labels_, reference.labels_)
    # one byte less and the fit is refused before the Gram is computed
    monkeypatch.setattr(memory, "available_memory", _memory_for(memory, 8 * n * n - 1))
    with pytest.raises(memory.InsufficientMemoryError, match="KernelKMeans"):
        KernelKMeans(5, kernel="linear", method="exact").fit(blobs)


def test_exact_memory_check_counts_the_float32_gram_and_its_float64_copy(blobs, monkeypatch):
    import sparsekit._runtime.memory as memory

    X = blobs.astype(np.float32)
    n = len(X)
    monkeypatch.setattr(memory, "available_memory", _memory_for(memory, 12 * n * n - 1))
    with pytest.raises(memory.InsufficientMemoryError, match="KernelKMeans"):
        KernelKMeans(5, kernel="linear", method="exact").fit(X)
    monkeypatch.setattr(memory, "available_memory", _memory_for(memory, 12 * n * n))
    with pytest.warns(memory.LargeAllocationWarning):
        KernelKMeans(5, kernel="linear", method="exact", random_state=0).fit(X)


def test_exact_memory_check_counts_the_copy_of_a_graph_kernel_gram(monkeypatch):
    import sparsekit._runtime.memory as memory
    from tests.stats.conftest import random_graphs

    rng = np.random.default_rng(0)
    graphs = random_graphs(rng, 8, 0.35, (6, 6)) + random_graphs(rng, 8, 0.9, (6, 6))
    n = len(graphs)

    def fit():
        return KernelKMeans(2, kernel="shortest-path", method="exact", random_state=0).fit(graphs)

    reference = fit()
    # a kernel other than a vector kernel may hand back an array it keeps: the fit copies it
    # before symmetrising in place, two n x n float64 matrices
    monkeypatch.setattr(memory, "available_memory", _memory_for(memory, 16 * n * n - 1))
    with pytest.raises(memory.InsufficientMemoryError, match="KernelKMeans"):
        fit()
    monkeypatch.setattr(memory, "available_memory", _memory_for(memory, 16 * n * n))
    with pytest.warns(memory.LargeAllocationWarning):
        km = fit()
    np.testing.assert_array_equal(km.labels_, reference.labels_)


def test_matching_feature_names_pass_silently(blobs, recwarn):
    import pandas as pd

    df = pd.DataFrame(blobs, columns=["a", "b"])
    km = KernelKMeans(5, kernel="linear", method="exact", random_state=0).fit(df)
    np.testing.assert_array_equal(km.predict(df), km.labels_)
    assert not [w for w in recwarn if "feature names" in str(w.message)]


def test_a_bad_init_name_is_reported_before_any_data_check():
    # parameters are validated before the data, as in scikit-learn
    with pytest.raises(ValueError, match="init"):
        KernelKMeans(10, init="farthest").fit(np.zeros((5, 2)))


def test_feature_names_warning_only_when_predict_adds_names(blobs, recwarn):
    import pandas as pd

    km = KernelKMeans(5, kernel="linear", method="exact", random_state=0).fit(blobs)
    km.predict(blobs)
    assert not [w for w in recwarn if "feature names" in str(w.message)]
    with pytest.warns(UserWarning, match="X has feature names"):
        km.predict(pd.DataFrame(blobs, columns=["a", "b"]))


def test_a_precomputed_gram_is_refused_with_the_reason(blobs):
    with pytest.raises(ValueError, match="does not take kernel='precomputed'"):
        KernelKMeans(5, kernel="precomputed").fit(blobs @ blobs.T)


# -- scikit-learn's counts and warnings ---------------------------------------------------------
@pytest.mark.parametrize("method", ["exact", "nystrom"])
def test_n_iter_of_a_converged_fit_equals_sklearn_kmeans(blobs, method):
    """Oracle: scikit-learn's KMeans from the same seeds, run to convergence (tol=0)."""
    seeds = np.array([0, 1, 2, 3, 4])
    km = KernelKMeans(
        5, kernel="linear", method=method, init=seeds, n_init=1, tol=0, n_landmarks=2
    ).fit(blobs)
    ref = KMeans(5, init=blobs[seeds], n_init=1, algorithm="lloyd", tol=0).fit(blobs)
    assert 3 < ref.n_iter_ < 300
    assert km.n_iter_ == ref.n_iter_
    np.testing.assert_array_equal(km.labels_, ref.labels_)


def duplicates():
    """30 samples on 3 distinct points."""
    rng = np.random.default_rng(0)
    return rng.normal(size=(3, 2))[rng.integers(0, 3, size=30)]


@pytest.mark.parametrize("method", ["exact", "nystrom"])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fewer_distinct_points_than_clusters_warns_as_sklearn_and_predict_keeps_the_labels(
    method, kernel, seed
):
    """Oracle: scikit-learn's KMeans on the same data warns with these words and finds one
    cluster per distinct point; predict(X_train) must give labels_ (duplicate points split over
    clusters with equal centres used to keep their split labels, which predict did not)."""
    X = duplicates()
    with pytest.warns(UserWarning) as ref_warn:
        ref = KMeans(5, n_init=1, random_state=seed).fit(X)
    with pytest.warns(UserWarning) as ours_warn:
        km = KernelKMeans(5, kernel=kernel, method=method, n_landmarks=10, random_state=seed)
        km.fit(X)
    assert [str(w.message) for w in ours_warn] == [str(w.message) for w in ref_warn]
    assert len(np.unique(km.labels_)) == len(np.unique(ref.labels_)) == 3
    np.testing.assert_array_equal(km.predict(X), km.labels_)
    # the partition is the one of the distinct points
    assert adjusted_rand_score(km.labels_, ref.labels_) == 1.0


def test_given_init_with_several_n_init_warns_as_sklearn(blobs):
    """Oracle: scikit-learn's KMeans warns (RuntimeWarning) that explicit initial centres make
    one init whatever n_init; n_init=1 gives no warning."""
    seeds = np.array([10, 60, 110, 160, 210])
    with pytest.warns(RuntimeWarning, match="only one init") as ref_warn:
        KMeans(5, init=blobs[seeds], n_init=4).fit(blobs)
    assert "n_init=4" in str(ref_warn[0].message)
    with pytest.warns(RuntimeWarning, match=r"only one init in KernelKMeans instead of n_init=4"):
        KernelKMeans(5, kernel="linear", method="exact", init=seeds, n_init=4).fit(blobs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KernelKMeans(5, kernel="linear", method="exact", init=seeds, n_init=1).fit(blobs)
        KernelKMeans(5, kernel="linear", method="exact", n_init=4, random_state=0).fit(blobs)


def test_n_init_auto_is_one_run_with_given_init_and_three_seedings_otherwise(blobs):
    """Oracle: scikit-learn's KMeans(n_init="auto") makes one run from explicit centres without a
    warning; without init, "auto" keeps the best of the same three seedings as n_init=3."""
    seeds = np.array([10, 60, 110, 160, 210])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KMeans(5, init=blobs[seeds], n_init="auto").fit(blobs)
        auto = KernelKMeans(5, kernel="linear", method="exact", init=seeds).fit(blobs)
    one = KernelKMeans(5, kernel="linear", method="exact", init=seeds, n_init=1).fit(blobs)
    np.testing.assert_array_equal(auto.labels_, one.labels_)
    kw = dict(kernel="linear", method="exact", init="random", random_state=3)
    three = KernelKMeans(5, n_init=3, **kw).fit(blobs)
    auto = KernelKMeans(5, **kw).fit(blobs)
    np.testing.assert_array_equal(auto.labels_, three.labels_)
    assert auto.inertia_ == pytest.approx(three.inertia_, rel=1e-12)
    with pytest.raises((TypeError, ValueError), match="n_init"):
        KernelKMeans(5, n_init="all").fit(blobs)


def test_n_init_keeps_the_lowest_of_distinct_local_minima():
    """Oracle: scikit-learn's KMeans from each of the seedings init="random" draws (replayed
    from the same generator). On uniform data the runs end in distinct local minima, the
    lowest not the last, and the fit keeps the lowest."""
    X = np.random.default_rng(0).uniform(size=(200, 2))
    rng = np.random.default_rng(0)
    draws = [rng.choice(len(X), 6, replace=False) for _ in range(8)]
    singles = [
        KMeans(6, init=X[d], n_init=1, algorithm="lloyd", tol=0).fit(X).inertia_ for d in draws
    ]
    assert min(singles) < singles[-1] - 1e-3
    km = KernelKMeans(
        6, kernel="linear", method="exact", init="random", n_init=8, tol=0, random_state=0
    ).fit(X)
    assert km.inertia_ == pytest.approx(min(singles), rel=1e-9)


@pytest.mark.parametrize("method", ["exact", "nystrom"])
def test_a_far_cluster_does_not_merge_the_near_ones(method):
    """Oracle: scikit-learn's KMeans from the same seeds. A cluster 1e6 away made the tie band of
    the final assignment 1e-9 x 1e12 = 1000 wide, so that the point 0 and the cluster at -1 were
    labelled with the centre 30 (squared distance 900 taken for a tie with 0.11), two clusters
    merged and the fit warned of duplicate points."""
    X = np.array([[-1.0], [-1.0], [0.0], [30.0], [30.0], [1e6], [1e6]])
    seeds = np.array([3, 0, 5])
    ref = KMeans(3, init=X[seeds], n_init=1, algorithm="lloyd", tol=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        km = KernelKMeans(
            3, kernel="linear", method=method, init=seeds, tol=0, n_landmarks=1, random_state=0
        ).fit(X)
    np.testing.assert_array_equal(km.labels_, ref.labels_)
    np.testing.assert_array_equal(km.predict(X), ref.labels_)
    assert km.inertia_ == pytest.approx(ref.inertia_, rel=1e-6)
    assert km.inertia_ == pytest.approx(-km.score(X), rel=1e-6)


def rational_lloyd(x, seeds, k, max_iter, tol):
    """Lloyd on 1-D data in exact rational arithmetic, written from the definitions:
    ``(labels, objective, n_iter)``. Assign to the seeds, then each iteration moves the centres
    to the means and reassigns (a tie keeps the current label); stop when no label changes or
    when the objective decreased by at most ``tol`` times its previous value. The objective
    reported is that of the last labels against the centres they were assigned to; ``n_iter``
    counts as scikit-learn's KMeans (one more for the assignment that changed nothing)."""
    x = [Fraction(v) for v in x]
    tol = Fraction(tol)

    def assign(cs, current):
        out = []
        for i, v in enumerate(x):
            d = [(v - c) ** 2 for c in cs]
            best = min(range(k), key=lambda j: d[j])
            out.append(current[i] if current and d[current[i]] == d[best] else best)
        return out

    labels = assign([x[s] for s in seeds], None)
    prev = None
    for n_iter in range(1, max_iter + 1):
        cs = []
        for j in range(k):
            members = [v for v, lab in zip(x, labels) if lab == j]
            cs.append(sum(members) / len(members))
        obj = sum((v - cs[lab]) ** 2 for v, lab in zip(x, labels))
        new = assign(cs, labels)
        result = new, sum((v - cs[lab]) ** 2 for v, lab in zip(x, new))
        if new == labels:
            return (*result, min(n_iter + 1, max_iter))
        if prev is not None and prev - obj <= tol * prev:
            break
        labels, prev = new, obj
    return (*result, n_iter)


@pytest.mark.parametrize("tol", [0.9375, np.nextafter(0.9375, 0.0), np.nextafter(0.9375, 1.0)])
def test_tol_stops_when_the_decrease_equals_tol_times_the_objective(tol):
    """Oracle: Lloyd in exact rational arithmetic (``rational_lloyd``). On these integers with
    clusters of 1 and 2 points every distance and objective is exact in floating point: the
    objectives are 128, 8 and 1/2, so the second iteration decreases the objective by exactly
    15/16 = 0.9375 of its value. ``tol=0.9375`` stops there ("at most tol times"), a tol one
    float below does not (two more iterations), one float above does."""
    x = [4, 20, 24, 25]
    seeds = np.array([1, 2, 3])
    labels, obj, n_iter = rational_lloyd(x, seeds, 3, 300, tol)
    assert n_iter == (4 if tol < 0.9375 else 2)
    km = KernelKMeans(3, kernel="linear", method="exact", init=seeds, tol=tol)
    km.fit(np.array(x, dtype=np.float64)[:, None])
    assert km.n_iter_ == n_iter
    np.testing.assert_array_equal(km.labels_, labels)
    assert km.inertia_ == pytest.approx(float(obj), rel=1e-12)


@pytest.mark.parametrize("method", ["exact", "nystrom"])
def test_inertia_is_the_objective_of_the_labels_after_the_tie_rule(method):
    """Oracle: scikit-learn's KMeans from the same seeds gives the converged partition and its
    centres (-40 and +82 about 2^20); the inertia is then brute force over the labels reported.
    2^20 from the origin the tie band of the final assignment (1e-9 times the squared norms,
    about 3300) holds the point +20, at squared distances 3600 and 3844 of the two centres: it
    is labelled with the lower index, and inertia_ must be the objective of these labels
    (8244), not that of Lloyd's last assignment (8000)."""
    p = 2.0**20
    X = np.array([[p - 100], [p + 20], [p + 62], [p + 102]])
    seeds = np.array([2, 1])
    ref = KMeans(2, init=X[seeds], n_init=1, algorithm="lloyd", tol=0).fit(X)
    np.testing.assert_array_equal(ref.labels_, [1, 1, 0, 0])
    km = KernelKMeans(
        2, kernel="linear", method=method, init=seeds, tol=0, n_landmarks=1, random_state=0
    ).fit(X)
    np.testing.assert_array_equal(km.labels_, [1, 0, 0, 0])
    np.testing.assert_array_equal(km.predict(X), km.labels_)
    C = ref.cluster_centers_[:, 0]
    assert km.inertia_ == pytest.approx(((X[:, 0] - C[km.labels_]) ** 2).sum(), rel=1e-6)


def test_n_iter_stays_within_max_iter_when_the_last_iteration_converges(blobs):
    """Oracle: scikit-learn's KMeans from the same seeds. Lloyd converges N - 1 centre updates
    in (scikit-learn's N-th iteration changes no label): with max_iter = N - 1 the fit makes
    these N - 1 updates and n_iter_ is N - 1, not N."""
    seeds = np.array([0, 1, 2, 3, 4])
    full = KMeans(5, init=blobs[seeds], n_init=1, algorithm="lloyd", tol=0).fit(blobs)
    last = full.n_iter_ - 1
    ref = KMeans(5, init=blobs[seeds], n_init=1, algorithm="lloyd", tol=0, max_iter=last)
    ref.fit(blobs)
    km = KernelKMeans(5, kernel="linear", method="exact", init=seeds, tol=0, max_iter=last)
    km.fit(blobs)
    assert km.n_iter_ == ref.n_iter_ == last
    np.testing.assert_array_equal(km.labels_, full.labels_)
    np.testing.assert_array_equal(km.labels_, ref.labels_)


def test_n_init_keeps_the_first_of_equal_objectives():
    """Oracle: scikit-learn's KMeans, which replaces its best run only for a strictly lower
    inertia. Three separated squares: the four seedings that init="random" draws (replayed from
    the same generator) all find the squares, each numbered in another order, with equal
    objectives (integer data); the fit keeps the numbering of the first."""
    square = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    X = np.vstack([square, square + [20.0, 0.0], square + [0.0, 20.0]])
    rng = np.random.default_rng(2)
    draws = [rng.choice(len(X), 3, replace=False) for _ in range(4)]
    refs = [KMeans(3, init=X[d], n_init=1, algorithm="lloyd", tol=0).fit(X) for d in draws]
    assert {r.inertia_ for r in refs} == {6.0}
    assert len({tuple(r.labels_) for r in refs}) == 4
    km = KernelKMeans(
        3, kernel="linear", method="exact", init="random", n_init=4, tol=0, random_state=2
    ).fit(X)
    np.testing.assert_array_equal(km.labels_, refs[0].labels_)


def test_a_cluster_emptied_after_the_first_iteration_is_repaired_as_sklearn_does():
    """Oracle: scikit-learn's KMeans from the same seeds, which gives an empty cluster the
    point farthest from its centre. Here cluster 2 keeps its seed at the first assignment and
    loses every point at the second, when the centres have moved."""
    X = np.array([[14, 18], [14, 13], [16, 17], [17, 4], [8, 16], [4, 14], [19, 6]], float)
    seeds = np.array([1, 6, 0, 2])
    ref = KMeans(4, init=X[seeds], n_init=1, algorithm="lloyd", tol=0).fit(X)
    km = KernelKMeans(4, kernel="linear", method="exact", init=seeds, tol=0).fit(X)
    np.testing.assert_array_equal(km.labels_, ref.labels_)
    assert km.n_iter_ == ref.n_iter_
    assert km.inertia_ == pytest.approx(ref.inertia_, rel=1e-9)
