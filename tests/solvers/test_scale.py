"""The solvers at any scale of the atoms and of the signals.

Oracles: scale invariance (``D s`` and ``Y t`` give the codes ``x t / s`` and the residual norms
``||r|| t``) against the solve at scale 1, scikit-learn's ``orthogonal_mp`` at scale 1, and
SciPy's ``nnls`` on the support NN-OMP selected.
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import nnls
from sklearn.linear_model import orthogonal_mp

from sparsekit.solvers.coherence import mutual_coherence
from sparsekit.solvers.fw import FrankWolfe
from sparsekit.solvers.mp import MatchingPursuit
from sparsekit.solvers.nnomp import NonNegativeOMP
from sparsekit.solvers.omp import OMP

from ._problems import sparse_problem, unit_gaussian


def nonneg_problem(seed=0, n_features=64, n_atoms=48, m=3, n_signals=12):
    """Atoms of norms 0.5 .. 2 (not unit), non-negative 3-sparse codes."""
    rng = np.random.default_rng(seed)
    D = unit_gaussian(rng, n_features, n_atoms) * rng.uniform(0.5, 2.0, n_atoms)
    X = np.zeros((n_atoms, n_signals))
    for j in range(n_signals):
        X[rng.choice(n_atoms, m, replace=False), j] = rng.uniform(0.5, 2.0, m)
    return D, D @ X, X


def solve_quietly(solver, D, Y, **kw):
    """The solve, with every warning an error (a Numba typing or performance warning included)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return solver.solve(D, Y, **kw)


SCALES = np.logspace(-8, 8, 17)


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("what", ["atoms", "signals"])
def test_nnomp_is_scale_invariant(scale, what):
    """NN-OMP on ``D s`` gives the codes ``x / s``, on ``Y s`` the codes ``x s``, for s from 1e-8
    to 1e8 (oracle: scale invariance against the solve at scale 1, which recovers the true
    non-negative codes). The NNLS entry threshold grew as ``||d||^4`` while the gradient grows
    as ``||d||^2``: from atom norms of 1e8 every code was 0."""
    D, Y, X = nonneg_problem()
    ref = NonNegativeOMP(n_nonzero_coefs=3).solve(D, Y)
    np.testing.assert_allclose(ref.coef, X, atol=1e-10)
    if what == "atoms":
        res, factor = solve_quietly(NonNegativeOMP(n_nonzero_coefs=3), D * scale, Y), 1 / scale
    else:
        res, factor = solve_quietly(NonNegativeOMP(n_nonzero_coefs=3), D, Y * scale), scale
    np.testing.assert_array_equal(res.support, ref.support)
    np.testing.assert_allclose(res.coef, ref.coef * factor, rtol=1e-9, atol=1e-12 * factor)
    assert list(res.stop_reason) == list(ref.stop_reason)


@pytest.mark.parametrize("atom_norm", [1.0, 1e5, 1e8, 1e12])
def test_nnomp_values_are_scipy_nnls_on_the_selected_support(atom_norm):
    """Every NN-OMP code is the non-negative least squares on the atoms it selected (oracle:
    SciPy's ``nnls`` on that support), with atoms of norm ``atom_norm``; and the support is the
    true one (the problem is in NN-OMP's recovery regime at unit norm)."""
    D, Y, X = nonneg_problem(seed=1)
    D = D * atom_norm
    res = solve_quietly(NonNegativeOMP(n_nonzero_coefs=3), D, Y)
    for j in range(Y.shape[1]):
        S = res.support[: res.n_iter[j], j]
        x_ref, _ = nnls(D[:, S], Y[:, j])
        np.testing.assert_allclose(
            res.coef[S, j], x_ref, rtol=1e-8, atol=1e-10 * np.abs(x_ref).max()
        )
        assert set(S.tolist()) == set(np.flatnonzero(X[:, j]).tolist())


def test_nnomp_recovers_16bit_patch_codes_like_omp():
    """Dense 16-bit patches as atoms (integers 0..65535, norms about 6e5) and signals that are
    non-negative 3-sparse combinations of them: OMP (scikit-learn's ``orthogonal_mp``, the
    oracle) recovers every code, and NN-OMP must too (it recovered 5 of 30)."""
    rng = np.random.default_rng(0)
    n_features, n_atoms, m, n_signals = 256, 64, 3, 30
    D = rng.integers(0, 65536, size=(n_features, n_atoms)).astype(np.float64)
    X = np.zeros((n_atoms, n_signals))
    for j in range(n_signals):
        X[rng.choice(n_atoms, m, replace=False), j] = rng.integers(1, 5, size=m) / 4
    Y = D @ X
    omp = orthogonal_mp(D, Y, n_nonzero_coefs=m)
    np.testing.assert_allclose(omp, X, atol=1e-8)
    res = solve_quietly(NonNegativeOMP(n_nonzero_coefs=m), D, Y)
    np.testing.assert_array_equal(res.coef > 0, X > 0)
    np.testing.assert_allclose(res.coef, X, atol=1e-8)


# ---------------------------------------------------------------------------------------------
# data whose squares overflow or underflow
# ---------------------------------------------------------------------------------------------
def greedy_problem(dtype):
    rng = np.random.default_rng(3)
    D, Y, X = sparse_problem(rng, 30, 50, 3, 6)
    return D.astype(dtype), Y.astype(dtype), X


SOLVERS = {
    "omp-gram": lambda tol: OMP(n_nonzero_coefs=3, tol=tol, precompute=True),
    "omp-residual": lambda tol: OMP(n_nonzero_coefs=3, tol=tol, precompute=False),
    "mp-gram": lambda tol: MatchingPursuit(max_iter=12, tol=tol, precompute=True),
    "mp-residual": lambda tol: MatchingPursuit(max_iter=12, tol=tol, precompute=False),
    "nn-omp": lambda tol: NonNegativeOMP(n_nonzero_coefs=3, tol=tol),
}

#: (dtype, scale): beyond the square root of the largest float (1e154, 1e19 in float32) the
#: squared norms overflow; below the square root of the smallest normal float they underflow
EXTREME = [
    (np.float64, 1e154),
    (np.float64, 1e200),
    (np.float64, 1e300),
    (np.float64, 1e-160),
    (np.float64, 1e-200),
    (np.float64, 1e-300),
    (np.float32, 1e19),
    (np.float32, 1e30),
    (np.float32, 1e-20),
    (np.float32, 1e-30),
]

#: scales inside the range, solved as given: every threshold must scale with the data
MODERATE = [(np.float64, 1e-8), (np.float64, 1e8), (np.float32, 1e-4), (np.float32, 1e4)]


def rtol_of(dtype):
    return 1e-9 if dtype == np.float64 else 2e-4


@pytest.mark.parametrize("dtype, scale", EXTREME + MODERATE)
@pytest.mark.parametrize("name", list(SOLVERS))
@pytest.mark.parametrize("what", ["both", "atoms", "signals"])
def test_greedy_solvers_at_extreme_scales(name, dtype, scale, what):
    """OMP, MP and NN-OMP on ``D s`` and/or ``Y t`` at scales where ``||y||^2`` overflows or
    underflows (and at 1e-8 .. 1e8, solved as given) give the codes ``x t / s`` and residual
    norms ``||r|| t`` of the solve at scale 1 (oracle: scale invariance; the scale-1 OMP codes
    match scikit-learn's ``orthogonal_mp``). Every code was 0 (or NaN for MP) from 1e154 on."""
    D, Y, X = greedy_problem(dtype)
    s = scale if what in ("both", "atoms") else 1.0
    t = scale if what in ("both", "signals") else 1.0
    y_sq = (Y.astype(np.float64) ** 2).sum(axis=0)
    # a tol too (it bounds ||r||^2: scaled by t^2), where t^2 tol is a float
    tol = 1e-3 * float(y_sq.min())
    if not 1e-300 < tol * t * t < 1e300:
        tol = None
    ref = SOLVERS[name](tol).solve(D, Y)
    if name.startswith("omp"):
        np.testing.assert_allclose(
            SOLVERS[name](None).solve(D, Y).coef,
            orthogonal_mp(D, Y, n_nonzero_coefs=3),
            rtol=rtol_of(dtype),
            atol=1e-4,
        )
    res = solve_quietly(
        SOLVERS[name](None if tol is None else tol * t * t), D * dtype(s), Y * dtype(t)
    )
    assert res.coef.dtype == dtype
    factor = t / s
    np.testing.assert_array_equal(res.support, ref.support)
    np.testing.assert_allclose(
        res.coef, ref.coef * factor, rtol=rtol_of(dtype), atol=1e-5 * abs(ref.coef).max() * factor
    )
    valid = ~np.isnan(ref.residual_norms)
    np.testing.assert_array_equal(np.isnan(res.residual_norms), ~valid)
    np.testing.assert_allclose(
        res.residual_norms[valid].astype(np.float64),
        ref.residual_norms[valid].astype(np.float64) * t,
        rtol=max(rtol_of(dtype), 1e-6),
        # the Gram forms' ||y||^2 - x.D^T y is accurate to eps ||y||^2, a norm to sqrt(eps) ||y||
        atol=4 * np.sqrt(np.finfo(dtype).eps) * float(np.sqrt(y_sq.max())) * t,
    )
    assert list(res.stop_reason) == list(ref.stop_reason)


@pytest.mark.parametrize("dtype, scale", EXTREME + MODERATE)
@pytest.mark.parametrize("what", ["both", "atoms", "signals"])
def test_frank_wolfe_at_extreme_scales(dtype, scale, what):
    """Frank–Wolfe on ``D s`` and ``Y t`` with the radius ``beta t / s`` gives the codes
    ``x t / s``, the residual norms ``||r|| t`` and the duality gaps ``g t^2`` of the solve at
    scale 1 (oracle: scale invariance)."""
    D, Y, X = greedy_problem(dtype)
    s = scale if what in ("both", "atoms") else 1.0
    t = scale if what in ("both", "signals") else 1.0
    beta = 2.0 * np.abs(X).sum(axis=0)
    ref = FrankWolfe(beta=beta, max_iter=40).solve(D, Y)
    res = solve_quietly(FrankWolfe(beta=beta * (t / s), max_iter=40), D * dtype(s), Y * dtype(t))
    factor = t / s
    np.testing.assert_array_equal(res.n_iter, ref.n_iter)
    np.testing.assert_allclose(
        res.coef, ref.coef * factor, rtol=rtol_of(dtype), atol=1e-4 * abs(ref.coef).max() * factor
    )
    valid = ~np.isnan(ref.gaps)
    with np.errstate(over="ignore", under="ignore"):
        gaps = ref.gaps[valid].astype(np.float64) * t * t
    # a gap is a squared norm: beyond the dtype's range it is inf or 0 (below its normal range)
    beyond = (gaps > np.finfo(dtype).max) | (np.abs(gaps) < np.finfo(dtype).tiny)
    assert (np.isinf(res.gaps[valid]) | (np.abs(res.gaps[valid]) < np.finfo(dtype).tiny))[
        beyond
    ].all()
    np.testing.assert_allclose(
        res.gaps[valid][~beyond].astype(np.float64),
        gaps[~beyond],
        rtol=1e-3,
        atol=1e-4 * float(np.nanmax(np.abs(ref.gaps))) * t * t,
    )
    np.testing.assert_allclose(res.steps[valid], ref.steps[valid], rtol=1e-3, atol=1e-5)


def test_codes_that_overflow_are_refused():
    """Tiny atoms and huge signals: the codes (about 1e400) do not exist in float64, so the
    solve refuses with a ValueError that says so, instead of returning zeros or infinities."""
    D, Y, _ = greedy_problem(np.float64)
    with pytest.raises(ValueError, match="codes overflow float64"):
        OMP(n_nonzero_coefs=3).solve(D * 1e-200, Y * 1e200)


def test_tiny_atoms_are_not_zero_columns():
    """Atoms with entries of 1e-170 (squares underflow to 0) are valid atoms, not zero columns;
    a truly zero column is still refused (oracle: scale invariance of OMP and of the mutual
    coherence)."""
    D, Y, _ = greedy_problem(np.float64)
    ref = OMP(n_nonzero_coefs=3).solve(D, Y)
    res = OMP(n_nonzero_coefs=3).solve(D * 1e-170, Y)
    np.testing.assert_allclose(res.coef, ref.coef * 1e170, rtol=1e-9)
    assert mutual_coherence(D * 1e-170) == pytest.approx(mutual_coherence(D), rel=1e-12)
    D0 = D * 1e-170
    D0[:, 4] = 0
    with pytest.raises(ValueError, match=r"zero column\(s\) \(atom index 4\)"):
        OMP(n_nonzero_coefs=3).solve(D0, Y)


@pytest.mark.parametrize("scale", [1e-160, 1e-200, 1e154])
def test_a_given_gram_matrix_at_extreme_scales(scale):
    """``solve(D s, Y, gram=G)`` with the Gram matrix of ``D s`` as given, whose entries
    (``s^2``, subnormal or near overflow) lost their digits, gives the codes ``x / s`` of the
    solve at scale 1 (oracle: scale invariance; scikit-learn's ``orthogonal_mp_gram`` at scale
    1): the solver rebuilds the Gram matrix of the rescaled atoms."""
    from sklearn.linear_model import orthogonal_mp_gram

    D, Y, _ = greedy_problem(np.float64)
    ref = OMP(n_nonzero_coefs=3).solve(D, Y, gram=D.T @ D)
    np.testing.assert_allclose(
        ref.coef, orthogonal_mp_gram(D.T @ D, D.T @ Y, n_nonzero_coefs=3), atol=1e-10
    )
    Ds = D * scale
    res = solve_quietly(OMP(n_nonzero_coefs=3), Ds, Y, gram=Ds.T @ Ds)
    np.testing.assert_allclose(res.coef, ref.coef / scale, rtol=1e-9)
