"""The shared k-means module (sparsekit.cluster._lloyd): k-means++ draws by D² sampling, checked
against the seeding distribution computed by brute force (every sequence of draws enumerated)
with a chi-square test, and QuicK-means' seeding is the same function."""

import itertools

import numpy as np
import pytest
from scipy.stats import chisquare

from sparsekit.cluster import _lloyd
from sparsekit.cluster.quickmeans import kmeans_plusplus as quickmeans_seeding

#: six points in the plane, none coincident: every ordered seeding has some probability
POINTS = np.array([[0.0, 0.0], [1.0, 0.2], [0.3, 1.5], [2.5, 2.0], [-1.0, 0.7], [1.8, -0.9]])
SQ = ((POINTS[:, None, :] - POINTS[None]) ** 2).sum(-1)
DRAWS = 20_000


def sqdist_to(idx):
    return SQ[:, idx]


def empirical(k, n_trials):
    rng = np.random.default_rng(12345)
    counts = {}
    for _ in range(DRAWS):
        seeds = tuple(_lloyd.kmeans_plusplus(len(POINTS), k, sqdist_to, rng, n_trials))
        counts[seeds] = counts.get(seeds, 0) + 1
    return counts


def brute_force_plain(k):
    """P(seed sequence) of k-means++ (Arthur & Vassilvitskii 2007): uniform first seed, then
    each seed with probability D(x)² / Σ D², D the distance to the closest seed so far."""
    n = len(POINTS)
    probs = {}
    for seq in itertools.permutations(range(n), k):
        p = 1.0 / n
        for j in range(1, k):
            d2 = SQ[:, list(seq[:j])].min(axis=1)
            p *= d2[seq[j]] / d2.sum()
        probs[seq] = p
    return probs


def brute_force_greedy_pair(n_trials):
    """P(first, second) of greedy k-means++ for k = 2: ``n_trials`` candidates drawn by D²
    sampling, the one with the lowest potential Σ_x min(D(x)², ‖x − c‖²) kept (the first of
    equal ones)."""
    n = len(POINTS)
    probs = {}
    for first in range(n):
        d2 = SQ[:, first]
        p = d2 / d2.sum()
        for cands in itertools.product(range(n), repeat=n_trials):
            weight = np.prod(p[list(cands)]) / n
            if weight == 0:
                continue
            pots = [np.minimum(d2, SQ[:, c]).sum() for c in cands]
            pair = (first, cands[int(np.argmin(pots))])
            probs[pair] = probs.get(pair, 0.0) + weight
    return probs


def assert_same_distribution(counts, probs):
    assert set(counts) <= {s for s, p in probs.items() if p > 0}  # nothing impossible drawn
    support = sorted(probs)
    expected = np.array([probs[s] for s in support]) * DRAWS
    observed = np.array([counts.get(s, 0) for s in support])
    assert np.isclose(expected.sum(), DRAWS)
    # the draws come from one fixed generator: the test is deterministic, and a sampling rule
    # off by even a few percent in one cell gives a p-value far below this bound
    assert chisquare(observed, expected).pvalue > 1e-3


@pytest.mark.parametrize("k", [2, 3])
def test_kmeanspp_draws_each_seed_with_probability_d2_over_the_potential(k):
    assert_same_distribution(empirical(k, n_trials=1), brute_force_plain(k))


def test_greedy_kmeanspp_keeps_the_candidate_with_the_lowest_potential():
    n_trials = 2 + int(np.log(2))  # the default for k = 2
    assert_same_distribution(empirical(2, n_trials), brute_force_greedy_pair(n_trials))


def test_points_at_distance_zero_are_never_drawn():
    # the first point is repeated: once it is a seed, its copies have D = 0
    X = np.array([[0.0], [0.0], [0.0], [5.0], [6.0]])
    sq = (X - X.T) ** 2
    rng = np.random.default_rng(0)
    for _ in range(2000):
        seeds = _lloyd.kmeans_plusplus(5, 2, lambda idx: sq[:, idx], rng)
        if seeds[0] < 3:
            assert seeds[1] in (3, 4)


def test_quickmeans_seeding_is_the_shared_seeding_on_euclidean_distances():
    X = np.random.default_rng(1).standard_normal((200, 5))
    sq = ((X[:, None, :] - X[None]) ** 2).sum(-1)
    for seed in range(5):
        ref = _lloyd.kmeans_plusplus(200, 7, lambda idx: sq[:, idx], np.random.default_rng(seed))
        np.testing.assert_array_equal(quickmeans_seeding(X, 7, np.random.default_rng(seed)), ref)


def test_coincident_points_give_distinct_seeds_in_quickmeans_too():
    X = np.zeros((6, 3))
    seeds = quickmeans_seeding(X, 4, np.random.default_rng(0))
    assert len(np.unique(seeds)) == 4


def test_cluster_sums_in_float64_of_float32_data():
    rng = np.random.default_rng(2)
    Z = rng.standard_normal((500, 3)).astype(np.float32)
    labels = rng.integers(0, 4, 500)
    sums, counts = _lloyd.cluster_sums(Z, labels, 4, np.float64)
    assert sums.dtype == np.float64
    brute = np.stack([Z[labels == j].astype(np.float64).sum(axis=0) for j in range(4)])
    np.testing.assert_allclose(sums, brute, rtol=1e-12)
    np.testing.assert_array_equal(counts, np.bincount(labels, minlength=4))


class _StubGenerator:
    """A generator whose uniforms are all ``u`` and whose first seed is sample 0."""

    def __init__(self, u):
        self.u = u

    def integers(self, n):
        return 0

    def random(self, size):
        return np.full(size, self.u)


@pytest.mark.parametrize("u", [0.0, np.nextafter(1.0, 0.0)])
def test_uniforms_at_the_ends_draw_no_point_of_weight_zero(u):
    # samples 0, 1 and 5 coincide: once 0 is the first seed, 1 and 5 have D = 0 (weight 0), and
    # 5 is the last sample: the smallest uniform must not return 0 or 1, the largest not 5
    X = np.array([[0.0], [0.0], [1.0], [3.0], [7.0], [0.0]])
    sq = (X - X.T) ** 2
    seeds = _lloyd.kmeans_plusplus(6, 2, lambda idx: sq[:, idx], _StubGenerator(u), n_trials=1)
    assert seeds[0] == 0 and seeds[1] in (2, 3, 4)


def test_a_uniform_rounded_up_to_a_subnormal_potential_draws_no_point_of_weight_zero():
    # with a subnormal potential, u * Σ D² rounds up to Σ D² for u just below 1: the inversion
    # falls past the last sample (weight 0 here) and must return the last point of weight > 0
    tiny = np.nextafter(0.0, 1.0)
    sq = np.full((6, 6), tiny)
    sq[[0, 0, 1, 5, 5, 1], [1, 5, 5, 0, 1, 0]] = 0.0
    np.fill_diagonal(sq, 0.0)
    seeds = _lloyd.kmeans_plusplus(
        6, 2, lambda idx: sq[:, idx], _StubGenerator(np.nextafter(1.0, 0.0)), n_trials=1
    )
    assert seeds[0] == 0 and seeds[1] == 4


@pytest.mark.parametrize("max_iter", [1, 2])
def test_lloyd_stopped_early_returns_the_last_assignment_and_its_objective(max_iter):
    """Oracle: scikit-learn's KMeans from the same seeds, stopped after the same number of
    centre updates: its labels are those of the last assignment and its inertia their
    objective against the centres they were assigned to."""
    from sklearn.cluster import KMeans
    from sklearn.datasets import make_blobs

    X = make_blobs(120, centers=4, cluster_std=2.5, random_state=1)[0]
    seeds = np.array([0, 1, 2, 3])
    ref = KMeans(4, init=X[seeds], n_init=1, algorithm="lloyd", tol=0, max_iter=max_iter).fit(X)
    xsq = np.einsum("ij,ij->i", X, X)
    steps = _lloyd.DenseLloyd(
        _lloyd.sq_dists(X, xsq, X[seeds]),
        lambda labels: _lloyd.sq_dists(X, xsq, _lloyd.means(X, labels, 4)),
        4,
    )
    labels, obj, n_iter = _lloyd.lloyd(steps, max_iter, 0.0)
    assert n_iter == ref.n_iter_ == max_iter
    np.testing.assert_array_equal(labels, ref.labels_)
    assert obj == pytest.approx(ref.inertia_, rel=1e-10)
