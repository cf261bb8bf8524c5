"""Hierarchical Palm4MSA against pyfaust's ``hierarchical`` (rectangular targets, both update
ways, a one-iteration global stage, four factors), the forms of its constraints, its counts and
history, and the constraint schedule on wide targets."""

import warnings

import numba
import numpy as np
import pytest

import sparsekit
import sparsekit.factorizers.hierarchical as hmod
from sparsekit.factorizers.hierarchical import hierarchical_constraints
from sparsekit.projections import RowColumnTopK


def solver(**kw):
    return sparsekit.get_factorizer("hierarchical-palm4msa", **kw)


def schedule(shape, fact_k, res_k):
    """Explicit splincol constraints with the same count per row and per column (the form
    pyfaust's ``ConstraintInt('splincol', ...)`` also has)."""
    m, n = shape
    a = min(m, n)
    fshapes = [(m, a)] + [(a, a)] * (len(fact_k) - 1)
    return (
        [RowColumnTopK(s, k, k) for s, k in zip(fshapes, fact_k)],
        [RowColumnTopK((a, n), k, k) for k in res_k],
    )


PYFAUST_CASES = [  # shape, factor counts, residual counts, n_iter, n_iter_global, update way
    ((10, 6), [2, 2], [4, 2], 5, 5, "right-to-left"),
    ((6, 10), [2, 2], [4, 3], 5, 5, "right-to-left"),
    ((8, 8), [2, 2, 2], [5, 3, 2], 4, 1, "right-to-left"),
    ((8, 8), [2, 2, 2], [5, 3, 2], 4, 3, "left-to-right"),
    ((10, 6), [2, 2], [4, 2], 5, 2, "left-to-right"),
    # every level with its own factor and residual counts
    ((12, 8), [2, 3, 2], [5, 3, 2], 5, 3, "left-to-right"),
    ((12, 8), [2, 3, 2], [5, 3, 2], 5, 3, "right-to-left"),
    ((8, 8), [3, 2, 1], [4, 3, 2], 4, 2, "left-to-right"),
]


@pytest.mark.parametrize(
    "case", PYFAUST_CASES, ids=lambda c: f"{c[0]}-Q{len(c[1]) + 1}-g{c[4]}-{c[5]}"
)
def test_equal_to_pyfaust_hierarchical(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fact = pytest.importorskip("pyfaust.fact")
        from pyfaust.factparams import ConstraintInt, ParamsHierarchical, StoppingCriterion
    shape, fk, rk, n_iter, n_glob, way = case
    M = np.random.default_rng(sum(shape) + n_glob).standard_normal(shape)
    facts, res = schedule(shape, fk, rk)
    params = ParamsHierarchical(
        [ConstraintInt("splincol", *p.shape, p.k) for p in facts],
        [ConstraintInt("splincol", *p.shape, p.k) for p in res],
        StoppingCriterion(num_its=n_iter),
        StoppingCriterion(num_its=n_glob),
        is_update_way_R2L=(way == "right-to-left"),
    )
    theirs = fact.hierarchical(M, params).toarray()
    out = solver(n_iter=n_iter, n_iter_global=n_glob, tol=0, update_way=way).factorize(
        M, (facts, res)
    )
    ours = out.factors.toarray()
    # the two differ only by their spectral-norm estimates (relative 1e-7 to 1e-5 here)
    assert np.linalg.norm(ours - theirs) <= 1e-3 * np.linalg.norm(theirs)
    assert out.factors.n_factors == len(fk) + 1
    assert [F.shape for F in out.factors.factors] == [p.shape for p in facts] + [res[-1].shape]
    np.testing.assert_allclose(
        out.relative_error, np.linalg.norm(theirs - M) / np.linalg.norm(M), rtol=1e-3
    )


def by_hand(M, facts, res, *, n_iter, n_iter_global, tol, update_way, safeguard):
    """Hierarchical Palm4MSA written out from its definition (Le Magoarou & Gribonval 2016,
    Algorithm 3, residual on the right) with calls to the flat ``palm4msa`` factorizer: at
    level ``k`` a 2-factor split of the residual ``T`` under ``(facts[k], res[k])`` from the
    default start, ``λ ← λ · λ'``, then a global fit of ``M`` under ``facts[:k+1] + [res[k]]``
    warm-started at the current factors and ``λ``."""
    palm = dict(tol=tol, update_way=update_way, safeguard=safeguard)
    T, left, lam = np.asarray(M), [], 1.0
    n, history, reasons = 0, [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PlateauWarning of a split
        for k in range(len(facts)):
            split = sparsekit.get_factorizer("palm4msa", n_iter=n_iter, **palm).factorize(
                T, [facts[k], res[k]]
            )
            lam *= split.factors.scale
            glob = sparsekit.get_factorizer("palm4msa", n_iter=n_iter_global, **palm).factorize(
                M,
                facts[: k + 1] + [res[k]],
                init_factors=left + [F.toarray() for F in split.factors.factors],
                init_scale=lam,
            )
            factors = [F.toarray() for F in glob.factors.factors]
            lam, left, T = glob.factors.scale, factors[:-1], factors[-1]
            n += split.n_iter + glob.n_iter
            # a global stage whose every step the safeguard refused keeps its warm start
            f = glob.objective[-1] if glob.objective.size else None
            history.append(np.sum((M - glob.factors.toarray()) ** 2) if f is None else f)
            reasons += [split.stop_reason, glob.stop_reason]
    return left + [T], lam, n, history, reasons


BY_HAND_CASES = [  # seed, shape, factor and residual counts, n_iter, n_iter_global, tol, way, sg
    (4, (12, 8), [2, 3, 2], [5, 3, 2], 8, 4, 0, "right-to-left", True),
    (5, (12, 8), [2, 3, 2], [5, 3, 2], 8, 4, 0, "left-to-right", True),
    (1, (8, 8), [3, 2, 1], [4, 3, 2], 8, 5, 1e-3, "right-to-left", False),
    (2, (6, 10), [1, 3], [4, 3], 6, 9, 1e-2, "left-to-right", False),
]


@pytest.mark.parametrize("case", BY_HAND_CASES, ids=lambda c: f"{c[1]}-g{c[5]}-tol{c[6]}-{c[7]}")
def test_levels_are_palm4msa_calls_with_their_own_parameters(case):
    """Oracle: :func:`by_hand`, the algorithm composed from flat Palm4MSA calls (no pyfaust
    needed). The cases give every level its own factor and residual constraints, a global
    stage count different from the split's, both sweep directions, ``tol > 0`` and the
    safeguard (which stops stages early in the first two cases). Both sides run the same
    arithmetic on the same machine, so the iteration counts and stop reasons agree exactly."""
    seed, shape, fk, rk, n_iter, n_glob, tol, way, safeguard = case
    M = np.random.default_rng(seed).standard_normal(shape)
    facts, res = schedule(shape, fk, rk)
    kw = dict(n_iter=n_iter, n_iter_global=n_glob, tol=tol, update_way=way, safeguard=safeguard)
    factors, lam, n, history, reasons = by_hand(M, facts, res, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = solver(**kw).factorize(M, (facts, res))
    assert out.n_iter == n and out.extra["stop_reasons"] == reasons
    # one objective per level, the last one that of the returned factors (brute force)
    np.testing.assert_allclose(out.objective, history, rtol=1e-9)
    assert out.objective[-1] == pytest.approx(np.sum((M - out.factors.toarray()) ** 2), rel=1e-9)
    assert out.factors.scale == pytest.approx(lam, rel=1e-9)
    for F, G in zip(out.factors.factors, factors, strict=True):
        np.testing.assert_allclose(F.toarray(), G, rtol=1e-9, atol=1e-12)
    if safeguard:
        assert "safeguard" in reasons  # the case exercises the safeguard
    elif tol:
        assert "tol" in reasons


def test_constraint_forms_agree():
    M = np.random.default_rng(1).standard_normal((8, 8))
    facts, res = schedule((8, 8), [2, 2], [4, 2])
    pairs = (
        [("splincol", dict(shape=p.shape, k=p.k)) for p in facts],
        [("splincol", dict(shape=p.shape, k=p.k)) for p in res],
    )
    s = solver(n_iter=6, tol=0)
    ref = s.factorize(M, (facts, res)).factors.toarray()
    for cons in ([facts, res], (tuple(facts), tuple(res)), pairs):
        np.testing.assert_array_equal(s.factorize(M, cons).factors.toarray(), ref)
    # a sparsity level builds hierarchical_constraints' schedule
    got = s.factorize(M, 2, n_factors=3).factors.toarray()
    np.testing.assert_array_equal(
        got, s.factorize(M, hierarchical_constraints((8, 8), 3, 2)).factors.toarray()
    )
    with pytest.raises(TypeError, match="give n_factors as well"):
        s.factorize(M, 2)
    for bad in (True, "splincol", 3.0, [facts]):
        with pytest.raises(TypeError, match="constraints must be"):
            s.factorize(M, bad)
    with pytest.raises(ValueError, match="same length"):
        s.factorize(M, (facts, res[:1]))
    with pytest.raises(ValueError, match="non-empty"):
        s.factorize(M, ([], []))
    with pytest.raises(ValueError, match="constraints of level 2"):
        s.factorize(M, (facts, [res[0], RowColumnTopK((8, 6), 2, 2)]))


def test_iterations_history_and_defaults():
    """Counts by construction: with ``tol=0`` every stage runs all its iterations, even when
    a split fits its residual exactly (here the third one, to rounding: whether its objective
    is 0.0 or ~1e-32 depends on the CPU's BLAS, and must not change the count)."""
    M = np.random.default_rng(2).standard_normal((12, 8))
    out = solver(n_iter=4, n_iter_global=3, tol=0).factorize(M, 2, n_factors=4)
    assert out.n_iter == 3 * (4 + 3)  # every split and every global stage, summed
    assert out.objective.shape == (3,)  # one entry per level: the objective after its global stage
    assert out.stop_reason == "max_iter"
    assert out.extra["stop_reasons"] == ["max_iter"] * 6
    assert out.target_norm == pytest.approx(np.linalg.norm(M))
    assert out.objective[-1] == pytest.approx(
        np.linalg.norm(M - out.factors.toarray()) ** 2, rel=1e-9
    )
    # n_iter_global defaults to n_iter
    a = solver(n_iter=5, tol=0).factorize(M, 2, n_factors=3)
    b = solver(n_iter=5, n_iter_global=5, tol=0).factorize(M, 2, n_factors=3)
    assert a.n_iter == b.n_iter == 2 * (5 + 5)
    np.testing.assert_array_equal(a.factors.toarray(), b.factors.toarray())
    # the result reports the reason of the last stage that stopped early
    loose = solver(n_iter=200, tol=1e-3).factorize(M[:8], 2, n_factors=3)
    assert loose.stop_reason == "tol" and loose.n_iter < 2 * (200 + 200)
    assert loose.extra["stop_reasons"][-1] == "tol"
    for bad in (0, 2.5):
        with pytest.raises((ValueError, TypeError), match="n_iter_global"):
            solver(n_iter=5, n_iter_global=bad).factorize(M, 2, n_factors=3)


@pytest.mark.parametrize("update_way", ["right-to-left", "left-to-right"])
def test_tol_zero_runs_every_stage_past_an_exact_fit(update_way):
    """The scalar target 2 = 2 · 1 · 1 · 1: every split and global stage fits exactly at its
    first iteration (closed form: each projected factor is ``x / √(x²) = 1``, rounded exactly
    by IEEE 754 on any CPU, so every objective is 0.0). ``tol=0`` runs all
    ``(Q − 1)(n_iter + n_iter_global)`` iterations; ``tol > 0`` stops every stage at once with
    ``stop_reason="exact"``."""
    kw = dict(n_iter=5, n_iter_global=3, update_way=update_way)
    full = solver(tol=0, **kw).factorize([[2.0]], 1, n_factors=4)
    assert (full.n_iter, full.stop_reason) == (3 * (5 + 3), "max_iter")
    assert full.extra["stop_reasons"] == ["max_iter"] * 6
    early = solver(tol=1e-6, **kw).factorize([[2.0]], 1, n_factors=4)
    assert (early.n_iter, early.stop_reason) == (6, "exact")
    assert early.extra["stop_reasons"] == ["exact"] * 6
    for out in (full, early):
        np.testing.assert_array_equal(out.objective, np.zeros(3))
        assert out.factors.scale == 2.0


@pytest.mark.parametrize("tol", [1e-2, 1e-4, 1e-8])
def test_stop_reason_says_whether_every_stage_ran_to_the_end(tol):
    """Invariant: ``stop_reason`` is ``"max_iter"`` exactly when ``n_iter`` is the full count
    ``(Q − 1)(n_iter + n_iter_global)``; otherwise it is the last early stage's reason. Read
    from the per-stage reasons, this holds whichever stages a CPU's rounding stops early."""
    M = np.random.default_rng(5).standard_normal((12, 8))
    out = solver(n_iter=40, n_iter_global=20, tol=tol).factorize(M, 2, n_factors=4)
    reasons = out.extra["stop_reasons"]
    assert len(reasons) == 6 and set(reasons) <= {"max_iter", "tol", "exact"}
    early = [r for r in reasons if r != "max_iter"]
    assert out.stop_reason == (early[-1] if early else "max_iter")
    assert (out.stop_reason == "max_iter") == (out.n_iter == 3 * (40 + 20))


def test_hadamard_recovered_with_the_scale_carried_across_levels():
    from scipy.linalg import hadamard

    H = 3.0 * hadamard(16)  # the scale must end up in λ, the factors keep unit norm
    out = solver(n_iter=30, n_iter_global=1).factorize(H, 2, n_factors=4)
    np.testing.assert_allclose(out.factors.toarray(), H, atol=1e-6)
    for F in out.factors.factors:
        assert np.linalg.norm(F.toarray()) == pytest.approx(1.0)


def test_float32_target():
    M = np.random.default_rng(3).standard_normal((8, 8))
    a = solver(n_iter=5, tol=0).factorize(M.astype(np.float32), 2, n_factors=3)
    b = solver(n_iter=5, tol=0).factorize(M, 2, n_factors=3)
    assert a.factors.dtype == np.float32
    assert np.linalg.norm(a.factors.toarray() - b.factors.toarray()) <= 1e-3 * np.linalg.norm(M)


def test_n_jobs_limits_the_threads(monkeypatch):
    seen = []
    inner = hmod.hierarchical_dense

    def spy(*args, **kw):
        seen.append(numba.get_num_threads())
        return inner(*args, **kw)

    monkeypatch.setattr(hmod, "hierarchical_dense", spy)
    solver(n_iter=2, n_jobs=1).factorize(np.eye(4), 1, n_factors=2)
    assert seen == [1]


def test_schedule_of_wide_targets():
    # A = min(m, n) = 30: s per row and column for the factors; residual budgets
    # max(s·A, n·A / 2^k), the last one at least s·n, split as budget // rows, budget // cols
    facts, res = hierarchical_constraints((30, 64), 4, 3)
    assert [f.shape for f in facts] == [(30, 30)] * 3
    assert all((f.k, f.k_col) == (3, 3) for f in facts)
    assert [r.shape for r in res] == [(30, 64)] * 3
    assert [(r.k, r.k_col) for r in res] == [(32, 15), (16, 7), (8, 3)]
    facts, res = hierarchical_constraints((8, 64), 5, 2)
    assert [(r.k, r.k_col) for r in res] == [(32, 4), (16, 2), (8, 1), (16, 2)]  # last: s·n = 128
    facts, res = hierarchical_constraints((64, 8), 3, 2)
    assert [f.shape for f in facts] == [(64, 8), (8, 8)]
    assert [(f.k, f.k_col) for f in facts] == [(2, 16), (2, 2)]  # s·m/A per column
    assert [(r.k, r.k_col) for r in res] == [(4, 4), (2, 2)]
    facts, res = hierarchical_constraints((2, 64), 8, 1)  # budgets below n: one per column
    assert [(r.k, r.k_col) for r in res] == [
        (32, 1),
        (16, 1),
        (8, 1),
        (4, 1),
        (2, 1),
        (1, 1),
        (32, 1),
    ]
    facts, res = hierarchical_constraints((5, 1), 2, 1)  # a single column
    assert [(f.shape, f.k, f.k_col) for f in facts] == [((5, 1), 1, 5)]  # s·m/A per column
    assert [(r.shape, r.k, r.k_col) for r in res] == [((1, 1), 1, 1)]
    with pytest.raises(TypeError, match="sparsity must be an integer"):
        hierarchical_constraints((8, 8), 3, 2.5)
    facts, res = hierarchical_constraints((1, 5), 2, 1)  # a single row: counts stay >= 1
    assert [(f.k, f.k_col) for f in facts] == [(1, 1)]
    assert [(r.k, r.k_col) for r in res] == [(5, 1)]
    for bad in [(0, 4), (4, 0), (4,), "ab", None]:
        with pytest.raises(ValueError, match="shape must"):
            hierarchical_constraints(bad, 3, 1)
    with pytest.raises(ValueError, match="projection must be 'splincol'"):
        hierarchical_constraints((8, 8), 3, 1, projection="splin")
    with pytest.raises(ValueError, match="n_factors"):
        hierarchical_constraints((8, 8), 1, 1)
    assert len(hierarchical_constraints((8, 8), 2, 8)[0]) == 1  # s = min(m, n) is allowed


def test_documented_defaults():
    params = solver().get_params()
    assert params == dict(
        n_iter=300,
        n_iter_global=None,
        tol=1e-6,
        update_way="right-to-left",
        safeguard=False,
        n_jobs=None,
    )
