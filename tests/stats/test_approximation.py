"""sparsekit.stats.approximation_error against the residual of the Gram matrix formed whole."""

import numpy as np
import pytest

from sparsekit import Nystroem, get_kernel
from sparsekit.stats import approximation_error


@pytest.fixture(scope="module")
def fitted():
    X = np.random.default_rng(4).normal(size=(150, 3))
    ny = Nystroem("rbf", n_components=12, kernel_params={"gamma": 0.4}, random_state=0).fit(X)
    return X, ny


@pytest.mark.parametrize("norm", ["fro", "spectral", "trace"])
def test_the_three_norms_of_the_gram_residual(fitted, norm):
    X, ny = fitted
    K = get_kernel("rbf", gamma=0.4)(X)
    Z = ny.transform(X)
    R = K - Z @ Z.T
    expected = {
        "fro": np.linalg.norm(R),
        "spectral": np.abs(np.linalg.eigvalsh(R)).max(),
        "trace": np.trace(R),
    }[norm]
    reference = {"fro": np.linalg.norm(K), "spectral": np.linalg.norm(K, 2), "trace": np.trace(K)}[
        norm
    ]
    assert approximation_error(ny, X, norm=norm) == pytest.approx(expected, rel=1e-9)
    assert approximation_error(ny, X, norm=norm, relative=True) == pytest.approx(
        expected / reference, rel=1e-9
    )
    assert ny.approximation_error(X, norm=norm) == approximation_error(ny, X, norm=norm)


def test_subset_drawn_with_the_models_seed(fitted):
    X, ny = fitted
    idx = np.sort(np.random.default_rng(ny.random_state).choice(150, 40, replace=False))
    K = get_kernel("rbf", gamma=0.4)(X[idx])
    Z = ny.transform(X[idx])
    assert approximation_error(ny, X, n_eval=40) == pytest.approx(
        np.linalg.norm(K - Z @ Z.T), rel=1e-9
    )


def test_bad_arguments(fitted):
    X, ny = fitted
    with pytest.raises(ValueError, match="norm"):
        approximation_error(ny, X, norm="nuclear")
    with pytest.raises(ValueError, match="n_eval"):
        approximation_error(ny, X, n_eval=0)
    from sparsekit.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        approximation_error(Nystroem(), X)
