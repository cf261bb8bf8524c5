"""nystrom_ridge_fit on chunked arrays against the in-memory NystromRidge (same landmarks) and
the dense closed form."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402
from sklearn.metrics.pairwise import rbf_kernel  # noqa: E402

from sparsekit import NystromRidge  # noqa: E402
from sparsekit.dask import nystrom_ridge_fit  # noqa: E402

GAMMA = 0.3


def _data(n=400, outputs=None):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    return X, (np.column_stack([y, 2 * y + 1]) if outputs else y)


@pytest.mark.parametrize("outputs", [None, 2])
def test_chunked_fit_equals_the_in_memory_fit(outputs):
    """Irregular chunks: the same landmarks (uniform, same seed), iterations and predictions
    as NystromRidge.fit on the whole array; the predictions are the dense closed form's."""
    X, y = _data(outputs=outputs)
    Xd = da.from_array(X, chunks=((130, 70, 200), 3))
    params = dict(n_components=30, alpha=1e-3, tol=1e-10, kernel_params={"gamma": GAMMA})
    with dask.config.set(scheduler="sync"):
        chunked = nystrom_ridge_fit(Xd, y, random_state=0, **params)
    memory = NystromRidge(random_state=0, max_iter=500, **params).fit(X, y)
    np.testing.assert_array_equal(chunked.component_indices_, memory.component_indices_)
    assert abs(chunked.n_iter_ - memory.n_iter_) <= 1
    np.testing.assert_allclose(chunked.predict(X), memory.predict(X), atol=1e-8)
    L = X[chunked.component_indices_]
    K_nm, K_mm = rbf_kernel(X, L, gamma=GAMMA), rbf_kernel(L, L, gamma=GAMMA)
    coef = np.linalg.pinv(K_nm.T @ K_nm + 1e-3 * len(X) * K_mm) @ (K_nm.T @ y)
    np.testing.assert_allclose(chunked.predict(X), K_nm @ coef, atol=1e-6)
    assert chunked.dual_coef_.shape == memory.dual_coef_.shape


def test_chunked_targets_and_threaded_scheduler():
    """y as a dask array chunked differently from X, on the threaded scheduler."""
    X, y = _data()
    Xd = da.from_array(X, chunks=(100, 3))
    yd = da.from_array(y, chunks=170)
    params = dict(n_components=30, alpha=1e-3, tol=1e-10, kernel_params={"gamma": GAMMA})
    with dask.config.set(scheduler="threads"):
        chunked = nystrom_ridge_fit(Xd, yd, random_state=1, **params)
    memory = NystromRidge(random_state=1, max_iter=500, **params).fit(X, y)
    np.testing.assert_allclose(chunked.predict(X), memory.predict(X), atol=1e-8)


def test_bad_targets_are_refused():
    X, y = _data()
    Xd = da.from_array(X, chunks=(100, 3))
    with pytest.raises(ValueError, match="rows of X"):
        nystrom_ridge_fit(Xd, y[:-1], n_components=10)
    with pytest.raises(ValueError, match="alpha"):
        nystrom_ridge_fit(Xd, y, n_components=10, alpha=0.0)
