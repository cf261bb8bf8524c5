"""Sparse solvers against scikit-learn's OMP and the physical floor of Frank–Wolfe, side by side.

1. Batched OMP: D of 256 x 1024 unit-norm Gaussian atoms, 2,000 signals (16-sparse plus 1% noise),
   16 atoms each. sparsekit's ``omp`` (Gram built inside the call, and with a precomputed Gram)
   against scikit-learn's ``orthogonal_mp`` (default, no Gram) and ``orthogonal_mp_gram`` with a
   precomputed Gram. Coefficients are checked equal before timing.
2. Batched MP and NN-OMP on the same problem (no anchor library has them; reported for scale).
3. Frank–Wolfe (line search) on a 2,000 x 4,000 Gaussian dictionary, 500 iterations, one signal:
   time per iteration against one dense correlation ``D^T r`` (the physical floor of an iteration).

Run ``python benchmarks/bench_solvers.py`` (``--quick`` for a small version). Numba is warmed up
before timing; timings on shared machines are indicative.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from _timing import best_time, machine, print_table
from sklearn.linear_model import orthogonal_mp, orthogonal_mp_gram

from sparsekit.solvers.dictionaries import make_sparse_coding_problem
from sparsekit.solvers.fw import FrankWolfe
from sparsekit.solvers.mp import MatchingPursuit
from sparsekit.solvers.nnomp import NonNegativeOMP
from sparsekit.solvers.omp import OMP


def warm_up():
    """Compile every kernel used below (float64) on a tiny problem."""
    D, Y, _ = make_sparse_coding_problem(20, 40, 3, n_signals=4, random_state=0)
    OMP(n_nonzero_coefs=3, precompute=True).solve(D, Y)
    OMP(n_nonzero_coefs=3, precompute=False).solve(D, Y)
    MatchingPursuit(max_iter=3, precompute=True).solve(D, Y)
    NonNegativeOMP(n_nonzero_coefs=3).solve(D, Y)
    FrankWolfe(beta=1.0, max_iter=3).solve(D, Y[:, 0])


def bench_omp(n_features, n_atoms, n_signals, k, repeat):
    D, Y, _ = make_sparse_coding_problem(n_features, n_atoms, k, n_signals, random_state=1)
    rng = np.random.default_rng(2)
    Y = Y + 0.01 * np.linalg.norm(Y, axis=0) / np.sqrt(n_features) * rng.standard_normal(Y.shape)
    G = D.T @ D
    DtY = D.T @ Y
    omp = OMP(n_nonzero_coefs=k)
    ours = omp.solve(D, Y).coef
    ref = orthogonal_mp(D, Y, n_nonzero_coefs=k)
    err = np.abs(ours - ref).max() / np.abs(ref).max()
    assert err < 1e-8, err
    rows = []
    t_sk = best_time(lambda: orthogonal_mp(D, Y, n_nonzero_coefs=k), repeat=repeat)
    t_skg = best_time(lambda: orthogonal_mp_gram(G, DtY, n_nonzero_coefs=k), repeat=repeat)
    t_ours = best_time(lambda: omp.solve(D, Y), repeat=repeat)
    t_ours_g = best_time(lambda: omp.solve(D, Y, gram=G), repeat=repeat)
    t_ours_r = best_time(lambda: OMP(n_nonzero_coefs=k, precompute=False).solve(D, Y),
                         repeat=repeat)
    shape = f"{n_features}x{n_atoms}, {n_signals} sig, k={k}"
    rows.append(dict(task="OMP (no Gram given)", problem=shape, anchor="sklearn orthogonal_mp",
                     anchor_s=f"{t_sk:.3f}", sparsekit="omp (auto: Gram built in call)",
                     sparsekit_s=f"{t_ours:.3f}", speedup=f"{t_sk / t_ours:.1f}x"))
    rows.append(dict(task="OMP (no Gram given)", problem=shape, anchor="sklearn orthogonal_mp",
                     anchor_s=f"{t_sk:.3f}", sparsekit="omp precompute=False (GEMM/iter)",
                     sparsekit_s=f"{t_ours_r:.3f}", speedup=f"{t_sk / t_ours_r:.1f}x"))
    rows.append(dict(task="OMP (Gram given)", problem=shape, anchor="sklearn orthogonal_mp_gram",
                     anchor_s=f"{t_skg:.3f}", sparsekit="omp gram=G",
                     sparsekit_s=f"{t_ours_g:.3f}", speedup=f"{t_skg / t_ours_g:.1f}x"))
    t_mp = best_time(lambda: MatchingPursuit(max_iter=k).solve(D, Y), repeat=repeat)
    t_nn = best_time(lambda: NonNegativeOMP(n_nonzero_coefs=k).solve(D, Y, gram=G),
                     repeat=repeat)
    rows.append(dict(task="MP", problem=shape, anchor="-", anchor_s="-",
                     sparsekit=f"mp max_iter={k}", sparsekit_s=f"{t_mp:.3f}", speedup="-"))
    rows.append(dict(task="NN-OMP", problem=shape, anchor="-", anchor_s="-",
                     sparsekit="nn-omp gram=G", sparsekit_s=f"{t_nn:.3f}", speedup="-"))
    return rows


def bench_fw(n_features, n_atoms, n_iter, repeat):
    rng = np.random.default_rng(3)
    D, y, x = make_sparse_coding_problem(n_features, n_atoms, 8, 1, random_state=4)
    y = y[:, 0]
    beta = 8 * np.abs(x).sum()
    fw = FrankWolfe(beta=beta, max_iter=n_iter)
    res = fw.solve(D, y)
    assert res.n_iter == n_iter, (res.n_iter, res.stop_reason)
    r = rng.standard_normal(n_features)

    def floor_run():  # as many correlations as FW iterations: same exposure to machine noise
        for _ in range(n_iter):
            D.T @ r

    # alternate the two so that both see the same load on a shared machine
    t_fw, t_floor = np.inf, np.inf
    for _ in range(repeat):
        t_fw = min(t_fw, best_time(lambda: fw.solve(D, y), repeat=1, warmup=0))
        t_floor = min(t_floor, best_time(floor_run, repeat=1, warmup=0))
    t_corr = t_floor / n_iter
    per_iter = t_fw / n_iter
    return [dict(task="Frank-Wolfe line search", problem=f"{n_features}x{n_atoms}, {n_iter} it",
                 anchor="one D^T r (floor, mean)", anchor_s=f"{t_corr * 1e3:.3f} ms",
                 sparsekit="fw time / iteration", sparsekit_s=f"{per_iter * 1e3:.3f} ms",
                 speedup=f"{t_corr / per_iter:.2f}x (floor/iter)")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    args = parser.parse_args()
    print(machine())
    t0 = time.perf_counter()
    warm_up()
    print(f"warm-up (Numba compile or cache load): {time.perf_counter() - t0:.1f} s")
    if args.quick:
        rows = bench_omp(128, 512, 300, 8, repeat=1) + bench_fw(500, 1000, 100, repeat=1)
    else:
        rows = bench_omp(256, 1024, 2000, 16, repeat=3) + bench_fw(2000, 4000, 500, repeat=2)
    print_table(rows, ["task", "problem", "anchor", "anchor_s", "sparsekit", "sparsekit_s",
                       "speedup"])


if __name__ == "__main__":
    main()
