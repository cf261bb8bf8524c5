"""Kernel Gram matrices: sparsekit against scikit-learn (and GraKeL), in one process.

Run: ``python benchmarks/bench_kernels.py`` (``--quick`` for small sizes). Prints one table
with the time of each library (best of 3 after one warm-up run, both sides), the speed-up
ratio (anchor time / sparsekit time) and the threads of each side, after checking that the
values agree (the script exits 1 when they do not). Every case runs with the default threads
and again with everything limited to one thread (``sparsekit.thread_limit(1)``: Numba, BLAS
and sparsekit's own pools). Each dtype is compared with the anchor on the same dtype
(scikit-learn computes float32 distances in float64 chunks and returns float32).

The "floor" columns time, on the same data and threads, the one operation each kernel cannot
avoid: for chi2 a vectorized Numba loop doing only its n m d divisions
(``out[i, j] = sum_k x_ik / (y_jk + 1)``), for RBF the cross-term product ``X @ X.T`` (BLAS);
each floor allocates its n x n result, as the kernel call does. ``vs floor`` is sparsekit's time
over the floor's. ``--cases chi2,rbf`` runs only the vector
cases whose name starts with one of the given words (and skips the other tables);
``--one-thread`` runs only the one-thread rows.
"""

import argparse
import os
import subprocess
import sys
import tracemalloc

import numpy as np
from numba import njit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_time, blas_threads, check, finish, machine, print_table, threads  # noqa: E402

import sparsekit  # noqa: E402

COLUMNS = [
    "case",
    "threads (sparsekit / anchor)",
    "sparsekit (s)",
    "anchor (s)",
    "anchor",
    "speed-up",
    "max rel. diff",
    "target",
    "floor (s)",
    "vs floor",
    "floor target",
]
#: largest relative difference accepted per dtype
RTOL = {np.float64: 1e-12, np.float32: 1e-5}


def _row(case, used, t_sk, t_anchor, anchor, err, target, t_floor, floor_target):
    row = {
        "case": case,
        "threads (sparsekit / anchor)": used,
        "sparsekit (s)": f"{t_sk:.3f}",
        "anchor (s)": f"{t_anchor:.3f}",
        "anchor": anchor,
        "speed-up": f"{t_anchor / t_sk:.2f}x",
        "max rel. diff": f"{err:.1e}",
        "target": target,
        "floor (s)": "-",
        "vs floor": "-",
        "floor target": floor_target,
    }
    if t_floor is not None:
        row.update({"floor (s)": f"{t_floor:.3f}", "vs floor": f"{t_sk / t_floor:.2f}x"})
    return row


@njit(nogil=True, error_model="numpy", fastmath={"reassoc", "contract"})
def _division_floor_rows(lo, hi, X, Y1, out):
    d = X.shape[1]
    m = Y1.shape[0]
    for i in range(lo, hi):
        for j in range(m):
            acc = out.dtype.type(0.0)
            for k in range(d):
                acc += X[i, k] / Y1[j, k]
            out[i, j] = acc


def _division_floor(X):
    """The chi2 floor: n m d divisions in a SIMD loop, on sparsekit's row-range threads."""
    from sparsekit._runtime.pools import run_row_ranges

    Y1 = X + X.dtype.type(1.0)
    return lambda: run_row_ranges(
        _division_floor_rows, X.shape[0], X, Y1, np.empty((X.shape[0], X.shape[0]), dtype=X.dtype)
    )


def _gemm_floor(X):
    """The RBF floor: the cross-term product alone (BLAS, as sparsekit computes it)."""
    return lambda: np.dot(X, X.T)


def _anchor_threads(anchor):
    # scikit-learn's chi2 kernel is a Cython loop and its Laplacian kernel SciPy's cdist (one
    # thread each); its RBF kernel is a BLAS GEMM and a NumPy exp
    return f"{blas_threads()} (BLAS)" if "rbf" in anchor else "1"


def bench_vector(quick, only=None, limits=(None, 1)):
    from sklearn.metrics import pairwise as skp

    rng = np.random.default_rng(0)
    n_small = 500 if quick else 2000
    n_rbf = 1000 if quick else 5000
    X128 = rng.random((n_rbf, 128))
    X_chi2 = rng.random((n_small, 128))
    cases = [  # (case, sparsekit kernel, anchor function, anchor name, data, target,
        #          floor (a function of the data), floor target)
        (
            f"chi2 {n_small}x{n_small}, d=128, f64",
            "chi2",
            skp.chi2_kernel,
            "sklearn chi2_kernel",
            X_chi2,
            ">= 2x",
            _division_floor,
            "<= 1.5x",
        ),
        (
            f"chi2 {n_small}x{n_small}, d=128, f32",
            "chi2",
            skp.chi2_kernel,
            "sklearn chi2_kernel",
            X_chi2.astype(np.float32),
            ">= 2x",
            _division_floor,
            "<= 1.5x",
        ),
        (
            f"rbf {n_rbf}x{n_rbf}, d=128, f64",
            "rbf",
            skp.rbf_kernel,
            "sklearn rbf_kernel f64",
            X128,
            ">= 1x",
            _gemm_floor,
            "<= 1.2x",
        ),
        (
            f"rbf {n_rbf}x{n_rbf}, d=128, f32",
            "rbf",
            skp.rbf_kernel,
            "sklearn rbf_kernel f32",
            X128.astype(np.float32),
            ">= 1.5x",
            _gemm_floor,
            "<= 1.2x",
        ),
        (
            f"laplacian {n_small}x{n_small}, d=128, f64",
            "laplacian",
            skp.laplacian_kernel,
            "sklearn laplacian_kernel",
            rng.random((n_small, 128)),
            "-",
            None,
            "-",
        ),
    ]
    if only:
        cases = [c for c in cases if c[0].split()[0] in only]
    rows = []
    for case, name, anchor_fn, anchor, X, target, floor, floor_target in cases:
        k = sparsekit.get_kernel(name)
        ours, ref = k(X), anchor_fn(X)
        check(
            ref.dtype == X.dtype and ours.dtype == X.dtype,
            f"{case}: dtypes {ours.dtype}, {ref.dtype}",
        )
        err = float(np.max(np.abs(ours.astype(np.float64) / ref.astype(np.float64) - 1)))
        check(err <= RTOL[X.dtype.type], f"{case}: max rel. diff {err:.1e}")
        del ours, ref
        for limit in limits:
            with sparsekit.thread_limit(limit if limit else -1):
                t_sk = best_time(lambda: k(X))
                t_an = best_time(lambda: anchor_fn(X))
                t_floor = None if floor is None else best_time(floor(X))
                used = f"{threads()} / {_anchor_threads(anchor)}"
            rows.append(
                _row(
                    case,
                    used,
                    t_sk,
                    t_an,
                    anchor,
                    err,
                    target if limit is None else "-",
                    t_floor,
                    floor_target,
                )
            )
    return rows


def bench_memory(quick):
    """Peak extra memory of a 50,000 x 2,000 RBF block under a memory cap (tracemalloc)."""
    n, m = (5000, 2000) if quick else (50000, 2000)
    rng = np.random.default_rng(1)
    X = rng.random((n, 32))
    Y = rng.random((m, 32))
    k = sparsekit.get_kernel("rbf")
    k(X[:10], Y[:10])  # compile outside the measurement
    out = np.empty((n, m))
    tracemalloc.start()
    k(X, Y, out=out, max_memory=64 * 2**20)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    check(
        np.allclose(out[:100], k(X[:100], Y), rtol=1e-12, atol=0),
        "blocked RBF differs from one block",
    )
    return {
        "case": f"rbf {n}x{m} block, cap 64 MiB",
        "output (MB)": f"{out.nbytes / 1e6:.0f}",
        "peak extra (MB)": f"{peak / 1e6:.1f}",
        "ratio": f"{peak / out.nbytes:.3f}",
        "target": "<= 2x output",
    }


def bench_import():
    code = "import time; t=time.perf_counter(); import sparsekit; print(time.perf_counter()-t)"
    times = [
        float(subprocess.check_output([sys.executable, "-c", code]).decode()) for _ in range(3)
    ]
    return {"case": "import sparsekit", "seconds": f"{min(times):.3f}", "target": "< 1 s"}


def main(quick=False, only=None, one_thread=False):
    print(f"Machine: {machine()}")
    print(f"sparsekit: {os.path.dirname(sparsekit.__file__)}\n")
    rows = bench_vector(quick, only, (1,) if one_thread else (None, 1))
    if only:
        print_table(rows, COLUMNS)
        print(f"\nload average after: {machine().rsplit('load average ', 1)[1]}")
        finish()
        return
    try:
        from bench_shortest_path import bench_rows as sp_rows
    except ImportError:
        sp_rows = None
    if sp_rows is not None:
        rows += sp_rows(quick)
    print_table(rows, COLUMNS)
    print()
    print_table(
        [bench_memory(quick)], ["case", "output (MB)", "peak extra (MB)", "ratio", "target"]
    )
    print()
    print_table([bench_import()], ["case", "seconds", "target"])
    finish()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    parser.add_argument(
        "--cases",
        default="",
        help="comma-separated kernels (chi2, rbf, laplacian): only these vector "
        "cases, no other table",
    )
    parser.add_argument(
        "--one-thread", action="store_true", help="only the rows limited to one thread (both sides)"
    )
    args = parser.parse_args()
    main(args.quick, [c.strip() for c in args.cases.split(",") if c.strip()], args.one_thread)
