"""The fixed cost of small calls: each call against its arithmetic done directly.

Run: ``python benchmarks/profile_call_overhead.py`` (``--repeat N`` timed runs of each, best
kept; ``--profile`` adds a cProfile listing of the library's own functions in each call).

Calls (fixed data and seeds):

- ``mmd2_nystrom`` on 5,000 + 5,000 points in 5-D (RBF kernel, gamma = 1/d, the default
  number of landmarks, ``random_state=0``). Floor: the landmarks' K(x, S) of the pooled points
  (GEMM distances, ``exp``), its column sums per sample, ``eigh`` of K(S, S), the products
  with the inverse square root, and the distinct-point check (the library's compiled loop).
- a 50 x 50 RBF Gram (``RBFKernel(gamma=0.2)(X)``). Floor: GEMM distances and ``exp``.
- a small OMP solve (32 features, 64 atoms, 3 non-zeros, 10 signals). Floor: the Gram and
  correlations (two GEMMs) and the compiled Batch-OMP loop called directly.
- ``Nystroem.transform`` of 100 points in 5-D with 20 landmarks. Floor: K(X, S) (GEMM
  distances, ``exp``) and its product with the normalization.

Call and floor runs alternate, best of ``--repeat`` each after warm-up runs, so that a busy
machine slows both alike; the overhead is the difference of the two bests. The thread counts
are those the library would use (``effective_n_jobs``) and BLAS's limit (threadpoolctl).
"""

import argparse
import cProfile
import os
import pstats
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import blas_threads, machine, print_table, threads  # noqa: E402

import sparsekit  # noqa: E402
from sparsekit.kernels import RBFKernel  # noqa: E402
from sparsekit.solvers import _cpu as omp_cpu  # noqa: E402
from sparsekit.solvers.dictionaries import make_sparse_coding_problem  # noqa: E402
from sparsekit.solvers.omp import OMP  # noqa: E402
from sparsekit.stats import NystromMMD, mmd2_nystrom  # noqa: E402
from sparsekit.stats._support_cpu import first_equal_rows  # noqa: E402


def rbf(A, B, gamma):
    """exp(-gamma ||a - b||^2) through one GEMM."""
    d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
    np.maximum(d, 0.0, out=d)
    d *= -gamma
    return np.exp(d, out=d)


def inv_sqrt(Kss):
    w, V = np.linalg.eigh(Kss)
    keep = w > w.max() * Kss.shape[0] * np.finfo(float).eps
    return (V[:, keep] / np.sqrt(w[keep])) @ V[:, keep].T


def case_mmd():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(5000, 5)), rng.normal(size=(5000, 5)) + 0.1
    S = NystromMMD("rbf", random_state=0).fit(X, Y).nystroem_.components_
    gamma, lam = 1.0 / X.shape[1], 1e-6

    def call():
        return mmd2_nystrom(X, Y, "rbf", random_state=0)

    def floor():
        pool = np.concatenate([X, Y])
        n = pool.shape[0]
        table = np.full(1 << max(1, 2 * n - 1).bit_length(), -1, dtype=np.int64)
        first_equal_rows(pool.view(np.uint64), table, np.empty(n, np.uint64), np.empty(n, np.int64))
        K = rbf(pool, S, gamma)
        M = inv_sqrt(rbf(S, S, gamma))
        diff = (K[:5000].sum(0) / 5000 - K[5000:].sum(0) / 5000) @ M
        return float(diff @ diff) + lam * (2 / 5000)

    assert np.isclose(call(), floor(), rtol=1e-6), (call(), floor())
    return "mmd2_nystrom 5,000+5,000 x 5", call, floor


def case_gram():
    X = np.random.default_rng(1).normal(size=(50, 5))
    kernel = RBFKernel(gamma=0.2)

    def call():
        return kernel(X)

    def floor():
        return rbf(X, X, 0.2)

    assert np.allclose(call(), floor(), atol=1e-12)
    return "RBF Gram 50 x 50", call, floor


def case_omp():
    D, Y, _ = make_sparse_coding_problem(32, 64, 3, n_signals=10, random_state=0)
    solver = OMP(n_nonzero_coefs=3)
    n_max, n_atoms, n_sig = 3, D.shape[1], Y.shape[1]

    def call():
        return solver.solve(D, Y)

    def floor():
        G, C = D.T @ D, Y.T @ D
        y_sq = (Y * Y).sum(0)
        idx = np.zeros((n_sig, n_max), np.int64)
        vals = np.zeros((n_sig, n_max))
        omp_cpu.omp_gram(
            0, n_sig, G, C, y_sq, n_max, -1.0, np.zeros(n_sig), 1e-14, idx, vals,
            np.zeros((n_sig, n_max + 1)), np.zeros(n_sig, np.int64), np.zeros(n_sig, np.int64),
            np.zeros((1, 1, 1)), False, np.empty((n_max, n_max)), np.empty((3, n_max)),
            np.zeros(n_atoms, np.bool_), np.empty(n_atoms),
        )  # fmt: skip
        return idx, vals

    call()
    floor()
    return "OMP 32 x 64, 3 nnz, 10 signals", call, floor


def case_transform():
    rng = np.random.default_rng(2)
    X, Xt = rng.normal(size=(500, 5)), rng.normal(size=(100, 5))
    ny = sparsekit.Nystroem(kernel="rbf", n_components=20, random_state=0).fit(X)
    S, M, gamma = ny.components_, ny.normalization_, ny.kernel_.effective_gamma(5)

    def call():
        return ny.transform(Xt)

    def floor():
        return rbf(Xt, S, gamma) @ M

    assert np.allclose(call(), floor(), atol=1e-10)
    return "Nystroem.transform 100 x 5, s=20", call, floor


def interleaved(call, floor, repeat, warmup=20):
    for _ in range(warmup):
        call()
        floor()
    best_call = best_floor = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        call()
        t1 = time.perf_counter()
        floor()
        t2 = time.perf_counter()
        best_call, best_floor = min(best_call, t1 - t0), min(best_floor, t2 - t1)
    return best_call, best_floor


def profile(name, call, n=200):
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        call()
    prof.disable()
    print(f"\n## cProfile of {n} calls: {name} (sparsekit's functions, by cumulative time)\n")
    pstats.Stats(prof).sort_stats("cumulative").print_stats("sparsekit", 25)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=300, help="timed runs of each (best kept)")
    parser.add_argument("--profile", action="store_true", help="add cProfile listings")
    args = parser.parse_args()
    print(machine())
    print(f"threads: sparsekit {threads()}, BLAS {blas_threads()}\n")
    rows, cases = [], [case_mmd(), case_gram(), case_omp(), case_transform()]
    for name, call, floor in cases:
        t_call, t_floor = interleaved(call, floor, args.repeat)
        rows.append(
            {
                "call": name,
                "time ms": f"{t_call * 1e3:.3f}",
                "floor ms": f"{t_floor * 1e3:.3f}",
                "overhead ms": f"{(t_call - t_floor) * 1e3:.3f}",
                "threads": f"{threads()} / BLAS {blas_threads()}",
            }
        )
    print(f"best of {args.repeat}, call and floor interleaved\n")
    print_table(rows, ["call", "time ms", "floor ms", "overhead ms", "threads"])
    if args.profile:
        for name, call, _ in cases:
            profile(name, call)


if __name__ == "__main__":
    main()
