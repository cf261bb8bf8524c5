"""Palm4MSA: value tests for the safeguard (retries with a doubled step constant, stop_reason),
the default start, keep_best in both sweep directions and the Lanczos norm estimate.

Oracles: one PALM sweep written out in NumPy with exact spectral norms and pyfaust's splincol
projection, closed forms (a warm start that is exact, or exact but outside the constraint set;
the Eckart-Young bound), the Ritz value of a Krylov space built by brute force, and SVD."""

import warnings

import numpy as np
import pytest

import sparsekit
from sparsekit.factorizers.palm4msa import _sq_norm2, default_factors, run_palm

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    P = pytest.importorskip("pyfaust.proj")


def splincol(n, k):
    return sparsekit.get_projection("splincol", shape=(n, n), k=k)


def palm_sweep(U, S, lam, margin, projs):
    """One right-to-left PALM sweep (Le Magoarou & Gribonval 2016) with exact norms."""
    S = [s.copy() for s in S]
    R = np.eye(U.shape[1])
    for q in range(len(S) - 1, -1, -1):
        L = np.eye(U.shape[0])
        for s in S[:q]:
            L = L @ s
        c = margin * lam**2 * np.linalg.norm(L, 2) ** 2 * np.linalg.norm(R, 2) ** 2
        G = lam * L.T @ (lam * L @ S[q] @ R - U) @ R.T
        S[q] = projs[q](S[q] - G / c)
        R = S[q] @ R
    lam = np.vdot(U, R) / np.vdot(R, R)
    return S, lam, float(np.sum((U - lam * R) ** 2))


@pytest.fixture(scope="module")
def worse_start():
    """A warm start from which the plain first iteration increases the objective."""
    M = np.random.default_rng(9).standard_normal((32, 32))
    cons = [splincol(32, 2) for _ in range(3)]
    start = sparsekit.get_factorizer("palm4msa", n_iter=30, tol=0).factorize(M, cons).factors
    return M, cons, [S.toarray() for S in start.factors], start.scale


def test_safeguard_retries_with_the_step_constant_doubled(worse_start):
    M, cons, init, lam0 = worse_start
    f0 = float(np.sum((M - lam0 * np.linalg.multi_dot(init)) ** 2))
    projs = [P.splincol((32, 32), 2) for _ in range(3)]
    sweeps = [palm_sweep(M, init, lam0, 1.001 * 2**r, projs) for r in range(5)]
    accepted = next(r for r, s in enumerate(sweeps) if s[2] <= f0)
    assert accepted >= 1  # the plain step (r = 0) is refused from this start
    res = sparsekit.get_factorizer("palm4msa", n_iter=1, tol=0, safeguard=True).factorize(
        M, cons, init_factors=init, init_scale=lam0
    )
    S, lam, f = sweeps[accepted]
    assert res.stop_reason == "max_iter" and res.n_iter == 1
    assert res.objective[0] == pytest.approx(f, rel=1e-6)
    np.testing.assert_allclose(res.factors.toarray(), lam * np.linalg.multi_dot(S), atol=1e-5)
    # without the safeguard the same start takes the plain step
    plain = sparsekit.get_factorizer("palm4msa", n_iter=1, tol=0).factorize(
        M, cons, init_factors=init, init_scale=lam0
    )
    assert plain.objective[0] == pytest.approx(sweeps[0][2], rel=1e-6)


def test_safeguard_stops_after_its_retries_and_returns_the_start():
    """An exact warm start outside the constraint set: the projection of the (unchanged) step
    loses rank, so every retry ends above 0 (Eckart-Young: >= 2 for I_4 at rank 2)."""
    M = np.eye(4)
    cons = [
        sparsekit.get_projection("support", mask=np.ones((4, 4), bool)),
        sparsekit.get_projection("sp", shape=(4, 4), k=2),
    ]
    init = [np.eye(4) / 2, np.eye(4) / 2]
    safe = sparsekit.get_factorizer("palm4msa", n_iter=3, tol=0, safeguard=True).factorize(
        M, cons, init_factors=init, init_scale=4.0
    )
    assert safe.stop_reason == "safeguard"
    assert safe.n_iter == 0 and safe.objective.size == 0
    np.testing.assert_array_equal(safe.factors.toarray(), M)
    plain = sparsekit.get_factorizer("palm4msa", n_iter=3, tol=0).factorize(
        M, cons, init_factors=init, init_scale=4.0
    )
    assert plain.stop_reason == "max_iter" and plain.n_iter == 3
    assert np.all(plain.objective >= 2 - 1e-9)


def test_safeguard_accepts_an_exact_fit_and_stops_only_with_tol():
    """From an exact, feasible start the gradient is 0 and the objective stays exactly 0
    (closed form; every value is a power of 2, so the arithmetic is exact on any CPU):
    ``tol=0`` runs every iteration, ``tol > 0`` stops at the first one as ``"exact"``."""
    M = np.eye(4)
    cons = [sparsekit.get_projection("support", mask=np.eye(4, dtype=bool)) for _ in range(2)]
    init = [np.eye(4) / 2, np.eye(4) / 2]
    for tol, n_iter, stop in ((0, 5, "max_iter"), (1e-6, 1, "exact")):
        res = sparsekit.get_factorizer("palm4msa", n_iter=5, tol=tol, safeguard=True).factorize(
            M, cons, init_factors=init, init_scale=4.0
        )
        assert res.stop_reason == stop and res.n_iter == n_iter
        np.testing.assert_array_equal(res.objective, [0.0] * n_iter)
        np.testing.assert_array_equal(res.factors.toarray(), M)


def test_safeguard_does_not_refuse_rounding_noise_of_an_exact_warm_start():
    """An exact warm start ``λ · diag(d)/‖d‖ · I/√3 = diag(d)`` (closed form): its objective
    and that of every iterate are rounding noise, below ``(n u ‖U‖_F)²`` (Higham 2002, §3.5),
    whose sign of change is the CPU's. With ``tol=0`` the safeguard must run all ``n_iter``
    iterations (it refused the first rise of the noise and stopped after 0 to 4 of them)."""
    cons = [sparsekit.get_projection("support", mask=np.eye(3, dtype=bool)) for _ in range(2)]
    palm = sparsekit.get_factorizer("palm4msa", n_iter=8, tol=0, safeguard=True)
    for d in np.random.default_rng(0).uniform(0.1, 1.0, (16, 3)):
        init = [np.diag(d / np.linalg.norm(d)), np.eye(3) / np.sqrt(3)]
        res = palm.factorize(
            np.diag(d), cons, init_factors=init, init_scale=np.linalg.norm(d) * np.sqrt(3)
        )
        assert (res.n_iter, res.stop_reason) == (8, "max_iter"), d
        assert np.all(res.objective <= (6 * np.finfo(float).eps) ** 2 * np.sum(d**2))
        np.testing.assert_allclose(res.factors.toarray(), np.diag(d), rtol=1e-14)


@pytest.mark.parametrize("update_way", ["right-to-left", "left-to-right"])
def test_tol_zero_runs_every_iteration_past_an_exact_fit(update_way):
    """The scalar target 2 = 2 · 1 · 1 from the default start: the first sweep fits it exactly
    (closed form: each projected factor is ``x / √(x²) = 1``, which IEEE 754 rounds exactly,
    so the objective is 0.0 on every CPU). ``tol=0`` must still run all ``n_iter`` iterations
    (the count may not depend on whether a fit rounds to 0.0); ``tol > 0`` stops at once with
    ``stop_reason="exact"``, and a non-zero objective never reads as ``"exact"``."""
    cons = [sparsekit.get_projection("splincol", shape=(1, 1), k=1) for _ in range(3)]
    kw = dict(n_iter=6, update_way=update_way)
    full = sparsekit.get_factorizer("palm4msa", tol=0, **kw).factorize([[2.0]], cons)
    assert (full.n_iter, full.stop_reason) == (6, "max_iter")
    np.testing.assert_array_equal(full.objective, np.zeros(6))
    assert full.factors.scale == 2.0
    early = sparsekit.get_factorizer("palm4msa", tol=1e-6, **kw).factorize([[2.0]], cons)
    assert (early.n_iter, early.stop_reason) == (1, "exact")
    np.testing.assert_array_equal(early.objective, [0.0])
    M = np.random.default_rng(4).standard_normal((8, 8))
    res = sparsekit.get_factorizer("palm4msa", tol=1e-3, n_iter=500).factorize(
        M, [splincol(8, 2) for _ in range(2)]
    )
    assert res.stop_reason == "tol" and res.n_iter < 500 and res.objective[-1] > 0


def test_default_start_zeroes_the_first_free_factor_from_the_right():
    D = np.diag(np.arange(1.0, 7.0))
    cons = [splincol(6, 2), sparsekit.get_projection("constant", matrix=D)]
    f = default_factors(cons, np.float64)
    np.testing.assert_array_equal(f[0], np.zeros((6, 6)))
    np.testing.assert_array_equal(f[1], D)
    left = default_factors(cons[::-1], np.float64, "left-to-right")
    np.testing.assert_array_equal(left[1], np.zeros((6, 6)))
    # first iteration from there: S_1 = P(0 - ∇/c) with L = I, R = D, λ = 1
    M = np.random.default_rng(2).standard_normal((6, 6))
    res = sparsekit.get_factorizer("palm4msa", n_iter=1, tol=0).factorize(M, cons)
    S, lam, _ = palm_sweep(
        M, [np.zeros((6, 6)), D], 1.0, 1.001, [P.splincol((6, 6), 2), lambda X: D]
    )
    np.testing.assert_allclose(res.factors.toarray(), lam * S[0] @ D, rtol=1e-5, atol=1e-8)


def test_run_palm_returns_the_last_iterate_by_default():
    M = np.random.default_rng(2).standard_normal((32, 32))
    cons = [splincol(32, 2) for _ in range(3)]
    out = run_palm(
        M,
        cons,
        default_factors(cons, np.float64),
        1.0,
        n_iter=40,
        tol=0,
        safeguard=False,
        update_way="right-to-left",
    )
    hist = out[2]
    assert np.argmin(hist) < len(hist) - 1 and len(hist) == 40
    assert hist[-1] == pytest.approx(
        np.sum((M - out[1] * np.linalg.multi_dot(out[0])) ** 2), rel=1e-9
    )


def test_keep_best_left_to_right_keeps_the_last_iterate_in_extra(worse_start):
    M, cons, init, lam0 = worse_start
    f0 = float(np.sum((M - lam0 * np.linalg.multi_dot(init)) ** 2))
    kw = dict(n_iter=5, tol=0, update_way="left-to-right")
    plain = sparsekit.get_factorizer("palm4msa", **kw).factorize(
        M, cons, init_factors=init, init_scale=lam0
    )
    best = sparsekit.get_factorizer("palm4msa", keep_best=True, **kw).factorize(
        M, cons, init_factors=init, init_scale=lam0
    )
    h = plain.objective
    assert min(f0, h.min()) < h[-1]  # the last iterate is not the best one
    last = best.extra["last"]
    assert [F.shape for F in last.factors] == [(32, 32)] * 3
    np.testing.assert_allclose(last.toarray(), plain.factors.toarray(), atol=1e-12)
    for F, G in zip(last.factors, plain.factors.factors):
        np.testing.assert_allclose(F.toarray(), G.toarray(), atol=1e-12)
    assert float(np.sum((M - best.factors.toarray()) ** 2)) == pytest.approx(
        min(f0, h.min()), rel=1e-9
    )


@pytest.fixture
def lanczos_only(monkeypatch):
    """``_sq_norm2`` by Lanczos whatever the size (the exact path is tested on its own)."""
    import sparsekit.factorizers.palm4msa as mod

    monkeypatch.setattr(mod, "EXACT_NORM_DIM", 0)


@pytest.mark.parametrize("top, tests", [(10.0, [3]), (2.5, [3, 7])])
def test_lanczos_tests_convergence_every_fourth_step_and_keeps_the_ritz_vector(
    top, tests, lanczos_only, monkeypatch
):
    """A gap 10 vs <= 1.5 converges within 4 steps; 2.5 within 8 but not 4 (its Ritz value
    after 4 steps is still 2.5e-5 below)."""
    import sparsekit.factorizers.palm4msa as mod

    s = np.concatenate([[top], np.linspace(1.0, 1.5, 29)])
    rng = np.random.default_rng(0)
    Qu, _ = np.linalg.qr(rng.standard_normal((30, 30)))
    Qv, _ = np.linalg.qr(rng.standard_normal((30, 30)))
    A = (Qu * s) @ Qv.T
    seen, steps = [], mod.lanczos_steps

    def counting(*args):
        out = steps(*args)
        seen.append(out[0])
        return out

    monkeypatch.setattr(mod, "lanczos_steps", counting)
    vectors = {}
    value = _sq_norm2(A, "k", vectors)
    assert value == pytest.approx(top**2, rel=1e-6)
    assert seen == tests  # tested after steps 4, 8, ... (0-based 3, 7)
    # the top right singular vector is kept for the next call's warm start
    assert abs(vectors["k"] @ Qv[:, 0]) == pytest.approx(1.0, abs=1e-6)


def test_lanczos_at_max_steps_returns_the_largest_ritz_value(lanczos_only):
    from sparsekit.factorizers.palm4msa import _mix_vector

    A = np.random.default_rng(1).standard_normal((40, 40))
    B = A.T @ A
    value = _sq_norm2(A, "k", {}, max_steps=3)
    v = _mix_vector(40)
    K, _ = np.linalg.qr(np.column_stack([v, B @ v, B @ B @ v]))
    ritz = np.linalg.eigvalsh(K.T @ B @ K)[-1]
    assert value == pytest.approx(ritz, rel=1e-9)
    assert value < np.linalg.norm(A, 2) ** 2


@pytest.mark.parametrize(
    "shape, dtype",
    [((1, 7), np.float64), ((32, 300), np.float64), ((300, 32), np.float64), ((40, 9), np.float32)],
)
def test_small_matrices_get_the_exact_squared_spectral_norm(shape, dtype):
    A = np.random.default_rng(2).standard_normal(shape).astype(dtype)
    vectors = {}
    value = _sq_norm2(A, "k", vectors)
    expected = np.linalg.norm(A.astype(np.float64), 2) ** 2
    assert value == pytest.approx(expected, rel=1e-12 if dtype == np.float64 else 1e-6)
    assert vectors == {}  # no Lanczos run, no Ritz vector kept


def test_the_exact_norm_stops_at_exact_norm_dim():
    from sparsekit.factorizers.palm4msa import EXACT_NORM_DIM

    rng = np.random.default_rng(3)
    for size, lanczos in ((EXACT_NORM_DIM, False), (EXACT_NORM_DIM + 1, True)):
        A = rng.standard_normal((size + 40, size))
        vectors = {}
        value = _sq_norm2(A, "k", vectors)
        assert ("k" in vectors) is lanczos
        assert value == pytest.approx(np.linalg.norm(A, 2) ** 2, rel=1e-6)
    assert _sq_norm2(np.zeros((3, 5)), "k", {}) == 0.0
    A = np.eye(4)
    A[1, 2] = np.nan  # a diverged iterate: NaN as from the Lanczos path, not a finite value
    assert np.isnan(_sq_norm2(A, "k", {}))


def test_float32_iterates_stay_float32_when_a_projection_returns_float64():
    """ "float32 stays float32": a projection (e.g. a plugin's) that returns float64 gives the
    very same float32 iterates as one that keeps the dtype."""
    import copy

    base = splincol(16, 3)

    class Float64Out(type(base)):
        def project_unchecked(self, X):
            return super().project_unchecked(X).astype(np.float64)

    wide = copy.copy(base)
    wide.__class__ = Float64Out
    M = np.random.default_rng(3).standard_normal((16, 16)).astype(np.float32)
    palm = sparsekit.get_factorizer("palm4msa", n_iter=20, tol=0)
    ref = palm.factorize(M, [base, base])
    out = palm.factorize(M, [wide, wide])
    assert out.factors.dtype == np.float32
    np.testing.assert_array_equal(out.objective, ref.objective)
    np.testing.assert_array_equal(out.factors.toarray(), ref.factors.toarray())


def test_to_sparse_factors_casts_to_the_given_dtype():
    from sparsekit.factorizers.palm4msa import to_sparse_factors

    F = to_sparse_factors([np.eye(3), 2 * np.eye(3)], 1.5, np.float32)
    assert F.dtype == np.float32 and F.scale == 1.5
    np.testing.assert_array_equal(F.toarray(), 3 * np.eye(3, dtype=np.float32))


def test_n_jobs_limits_the_threads_while_factorizing():
    import copy

    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs Numba with at least 2 threads")
    seen = []
    base = splincol(130, 2)  # above SERIAL_MAX_DIM: smaller problems run on one thread

    class Recording(type(base)):
        def project_unchecked(self, X):
            seen.append(numba.get_num_threads())
            return super().project_unchecked(X)

    rec = copy.copy(base)
    rec.__class__ = Recording
    M = np.random.default_rng(0).standard_normal((130, 130))
    outside = numba.get_num_threads()
    for n_jobs in (1, 2):
        seen.clear()
        sparsekit.get_factorizer("palm4msa", n_iter=2, tol=0, n_jobs=n_jobs).factorize(
            M, [rec, rec]
        )
        assert seen and set(seen) == {n_jobs}
        assert numba.get_num_threads() == outside
    with pytest.raises(ValueError, match="n_jobs"):
        sparsekit.get_factorizer("palm4msa", n_jobs=0).factorize(M, [rec, rec])


def _safeguarded_reference(M, S, lam, n_iter, projs):
    """The safeguard's rule applied by hand to the reference sweep :func:`palm_sweep`: each
    iteration tries the margins ``1.001 · 2^r`` (r = 0..4, starting again at r = 0) and keeps
    the first that does not increase the objective; none stops the run."""
    f = float(np.sum((M - lam * np.linalg.multi_dot(S)) ** 2))
    history = []
    for _ in range(n_iter):
        for r in range(5):
            S2, lam2, f2 = palm_sweep(M, S, lam, 1.001 * 2**r, projs)
            if f2 <= f:
                break
        else:
            return history, "safeguard"
        S, lam, f = S2, lam2, f2
        history.append(f)
    return history, "max_iter"


def test_safeguard_starts_every_iteration_from_the_plain_step_constant(worse_start):
    """After a retried iteration the next one starts again from ``c = 1.001 L``.

    Oracle: the independent reference sweep :func:`palm_sweep` (exact norms) with the
    safeguard's rule applied by hand, iteration by iteration."""
    M, _, init, lam0 = worse_start
    projs = [P.splincol((32, 32), 2) for _ in range(3)]
    cons = [splincol(32, 2) for _ in range(3)]
    expected, stop = _safeguarded_reference(M, init, lam0, 3, projs)
    assert len(expected) == 2 and stop == "safeguard"  # the third is refused at every margin
    out = run_palm(
        M,
        cons,
        [s.copy() for s in init],
        lam0,
        n_iter=3,
        tol=0,
        safeguard=True,
        update_way="right-to-left",
    )
    assert out[4] == stop and out[3] == len(expected)
    np.testing.assert_allclose(out[2], expected, rtol=1e-6)


def test_safeguard_tries_the_step_five_times_before_it_stops():
    """The plain step and ``SAFEGUARD_RETRIES`` (4) retries with ``c`` doubled, then the stop:
    every free factor is projected 5 times (the documented count, observed by wrapping the
    projections)."""
    M = np.eye(4)
    cons = [
        sparsekit.get_projection("support", mask=np.ones((4, 4), bool)),
        sparsekit.get_projection("sp", shape=(4, 4), k=2),
    ]
    calls = [0, 0]
    for q, p in enumerate(cons):
        inner = p.project_unchecked

        def counted(X, q=q, inner=inner):
            calls[q] += 1
            return inner(X)

        p.project_unchecked = counted
    init = [np.eye(4) / 2, np.eye(4) / 2]
    out = run_palm(M, cons, init, 4.0, n_iter=3, tol=0, safeguard=True, update_way="right-to-left")
    assert out[4] == "safeguard" and out[3] == 0
    assert calls == [5, 5]


def test_keep_best_returns_the_first_of_equal_objectives():
    """From an exact, feasible start every iterate has objective exactly 0 (powers of 2, exact
    on any CPU): the start is returned, the last iterate is kept in ``extra["last"]`` and the
    history ends with the returned objective (closed form: all zeros, ``n_iter + 1`` of them)."""
    M = np.eye(4)
    cons = [sparsekit.get_projection("support", mask=np.eye(4, dtype=bool)) for _ in range(2)]
    init = [np.eye(4) / 2, np.eye(4) / 2]
    res = sparsekit.get_factorizer("palm4msa", n_iter=3, tol=0, keep_best=True).factorize(
        M, cons, init_factors=init, init_scale=4.0
    )
    np.testing.assert_array_equal(res.objective, [0.0] * 4)
    assert "last" in res.extra
    np.testing.assert_array_equal(res.factors.toarray(), M)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-4)])
def test_compiled_lanczos_steps_build_the_tridiagonal_of_the_gram_matrix(dtype, rtol):
    """Oracle (closed form): the Lanczos vectors ``V`` are orthonormal and ``V (Aᵀ A) Vᵀ`` is
    the tridiagonal of the returned ``alpha`` (diagonal) and betas (off-diagonal), computed here
    by NumPy from ``A`` and ``V``; the step returned is the first test point (the 4th)."""
    from sparsekit.factorizers._cpu import lanczos_steps

    A = np.random.default_rng(4).standard_normal((50, 40)).astype(dtype)
    V = np.empty((10, 40), dtype=dtype)
    v = np.random.default_rng(5).standard_normal(40)
    V[0] = v / np.linalg.norm(v)
    ab = np.zeros((2, 10))
    w = np.empty(40, dtype=dtype)
    j, beta = lanczos_steps(A, V, ab, 1e-6, 0, w)
    assert j == 3
    B = V[:4].astype(np.float64)
    np.testing.assert_allclose(B @ B.T, np.eye(4), atol=10 * rtol)
    G = A.astype(np.float64).T @ A.astype(np.float64)
    T = np.diag(ab[0, :4]) + np.diag(ab[1, :3], 1) + np.diag(ab[1, :3], -1)
    scale = np.linalg.norm(G, 2)
    np.testing.assert_allclose(B @ G @ B.T, T, atol=rtol * scale)
    # w is the unnormalized next vector: orthogonal to V[:4], of norm beta
    assert float(np.linalg.norm(w)) == pytest.approx(beta, rel=rtol)
    np.testing.assert_allclose(B @ w.astype(np.float64), 0.0, atol=rtol * scale)


@pytest.mark.parametrize("n, expected", [(16, 1), (129, 2)])
def test_small_problems_run_on_one_thread(n, expected, monkeypatch):
    """Oracle (the documented rule): with ``n_jobs=2``, a run whose target and factors have at
    most ``SERIAL_MAX_DIM`` rows and columns limits Numba and BLAS to one thread, a larger
    one to two; flat and hierarchical alike."""
    import contextlib

    import sparsekit.factorizers.hierarchical as hmod
    import sparsekit.factorizers.palm4msa as mod

    seen = []

    @contextlib.contextmanager
    def recording(n_threads):
        seen.append(n_threads)
        yield n_threads

    monkeypatch.setattr(mod, "thread_limit", recording)
    monkeypatch.setattr(hmod, "thread_limit", recording)
    M = np.random.default_rng(0).random((n, n))
    cons = [splincol(n, 2) for _ in range(2)]
    sparsekit.get_factorizer("palm4msa", n_iter=2, n_jobs=2).factorize(M, cons)
    sparsekit.get_factorizer("hierarchical-palm4msa", n_iter=2, n_jobs=2).factorize(
        M, 2, n_factors=2
    )
    assert seen == [expected, expected]
