"""The exact MMD²'s RBF tiles summed strip by strip in cache, against scikit-learn's Gram.

Oracles: scikit-learn's ``rbf_kernel`` written out whole and summed, and the kernel's own Gram
path (the fused pass switched off). The strips are forced to a few rows (not dividing the
tiles) through ``STRIP_BYTES``.
"""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import sparsekit
from sparsekit.stats import _rbf_tiles, exact, mmd2_biased, mmd2_unbiased


@pytest.mark.parametrize("dtype, rel", [(np.float64, 1e-13), (np.float32, 2e-6)])
@pytest.mark.parametrize("strip_rows", [1, 3, 64])
@pytest.mark.parametrize(
    "tile", [(0, 40, 0, 40), (5, 17, 5, 17), (0, 11, 11, 40), (30, 40, 0, 25), (7, 19, 12, 33)]
)
def test_a_tile_sum_is_the_sum_of_the_gram_tile(rng, monkeypatch, dtype, rel, strip_rows, tile):
    X = (rng.normal(size=(40, 3)) * 2.0 + 50.0).astype(dtype)
    a, b, c0, c1 = tile
    monkeypatch.setattr(_rbf_tiles, "STRIP_BYTES", 8 * strip_rows * (c1 - c0))
    k = sparsekit.get_kernel("rbf", gamma=0.3)
    fused = _rbf_tiles.fused_rbf(k, X)
    buf = np.empty(fused.work_size([(a, b, c0, c1, 0)]), dtype=dtype)
    assert buf.size == min(b - a, strip_rows) * (c1 - c0)
    got = fused.tile_sum(a, b, c0, c1, buf)
    K = rbf_kernel(X.astype(np.float64), gamma=0.3)
    assert got == pytest.approx(K[a:b, c0:c1].sum(), rel=rel)
    if dtype == np.float32:
        assert fused.Xc.dtype == np.float32
    # k(x_i, x_i) = 1 exactly where a row meets its own column (far from the origin the
    # product form alone would leave exp of a rounding error)
    for i in range(max(a, c0), min(b, c1)):
        assert fused.tile_sum(i, i + 1, i, i + 1, buf) == 1.0


def test_only_the_library_rbf_kernel_on_arrays_is_fused():
    X = np.ones((4, 2))
    assert isinstance(_rbf_tiles.fused_rbf(sparsekit.get_kernel("rbf"), X), _rbf_tiles.RBFTiles)
    assert _rbf_tiles.fused_rbf(sparsekit.get_kernel("laplacian"), X) is None

    class Mine(type(sparsekit.get_kernel("rbf"))):
        pass

    assert _rbf_tiles.fused_rbf(Mine(), X) is None
    import scipy.sparse as sp

    assert _rbf_tiles.fused_rbf(sparsekit.get_kernel("rbf"), sp.csr_matrix(X)) is None


@pytest.mark.parametrize("unbiased", [False, True])
@pytest.mark.parametrize("params", [{"gamma": 0.05}, {"bandwidth": "median"}])
def test_the_fused_statistic_matches_the_kernels_own_tiles(rng, monkeypatch, unbiased, params):
    A = rng.normal(size=(300, 5)) + 1e3
    B = rng.normal(size=(250, 5)) * 1.2 + 1e3
    monkeypatch.setattr(exact, "POOL_MIN_ENTRIES", 0)
    monkeypatch.setattr(_rbf_tiles, "STRIP_BYTES", 8 * 7 * 60)
    f = mmd2_unbiased if unbiased else mmd2_biased
    kw = {"kernel_params": params, "max_memory": 8 * 60**2}
    fused = f(A, B, "rbf", n_jobs=2, **kw)
    assert fused == f(A, B, "rbf", n_jobs=1, **kw)
    monkeypatch.setattr(exact, "fused_rbf", lambda kernel, data: None)
    generic = f(A, B, "rbf", n_jobs=2, **kw)
    assert fused == pytest.approx(generic, rel=1e-12, abs=1e-15)
    if "gamma" in params:
        K = rbf_kernel(np.vstack([A, B]), gamma=0.05)
        KA, KB, KAB = K[:300, :300], K[300:, 300:], K[:300, 300:]
        n, m = 300, 250
        if unbiased:
            want = (KA.sum() - n) / (n * (n - 1)) + (KB.sum() - m) / (m * (m - 1))
        else:
            want = KA.sum() / n**2 + KB.sum() / m**2
        want -= 2.0 * KAB.sum() / (n * m)
        assert fused == pytest.approx(want, rel=1e-10, abs=1e-15)
