"""Bad input gets a clear ValueError / TypeError naming the argument."""

import numpy as np
import pytest

import sparsekit
from sparsekit.exceptions import NotPositiveDefiniteError, UnknownComponentError
from sparsekit.kernels.base import CallableKernel
from sparsekit.samplers.rls import DACRLSSampler

ALL = ["uniform", "diagonal", "rls", "two-pass-rls", "dac-rls", "recursive-rls", "greedy-trace"]


@pytest.fixture
def rbf():
    return sparsekit.get_kernel("rbf", gamma=0.5)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("bad", [0, -3, 31])
def test_n_landmarks_out_of_range(name, bad, X_small, rbf):
    X = X_small[:30]
    with pytest.raises(ValueError, match=r"n_landmarks must be in \[1, n_samples=30\]"):
        sparsekit.get_sampler(name).sample(X, rbf, bad)


@pytest.mark.parametrize("bad", [2.5, "3", None, True])
def test_n_landmarks_wrong_type(bad, X_small, rbf):
    with pytest.raises(TypeError, match="n_landmarks must be an integer"):
        sparsekit.get_sampler("dac-rls").sample(X_small, rbf, bad)


@pytest.mark.parametrize("name", ["rls", "two-pass-rls", "dac-rls", "recursive-rls"])
@pytest.mark.parametrize("lam", [0, -1.0, float("nan")])
def test_lambda_must_be_positive(name, lam, X_small, rbf):
    with pytest.raises(ValueError, match="lam must be > 0"):
        sparsekit.get_sampler(name, lam=lam)
    sampler = sparsekit.get_sampler(name, lam=1.0)
    with pytest.raises(ValueError, match="lam must be > 0"):
        sampler.scores(X_small, rbf, lam=lam)
    sampler.set_params(lam=lam)
    with pytest.raises(ValueError, match="lam must be > 0"):
        sampler.sample(X_small, rbf, 5)


def test_lambda_wrong_type_and_unknown_rules(X_small, rbf):
    with pytest.raises(TypeError, match="lam must be a positive number"):
        sparsekit.get_sampler("rls", lam=[1.0])
    with pytest.raises(ValueError, match="unknown lam rule 'inverse-mean'.*inverse-mean-norm"):
        sparsekit.get_sampler("dac-rls", lam="inverse-mean")
    with pytest.raises(ValueError, match="unknown lam rule 'adaptive'"):
        sparsekit.get_sampler("dac-rls", lam="adaptive")  # only recursive-rls adapts λ
    assert sparsekit.get_sampler("recursive-rls", lam="adaptive").lam == "adaptive"
    with pytest.raises(ValueError, match="non-zero mean norm"):
        sparsekit.get_sampler("rls", lam="inverse-mean-norm").scores(np.zeros((5, 2)), rbf)


def test_unknown_sampler_mode_and_other_options(X_small, rbf):
    with pytest.raises(UnknownComponentError, match="Did you mean 'dac-rls'.*Available samplers"):
        sparsekit.get_sampler("dac-rsl")
    with pytest.raises(ValueError, match="unknown mode 'bernouli'"):
        sparsekit.get_sampler("rls", mode="bernouli")
    with pytest.raises(ValueError, match="rho must be < 1"):
        sparsekit.get_sampler("dac-rls", mode="bernoulli", rho=1.0)
    with pytest.raises(ValueError, match="two-pass RLS scores are under-estimates"):
        sparsekit.get_sampler("two-pass-rls", mode="bernoulli")
    with pytest.raises(ValueError, match="over-estimates"):
        sparsekit.get_sampler("diagonal", mode="bernoulli")
    with pytest.raises(ValueError, match="block_size must be >= 1"):
        sparsekit.get_sampler("dac-rls", block_size=0)
    with pytest.raises(ValueError, match="n_jobs must be >= 1"):
        sparsekit.get_sampler("recursive-rls", n_jobs=0)
    with pytest.raises(ValueError, match="n_features must be even"):
        sparsekit.get_sampler("greedy-trace", n_features=33)
    with pytest.raises(TypeError, match="replace must be True or False"):
        sparsekit.get_sampler("uniform", replace="yes").sample(X_small, rbf, 3)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_data(name, bad, X_small, rbf):
    X = X_small.copy()
    X[3, 1] = bad
    with pytest.raises(ValueError, match="X contains (NaN|inf)"):
        sparsekit.get_sampler(name).sample(X, rbf, 5)


def test_shape_empty_and_kernel_errors(rbf):
    sampler = sparsekit.get_sampler("dac-rls")
    with pytest.raises(ValueError, match="X must be 2-D"):
        sampler.sample(np.ones(10), rbf, 2)
    with pytest.raises(ValueError, match="X is empty"):
        sampler.sample(np.ones((0, 3)), rbf, 1)
    with pytest.raises(TypeError, match="kernel must be a sparsekit kernel object"):
        sampler.sample(np.ones((10, 3)), "rbf", 2)
    with pytest.raises(ValueError, match="partition|disjoint"):
        DACRLSSampler().scores_for_partition(np.ones((6, 2)), rbf, [[0, 1, 2], [2, 3, 4, 5]])


class _NegativeKernel:
    """Not positive semi-definite: K = -10 I."""

    name = "negative"
    accepts = "vectors"

    def prepare(self, X):
        return np.asarray(X, dtype=np.float64)

    def take(self, X, idx):
        return X[idx]

    def n_samples(self, X):
        return len(X)

    def __call__(self, X, Y=None):
        Y = X if Y is None else Y
        return -10.0 * (X[:, None, 0] == Y[None, :, 0]).astype(float)

    def diag(self, X):
        return -10.0 * np.ones(len(X))


@pytest.mark.parametrize("name", ["rls", "two-pass-rls", "dac-rls", "recursive-rls"])
def test_non_psd_kernel_is_reported(name):
    X = np.arange(12.0).reshape(6, 2)
    with pytest.raises(NotPositiveDefiniteError, match="not positive definite"):
        sparsekit.get_sampler(name, lam=1.0).sample(X, _NegativeKernel(), 2)
    with pytest.raises(ValueError, match="negative values"):
        sparsekit.get_sampler("diagonal").sample(X, _NegativeKernel(), 2)


def _sigmoid(A, B):
    """tanh(⟨a, b⟩ − 1): the sigmoid kernel, not positive semi-definite (Schölkopf & Smola,
    "Learning with Kernels", 2002, §4.6); negative on the diagonal for ‖x‖ < 1."""
    return np.tanh(A @ B.T - 1.0)


@pytest.mark.parametrize("lam", [1e-3, 0.5])
@pytest.mark.parametrize("name", ["rls", "two-pass-rls", "dac-rls", "recursive-rls"])
def test_every_rls_sampler_refuses_the_indefinite_sigmoid_kernel(name, lam):
    """Oracle: every diagonal entry of the Gram matrix is below -lam (the points lie in the
    unit ball), so K_S + lam*I is not positive definite for any subset S, whatever the
    sampler looks at; every RLS sampler refuses it as exact RLS does (two-pass RLS used to
    drop the negative eigenvalues in its pseudo-inverse and return landmarks)."""
    X = 0.1 * np.random.default_rng(0).normal(size=(60, 3))
    assert np.diag(_sigmoid(X, X)).max() < -lam
    kernel = CallableKernel(_sigmoid)
    for seed in range(3):
        with pytest.raises(NotPositiveDefiniteError, match="not positive definite"):
            sparsekit.get_sampler(name, lam=lam).sample(X, kernel, 5, random_state=seed)
