"""The frank-wolfe-recovery task (sparsekit.experiments.fw_recovery): its protocol, the table of
the example, and each rule of its rows against exact arithmetic and closed forms."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from sparsekit.run import load_spec, run_spec, run_task
from tests.test_examples import _load as _load_example

SPECS = Path(__file__).resolve().parents[2] / "examples" / "specs"


def test_frank_wolfe_recovery_task_protocol():
    """One generator draws dictionary 0 first (its coherence and m are the first row's), then
    the signals; Theorem 4 holds inside the hypotheses (every selected atom in the support);
    the rows come by part; m beyond the dimension is skipped; OMP recovers m-sparse signals."""
    import math

    from sparsekit.run.data import SOURCES
    from sparsekit.solvers.coherence import mutual_coherence
    from sparsekit.solvers.dictionaries import gaussian_dictionary

    data = SOURCES["gaussian-dictionary"](n_features=60, n_atoms=120)
    rows = run_task(
        "frank-wolfe-recovery",
        {"n_dictionaries": 2, "n_signals": 4, "max_iter": 200, "outside_factors": [2, 100]},
        data,
        seed=1,
    )
    assert [r["part"] for r in rows] == ["inside"] * 2 + ["outside"] + ["compare"] * 4
    mu = mutual_coherence(gaussian_dictionary(60, 120, np.random.default_rng(1)))
    first = rows[0]
    assert first["mu"] == mu and first["m"] < (1 / mu + 1) / 2 <= first["m"] + 1
    for r in rows[:2]:
        assert r["all_in_support"] and r["bound_slope"] == 0.5 * math.log1p(-r["theta"])
        assert r["observed_slope"] < 0 or math.isnan(r["observed_slope"])
    assert rows[2]["factor"] == 2 and rows[2]["m"] == 2 * min(r["m"] for r in rows[:2])
    compare = {r["solver"]: r for r in rows[3:]}
    assert list(compare) == ["OMP", "MP", "FW (line search)", "FW (2/(k+2))"]
    assert compare["OMP"]["worst_final"] < 1e-10 and "curves" not in compare["OMP"]


def test_frank_wolfe_spec_prints_the_example_table(tmp_path, capsys):
    """The spec at the example's sizes gives the example's first table, cell for cell."""

    example = _load_example("frank_wolfe_recovery")
    example.main(
        [
            "--n-features",
            "60",
            "--n-atoms",
            "120",
            "--dictionaries",
            "2",
            "--signals",
            "3",
            "--iters",
            "60",
            "--seed",
            "2",
            "--out",
            str(tmp_path / "ex"),
        ]
    )
    printed = capsys.readouterr().out
    spec = load_spec(
        SPECS / "frank_wolfe_recovery.toml",
        overrides=[
            "data.n_features=60",
            "data.n_atoms=120",
            "params.n_dictionaries=2",
            "params.n_signals=3",
            "params.max_iter=60",
            "seed=2",
        ],
    )
    run_spec(spec, out=tmp_path / "spec", stream=open(os.devnull, "w"))
    with open(tmp_path / "spec" / "results.jsonl") as fh:  # NaN is written as null
        rows = [
            {k: float("nan") if v is None else v for k, v in json.loads(line).items()}
            for line in fh
        ]
    inside = example.inside_table_rows([r for r in rows if r["part"] == "inside"])
    assert len(inside) == 2
    for r in inside:
        assert "| " + " | ".join(str(v) for v in r.values()) + " |" in printed
    compare = example.compare_table_rows([r for r in rows if r["part"] == "compare"])
    for r in compare:  # all but the timings
        assert (
            f"| {r['solver']} | {r['iterations']} | {r['stop']} | {r['worst_final']} |" in printed
        )


def _fw_rows(draw, seed=0, **params):
    """The ``frank-wolfe-recovery`` rows with the dictionary draw ``draw(rng) -> D``."""
    base = {"n_dictionaries": 1, "n_signals": 3, "max_iter": 60, "compare": False}
    return run_task(
        "frank-wolfe-recovery", {**base, **params}, {"draw_dictionary": draw}, seed=seed
    )


def _spike_and_sign(d):
    """e_1..e_d and one atom of random signs / √d: μ = 1/√d exactly, a new dictionary per draw."""
    return lambda rng: np.hstack([np.eye(d), rng.choice([-1.0, 1.0], (d, 1)) / np.sqrt(d)])


def test_frank_wolfe_recovery_largest_m_is_strict_at_a_tie():
    """Oracle: exact rational arithmetic, m < (1/μ + 1)/2 ⇔ (2m − 1) μ < 1 for the float μ; at
    μ = 1/5 the bound is 3 exactly and m = 3 is excluded (Tropp 2004, Thm 3.5: strict)."""
    from fractions import Fraction

    from sparsekit.experiments.fw_recovery import largest_m

    for mu in (0.1, 0.125, 0.2, 0.25, 0.3, 0.5, 1.0):
        expected = max(m for m in range(30) if (2 * m - 1) * Fraction(mu) < 1)
        assert largest_m(mu) == expected, mu
    assert largest_m(0.2) == 2


def test_frank_wolfe_recovery_babel_is_taken_at_m_minus_one():
    """Oracle: closed form. For e_1..e_16 and v = (±1, ..., ±1)/4, μ = 1/4 (m = 2); the babel
    function μ₁(k) is the largest sum of k entries |⟨d_i, d_j⟩| of a row: μ₁(1) = 1/4 (row v:
    1/4 each), μ₁(2) = 1/2; Theorem 5 needs μ₁(m − 1) = 1/4."""
    (row,) = [
        r for r in _fw_rows(_spike_and_sign(16), outside_factors=[1]) if r["part"] == "inside"
    ]
    assert row["m"] == 2
    assert row["babel_m1"] == pytest.approx(0.25, abs=1e-12)
    assert row["sparsity_bound"] == pytest.approx(2.5, abs=1e-12)


def test_frank_wolfe_recovery_outside_skips_m_at_the_dimension():
    """Oracle: the rule m < d (an m-sparse signal in dimension d needs m < d). With d = 8,
    μ = 1/√8 and m* = 1: factor 7 runs (m = 7), factors 8 (m = d) and 9 do not."""
    rows = _fw_rows(_spike_and_sign(8), outside_factors=[7, 8, 9])
    assert [r["m"] for r in rows if r["part"] == "inside"] == [1]
    assert [(r["factor"], r["m"]) for r in rows if r["part"] == "outside"] == [(7, 7)]


def test_frank_wolfe_recovery_outside_uses_beta_factor():
    """Oracle: the documented protocol recomputed: one generator (the seed) draws dictionary 0
    and its m*-sparse signals, then the outside dictionary and its (2 m*)-sparse signals;
    Frank–Wolfe with line search and β = ``beta_factor`` ‖x*‖₁ per signal."""
    from sparsekit.solvers.dictionaries import sparse_signals
    from sparsekit.solvers.fw import FrankWolfe

    draw, seed, k = _spike_and_sign(16), 4, 3
    rng = np.random.default_rng(seed)
    sparse_signals(draw(rng), 2, k, rng)
    D = draw(rng)
    Y, X = sparse_signals(D, 4, k, rng)
    for beta_factor in (1.5, 8.0):
        res = FrankWolfe(beta=beta_factor * np.abs(X).sum(axis=0), max_iter=30, tol=1e-20).solve(
            D, Y
        )
        final = res.residual_norms[res.n_iter, np.arange(k)] / np.linalg.norm(Y, axis=0)
        rows = _fw_rows(draw, seed, beta_factor=beta_factor, max_iter=30, outside_factors=[2])
        (row,) = [r for r in rows if r["part"] == "outside"]
        assert row["m"] == 4
        assert row["mean_final"] == pytest.approx(final.mean(), rel=1e-9)
        assert row["worst_final"] == pytest.approx(final.max(), rel=1e-9)


def test_frank_wolfe_recovery_final_residual_is_the_last_of_each_curve():
    """Oracle: the curves themselves (‖r_k‖/‖y‖ per iteration, NaN after a signal stopped):
    ``mean_final`` and ``worst_final`` are the mean and max of each column's last finite
    entry; ``observed_slope`` is the largest least-squares slope of ln curve (NumPy polyfit)."""
    rows = _fw_rows(
        _spike_and_sign(36), seed=3, max_iter=12, outside_factors=[3], return_curves=True
    )
    assert [r["part"] for r in rows] == ["inside", "outside"]
    for row in rows:
        curves = row["curves"]
        last = np.array([c[np.isfinite(c)][-1] for c in curves.T])
        if row["part"] == "outside":
            assert row["mean_final"] == pytest.approx(last.mean(), rel=1e-12)
            assert row["worst_final"] == pytest.approx(last.max(), rel=1e-12)
        slopes = []
        for c in curves.T:
            k = np.flatnonzero(np.isfinite(c) & (c > 0))
            if k.size >= 3:
                slopes.append(np.polyfit(k, np.log(c[k]), 1)[0])
        assert row["observed_slope"] == pytest.approx(max(slopes), rel=1e-9)


def test_frank_wolfe_recovery_slopes_closed_form():
    """Oracle: closed form. Columns exp(−a k) have slope −a; the worst (largest) is kept; a
    column with fewer than 3 finite positive entries has no slope."""
    from sparsekit.experiments.fw_recovery import fit_slope, worst_slope

    k = np.arange(10.0)
    curves = np.column_stack([np.exp(-0.5 * k), np.exp(-0.1 * k), np.exp(-2.0 * k)])
    curves[6:, 2] = np.nan
    assert worst_slope(curves) == pytest.approx(-0.1, rel=1e-9)
    assert fit_slope(curves[:, 2]) == pytest.approx(-2.0, rel=1e-9)
    two = np.array([1.0, 0.5, np.nan, np.nan])
    assert np.isnan(fit_slope(two)) and np.isnan(worst_slope(two[:, None]))
    assert fit_slope(np.array([1.0, 0.5, 0.25, 0.0])) == pytest.approx(np.log(0.5), rel=1e-9)


def test_frank_wolfe_recovery_compares_on_dictionary_zero():
    """Oracle: an invariance. Part 3 runs Frank–Wolfe with line search on dictionary 0's
    signals, the very solve of part 1's first row, so their curves agree; the second
    dictionary's differ."""
    rows = _fw_rows(
        _spike_and_sign(36),
        seed=5,
        n_dictionaries=2,
        max_iter=12,
        outside_factors=[100],
        compare=True,
        return_curves=True,
    )
    inside = [r for r in rows if r["part"] == "inside"]
    fw = next(r for r in rows if r.get("solver") == "FW (line search)")
    np.testing.assert_allclose(fw["curves"], inside[0]["curves"], rtol=1e-12)
    assert not np.allclose(fw["curves"], inside[1]["curves"], equal_nan=True)
