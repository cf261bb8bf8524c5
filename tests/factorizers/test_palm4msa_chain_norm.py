"""Palm4MSA's spectral norms of products of sparse factors, taken through the factors
(``_ChainGram``, the compiled scattered Lanczos steps) rather than from the dense product.

Oracles: ``numpy.linalg.norm(product, 2)``, and one PALM sweep written out in NumPy with exact
spectral norms and pyfaust's splincol projection (``palm_sweep`` of the value tests)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import sparsekit
import sparsekit.factorizers.palm4msa as palm
from sparsekit.factorizers._cpu import lanczos_csr_steps

from .test_palm4msa_values import palm_sweep

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    P = pytest.importorskip("pyfaust.proj")


def sparse_chain(shapes, density, dtype, seed=0):
    """Dense arrays of random sparse factors, each with an empty row and an empty column."""
    out = []
    for i, shape in enumerate(shapes):
        D = sp.random(*shape, density=density, random_state=seed + i).toarray().astype(dtype)
        D -= (D != 0) * dtype(0.5)  # signs of both kinds
        D[1] = 0.0
        D[:, 2] = 0.0
        out.append(D)
    return out


@pytest.mark.parametrize("dtype, rel", [(np.float64, 1e-6), (np.float32, 1e-4)])
@pytest.mark.parametrize(
    "shapes",
    [
        [(40, 60), (60, 60), (60, 90)],  # wide: Lanczos on C Cᵀ (40 × 40)
        [(90, 60), (60, 60), (60, 40)],  # tall: on Cᵀ C (40 × 40)
        [(50, 50)],  # one factor
    ],
    ids=["wide", "tall", "single"],
)
def test_chain_norm_equals_the_norm_of_the_product(shapes, dtype, rel):
    factors = sparse_chain(shapes, 0.08, dtype)
    F = [palm._Factor(f) for f in factors]
    for f in F:  # below SPARSE_MIN_SIZE a factor has no CSR arrays of its own
        f.csr, f.csr_t = palm.dense_to_csr_pair(f.dense)[:3], palm.dense_to_csr_pair(f.dense)[3:]
    gram = palm._ChainGram(F)
    product = np.linalg.multi_dot(factors) if len(factors) > 1 else factors[0]
    assert gram.dim == min(product.shape) and gram.dtype == dtype
    expected = np.linalg.norm(product.astype(np.float64), 2) ** 2
    vectors = {}
    assert palm._sq_norm2(gram, "k", vectors) == pytest.approx(expected, rel=rel)
    assert vectors["k"].shape == (gram.dim,)  # the Ritz vector kept for the next call


def test_chain_operator_applies_c_ct_exactly():
    """One Lanczos step from a unit vector: ``alpha[0, 0] = v · C Cᵀ v``."""
    factors = sparse_chain([(30, 45), (45, 70)], 0.1, np.float64)
    F = [palm._Factor(f) for f in factors]
    for f in F:
        f.csr, f.csr_t = palm.dense_to_csr_pair(f.dense)[:3], palm.dense_to_csr_pair(f.dense)[3:]
    gram = palm._ChainGram(F)
    C = factors[0] @ factors[1]
    v = np.random.default_rng(1).standard_normal(30)
    v /= np.linalg.norm(v)
    V = v[None].copy()  # one row: the step is a test point
    ab = np.zeros((2, 1))
    w = np.empty(30)
    j, beta = lanczos_csr_steps(*gram.packed, V, ab, 1e-6, 0, w, gram.buf)
    assert j == 0 and ab[0, 0] == pytest.approx(v @ C @ C.T @ v, rel=1e-12)
    # w: C Cᵀ v orthogonalized against v
    np.testing.assert_allclose(w, C @ C.T @ v - ab[0, 0] * v, atol=1e-12)
    assert beta == pytest.approx(np.linalg.norm(w), rel=1e-12)


def _chain_calls(monkeypatch):
    calls = []
    real = palm.lanczos_csr_steps

    def counting(*args):
        calls.append(args[0].shape[0])
        return real(*args)

    monkeypatch.setattr(palm, "lanczos_csr_steps", counting)
    return calls


def test_the_chain_is_used_exactly_up_to_norm_chain_ratio(monkeypatch):
    """Through the factors when ``NORM_CHAIN_RATIO · nnz <= entries`` of the product, from the
    dense product one non-zero later; the same value either way."""
    calls = _chain_calls(monkeypatch)
    D = np.zeros((128, 128))
    D[np.arange(128), np.arange(128)] = np.linspace(1.0, 2.0, 128)
    F = [palm._Factor(D)]
    assert F[0].csr is not None and F[0].nnz == 128
    at_ratio = 128 * 128 / 128  # the ratio at which 128 non-zeros are exactly allowed
    monkeypatch.setattr(palm, "NORM_CHAIN_RATIO", at_ratio)
    assert palm._product_sq_norm2(F, D, "a", {}) == pytest.approx(4.0, rel=1e-6)
    assert calls
    calls.clear()
    monkeypatch.setattr(palm, "NORM_CHAIN_RATIO", at_ratio + 1e-9)
    assert palm._product_sq_norm2(F, D, "b", {}) == pytest.approx(4.0, rel=1e-6)
    assert not calls
    # a factor without CSR arrays (dense) keeps the dense path whatever the ratio
    monkeypatch.setattr(palm, "NORM_CHAIN_RATIO", 0.0)
    G = [palm._Factor(np.ones((128, 128)))]
    assert G[0].csr is None
    assert palm._product_sq_norm2(G, G[0].dense, "c", {}) == pytest.approx(128.0**2, rel=1e-6)
    assert not calls


def test_a_sweep_with_chain_norms_equals_the_reference_sweep(monkeypatch):
    """One Palm4MSA iteration on a 128 × 256 target from sparse factors (CSR, so the norms of
    ``L`` and ``R`` go through the factors) equals the NumPy sweep with exact norms."""
    calls = _chain_calls(monkeypatch)
    rng = np.random.default_rng(4)
    shapes = [(128, 128), (128, 128), (128, 256)]
    init = [palm._Factor(f).dense for f in sparse_chain(shapes, 0.03, np.float64, seed=3)]
    init = [f / np.linalg.norm(f) for f in init]
    M = rng.standard_normal((128, 256))
    cons = [sparsekit.get_projection("splincol", shape=s, k=3) for s in shapes]
    res = sparsekit.get_factorizer("palm4msa", n_iter=1, tol=0).factorize(
        M, cons, init_factors=init, init_scale=3.0
    )
    assert calls  # the chain path ran
    projs = [P.splincol(s, 3) for s in shapes]
    S, lam, f = palm_sweep(M, init, 3.0, 1.001, projs)
    assert res.objective[0] == pytest.approx(f, rel=1e-6)
    np.testing.assert_allclose(res.factors.toarray(), lam * np.linalg.multi_dot(S), atol=1e-7)


@pytest.mark.parametrize("path", ["dense", "chain"])
def test_a_nan_entry_gives_a_nan_norm_through_lanczos(path):
    """A diverged iterate: the Lanczos paths return NaN (not a finite value, not 0), and stop
    at the first test point instead of stepping past the end of the Lanczos basis."""
    factors = sparse_chain([(60, 60), (60, 90)], 0.1, np.float64)
    factors[1][5, 7] = np.nan
    F = [palm._Factor(f) for f in factors]
    for f in F:
        f.csr, f.csr_t = palm.dense_to_csr_pair(f.dense)[:3], palm.dense_to_csr_pair(f.dense)[3:]
    operand = palm._ChainGram(F) if path == "chain" else factors[0] @ factors[1]
    assert np.isnan(palm._sq_norm2(operand, "k", {}, max_steps=40))
