"""Values equal those of pyfaust.proj on random matrices (no ties)."""

import warnings

import numpy as np
import pytest

import sparsekit

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    P = pytest.importorskip("pyfaust.proj")

SHAPES = [(6, 5), (8, 12), (30, 30)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("pos", [False, True])
@pytest.mark.parametrize("name", ["sp", "splin", "spcol", "splincol"])
def test_top_k_projections_equal_pyfaust(shape, k, pos, name):
    if name == "splincol" and pos:
        pytest.skip("pyfaust's splincol ignores pos=True (it keeps negative entries)")
    M = np.random.default_rng(k + 10 * shape[0]).standard_normal(shape)
    kk = 3 * k if name == "sp" else k
    ours = sparsekit.get_projection(name, shape=shape, k=kk, nonnegative=pos)(M)
    theirs = getattr(P, name)(shape, kk, pos=pos)(M)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
    unnormalized = sparsekit.get_projection(name, shape=shape, k=kk, normalized=False)(M)
    np.testing.assert_allclose(
        unnormalized, getattr(P, name)(shape, kk, normalized=False)(M), atol=1e-14
    )


@pytest.mark.parametrize("shape", SHAPES)
def test_support_constant_identity_equal_pyfaust(shape):
    rng = np.random.default_rng(3)
    M = rng.standard_normal(shape)
    S = (rng.random(shape) < 0.3).astype(float)
    for pos in (False, True):
        np.testing.assert_allclose(
            sparsekit.get_projection("support", mask=S, nonnegative=pos)(M),
            P.supp(S, pos=pos)(M),
            atol=1e-14,
        )
    np.testing.assert_allclose(sparsekit.get_projection("constant", matrix=S)(M), P.const(S)(M))
    np.testing.assert_allclose(
        sparsekit.get_projection("identity", shape=shape)(M), P.proj_id(shape)(M)
    )
