"""The built-in solvers, pinned against references outside the package on several input layouts
and dtypes: the selections (support, iterations, stop reasons) are equal to those of NumPy /
SciPy brute-force solvers and scikit-learn's ``orthogonal_mp``, the coefficients agree to the
dtype's precision, and every memory layout of the same data gives the same bits."""

import numpy as np
import pytest
from scipy.optimize import nnls
from sklearn.linear_model import orthogonal_mp

from sparsekit.solvers.fw import FrankWolfe
from sparsekit.solvers.mp import MatchingPursuit
from sparsekit.solvers.nnomp import NonNegativeOMP
from sparsekit.solvers.omp import OMP

from ._problems import sparse_problem

N_STEPS = 6


def brute_mp(D, y, n_steps):
    """Matching pursuit on the residual (unit-norm atoms): argmax |<d_i, r>|, x_i += <d_i, r>."""
    x, r, support = np.zeros(D.shape[1]), y.copy(), []
    for _ in range(n_steps):
        c = D.T @ r
        i = int(np.argmax(np.abs(c)))
        support.append(i)
        x[i] += c[i]
        r = r - c[i] * D[:, i]
    return x, support


def brute_omp(D, y, n_steps):
    """OMP by least squares on the whole support at every step (no Cholesky update)."""
    support, r = [], y.copy()
    for _ in range(n_steps):
        support.append(int(np.argmax(np.abs(D.T @ r))))
        xs = np.linalg.lstsq(D[:, support], y, rcond=None)[0]
        r = y - D[:, support] @ xs
    x = np.zeros(D.shape[1])
    x[support] = xs
    return x, support


def brute_nnomp(D, y, n_steps):
    """Non-negative OMP with SciPy's NNLS on the support; stops when no atom correlates > 0."""
    support, r, xs = [], y.copy(), np.zeros(0)
    while len(support) < n_steps:
        c = D.T @ r
        c[support] = -np.inf
        i = int(np.argmax(c))
        if c[i] <= 1e-6 * np.linalg.norm(y):
            break
        support.append(i)
        xs = nnls(D[:, support], y)[0]
        r = y - D[:, support] @ xs
    x = np.zeros(D.shape[1])
    x[support] = xs
    return x, support


def brute_fw(D, y, n_steps, beta):
    """Frank–Wolfe on the l1 ball of radius beta, exact line search clipped to [0, 1]."""
    x, support = np.zeros(D.shape[1]), []
    for _ in range(n_steps):
        r = y - D @ x
        c = D.T @ r
        i = int(np.argmax(np.abs(c)))
        support.append(i)
        s = np.zeros_like(x)
        s[i] = np.sign(c[i]) * beta
        u = D @ (s - x)
        x = x + min(max((u @ r) / (u @ u), 0.0), 1.0) * (s - x)
    return x, support


SOLVERS = {
    "mp-gram": (lambda: MatchingPursuit(max_iter=N_STEPS, precompute=True), brute_mp),
    "mp-residual": (lambda: MatchingPursuit(max_iter=N_STEPS, precompute=False), brute_mp),
    "omp-gram": (lambda: OMP(n_nonzero_coefs=N_STEPS, precompute=True), brute_omp),
    "omp-residual": (lambda: OMP(n_nonzero_coefs=N_STEPS, precompute=False), brute_omp),
    "nn-omp": (lambda: NonNegativeOMP(n_nonzero_coefs=N_STEPS), brute_nnomp),
    "frank-wolfe": (
        lambda: FrankWolfe(beta=20.0, max_iter=N_STEPS),
        lambda D, y, k: brute_fw(D, y, k, 20.0),
    ),
}


def layouts(D, Y):
    """The same data as C-ordered, Fortran-ordered and strided (non-contiguous) arrays."""
    wide_D = np.zeros((D.shape[0], 2 * D.shape[1]), dtype=D.dtype)
    wide_D[:, ::2] = D
    wide_Y = np.zeros((Y.shape[0], 3 * Y.shape[1]), dtype=Y.dtype)
    wide_Y[:, 1::3] = Y
    return {
        "C": (np.ascontiguousarray(D), np.ascontiguousarray(Y)),
        "F": (np.asfortranarray(D), np.asfortranarray(Y)),
        "strided": (wide_D[:, ::2], wide_Y[:, 1::3]),
    }


FIELDS = ("coef", "support", "residual_norms", "n_iter", "stop_reason", "steps", "gaps")


def assert_same_bits(a, b):
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        if x is None:
            assert y is None, name
            continue
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        if x.dtype == object:
            assert x.tolist() == y.tolist(), name
        else:
            assert x.tobytes() == y.tobytes(), name


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(21)
    D, Y, _ = sparse_problem(rng, 40, 60, 3, 5)
    return D, Y + 0.05 * rng.standard_normal(Y.shape)  # noisy: every step has work to do


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("which", sorted(SOLVERS))
def test_every_layout_gives_the_reference_selection_and_the_same_bits(problem, which, dtype):
    make, brute = SOLVERS[which]
    D, Y = (a.astype(dtype) for a in problem)
    rtol = 1e-9 if dtype == np.float64 else 2e-4
    results = {name: make().solve(Dl, Yl) for name, (Dl, Yl) in layouts(D, Y).items()}
    ref = results["C"]
    assert ref.coef.dtype == dtype and ref.coef.shape == (60, 5) and ref.coef.flags.c_contiguous
    for res in results.values():
        assert_same_bits(res, ref)
    D64 = D.astype(np.float64)
    scale = np.abs(ref.coef).max()
    for j in range(Y.shape[1]):
        x, support = brute(D64, Y[:, j].astype(np.float64), N_STEPS)
        n = len(support)
        assert ref.n_iter[j] == n
        assert ref.support[:n, j].tolist() == support and (ref.support[n:, j] == -1).all()
        np.testing.assert_allclose(ref.coef[:, j], x, rtol=rtol, atol=rtol * scale)
        np.testing.assert_allclose(
            ref.residual_norms[n, j],
            np.linalg.norm(Y[:, j].astype(np.float64) - D64 @ x),
            rtol=50 * rtol,
            atol=rtol * np.linalg.norm(Y[:, j]),
        )
    one = make().solve(D, Y[:, 2])  # one 1-D signal: the signal axis dropped
    assert one.coef.shape == (60,) and isinstance(one.n_iter, int)
    assert isinstance(one.stop_reason, str) and one.stop_reason == ref.stop_reason[2]
    assert one.support.tolist() == ref.support[:, 2].tolist()
    np.testing.assert_allclose(one.coef, ref.coef[:, 2], rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("precompute", [True, False])
def test_omp_matches_scikit_learn_in_both_dtypes_and_mixed_inputs(problem, precompute):
    D, Y = problem
    ref = orthogonal_mp(D, Y, n_nonzero_coefs=N_STEPS)
    for Dx, Yx, dtype, rtol in [
        (D, Y, np.float64, 1e-10),
        (D.astype(np.float32), Y.astype(np.float32), np.float32, 2e-4),
        (D.astype(np.float32), Y, np.float64, 1e-5),
    ]:
        res = OMP(n_nonzero_coefs=N_STEPS, precompute=precompute).solve(Dx, Yx)
        assert res.coef.dtype == dtype  # float32 kept; float32 D with float64 Y: float64
        np.testing.assert_array_equal(res.coef != 0, ref != 0)
        np.testing.assert_allclose(res.coef, ref, rtol=rtol, atol=rtol * np.abs(ref).max())
