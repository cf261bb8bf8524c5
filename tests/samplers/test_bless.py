"""BLESS (Rudi, Calandriello, Carratino & Rosasco, NeurIPS 2018): scores against exact ridge
leverage scores, the sampling distribution, reproducibility, bad input, use in Nystroem."""

import numpy as np
import pytest

import sparsekit
from sparsekit import Registry
from sparsekit.exceptions import NotPositiveDefiniteError
from sparsekit.kernels.base import CallableKernel
from sparsekit.samplers import BLESSSampler

GAMMA = 0.5


def uneven(n=300, seed=0):
    """A dense cluster of 5/6 of the points and a sparse one: uneven ridge leverage scores."""
    rng = np.random.default_rng(seed)
    dense = 0.3 * rng.standard_normal((n - n // 6, 2))
    sparse = 3.0 + 2.0 * rng.standard_normal((n // 6, 2))
    return np.vstack([dense, sparse])


def exact_rls(X, lam):
    """diag(K (K + λI)⁻¹) with NumPy on the explicit RBF Gram matrix (the convention of
    ``rls``: λ without the factor n of the paper)."""
    sq = np.sum(X * X, axis=1)
    K = np.exp(-GAMMA * np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0))
    return np.diag(np.linalg.solve(K + lam * np.eye(len(X)), K))


@pytest.fixture
def rbf():
    return sparsekit.get_kernel("rbf", gamma=GAMMA)


@pytest.mark.parametrize("lam", [0.3, 1.0, 3.0])
def test_final_scores_lie_in_the_theorem_band_of_exact_scores(lam, rbf):
    """Oracle: exact ridge leverage scores by NumPy. Theorem 1 of Rudi et al. (2018): with large
    enough q1, q2 the final dictionary's estimates are t-accurate, l/(1+t) <= l̃ <= (1+t) l;
    here t = 1, on every point, for ten seeds."""
    X = uneven()
    exact = exact_rls(X, lam)
    assert exact.max() / exact.min() > 20  # uneven scores: a uniform guess would fail the band
    sampler = BLESSSampler(lam=lam, q1=32, q2=32)
    for seed in range(10):
        ratio = sampler.scores(X, rbf, random_state=seed) / exact
        assert 0.5 <= ratio.min() and ratio.max() <= 2.0, (seed, ratio.min(), ratio.max())


def test_inclusion_frequencies_follow_the_exact_scores(rbf):
    """Oracle: exact ridge leverage scores by NumPy. Over 200 seeds the landmark inclusion
    frequencies (default q1 = q2 = 2) correlate with the exact scores, and the points of
    the top exact-score decile are drawn far more often than uniform sampling draws them."""
    X = uneven()
    n, s = len(X), 20
    exact = exact_rls(X, 1.0)
    hits = np.zeros(n)
    sampler = sparsekit.get_sampler("bless", lam=1.0)
    for seed in range(200):
        hits[sampler.sample(X, rbf, s, random_state=seed).indices] += 1
    freq = hits / 200
    assert np.corrcoef(freq, exact)[0, 1] > 0.8
    top = exact >= np.quantile(exact, 0.9)
    assert freq[top].mean() > 3 * s / n  # uniform draws every point with probability s/n
    assert freq[~top].mean() < s / n


def test_same_seed_same_landmarks(rbf):
    X = uneven()
    sampler = BLESSSampler(lam=1.0)
    a = sampler.sample(X, rbf, 15, random_state=7)
    b = sampler.sample(X, rbf, 15, random_state=np.random.default_rng(7))
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-12)
    assert len(np.unique(a.indices)) == 15 and a.indices.dtype == np.int64
    np.testing.assert_array_equal(a.points, X[a.indices])
    others = [sampler.sample(X, rbf, 15, random_state=s).indices for s in range(8, 12)]
    assert any(not np.array_equal(a.indices, o) for o in others)


def test_registered_by_name(rbf):
    reg = Registry(entry_points=False)
    info = {i.name: i for i in reg.list("sampler")}["bless"]
    assert info.plugin == "sparsekit.samplers._plugin"
    sampler = reg.get("sampler", "bless", lam=0.5, q=3.0)
    assert isinstance(sampler, BLESSSampler) and sampler.get_params()["q"] == 3.0


@pytest.mark.parametrize("lam", [0, -1.0, float("nan")])
def test_lambda_must_be_positive(lam, rbf):
    with pytest.raises(ValueError, match="lam must be > 0"):
        BLESSSampler(lam=lam)
    with pytest.raises(ValueError, match="lam must be > 0"):
        BLESSSampler(lam=1.0).scores(uneven(), rbf, lam=lam)


def test_lambda_is_required():
    with pytest.raises(TypeError, match="lam"):
        sparsekit.get_sampler("bless")


@pytest.mark.parametrize(
    "params,match",
    [
        ({"q": 1.0}, "q must be"),
        ({"q": 0.5}, "q must be"),
        ({"q1": 0.0}, "q1 must be"),
        ({"q2": -2.0}, "q2 must be"),
        ({"q2": float("inf")}, "q2 must be finite"),
        ({"n_jobs": 0}, "n_jobs must be"),
    ],
)
def test_bad_constants_name_the_argument(params, match):
    with pytest.raises(ValueError, match=match):
        BLESSSampler(lam=1.0, **params)


def test_bad_n_landmarks_and_nan_input(rbf):
    X = uneven()[:30]
    with pytest.raises(ValueError, match=r"n_landmarks must be in \[1, n_samples=30\]"):
        BLESSSampler(lam=1.0).sample(X, rbf, 31)
    X[4, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        BLESSSampler(lam=1.0).sample(X, rbf, 5)


def test_non_psd_kernels_are_refused():
    """Oracles: tanh(<a, b> - 1) (the sigmoid kernel, not PSD; Schölkopf & Smola 2002, §4.6)
    is negative on the diagonal of points in the unit ball; 1 - 50 |a_0 - b_0| has a unit
    diagonal, but two points more than 0.04 apart give a 2 x 2 block with determinant
    1 - (1 - 50 d)² < 0, so K_J + λA is indefinite for a small λ once J holds them."""
    X = 0.1 * np.random.default_rng(0).normal(size=(60, 3))
    sigmoid = CallableKernel(lambda A, B: np.tanh(A @ B.T - 1.0))
    assert np.diag(sigmoid(X, X)).max() < 0
    with pytest.raises(NotPositiveDefiniteError, match="not positive semi-definite"):
        BLESSSampler(lam=1e-3).sample(X, sigmoid, 5, random_state=0)
    Y = np.random.default_rng(1).normal(size=(40, 3))
    indefinite = CallableKernel(lambda A, B: 1.0 - 50.0 * np.abs(A[:, None, 0] - B[None, :, 0]))
    with pytest.raises(NotPositiveDefiniteError, match="not positive definite"):
        for seed in range(5):
            BLESSSampler(lam=1e-3).sample(Y, indefinite, 5, random_state=seed)


def nystrom_error(X, sampler, params, m, seed):
    """‖K - ZZᵀ‖_F with the exact Gram matrix by NumPy."""
    ny = sparsekit.Nystroem(
        "rbf",
        kernel_params={"gamma": GAMMA},
        sampler=sampler,
        sampler_params=params,
        n_components=m,
        random_state=seed,
    )
    Z = ny.fit_transform(X)
    sq = np.sum(X * X, axis=1)
    K = np.exp(-GAMMA * np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0))
    return np.linalg.norm(K - Z @ Z.T)


def test_nystroem_with_bless_is_no_worse_than_uniform_on_uneven_data():
    """Oracle: the Frobenius error against the exact Gram matrix (NumPy), averaged over ten
    seeds, at m = 20 landmarks on the dense/sparse mixture: leverage scores favour the sparse
    cluster, which uniform sampling under-covers."""
    X = uneven()
    bless = [nystrom_error(X, "bless", {"lam": 1.0}, 20, s) for s in range(10)]
    uniform = [nystrom_error(X, "uniform", None, 20, s) for s in range(10)]
    assert np.mean(bless) <= np.mean(uniform)


class ScriptedDraws:
    """A generator stand-in: ``integers`` returns the given candidate multisets U_h in turn,
    ``choice(k, M, p)`` records ``(M, p)`` and returns the positions ``0, 1, …, k−1, 0, 1, …``
    (so that M > k draws a candidate twice)."""

    def __init__(self, candidates):
        self.candidates = list(candidates)
        self.draws = []

    def integers(self, low, high, size):
        U = np.asarray(self.candidates.pop(0))
        assert U.size == size and 0 <= U.min() and U.max() < high
        return U

    def choice(self, k, M, p):
        self.draws.append((M, np.asarray(p, dtype=float)))
        return np.arange(M) % k


def paper_estimates(K, rows, J, a, lam):
    """l̃_{J,A}(i, λ) = (k_ii − K_{i,J}(K_J + λA)⁻¹K_{J,i})/λ (Rudi et al. 2018, Sec. 2) with J
    a list in which a point drawn twice is two rows, each with its own weight."""
    if len(J) == 0:
        return np.diag(K)[rows] / lam
    KJ = K[np.ix_(J, J)] + lam * np.diag(a)
    KiJ = K[np.ix_(rows, J)]
    return (np.diag(K)[rows] - np.einsum("ij,ji->i", KiJ, np.linalg.solve(KJ, KiJ.T))) / lam


def test_levels_count_every_copy_of_a_repeated_candidate(rbf):
    """Oracle: Algorithm 1 of Rudi et al. (2018) recomputed with NumPy on the multisets
    themselves (a candidate drawn twice in U_h is two terms of Σ_{u∈U_h} l̃_u, a point drawn
    twice into J_h two rows of K_J + λA, each of weight (R_h/n) M_h p_u). Two levels on 12
    points, with repeated candidates and repeated dictionary draws: the size M_h = ⌈q2 d_h⌉,
    d_h = (n/R_h) Σ_{u∈U_h} l̃_u, the probability of drawing each distinct candidate (its
    copies' p_u summed) and the final estimates l̃_{J_H,A_H}(i, λ) of every point."""
    from sparsekit.samplers.bless import bless_scores

    X = uneven(12, seed=3)
    n, lam, q, q1, q2 = 12, 3.0, 2.0, 2.0, 4.0  # λ_0 = nκ² = 12: levels λ_1 = 6, λ_2 = 3
    sq = np.sum(X * X, axis=1)
    K = np.exp(-GAMMA * np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0))
    levels = [[0, 0, 5, 7], [1, 1, 1, 2, 4, 9, 9, 11]]  # R_h = ⌈q1 n min(1, 1/λ_h)⌉ = 4, 8
    rng = ScriptedDraws(levels)
    kernel = rbf.fit(X)
    got = bless_scores(kernel.prepare(X), kernel, lam, q, q1, q2, rng)

    J, a = [], []
    for (M_got, p_got), U, lam_h in zip(rng.draws, levels, (6.0, 3.0)):
        U = np.asarray(U)
        R = U.size
        est = paper_estimates(K, U, J, a, lam_h)
        p = est / est.sum()
        M = int(np.ceil(q2 * (n / R) * est.sum()))
        assert M_got == M
        distinct = np.unique(U)
        np.testing.assert_allclose(
            p_got, [p[U == c].sum() for c in distinct], rtol=1e-10, atol=1e-15
        )
        drawn = distinct[np.arange(M) % distinct.size]
        first_copy = {c: np.flatnonzero(U == c)[0] for c in distinct}
        J = list(drawn)
        a = [(R / n) * M * p[first_copy[c]] for c in drawn]
    assert len(J) > len(set(J))  # the final dictionary holds a point twice
    want = np.minimum(1.0, paper_estimates(K, np.arange(n), J, a, lam))
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("lam", [1.0, 0.1])
def test_estimates_agree_in_distribution_with_dppy_bless(lam, rbf):
    """Oracle: DPPy's BLESS (``dppy.bless``, the authors' code, its Bernoulli variant BLESS-R)
    and its estimator of the final dictionary's scores, on the same data, kernel and λ (the
    convention K + λI in both); exact scores by NumPy. Averaged over 30 seeds each, the two
    implementations rank the points alike (Spearman ≥ 0.95, with each other and with the exact
    scores), both means lie in Theorem 1's band l/2 ≤ l̃ ≤ 2l, and their total (the estimated
    effective dimension) agrees within 25 %: in distribution, not draw for draw (the λ schedules
    differ: halving from nκ² here, DPPy's ⌈log n⌉ geometric levels from n)."""
    pytest.importorskip("dppy")
    from dppy.bless import bless, estimate_rls_bless
    from scipy.stats import spearmanr

    X = uneven()
    exact = np.minimum(1.0, exact_rls(X, lam))

    def gram(A, B=None):
        B = A if B is None else B
        a, b = np.sum(A * A, axis=1), np.sum(B * B, axis=1)
        return np.exp(-GAMMA * np.maximum(a[:, None] + b[None, :] - 2.0 * A @ B.T, 0.0))

    gram.diag = lambda A: np.ones(len(A))
    ours = np.mean(
        [BLESSSampler(lam=lam, q2=4.0).scores(X, rbf, random_state=s) for s in range(30)], axis=0
    )
    theirs = np.mean(
        [
            np.minimum(
                1.0, estimate_rls_bless(bless(X, gram, lam, 4.0, s, verbose=False), X, gram, lam)
            )
            for s in range(30)
        ],
        axis=0,
    )
    assert spearmanr(ours, theirs)[0] >= 0.95
    assert spearmanr(ours, exact)[0] >= 0.95 and spearmanr(theirs, exact)[0] >= 0.95
    for mean in (ours, theirs):
        assert np.all(mean >= exact / 2) and np.all(mean <= 2 * exact)
    assert abs(ours.sum() / theirs.sum() - 1.0) <= 0.25
