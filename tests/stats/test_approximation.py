"""sparsekit.stats.approximation_error against the residual of the Gram matrix formed whole."""

import numpy as np
import pytest

from sparsekit import Nystroem, get_kernel
from sparsekit.stats import approximation_error

from .conftest import random_graphs


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


def _residual(K, Z):
    return K - Z @ Z.T


def test_approximation_error_of_a_graph_kernel_map_is_the_whole_residual():
    graphs = random_graphs(np.random.default_rng(1), 14, 0.4)
    ny = Nystroem("shortest-path", n_components=5, random_state=0).fit(graphs)
    R = _residual(np.asarray(get_kernel("shortest-path")(graphs)), ny.transform(graphs))
    assert approximation_error(ny, graphs, norm="fro") == pytest.approx(np.linalg.norm(R), rel=1e-9)
    assert approximation_error(ny, graphs, norm="spectral") == pytest.approx(
        np.abs(np.linalg.eigvalsh(R)).max(), rel=1e-9
    )


def test_approximation_error_of_one_sample():
    X = np.random.default_rng(2).normal(size=(30, 2))
    ny = Nystroem("rbf", n_components=4, kernel_params={"gamma": 0.3}, random_state=0).fit(X)
    x = X[5:6]
    z = ny.transform(x)
    expected = 1.0 - float(z[0] @ z[0])  # k(x, x) = 1 for the RBF kernel
    assert expected > 1e-3
    assert approximation_error(ny, x, norm="trace") == pytest.approx(expected, rel=1e-9)
    assert approximation_error(ny, x, norm="fro") == pytest.approx(expected, rel=1e-9)
    assert approximation_error(ny, x, norm="spectral") == pytest.approx(expected, rel=1e-9)


@pytest.fixture(scope="module")
def lanczos_case():
    """1001 points (above the dense-eigensolver limit, so the spectral norm uses Lanczos), a
    kernel function that counts its square Gram blocks, and the residual formed whole."""
    n = 1001
    X = np.random.default_rng(3).normal(size=(n, 2))
    calls = []

    def rbf(A, B):
        if len(A) == n and len(B) == n:
            calls.append(1)
        sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None] - 2.0 * A @ B.T
        return np.exp(-0.5 * np.maximum(sq, 0.0))

    ny = Nystroem(rbf, n_components=6, random_state=0).fit(X)
    Z = ny.transform(X)
    K = rbf(X, X)
    calls.clear()
    spectral = np.abs(np.linalg.eigvalsh(_residual(K, Z))).max()
    return ny, X, calls, n, spectral, np.linalg.eigvalsh(K)[-1]


def test_spectral_gram_blocks_are_cached_exactly_when_they_fit_max_memory(lanczos_case):
    ny, X, calls, n, expected, reference = lanczos_case
    for max_memory, relative, cached in [
        (None, True, True),  # the default, 256 MiB, holds the 8 MB Gram matrix
        (8 * n * n, False, True),  # |E|^2 float64 values fit exactly
        (0, False, False),
    ]:
        calls.clear()
        kw = {} if max_memory is None else {"max_memory": max_memory}
        err = approximation_error(ny, X, norm="spectral", relative=relative, **kw)
        assert err == pytest.approx(expected / reference if relative else expected, rel=1e-7)
        if cached:
            assert len(calls) == 1  # one row block, computed once for every Lanczos step
        else:
            assert len(calls) > 2  # recomputed at every Lanczos step
    with pytest.raises(ValueError, match="max_memory"):
        approximation_error(ny, X, norm="spectral", max_memory=-1)


@pytest.mark.parametrize(
    "norm, label", [("fro", "approximation error"), ("spectral", "Gram blocks")]
)
def test_verbose_reports_progress_over_the_gram_blocks(capsys, norm, label):
    X = np.random.default_rng(5).normal(size=(40, 2))
    ny = Nystroem("rbf", n_components=5, random_state=0).fit(X)
    capsys.readouterr()
    approximation_error(ny, X, norm=norm, verbose=True)
    assert label in capsys.readouterr().err
    approximation_error(ny, X, norm=norm, verbose=False)
    assert capsys.readouterr().err == ""


def test_lanczos_spectral_norm_is_accurate_on_a_clustered_spectrum():
    # a linear kernel of 1001 Gaussian points in 300 dimensions: the top eigenvalues of the
    # residual crowd at the Marchenko-Pastur edge, where a loose Lanczos tolerance stops early
    X = np.random.default_rng(6).normal(size=(1001, 300))
    ny = Nystroem("linear", n_components=10, random_state=0).fit(X)
    Z = ny.transform(X)
    expected = np.abs(np.linalg.eigvalsh(_residual(X @ X.T, Z))).max()
    assert approximation_error(ny, X, norm="spectral") == pytest.approx(expected, rel=1e-8)
