"""Drawing modes, landmark records, and the Bernoulli rule's guarantee (Theorem 1)."""

import numpy as np
import pytest
from scipy.sparse.linalg import LinearOperator, eigsh
from threadpoolctl import threadpool_limits

import sparsekit
from sparsekit.samplers import _draw
from sparsekit.samplers.rls import (
    DACRLSSampler,
    ExactRLSSampler,
)

from .conftest import clustered, ridge_leverage_scores

ALL = ["uniform", "diagonal", "rls", "two-pass-rls", "dac-rls", "recursive-rls", "greedy-trace"]


@pytest.mark.parametrize("name", ALL)
def test_every_sampler_returns_valid_landmarks(name, dtype, X_small):
    X = X_small.astype(dtype)
    kernel = sparsekit.get_kernel("rbf", gamma=0.3)
    sampler = sparsekit.get_sampler(name)
    lm = sampler.sample(X, kernel, 15, random_state=0)
    assert len(lm) == 15 and lm.indices.dtype == np.int64 and lm.weights.dtype == np.float64
    assert len(np.unique(lm.indices)) == 15
    assert lm.points.dtype == dtype
    np.testing.assert_array_equal(lm.points, X[lm.indices])
    again = sampler.sample(X, kernel, 15, random_state=0)
    np.testing.assert_array_equal(again.indices, lm.indices)


@pytest.mark.parametrize("name", ["diagonal", "rls", "two-pass-rls", "dac-rls", "recursive-rls"])
def test_score_samplers_keep_the_input_dtype(name, X_small):
    kernel = sparsekit.get_kernel("rbf", gamma=0.3)
    scores = sparsekit.get_sampler(name).scores(X_small.astype(np.float32), kernel, random_state=0)
    assert scores.dtype == np.float32 and scores.shape == (len(X_small),)
    # the same scores as from float64 data, to float32 accuracy of the kernel values
    want = sparsekit.get_sampler(name).scores(X_small, kernel, random_state=0)
    assert want.dtype == np.float64
    np.testing.assert_allclose(scores, want, rtol=0, atol=2e-5)


def test_fixed_size_draw_follows_the_scores():
    scores = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    rng = np.random.default_rng(0)
    counts = np.bincount([_draw.fixed_size(scores, 1, rng)[0][0] for _ in range(6000)], minlength=5)
    np.testing.assert_allclose(counts / 6000, scores / scores.sum(), atol=0.02)
    idx, w = _draw.fixed_size(scores, 4, rng)
    np.testing.assert_array_equal(idx, [1, 2, 3, 4])  # zero-score point never drawn
    idx, _ = _draw.fixed_size(scores, 5, rng)  # ... unless nothing else is left
    np.testing.assert_array_equal(idx, np.arange(5))


def test_second_draw_without_replacement_matches_successive_draws():
    # P(second = j | first = i) = q_j / (1 - q_i): check the pair frequencies for s = 2
    q = np.array([0.5, 0.3, 0.2])
    rng = np.random.default_rng(1)
    pairs = np.zeros(3)
    for _ in range(6000):
        idx, _ = _draw.fixed_size(q, 2, rng)
        pairs[3 - idx.sum()] += 1  # index left out
    out_prob = [
        sum(q[i] * q[j] / (1 - q[i]) for i in range(3) for j in range(3) if len({i, j, k}) == 3)
        for k in range(3)
    ]
    np.testing.assert_allclose(pairs / 6000, out_prob, atol=0.02)


def test_bernoulli_probabilities_follow_algorithm_3():
    lev = np.array([0.001, 0.01, 0.05, 0.5])
    rho = 0.2
    want = np.minimum(1.0, 16 * lev * np.log(lev.sum() / rho))
    np.testing.assert_allclose(_draw.bernoulli_probabilities(lev, rho), want)
    rng = np.random.default_rng(0)
    hits = np.zeros(4)
    for _ in range(4000):
        idx, w = _draw.bernoulli(lev, rho, rng)
        hits[idx] += 1
        np.testing.assert_allclose(w, 1.0 / want[idx])
    np.testing.assert_allclose(hits / 4000, want, atol=0.03)


def test_uniform_with_replacement_repeats_and_without_does_not():
    X = clustered(6)
    kernel = sparsekit.get_kernel("linear")
    rep = [
        sparsekit.get_sampler("uniform", replace=True).sample(X, kernel, 6, random_state=s).indices
        for s in range(10)
    ]
    assert any(len(np.unique(r)) < 6 for r in rep)
    norep = sparsekit.get_sampler("uniform").sample(X, kernel, 6, random_state=0).indices
    np.testing.assert_array_equal(norep, np.arange(6))


def test_uniform_with_replacement_draws_every_index_equally_often():
    """With replacement each index has probability 1/n per draw (Williams & Seeger 2000):
    the counts over many seeded draws match n uniform cells (loose binomial bound, 6 sd)."""
    X = clustered(4)
    kernel = sparsekit.get_kernel("linear")
    sampler = sparsekit.get_sampler("uniform", replace=True)
    draws = np.concatenate(
        [sampler.sample(X, kernel, 4, random_state=s).indices for s in range(500)]
    )
    counts = np.bincount(draws, minlength=4)
    assert counts.size == 4
    expected = draws.size / 4
    assert np.all(np.abs(counts - expected) < 6 * np.sqrt(expected * 0.75))


def test_diagonal_sampler_draws_proportionally_to_the_diagonal():
    X = np.array([[0.5], [1.0], [2.0], [3.0]])
    kernel = sparsekit.get_kernel("linear")  # k_ii = x_i²
    sampler = sparsekit.get_sampler("diagonal")
    counts = np.bincount(
        [sampler.sample(X, kernel, 1, random_state=s).indices[0] for s in range(3000)], minlength=4
    )
    p = X[:, 0] ** 2 / np.sum(X[:, 0] ** 2)
    np.testing.assert_allclose(counts / 3000, p, atol=0.03)


def _blob_and_isolated_points(n, n_isolated, seed=0):
    """A tight blob (one large eigenvalue, two near 1/2) and isolated points 10 apart."""
    rng = np.random.default_rng(seed)
    blob = 0.02 * rng.standard_normal((n - n_isolated, 2))
    isolated = np.zeros((n_isolated, 2))
    isolated[:, 0] = 10.0 * np.arange(1, n_isolated + 1)
    return np.vstack([blob, isolated])


def _top_eigenvalue_of_residual(K, S):
    """Largest eigenvalue of K − K̂, K̂ = K_{X,S} K_S⁺ K_{S,X} (Lanczos, no n×n K̂ formed)."""
    w, V = np.linalg.eigh(K[np.ix_(S, S)])
    keep = w > 1e-10 * w[-1]
    F = K[:, S] @ (V[:, keep] / np.sqrt(w[keep]))  # K̂ = F Fᵀ
    op = LinearOperator(K.shape, matvec=lambda v: K @ v - F @ (F.T @ v), dtype=np.float64)
    return float(eigsh(op, k=1, which="LA", return_eigenvectors=False, tol=1e-8)[0])


@pytest.mark.parametrize(
    "name, params, max_fraction",
    [
        ("dac-rls", {"block_size": 300}, 0.35),
        ("rls", {}, 0.2),
        ("recursive-rls", {"level_size": 40}, 0.45),
    ],
)
def test_bernoulli_rule_sandwiches_the_gram_matrix_with_few_landmarks(name, params, max_fraction):
    """K − λI ⪯ K̂ in at least (1 − ρ) of the seeds and |S| ≤ 32 log(Σl/ρ) Σl (Theorem 1),
    while E|S| is a small fraction of n.

    Each isolated point has l_i = 1/(1 + λ): missing one leaves K − K̂ an eigenvalue 1 > λ, so
    a subset drawn with too small probabilities fails, as uniform subsets of the same size do.
    """
    n, lam, rho, n_seeds = 600, 0.5, 0.1, 10
    X = _blob_and_isolated_points(n, 2)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    K = kernel(X)
    assert np.linalg.norm(K, 2) > 100 * lam  # the bound λ is not vacuous
    sampler = sparsekit.get_sampler(name, lam=lam, mode="bernoulli", rho=rho, **params)
    good, sizes = 0, []
    with threadpool_limits(1, user_api="blas"):  # many small products: threads only wait
        for seed in range(n_seeds):
            S = sampler.sample(X, kernel, None, random_state=seed).indices
            good += _top_eigenvalue_of_residual(K, S) <= lam
            scores = sampler.scores(X, kernel, random_state=seed)
            assert len(S) <= 32 * np.log(scores.sum() / rho) * scores.sum()
            sizes.append(len(S))
        # the check can fail: uniform subsets of as many points usually miss an isolated point
        uniform = [
            np.random.default_rng(seed).choice(n, min(sizes), replace=False) for seed in range(5)
        ]
        assert sum(_top_eigenvalue_of_residual(K, U) > lam for U in uniform) >= 4
    assert good >= (1 - rho) * n_seeds
    assert np.mean(sizes) < max_fraction * n  # the rule does compress


def test_bernoulli_cap_keeps_n_landmarks_and_warns(X_small):
    kernel = sparsekit.get_kernel("rbf", gamma=0.3)
    sampler = DACRLSSampler(lam=0.01, mode="bernoulli")
    with pytest.warns(UserWarning, match="Theorem 1"):
        lm = sampler.sample(X_small, kernel, 10, random_state=0)
    assert len(lm) == 10


def test_rls_samplers_find_a_small_far_cluster_that_uniform_misses(rng):
    # 10 of 300 points in a far cluster: leverage scores favour them, while uniform sampling
    # (12 landmarks) misses them about 2/3 of the time
    X = np.vstack([rng.standard_normal((290, 2)) * 0.5, 8 + 0.1 * rng.standard_normal((10, 2))])
    kernel = sparsekit.get_kernel("rbf", gamma=1.0)
    K = kernel(X)

    def error(idx):
        F = K[:, idx] @ np.linalg.pinv(K[np.ix_(idx, idx)], hermitian=True) @ K[idx]
        return np.linalg.norm(K - F)

    found, errs = {}, {}
    for name, kw in [
        ("uniform", {}),
        ("rls", {"lam": 1.0}),
        ("dac-rls", {"lam": 1.0}),
        ("recursive-rls", {"lam": 1.0}),
    ]:
        draws = [
            sparsekit.get_sampler(name, **kw).sample(X, kernel, 12, random_state=s).indices
            for s in range(10)
        ]
        found[name] = np.mean([np.any(d >= 290) for d in draws])
        errs[name] = np.mean([error(d) for d in draws])
    assert found["uniform"] < 0.7
    assert min(found["rls"], found["dac-rls"], found["recursive-rls"]) > found["uniform"]
    assert errs["dac-rls"] < errs["uniform"]


def test_fixed_size_weights_are_inverse_first_order_inclusion_probabilities():
    # weight_i = 1 / min(1, s q_i), q = l / Σ l (the first-order inclusion probability)
    X = clustered(40, d=3, seed=5)
    kernel = sparsekit.get_kernel("rbf", gamma=0.7)
    lam, s = 0.05, 6
    lev = ridge_leverage_scores(kernel(X), lam)
    lm = ExactRLSSampler(lam=lam).sample(X, kernel, s, random_state=2)
    want = 1.0 / np.minimum(1.0, s * lev[lm.indices] / lev.sum())
    np.testing.assert_allclose(lm.weights, want, rtol=1e-8)
    assert np.all(lm.weights > 1.0)  # every point here has s q_i < 1
