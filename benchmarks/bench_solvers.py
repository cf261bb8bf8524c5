"""Sparse solvers against the anchors users would pick, side by side, same data and threads.

1. Batched OMP on three shapes of unit-norm Gaussian dictionaries, signals k-sparse plus 1%
   noise, k atoms each: 64 x 256 with 4,000 signals and k = 5, 128 x 512 with 6,000 and
   k = 10, 256 x 1024 with 2,000 and k = 16. sparsekit's ``omp`` against SPAMS ``spams.omp``
   (C++ Batch-OMP, OpenMP over signals; ``numThreads`` = sparsekit's thread count,
   Fortran-ordered inputs) at one thread and at every core, and (256 x 1024 only) against
   scikit-learn's ``orthogonal_mp`` / ``orthogonal_mp_gram``. Checked: coefficients equal to
   scikit-learn's (1e-8), residual norms equal to SPAMS's (see ``check_spams``).
2. Batched MP on the same problem against a NumPy reference loop (one GEMM ``D^T R`` per
   iteration, the residual form of the algorithm); coefficients compared.
3. Frank–Wolfe on the l1 ball, 2,000 x 4,000 Gaussian dictionary, one 8-sparse signal plus 1%
   noise, 500 iterations, against copt's ``minimize_frank_wolfe`` with its ``L1Ball`` linear
   oracle: the same ``2/(k+2)`` step in both (iterates compared), and sparsekit's exact line
   search against copt's adaptive backtracking step (objective values compared).
4. NN-OMP for scale (no anchor library has it).

Every row prints the thread count of each side (sparsekit: Numba + BLAS through
``sparsekit.thread_limit``; the anchor: the same BLAS limit, plus ``numThreads`` for
SPAMS). The load average is printed before and after the run. Times are the best of
``--repeat`` runs after one warm-up run of each side, alternating the two sides. Exits non-zero
when an answer disagrees with its anchor. ``--quick`` runs small sizes; ``--cases`` picks the
sections (``omp,mp,fw``), ``--no-sklearn`` skips the scikit-learn OMP rows. Timings on a
shared machine are indicative; compare the ratios.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
from _timing import best_time, machine, print_table
from sklearn.linear_model import orthogonal_mp, orthogonal_mp_gram

from sparsekit._runtime.threads import thread_limit, usable_cpus
from sparsekit.solvers.dictionaries import make_sparse_coding_problem
from sparsekit.solvers.fw import FrankWolfe
from sparsekit.solvers.mp import MatchingPursuit
from sparsekit.solvers.nnomp import NonNegativeOMP
from sparsekit.solvers.omp import OMP

FAILURES = []


def check(ok, what):
    if not ok:
        FAILURES.append(what)
    return "yes" if ok else "NO"


def pair_time(ours, anchor, repeat):
    """Best-of-``repeat`` of both after one warm-up each, the two alternated run by run."""
    ours()
    anchor()
    t_ours = t_anchor = np.inf
    for _ in range(repeat):
        t_ours = min(t_ours, best_time(ours, repeat=1, warmup=0))
        t_anchor = min(t_anchor, best_time(anchor, repeat=1, warmup=0))
    return t_ours, t_anchor


def noisy_problem(n_features, n_atoms, k, n_signals, seed):
    D, Y, X = make_sparse_coding_problem(n_features, n_atoms, k, n_signals, random_state=seed)
    rng = np.random.default_rng(seed + 1)
    Y = Y + 0.01 * np.linalg.norm(Y, axis=0) / np.sqrt(n_features) * rng.standard_normal(Y.shape)
    return D, Y, X


def row(task, problem, threads, anchor, t_anchor, ours, t_ours, agree):
    return dict(
        task=task,
        problem=problem,
        threads=threads,
        anchor=anchor,
        anchor_s=f"{t_anchor:.4f}",
        sparsekit=ours,
        sparsekit_s=f"{t_ours:.4f}",
        speedup=f"{t_anchor / t_ours:.2f}x",
        agree=agree,
    )


def check_spams(D, Y, ours, theirs):
    """Same residual norms per signal (1e-6 relative) on at least 98% of the signals and within
    1% on all: both run Batch-OMP, but SPAMS's correlation updates round differently, which
    flips near-tied selections at the last atoms of a few noisy signals."""
    r_ours = np.linalg.norm(Y - D @ ours, axis=0)
    r_theirs = np.linalg.norm(Y - D @ theirs, axis=0)
    rel = np.abs(r_ours - r_theirs) / r_theirs
    same = float(np.mean(rel <= 1e-6))
    ok = same >= 0.98 and rel.max() <= 1e-2
    return (
        check(ok, "OMP residuals vs SPAMS") + f" ({same:.1%} equal, max rel diff {rel.max():.1e})"
    )


#: the OMP shapes (n_features, n_atoms, n_signals, k); scikit-learn runs on the last one
OMP_SHAPES = ((64, 256, 4000, 5), (128, 512, 6000, 10), (256, 1024, 2000, 16))


def bench_omp(
    n_features, n_atoms, n_signals, k, repeat, thread_counts, sklearn=True, with_sklearn=True
):
    import spams

    D, Y, _ = noisy_problem(n_features, n_atoms, k, n_signals, seed=1)
    shape = f"{n_features}x{n_atoms}, {n_signals} sig, k={k}"
    Df, Yf = np.asfortranarray(D), np.asfortranarray(Y)
    omp = OMP(n_nonzero_coefs=k)
    rows = []
    for n in thread_counts:
        with thread_limit(n):
            ours = omp.solve(D, Y).coef
            theirs = spams.omp(Yf, Df, L=k, numThreads=n).toarray()
            agree = check_spams(D, Y, ours, theirs)
            t_ours, t_sp = pair_time(
                lambda: omp.solve(D, Y), lambda: spams.omp(Yf, Df, L=k, numThreads=n), repeat
            )
        rows.append(
            row(
                "OMP",
                shape,
                f"{n} / {n}",
                "SPAMS spams.omp (numThreads)",
                t_sp,
                "omp (Gram built in the call)",
                t_ours,
                agree,
            )
        )
    if not sklearn:
        return rows
    n = thread_counts[-1]
    with thread_limit(n):
        G = D.T @ D
        DtY = D.T @ Y
        if with_sklearn:
            ref = orthogonal_mp(D, Y, n_nonzero_coefs=k)
            err = np.abs(omp.solve(D, Y).coef - ref).max() / np.abs(ref).max()
            agree = check(err < 1e-8, "OMP vs scikit-learn") + f" (max rel {err:.0e})"
            t_ours, t_sk = pair_time(
                lambda: omp.solve(D, Y), lambda: orthogonal_mp(D, Y, n_nonzero_coefs=k), repeat
            )
            rows.append(
                row(
                    "OMP",
                    shape,
                    f"{n} / {n} (BLAS)",
                    "sklearn orthogonal_mp",
                    t_sk,
                    "omp (Gram built in the call)",
                    t_ours,
                    agree,
                )
            )
            t_ours, t_skg = pair_time(
                lambda: omp.solve(D, Y, gram=G),
                lambda: orthogonal_mp_gram(G, DtY, n_nonzero_coefs=k),
                repeat,
            )
            rows.append(
                row(
                    "OMP, Gram given",
                    shape,
                    f"{n} / {n} (BLAS)",
                    "sklearn orthogonal_mp_gram",
                    t_skg,
                    "omp gram=G",
                    t_ours,
                    agree,
                )
            )
        t_nn = best_time(
            lambda: NonNegativeOMP(n_nonzero_coefs=k).solve(D, Y, gram=G), repeat=repeat
        )
        rows.append(
            dict(
                task="NN-OMP",
                problem=shape,
                threads=f"{n} / -",
                anchor="-",
                anchor_s="-",
                sparsekit="nn-omp gram=G",
                sparsekit_s=f"{t_nn:.3f}",
                speedup="-",
                agree="-",
            )
        )
    return rows


def mp_numpy(D, Y, n_iter):
    """Reference Matching Pursuit, batched with NumPy: ``C = D^T R`` per iteration,
    ``i = argmax |c_i| / ||d_i||``, ``x_i += c_i / ||d_i||^2``, ``R -= (c_i / ||d_i||^2) d_i``."""
    norms_sq = np.einsum("ij,ij->j", D, D)
    inv = 1.0 / np.sqrt(norms_sq)
    R = Y.copy()
    X = np.zeros((D.shape[1], Y.shape[1]))
    cols = np.arange(Y.shape[1])
    for _ in range(n_iter):
        C = D.T @ R
        i = np.argmax(np.abs(C) * inv[:, None], axis=0)
        a = C[i, cols] / norms_sq[i]
        np.add.at(X, (i, cols), a)
        R -= D[:, i] * a
    return X


def bench_mp(n_features, n_atoms, n_signals, k, repeat, thread_counts):
    D, Y, _ = noisy_problem(n_features, n_atoms, k, n_signals, seed=1)
    shape = f"{n_features}x{n_atoms}, {n_signals} sig, {k} it"
    rows = []
    for n in thread_counts:
        with thread_limit(n):
            ours = MatchingPursuit(max_iter=k).solve(D, Y).coef
            ref = mp_numpy(D, Y, k)
            err = np.abs(ours - ref).max() / np.abs(ref).max()
            agree = check(err < 1e-8, "MP vs NumPy reference") + f" (max rel {err:.0e})"
            t_ours, t_ref = pair_time(
                lambda: MatchingPursuit(max_iter=k).solve(D, Y), lambda: mp_numpy(D, Y, k), repeat
            )
        rows.append(
            row(
                "MP",
                shape,
                f"{n} / {n} (BLAS)",
                "NumPy loop (GEMM per it)",
                t_ref,
                "mp (auto: Gram form)",
                t_ours,
                agree,
            )
        )
    return rows


def bench_fw(n_features, n_atoms, n_iter, repeat, thread_counts):
    import copt

    D, Y, X = noisy_problem(n_features, n_atoms, 8, 1, seed=4)
    y = Y[:, 0]
    beta = 8 * np.abs(X).sum()
    lmo = copt.constraint.L1Ball(beta).lmo
    lipschitz = np.linalg.norm(D, 2) ** 2  # only skips copt's initial estimate

    def f_grad(x):
        r = D @ x - y
        return 0.5 * (r @ r), D.T @ r

    def objective(x):
        return 0.5 * np.sum((y - D @ x) ** 2)

    def copt_run(step):
        return copt.minimize_frank_wolfe(
            f_grad,
            np.zeros(n_atoms),
            lmo,
            jac=True,
            step=step,
            lipschitz=lipschitz,
            max_iter=n_iter,
            tol=0.0,
        ).x

    shape = f"{n_features}x{n_atoms}, 1 sig, {n_iter} it"
    rows = []
    for n in thread_counts:
        with thread_limit(n):
            fw = FrankWolfe(beta=beta, step="2/(k+2)", max_iter=n_iter)
            res = fw.solve(D, y)
            ref = copt_run("sublinear")
            err = np.abs(res.coef - ref).max() / np.abs(ref).max()
            agree = (
                check(res.n_iter == n_iter and err < 1e-8, "FW 2/(k+2) vs copt")
                + f" (iterates, max rel {err:.0e})"
            )
            t_ours, t_copt = pair_time(
                lambda: fw.solve(D, y), lambda: copt_run("sublinear"), repeat
            )
            rows.append(
                row(
                    "Frank-Wolfe 2/(k+2)",
                    shape,
                    f"{n} / {n} (BLAS)",
                    "copt minimize_frank_wolfe sublinear",
                    t_copt,
                    "frank-wolfe 2/(k+2)",
                    t_ours,
                    agree,
                )
            )
            ls = FrankWolfe(beta=beta, max_iter=n_iter)
            f_ours = objective(ls.solve(D, y).coef)
            f_copt = objective(copt_run("backtracking"))
            agree = (
                check(f_ours <= f_copt * (1 + 1e-6), "FW line search vs copt backtracking")
                + f" (objective {f_ours:.4g} vs {f_copt:.4g})"
            )
            t_ours, t_copt = pair_time(
                lambda: ls.solve(D, y), lambda: copt_run("backtracking"), repeat
            )
            rows.append(
                row(
                    "Frank-Wolfe, adaptive step",
                    shape,
                    f"{n} / {n} (BLAS)",
                    "copt backtracking step",
                    t_copt,
                    "frank-wolfe line search",
                    t_ours,
                    agree,
                )
            )
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    parser.add_argument("--repeat", type=int, default=5, help="best of this many runs")
    parser.add_argument(
        "--no-sklearn",
        action="store_true",
        help="skip the scikit-learn OMP rows (about a minute at full size)",
    )
    parser.add_argument(
        "--cases",
        default="omp,mp,fw",
        help="comma-separated subset of omp, mp, fw (default: all)",
    )
    args = parser.parse_args()
    cases = {c.strip().lower() for c in args.cases.split(",") if c.strip()}
    unknown = cases - {"omp", "mp", "fw"}
    if unknown:
        parser.error(f"--cases: unknown {sorted(unknown)}; choose from omp, mp, fw")
    print(machine())
    threads = sorted({1, usable_cpus()})
    repeat = 1 if args.quick else args.repeat
    t0 = time.perf_counter()
    warnings.simplefilter("ignore", RuntimeWarning)  # noisy signals: no premature stops here
    rows = []
    if "omp" in cases:
        shapes = [(64, 256, 300, 8)] if args.quick else OMP_SHAPES
        for i, (m, n, n_sig, k) in enumerate(shapes):
            rows += bench_omp(
                m,
                n,
                n_sig,
                k,
                repeat,
                threads,
                sklearn=i == len(shapes) - 1,
                with_sklearn=not args.no_sklearn,
            )
    if "mp" in cases:
        mp_shape = (64, 256, 300, 8) if args.quick else (256, 1024, 2000, 16)
        rows += bench_mp(*mp_shape, repeat, threads)
    if "fw" in cases:
        rows += bench_fw(*((300, 600, 100) if args.quick else (2000, 4000, 500)), repeat, threads)
    print(
        f"threads: sparsekit / anchor; best of {repeat} after a warm-up, "
        f"{time.perf_counter() - t0:.0f} s in all; after the run: {machine()}\n"
    )
    print_table(
        rows,
        [
            "task",
            "problem",
            "threads",
            "anchor",
            "anchor_s",
            "sparsekit",
            "sparsekit_s",
            "speedup",
            "agree",
        ],
    )
    if FAILURES:
        print(f"\nanswers disagree with the anchor: {FAILURES}")
        sys.exit(1)


if __name__ == "__main__":
    main()
