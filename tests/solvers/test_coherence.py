import itertools

import numpy as np
import pytest

from sparsekit.solvers.coherence import (
    babel,
    coherence_sparsity_bound,
    exact_recovery_condition,
    mp_rate,
    mutual_coherence,
    residual_bound,
    satisfies_coherence_condition,
    theorem5_rate,
    theorem6_factor,
)
from sparsekit.solvers.dictionaries import (
    gaussian_dictionary,
    make_sparse_coding_problem,
    sparse_signals,
)

from ._problems import unit_gaussian


def brute_babel(D, m):
    Dn = D / np.linalg.norm(D, axis=0)
    G = np.abs(Dn.T @ Dn)
    n = G.shape[0]
    best = 0.0
    for S in itertools.combinations(range(n), m):
        for j in set(range(n)) - set(S):
            best = max(best, G[list(S), j].sum())
    return best


def test_coherence_and_babel_against_brute_force():
    rng = np.random.default_rng(0)
    D = rng.standard_normal((5, 9)) * rng.uniform(0.5, 2, 9)  # non-unit atoms: normalised
    Dn = D / np.linalg.norm(D, axis=0)
    G = np.abs(Dn.T @ Dn) - np.eye(9)
    assert mutual_coherence(D) == pytest.approx(G.max(), rel=1e-12)
    assert mutual_coherence(D, block=2) == pytest.approx(G.max(), rel=1e-12)
    assert babel(D, 1) == pytest.approx(mutual_coherence(D), rel=1e-12)
    assert babel(D, 0) == 0.0
    for m in (2, 3, 4):
        assert babel(D, m) == pytest.approx(brute_babel(D, m), rel=1e-12)
    values = babel(D, [1, 2, 3, 4], block=4)
    np.testing.assert_allclose(values, [brute_babel(D, m) for m in (1, 2, 3, 4)], rtol=1e-12)
    mu = mutual_coherence(D)
    assert all(babel(D, m) <= m * mu + 1e-12 for m in range(1, 8))


def test_orthonormal_basis():
    Q, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((8, 8)))
    assert mutual_coherence(Q) < 1e-12
    assert exact_recovery_condition(Q, [0, 3]) < 1e-12


def test_erc_against_definition_and_tropp_bound():
    rng = np.random.default_rng(2)
    D = unit_gaussian(rng, 60, 90)
    S = [3, 17, 40]
    rest = [i for i in range(90) if i not in S]
    ref = np.abs(np.linalg.pinv(D[:, S]) @ D[:, rest]).sum(axis=0).max()
    assert exact_recovery_condition(D, S) == pytest.approx(ref, rel=1e-10)
    # Tropp 2004, Thm 3.5: ERC <= mu_1(m) / (1 - mu_1(m - 1))
    m = len(S)
    assert exact_recovery_condition(D, S) <= babel(D, m) / (1 - babel(D, m - 1)) + 1e-12


def test_sufficient_condition():
    assert coherence_sparsity_bound(0.058) == pytest.approx(0.5 * (1 / 0.058 + 1))
    assert satisfies_coherence_condition(8, 0.058)
    assert satisfies_coherence_condition(9, 0.058)  # 9 < 9.12
    assert not satisfies_coherence_condition(10, 0.058)
    # the condition implies the ERC for every support of that size
    rng = np.random.default_rng(3)
    D = unit_gaussian(rng, 200, 240)
    mu = mutual_coherence(D)
    m = int(np.ceil(coherence_sparsity_bound(mu))) - 1
    assert satisfies_coherence_condition(m, mu)
    for _ in range(5):
        assert exact_recovery_condition(D, rng.choice(240, m, replace=False)) < 1


def test_theorem_rates_match_the_thesis_experiments():
    # Cherfaoui 2022, PhD thesis, §5.4: mu = 0.058, m = 8, mu_1(7) <= 7 mu, beta = 8 ||x*||_1:
    # theta ~ 3.6e-3 and slope 1/2 ln(1 - theta) ~ -0.0018
    theta = theorem5_rate(8, 7 * 0.058, 1.0, 8.0)
    assert theta == pytest.approx((1 / 16) * ((1 - 0.406) / 8) * (7 / 8) ** 2, rel=1e-12)
    assert theta == pytest.approx(3.6e-3, rel=0.02)
    assert 0.5 * np.log(1 - theta) == pytest.approx(-0.0018, rel=0.02)
    tau = (2 * 1.0 / 10.0) * np.sqrt(4 / (1 - 0.1))
    assert theorem6_factor(4, 0.1, 1.0, 10.0) == pytest.approx(1 - (0.9 / 16) * (1 - tau) ** 2)
    assert mp_rate(4, 0.1) == pytest.approx(0.9 / 4)
    np.testing.assert_allclose(residual_bound(2.0, 0.19, 2), [2.0, 2.0 * 0.9, 2.0 * 0.81])


def test_theorem_rates_reject_out_of_hypothesis_values():
    with pytest.raises(ValueError, match="beta"):
        theorem5_rate(3, 0.1, 2.0, 2.0)
    with pytest.raises(ValueError, match="Theorem 6 needs beta"):
        theorem6_factor(4, 0.1, 1.0, 2.0)
    with pytest.raises(ValueError, match="babel_m1"):
        theorem5_rate(3, 1.0, 1.0, 2.0)
    with pytest.raises(ValueError, match="m must be"):
        theorem5_rate(0, 0.1, 1.0, 2.0)


def test_generators():
    D, Y, X = make_sparse_coding_problem(50, 80, 4, n_signals=6, random_state=0, dtype=np.float32)
    assert D.dtype == np.float32 and Y.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(D, axis=0), 1, rtol=1e-6)
    assert ((X != 0).sum(axis=0) == 4).all()
    np.testing.assert_allclose(Y, D @ X, rtol=1e-6)
    D2, _, X2 = make_sparse_coding_problem(50, 80, 4, n_signals=6, random_state=0, dtype=np.float32)
    np.testing.assert_array_equal(D, D2)
    np.testing.assert_array_equal(X, X2)
    assert gaussian_dictionary(10, 20, random_state=1).shape == (10, 20)
    with pytest.raises(ValueError, match="n_nonzero"):
        sparse_signals(D, 81)
    with pytest.raises(TypeError, match="dtype"):
        gaussian_dictionary(5, 5, dtype=np.int32)


def test_bad_inputs_of_utilities():
    D = unit_gaussian(np.random.default_rng(0), 6, 10)
    with pytest.raises(ValueError, match=r"m must be in \[0, n_atoms - 1\]"):
        babel(D, 10)
    with pytest.raises(ValueError, match="repeated"):
        exact_recovery_condition(D, [1, 1])
    with pytest.raises(ValueError, match="support indices"):
        exact_recovery_condition(D, [0, 10])
    bad = D.copy()
    bad[:, 4] = 0
    with pytest.raises(ValueError, match="zero column.*4"):
        mutual_coherence(bad)
    with pytest.raises(ValueError, match="at least 2 atoms"):
        mutual_coherence(D[:, :1])


def test_orthonormal_dictionary_has_unbounded_recovery_sparsity():
    D = np.eye(6)
    assert mutual_coherence(D) == 0.0
    assert coherence_sparsity_bound(0.0) == np.inf
    assert satisfies_coherence_condition(6, 0.0)
    with pytest.raises(ValueError, match="mu must be >= 0"):
        coherence_sparsity_bound(-0.1)
