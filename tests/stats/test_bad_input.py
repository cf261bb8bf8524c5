"""Clear errors for bad input to the MMD estimators and tests."""

import numpy as np
import pytest

from sparsekit import UnknownComponentError
from sparsekit.stats import (
    NystromMMD,
    mmd2_biased,
    mmd2_block,
    mmd2_linear,
    mmd2_nystrom,
    mmd2_rff,
    mmd2_unbiased,
    permutation_test,
    three_sample_error,
    three_sample_test,
)

from .conftest import random_graphs

ESTIMATORS = [mmd2_biased, mmd2_unbiased, mmd2_linear, mmd2_block, mmd2_rff, mmd2_nystrom]


@pytest.fixture
def XY(rng):
    return rng.normal(size=(20, 3)), rng.normal(size=(25, 3))


@pytest.mark.parametrize("f", ESTIMATORS)
def test_different_feature_counts(f, rng):
    with pytest.raises(ValueError, match="X has 3 features but Y has 4"):
        f(rng.normal(size=(10, 3)), rng.normal(size=(10, 4)))


@pytest.mark.parametrize("f", ESTIMATORS)
def test_empty_samples(f, rng):
    with pytest.raises(ValueError, match="Y is empty"):
        f(rng.normal(size=(10, 3)), np.empty((0, 3)))
    if f is not mmd2_rff:  # (graph kernels have no random features: tested below)
        with pytest.raises(ValueError, match="Y is empty"):
            f(random_graphs(rng, 3, 0.5), [], "shortest-path")


@pytest.mark.parametrize("lam", [0.0, -1.0, np.nan])
def test_lam_must_be_positive(XY, lam):
    with pytest.raises(ValueError, match="lam must be"):
        mmd2_nystrom(*XY, lam=lam)
    with pytest.raises(ValueError, match="lam must be"):
        permutation_test(*XY, lam=lam)


@pytest.mark.parametrize("f", ESTIMATORS)
def test_vector_kernel_given_graphs(f, rng):
    with pytest.raises(TypeError, match="takes vectors .* use a graph kernel"):
        f(random_graphs(rng, 5, 0.5), random_graphs(rng, 5, 0.5), "rbf")


@pytest.mark.parametrize("f", [mmd2_biased, mmd2_nystrom, mmd2_block])
def test_graph_kernel_given_vectors(f, XY):
    with pytest.raises(TypeError, match="takes graphs .* use a vector kernel"):
        f(*XY, "shortest-path")


def test_rff_without_random_features(rng):
    G1, G2 = random_graphs(rng, 5, 0.5), random_graphs(rng, 5, 0.5)
    for call in (
        lambda: mmd2_rff(G1, G2, "shortest-path"),
        lambda: permutation_test(G1, G2, "rff", "shortest-path"),
        lambda: three_sample_test(G1, G2, G1, "rff", "shortest-path"),
        lambda: mmd2_rff(np.ones((3, 2)), np.zeros((3, 2)), "linear"),
    ):
        with pytest.raises(ValueError, match="no random Fourier features.*Nyström"):
            call()


def test_unknown_kernel_and_sampler_names(XY):
    with pytest.raises(UnknownComponentError, match="rbf"):
        mmd2_biased(*XY, "rbff")
    with pytest.raises(UnknownComponentError, match="uniform"):
        mmd2_nystrom(*XY, sampler="unifrom")
    with pytest.raises(ValueError, match="nystrom"):
        three_sample_test(*XY, XY[0], method="nystrm")


def test_other_bad_arguments(XY, rng):
    X, Y = XY
    with pytest.raises(ValueError, match="at least two points"):
        mmd2_unbiased(X[:1], Y)
    with pytest.raises(ValueError, match="block_size=30 is larger"):
        mmd2_block(X, Y, block_size=30)
    with pytest.raises(ValueError, match="n_landmarks=46 is larger"):
        mmd2_nystrom(X, Y, n_landmarks=46)
    with pytest.raises(ValueError, match="contains NaN"):
        mmd2_biased(np.full((3, 3), np.nan), Y)
    with pytest.raises(TypeError, match="takes no option"):
        three_sample_test(X, Y, X, "exact", n_landmarks=3)
    with pytest.raises(ValueError, match="n_permutations must be >= 1"):
        permutation_test(X, Y, n_permutations=0)
    with pytest.raises(ValueError, match="not fitted|NystromMMD is not fitted"):
        NystromMMD().mmd2(0, 1)
    with pytest.raises(ValueError, match="j=2 is not a fitted sample"):
        NystromMMD().fit(X, Y).mmd2(0, 2)
    with pytest.raises(TypeError, match="kernel_params can only be given with a kernel name"):
        from sparsekit import get_kernel

        mmd2_biased(X, Y, get_kernel("rbf"), kernel_params={"gamma": 1.0})
    with pytest.raises(ValueError, match="n_repetitions must be"):
        three_sample_error(lambda n, r: X, lambda n, r: Y, [5], n_repetitions=0)
