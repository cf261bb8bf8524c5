"""The whole RBF Gram of X from the strips of its upper triangle (``_sym_gram``, used from
``SYM_STRIPS_MIN_ROWS`` rows on) and the bandwidth rules (``bandwidth.py``), against outside
oracles: scikit-learn's ``rbf_kernel``, SciPy's ``pdist`` and brute force on small inputs."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import pdist
from sklearn.metrics import pairwise as skp

from sparsekit.kernels import RBFKernel, rbf
from sparsekit.kernels.bandwidth import gamma_from_rule

#: more rows than the strip path needs, and not a multiple of the strip height (256)
N_STRIPS = rbf.SYM_STRIPS_MIN_ROWS + 301


@pytest.fixture(scope="module")
def X_strips():
    return np.random.default_rng(7).normal(size=(N_STRIPS, 40))


def test_whole_gram_from_strips_equals_scikit_learn_exactly_symmetric(X_strips):
    """Every strip (the last, partial one included), its copy below the diagonal and the
    diagonal squares: scikit-learn's rbf_kernel to rounding, exactly symmetric (the squares on
    the diagonal are mirrored from their upper triangles), k(x_i, x_i) exactly 1."""
    K = RBFKernel(gamma=0.02)(X_strips)
    np.testing.assert_allclose(K, skp.rbf_kernel(X_strips, gamma=0.02), rtol=1e-9, atol=1e-14)
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_array_equal(np.diag(K), 1.0)


class _PositionDependentBlas:
    """NumPy, but ``matmul`` rounds the entries below the diagonal of each strip's square
    differently (relative 1e-12), as a BLAS whose order of summation depends on the position
    of an entry in its register tile may."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def matmul(a, b, out):
        np.matmul(a, b, out=out)
        out *= 1 + 1e-12 * np.tri(*out.shape, -1)
        return out


def test_strips_are_exactly_symmetric_whatever_the_blas_rounding(monkeypatch, X_strips):
    """k(x, z) = k(z, x): the Gram is exactly symmetric even where the products of a strip's
    diagonal square are not (each square is mirrored from its upper triangle), and still
    scikit-learn's values to rounding."""
    from sparsekit.kernels import _sym_gram

    monkeypatch.setattr(_sym_gram, "np", _PositionDependentBlas())
    K = RBFKernel(gamma=0.02)(X_strips)
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_allclose(K, skp.rbf_kernel(X_strips, gamma=0.02), rtol=1e-9, atol=1e-14)


def test_whole_gram_in_row_blocks_equals_scikit_learn():
    """``max_memory`` row blocks of the Gram of X with itself, each of more rows than the strip
    path needs: a block is no whole symmetric Gram (the strips do not apply to it), and the
    blocks give scikit-learn's values, k(x_i, x_i) exactly 1."""
    X = np.random.default_rng(8).normal(size=(2 * rbf.SYM_STRIPS_MIN_ROWS + 60, 4))
    rows = rbf.SYM_STRIPS_MIN_ROWS + 30
    K = RBFKernel(gamma=0.2)(X, max_memory=rows * len(X) * 8)
    np.testing.assert_allclose(K, skp.rbf_kernel(X, gamma=0.2), rtol=1e-9, atol=1e-14)
    np.testing.assert_array_equal(np.diag(K), 1.0)


def test_strips_of_float32_data_far_from_the_origin(X_strips):
    """float32 rows offset by 1000: the strips centre the data on its mean (distances are
    translation invariant) before ||x||^2 + ||z||^2 - 2 <x, z>; without it, or with a wrong
    mean, the cancellation costs every digit. Oracle: scikit-learn on the same float32 values
    in float64."""
    X = (X_strips[:, :3] + 1000.0).astype(np.float32)
    K = RBFKernel(gamma=0.3)(X)
    assert K.dtype == np.float32
    np.testing.assert_allclose(K, skp.rbf_kernel(X.astype(np.float64), gamma=0.3), atol=2e-4)


def test_strips_at_extreme_scales_use_the_rescaled_gamma(X_strips):
    """The mean-sq-dist rule is scale-equivariant: the strip-path Gram of X * 1e200 (and
    1e-200, whose gamma ~1e400 is no float64) equals scikit-learn's of X with the rule's gamma
    1 / (2 sigma^2), sigma^2 = (1 / n^2) sum_ij ||x_i - x_j||^2 (SciPy's pdist)."""
    X = X_strips[:2050, :5]
    sigma2 = 2 * (pdist(X) ** 2).sum() / len(X) ** 2
    want = skp.rbf_kernel(X, gamma=1 / (2 * sigma2))
    for scale in (1e200, 1e-200):
        got = RBFKernel(bandwidth="mean-sq-dist")(X * scale)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-14)


# -- bandwidth rules -----------------------------------------------------------------------------
def test_median_rule_with_an_even_number_of_pairs():
    """20 points, 190 pairs: the median of the distances is the mean of the two middle ones
    (SciPy's pdist and NumPy's median), not the root of the median of the squares."""
    X = np.random.default_rng(1).normal(size=(20, 3))
    med = np.median(pdist(X))
    assert gamma_from_rule(X, "median") == pytest.approx(1 / (2 * med**2), rel=1e-12)


def test_median_rule_reads_max_samples_points_drawn_without_replacement():
    """max_samples = 2 leaves one pair: gamma is 1 / (2 D_ij^2) for a pair of distinct rows
    (brute force over all pairs; with 20 points the full median, a mean of two distances,
    is none of them). max_samples = n - 1 leaves out one row: gamma is the rule on X without
    some row i (brute force over i), which a draw with replacement (a zero distance) misses."""
    X = np.random.default_rng(2).normal(size=(20, 3))
    pairs = 1 / (2 * pdist(X) ** 2)
    for seed in range(5):
        g = gamma_from_rule(X, "median", max_samples=2, random_state=seed)
        assert np.isclose(pairs, g, rtol=1e-12).any()
        g = gamma_from_rule(X, "median", max_samples=19, random_state=seed)
        left_out = [1 / (2 * np.median(pdist(np.delete(X, i, axis=0))) ** 2) for i in range(20)]
        assert np.isclose(left_out, g, rtol=1e-12).any()


def test_median_rule_subsample_follows_random_state():
    """Different seeds draw different subsamples (here of 2 points out of 20: 190 possible
    pairs); the same seed, as an int or a Generator, the same one."""
    X = np.random.default_rng(3).normal(size=(20, 3))
    draws = {gamma_from_rule(X, "median", max_samples=2, random_state=s) for s in range(8)}
    assert len(draws) > 1
    g = gamma_from_rule(X, "median", max_samples=2, random_state=5)
    assert g == gamma_from_rule(X, "median", max_samples=2, random_state=5)
    assert g == gamma_from_rule(X, "median", max_samples=2, random_state=np.random.default_rng(5))


@pytest.mark.parametrize("rule", ["median", "mean-sq-dist", "scale"])
@pytest.mark.parametrize("scale", [1.0, 1e-250, 1e250])
def test_rules_on_sparse_rows_equal_the_closed_forms(rule, scale):
    """CSR input, read without densifying: the same gamma as the closed forms on the dense
    rows (scale: 1 / (d Var X) as scikit-learn's gamma="scale"; mean-sq-dist:
    1 / (2 mean_ij ||x_i - x_j||^2); median: 1 / (2 median_{i<j} ||x_i - x_j||^2)), with
    gamma(c X) = gamma(X) / c^2 (checked on the exact (g, e) pair at extreme scales)."""
    from sparsekit.kernels.bandwidth import gamma_parts_from_rule

    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 6)) + 0.5
    X[rng.random(X.shape) < 0.5] = 0.0
    D = pdist(X)
    want = {
        "scale": 1 / (6 * X.var()),
        "mean-sq-dist": 1 / (2 * (2 * (D**2).sum() / 30**2)),
        "median": 1 / (2 * np.median(D) ** 2),
    }[rule]
    g, e = gamma_parts_from_rule(sp.csr_matrix(X * scale), rule)
    log2 = np.log2(g) - 2 * e
    assert log2 == pytest.approx(np.log2(want) - 2 * np.log2(scale), abs=1e-9)


def test_median_rule_refuses_data_where_most_points_coincide():
    """More than half of the pairs at distance 0: the median distance is 0 and no bandwidth
    follows from it; a ValueError names the cause (not a ZeroDivisionError)."""
    X = np.zeros((6, 2))
    X[0] = 1.0
    with pytest.raises(ValueError, match="median distance is 0"):
        gamma_from_rule(X, "median")
    with pytest.raises(ValueError, match="median distance is 0"):
        RBFKernel(bandwidth="median").fit(X)
