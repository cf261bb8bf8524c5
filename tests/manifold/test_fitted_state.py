"""What a fitted embedding keeps: its own copy of the training points, and the input's dtype;
what fitting a manifold kernel returns, and an unfitted kernel's error."""

import numpy as np
import pytest
from sklearn.datasets import make_swiss_roll

from sparsekit.exceptions import NotFittedError
from sparsekit.manifold import (
    MDS,
    Isomap,
    KernelPCA,
    LaplacianEigenmaps,
    LocallyLinearEmbedding,
    SpectralClustering,
    SpectralEmbedding,
)
from sparsekit.manifold.kernels import (
    CentredKernel,
    IsomapGeodesicKernel,
    LLEKernel,
    SpectralNormalizedKernel,
    neg_half_sq_dist,
)

ESTIMATORS = {
    "kpca": lambda: KernelPCA(2, kernel_params={"gamma": 0.02}),
    "mds": lambda: MDS(2),
    "isomap": lambda: Isomap(2, n_neighbors=8),
    "lle": lambda: LocallyLinearEmbedding(2, n_neighbors=10),
    "spectral": lambda: SpectralEmbedding(2, kernel_params={"gamma": 0.05}),
    "laplacian": lambda: LaplacianEigenmaps(2, kernel_params={"gamma": 0.05}),
    "clustering": lambda: SpectralClustering(2, kernel_params={"gamma": 0.05}, random_state=0),
}


@pytest.fixture(scope="module")
def roll():
    X, _ = make_swiss_roll(200, random_state=0)
    X_new, _ = make_swiss_roll(30, random_state=1)
    return X, X_new


def _outputs(model, X_new):
    out = [model.transform(X_new)]
    if isinstance(model, SpectralClustering):
        out.append(model.predict(X_new))
    return out


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_changing_X_after_fit_leaves_the_model_unchanged(roll, name):
    X, X_new = roll
    X = X.copy()
    model = ESTIMATORS[name]().fit(X)
    before = _outputs(model, X_new)
    X[:] = np.random.default_rng(0).normal(size=X.shape)  # the caller reuses its array
    for a, b in zip(before, _outputs(model, X_new)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_float32_input_keeps_float32(roll, name):
    X, X_new = roll
    X32, X_new32 = X.astype(np.float32), X_new.astype(np.float32)
    model = ESTIMATORS[name]().fit(X32)
    assert model.embedding_.dtype == np.float32
    assert model.transform(X_new32).dtype == np.float32
    assert ESTIMATORS[name]().fit_transform(X32).dtype == np.float32
    ref = ESTIMATORS[name]().fit(X32.astype(np.float64))
    assert ref.embedding_.dtype == np.float64
    scale = np.abs(ref.embedding_).max()
    np.testing.assert_allclose(model.embedding_, ref.embedding_, rtol=0, atol=1e-4 * scale)


@pytest.mark.parametrize(
    "make",
    [
        lambda k: k.CentredKernel().gram,
        lambda k: k.IsomapGeodesicKernel().gram,
        lambda k: k.LLEKernel().gram,
        lambda k: k.LLEKernel().residual_operator,
        lambda k: k.SpectralNormalizedKernel().gram,
        lambda k: lambda: k.LLEKernel()(np.zeros((2, 3))),
    ],
    ids=["centred", "isomap", "lle", "lle-residual", "spectral", "lle-call"],
)
def test_unfitted_kernel_says_not_fitted(make):
    """An unfitted data-dependent kernel raises NotFittedError (an AttributeError on None
    before for LLEKernel.gram), not an error about its missing attributes."""
    from sparsekit.manifold import kernels

    with pytest.raises(NotFittedError, match="not fitted: call fit"):
        make(kernels)()


@pytest.mark.parametrize(
    "kernel",
    [
        CentredKernel(neg_half_sq_dist),
        IsomapGeodesicKernel(5),
        LLEKernel(5),
        SpectralNormalizedKernel(base_params={"gamma": 1.0}),
    ],
    ids=lambda k: type(k).__name__,
)
def test_fit_returns_the_kernel_itself(curve, kernel):
    assert kernel.fit(curve) is kernel


def test_unfitted_spectral_kernel_degrees_say_not_fitted(curve):
    with pytest.raises(NotFittedError, match="not fitted: call fit"):
        SpectralNormalizedKernel().evaluate_with_degrees(curve)
