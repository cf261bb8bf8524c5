"""Ridge leverage scores: oracles from Cherfaoui 2022, PhD thesis, §2.1.3, §3.1.2 and §3.2.

Exact (eqs. 2.1–2.4), DAC (Corollaries 1–2), two-pass and recursive scores.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import spearmanr

import sparsekit
from sparsekit.samplers.recursive import RecursiveRLSSampler
from sparsekit.samplers.rls import (
    DACRLSSampler,
    ExactRLSSampler,
    TwoPassRLSSampler,
)

from .conftest import clustered, ridge_leverage_scores
from .test_parallel_and_adaptive import _reference_recursive


def _exact_three_ways(K, lam):
    n = K.shape[0]
    l21 = np.diag(K @ np.linalg.inv(K + lam * np.eye(n)))  # (2.1)
    w, U = np.linalg.eigh(K)
    w = np.clip(w, 0.0, None)
    l22 = (U**2 * (w / (w + lam))).sum(axis=1)  # (2.2)
    l23 = 1.0 - lam * np.diag(np.linalg.inv(K + lam * np.eye(n)))  # (2.3)
    return l21, l22, l23, float(np.sum(w / (w + lam)))


@pytest.mark.parametrize(
    "kernel_name,params", [("rbf", {"gamma": 0.3}), ("linear", {}), ("polynomial", {"degree": 2})]
)
@pytest.mark.parametrize("lam", [1e-2, 0.5, 4.0])
def test_exact_rls_matches_the_three_formulas_and_deff(kernel_name, params, lam, X_small):
    kernel = sparsekit.get_kernel(kernel_name, **params)
    K = kernel(X_small)
    l21, l22, l23, deff = _exact_three_ways(K, lam)
    sampler = ExactRLSSampler(lam=lam)
    scores = sampler.scores(X_small, kernel)
    np.testing.assert_allclose(l21, l22, atol=1e-9)
    np.testing.assert_allclose(l22, l23, atol=1e-9)
    np.testing.assert_allclose(scores, l23, atol=1e-10)
    assert sampler.effective_dimension(X_small, kernel) == pytest.approx(deff, rel=1e-9)
    assert np.all((scores >= 0) & (scores < 1))


def test_effective_dimension_grows_as_lambda_shrinks(X_small):
    kernel = sparsekit.get_kernel("rbf", gamma=0.3)
    deffs = [
        ExactRLSSampler(lam=lam).effective_dimension(X_small, kernel) for lam in (4, 1, 0.1, 0.01)
    ]
    assert np.all(np.diff(deffs) > 0)


def _random_partition(n, rng):
    perm = rng.permutation(n)
    cuts = np.sort(rng.choice(np.arange(1, n), size=int(rng.integers(1, 8)), replace=False))
    return np.split(perm, cuts)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), lam=st.sampled_from([1e-3, 0.1, 1.0, 10.0]))
def test_dac_overestimates_exact_for_any_partition(seed, lam):
    X = clustered(60, seed=seed % 7)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    exact = ExactRLSSampler(lam=lam).scores(X, kernel)
    blocks = _random_partition(60, np.random.default_rng(seed))
    dac = DACRLSSampler(lam=lam, n_jobs=1).scores_for_partition(X, kernel, blocks)
    assert np.all(dac >= exact - 1e-10)  # Corollary 1


def test_dac_one_block_equals_exact_and_singletons_give_kii_over_kii_plus_lambda(X_small):
    kernel = sparsekit.get_kernel("polynomial", degree=2, gamma=0.2)  # non-constant diagonal
    lam = 0.7
    n = len(X_small)
    exact = ExactRLSSampler(lam=lam).scores(X_small, kernel)
    one = DACRLSSampler(lam=lam).scores_for_partition(X_small, kernel, [np.arange(n)[::-1]])
    np.testing.assert_allclose(one, exact, atol=1e-12)
    assert np.allclose(
        DACRLSSampler(lam=lam, block_size=n).scores(X_small, kernel), exact, atol=1e-12
    )
    kii = kernel.diag(X_small)
    singles = DACRLSSampler(lam=lam, block_size=1).scores(X_small, kernel, random_state=0)
    np.testing.assert_allclose(singles, kii / (kii + lam), rtol=1e-12)


def test_refining_a_partition_never_lowers_a_score():
    X = clustered(96, seed=2)
    kernel = sparsekit.get_kernel("rbf", gamma=0.4)
    rng = np.random.default_rng(0)
    coarse = np.array_split(rng.permutation(96), 2)
    fine = [part for block in coarse for part in np.array_split(block, 3)]
    finer = [part for block in fine for part in np.array_split(block, 2)]
    sampler = DACRLSSampler(lam=0.2)
    s1, s2, s3 = (sampler.scores_for_partition(X, kernel, p) for p in (coarse, fine, finer))
    assert np.all(s2 >= s1 - 1e-12) and np.all(s3 >= s2 - 1e-12)
    assert np.any(s3 > s1 + 1e-6)  # the refinement actually changes something


@pytest.mark.parametrize("lam", [0.05, 1.0])
def test_sum_of_dac_scores_obeys_corollary_2(lam):
    X = clustered(150, seed=5)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    K = kernel(X)
    w = np.linalg.eigvalsh(K)
    zmin, zmax = max(w[0], 0.0), w[-1]
    beta = (zmax + lam) / (zmin + lam)
    alpha = (zmin + zmax + 2 * lam) ** 2 / (4 * (zmin + lam) * (zmax + lam))
    deff = float(np.sum(np.clip(w, 0, None) / (np.clip(w, 0, None) + lam)))
    n = len(X)
    for seed in range(5):
        total = DACRLSSampler(lam=lam, block_size=13).scores(X, kernel, random_state=seed).sum()
        assert total <= n * (1 - 1 / alpha) + deff / alpha + 1e-9
        assert total <= deff + n * (1 - 1 / beta) + 1e-9
        assert total >= deff - 1e-9


def test_dac_parallel_equals_serial_and_keeps_dtype():
    X = clustered(400, seed=1)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    a = DACRLSSampler(lam=0.3, n_jobs=1).scores(X, kernel, random_state=4)
    b = DACRLSSampler(lam=0.3, n_jobs=2).scores(X, kernel, random_state=4)
    np.testing.assert_array_equal(a, b)
    s32 = DACRLSSampler(lam=0.3, n_jobs=2).scores(X.astype(np.float32), kernel, random_state=4)
    assert s32.dtype == np.float32
    np.testing.assert_allclose(s32, a, atol=2e-4)


def test_two_pass_scores_underestimate_exact_and_equal_it_with_every_point():
    X = clustered(150, seed=4)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    lam = 0.3
    exact = ExactRLSSampler(lam=lam).scores(X, kernel)
    for seed in range(3):
        approx = TwoPassRLSSampler(lam=lam, n_first=30).scores(X, kernel, random_state=seed)
        assert np.all(approx <= exact + 1e-9)  # K̃ ⪯ K and A ↦ A(A+λI)⁻¹ is operator monotone
        assert approx.sum() > 0.5 * exact.sum()
    full = TwoPassRLSSampler(lam=lam, n_first=150).scores(X, kernel, random_state=0)
    np.testing.assert_allclose(full, exact, atol=1e-7)


@pytest.mark.parametrize("row_bytes", [None, 8 * 20 * 7])
def test_two_pass_matches_the_dense_woodbury_formula(monkeypatch, row_bytes):
    if row_bytes is not None:  # 7 rows per block: the blocks of both passes go to 2 threads
        from sparsekit.samplers import rls

        monkeypatch.setattr(rls, "ROW_BLOCK_BYTES", row_bytes)
    X = clustered(80, seed=6)
    kernel = sparsekit.get_kernel("laplacian", gamma=0.3)
    lam, m = 0.2, 20
    got = TwoPassRLSSampler(lam=lam, n_first=m, n_jobs=2).scores(X, kernel, random_state=7)
    first = np.sort(np.random.default_rng(7).choice(80, m, replace=False))
    K = kernel(X)
    Kt = (
        K[:, first]
        @ np.linalg.pinv(K[np.ix_(first, first)], rcond=1e-12, hermitian=True)
        @ K[first]
    )
    want = np.diag(Kt @ np.linalg.inv(Kt + lam * np.eye(80)))
    np.testing.assert_allclose(got, want, atol=1e-8)


def test_recursive_scores_track_exact_scores_on_2000_points():
    X = clustered(2000, d=5, n_clusters=10, spread=0.5, seed=11)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    lam = 0.5
    exact = ExactRLSSampler(lam=lam).scores(X, kernel)
    rec = RecursiveRLSSampler(lam=lam, level_size=200).scores(X, kernel, random_state=0)
    rho = spearmanr(rec, exact).correlation
    assert rho > 0.8, rho


def test_recursive_adaptive_mode_and_parallel_rows_are_deterministic():
    X = clustered(900, seed=8)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    a = RecursiveRLSSampler(n_jobs=1).sample(X, kernel, 40, random_state=3)
    b = RecursiveRLSSampler(n_jobs=2).sample(X, kernel, 40, random_state=3)
    np.testing.assert_array_equal(a.indices, b.indices)
    assert len(np.unique(a.indices)) == 40
    # the default (adaptive λ, levels down to ⌈√n⌉ = 30) equals the dense reference
    scores = RecursiveRLSSampler().scores(X, kernel, random_state=0)
    np.testing.assert_allclose(
        scores, _reference_recursive(kernel(X), 30, "adaptive", 0), rtol=1e-7, atol=1e-9
    )


def test_inverse_mean_norm_rule_equals_its_number(X_small):
    kernel = sparsekit.get_kernel("rbf", gamma=0.3)
    lam = 1.0 / np.mean(np.linalg.norm(X_small, axis=1))
    by_rule = ExactRLSSampler(lam="inverse-mean-norm").scores(X_small, kernel)
    by_value = ExactRLSSampler(lam=lam).scores(X_small, kernel)
    np.testing.assert_allclose(by_rule, by_value, rtol=1e-12)
    override = ExactRLSSampler(lam=5.0).scores(X_small, kernel, lam="inverse_mean_norm")
    np.testing.assert_allclose(override, by_value, rtol=1e-12)


def test_effective_dimension_takes_the_lam_override(X_small):
    """d_eff = Σ_j ς_j / (ς_j + λ) (eq. 2.4) from NumPy's ``eigvalsh`` of the Gram matrix, for a
    ``lam`` given to the call, not the sampler's own λ."""
    kernel = sparsekit.get_kernel("rbf", gamma=0.3)
    w = np.clip(np.linalg.eigvalsh(kernel(X_small)), 0.0, None)
    deff = ExactRLSSampler(lam=4.0).effective_dimension(X_small, kernel, lam=0.05)
    np.testing.assert_allclose(deff, np.sum(w / (w + 0.05)), rtol=1e-8)


def test_recursive_scores_with_one_level_are_capped_overestimates(X_small):
    """With one level (s >= n/2) the dictionary is a uniform half of the data with weights 1,
    so (1/λ)(k_ii − K_iS (K_S + λI)⁻¹ K_Si) ≥ [K (K + λI)⁻¹]_ii (a sub-dictionary leaves a
    larger ridge residual); oracle: the exact scores from NumPy ``solve``. With a small λ the
    points outside the dictionary have estimates above 1, which the scores cap at 1."""
    kernel = sparsekit.get_kernel("rbf", gamma=0.3)
    K = kernel(X_small)
    n, lam = K.shape[0], 1e-3
    exact = np.diag(np.linalg.solve(K + lam * np.eye(n), K))
    rec = RecursiveRLSSampler(lam=lam, level_size=n).scores(X_small, kernel, random_state=0)
    assert np.all(rec <= 1.0)
    assert np.all(rec >= exact - 1e-9)


@pytest.mark.parametrize("n", [100, 120])  # a perfect square and not
def test_two_pass_default_first_pass_has_ceil_sqrt_n_points(n):
    # l̂_i = [K̃ (K̃ + λI)⁻¹]_ii with K̃ = K_{X,S₀} K_{S₀}⁺ K_{S₀,X} and |S₀| = ⌈√n⌉ points
    # drawn by rng.choice(n, m, replace=False)
    X = clustered(n, d=3, seed=7)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    K = kernel(X)
    lam = 0.1
    got = TwoPassRLSSampler(lam=lam).scores(X, kernel, random_state=4)
    m = math.ceil(math.sqrt(n))
    S = np.sort(np.random.default_rng(4).choice(n, m, replace=False))
    Kt = K[:, S] @ np.linalg.pinv(K[np.ix_(S, S)], hermitian=True) @ K[S]
    want = ridge_leverage_scores(Kt, lam)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("n", [100, 120])
def test_dac_default_blocks_have_ceil_sqrt_n_points(n):
    # the partition: a permutation cut into consecutive chunks of m = ⌈√n⌉
    X = clustered(n, d=3, seed=8)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    K = kernel(X)
    lam = 0.2
    got = DACRLSSampler(lam=lam, n_jobs=1).scores(X, kernel, random_state=6)
    m = math.ceil(math.sqrt(n))
    perm = np.random.default_rng(6).permutation(n)
    want = np.empty(n)
    for a in range(0, n, m):
        b = perm[a : a + m]
        want[b] = ridge_leverage_scores(K[np.ix_(b, b)], lam)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
