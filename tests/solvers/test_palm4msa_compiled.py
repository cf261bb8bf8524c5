"""The compiled Palm4MSA sweep against the Python sweep, NumPy projections and dense norms."""
import numpy as np
import pytest

import sparsekit
import sparsekit.solvers.palm4msa as palm
from sparsekit.projections.base import ColumnTopK, Constant, Identity, RowColumnTopK, RowTopK
from sparsekit.solvers import _palm_cpu as pc


def _factorize(M, cons, python, monkeypatch, **kw):
    with monkeypatch.context() as m:
        if python:
            m.setattr(palm, "_compiled_codes", lambda projs: None)
        return sparsekit.get_solver("palm4msa", **kw).factorize(M, cons)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("way", ["right-to-left", "left-to-right"])
def test_compiled_sweep_equals_python_sweep(dtype, way, monkeypatch):
    """Same iterates as the Python sweep (to rounding) on every compiled constraint set, with
    a constant factor, sparse (CSR chains) and dense (BLAS) factors, safeguard and keep_best."""
    rng = np.random.default_rng(3)
    M = rng.standard_normal((64, 300)).astype(dtype)
    cons = [Constant(np.diag(rng.random(64) + 0.5)), RowColumnTopK((64, 64), 3),
            RowTopK((64, 64), 16), ColumnTopK((64, 64), 2), Identity((64, 300))]
    assert palm._compiled_codes(cons) is not None
    for kw in ({}, {"safeguard": True}, {"keep_best": True}):
        fast = _factorize(M, cons, False, monkeypatch, n_iter=12, tol=0, update_way=way, **kw)
        slow = _factorize(M, cons, True, monkeypatch, n_iter=12, tol=0, update_way=way, **kw)
        rtol = 1e-4 if dtype == np.float32 else 1e-9
        np.testing.assert_allclose(fast.objective, slow.objective, rtol=rtol)
        A, B = fast.factors.toarray(), slow.factors.toarray()
        assert np.abs(A - B).max() <= rtol * np.abs(B).max()
        assert fast.n_iter == slow.n_iter and fast.stop_reason == slow.stop_reason


def test_quickmeans_constraints_run_compiled():
    """The QuicK-means refit (constant weights, splincol factors) takes the compiled sweep."""
    from sparsekit.solvers.hierarchical import hierarchical_constraints

    hf, hr = hierarchical_constraints((64, 100), 5, 3)
    assert palm._compiled_codes([Constant(np.eye(64))] + hf + [hr[-1]]) is not None
    assert palm._compiled_codes([palm._Transposed(p) for p in hf]) is not None
    mask = sparsekit.get_projection("support", mask=np.eye(4))
    assert palm._compiled_codes([mask]) is None  # no compiled twin: the Python sweep


@pytest.mark.parametrize("k, k_col", [(1, 1), (3, 2), (40, 33), (64, 50)])
def test_compiled_projection_equals_numpy_with_ties(k, k_col):
    rng = np.random.default_rng(k)
    for M in (rng.standard_normal((50, 64)), np.round(rng.standard_normal((50, 64)) * 2),
              np.zeros((50, 64))):
        for proj, codes in ((RowColumnTopK((50, 64), k, k_col), (k, k_col)),
                            (RowTopK((50, 64), k), (k, 0)), (ColumnTopK((50, 64), k_col), (0, k_col))):
            out = np.empty_like(M)
            pc.project(M, pc.TOPK, codes[0], codes[1], True, out)
            np.testing.assert_allclose(out, proj.project_unchecked(M), rtol=1e-13, atol=0)
            assert np.array_equal(out != 0, proj.project_unchecked(M) != 0)


def test_compiled_norms_accurate_dense_and_through_the_factors():
    """``sq_norm2`` on a dense operand and on chains of CSR factors (``P Pᵀ`` and ``Pᵀ P``) gives
    the squared spectral norm to 1e-6, warm-started call after call."""
    rng = np.random.default_rng(0)
    shapes = [(30, 20), (20, 20), (20, 45)]
    rows = np.array([s[0] for s in shapes])
    cols = np.array([s[1] for s in shapes])
    offs = np.concatenate([[0], np.cumsum(rows * cols)])
    poffs = np.concatenate([[0], np.cumsum(rows + 1)])
    ptr = np.empty(poffs[-1], dtype=np.int64)
    ind = np.empty(offs[-1], dtype=np.int64)
    dat = np.empty(offs[-1])
    vbuf = np.empty(40 * 64)
    warm = {key: np.zeros(n) for key, n in (("L", 30), ("R", 45), ("D", 45))}
    has = dict.fromkeys(warm, False)
    for t in range(5):
        F = [rng.standard_normal(s) * (rng.random(s) < 0.3) for s in shapes]
        for q, S in enumerate(F):
            pc._to_csr(S, ptr[poffs[q]:poffs[q + 1]], ind[offs[q]:], dat[offs[q]:])
        P = F[0] @ F[1] @ F[2]
        want = np.linalg.norm(P, 2) ** 2
        none = np.empty((0, 1))
        for key, mode, A, n in (("L", pc.CHAIN_L, none, 30), ("R", pc.CHAIN_R, none, 45),
                                ("D", pc.DENSE, P, 45)):
            got = pc.sq_norm2(mode, A, n, warm[key], has[key],
                              0.1 * rng.standard_normal(n) / np.sqrt(n), 1e-6, 40, ptr, ind, dat,
                              poffs[:-1], offs[:-1], rows, cols, 0, 3, vbuf)
            has[key] = True
            assert got == pytest.approx(want, rel=1e-6), (key, t)
