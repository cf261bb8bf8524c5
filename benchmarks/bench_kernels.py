"""Kernel Gram matrices: sparsekit against scikit-learn (and GraKeL), in one process.

Run: ``python benchmarks/bench_kernels.py`` (``--quick`` for small sizes). Prints one table
with the time of each library (best of 3 after one warm-up run, both sides), the speed-up
ratio (anchor time / sparsekit time) and the threads of each side, after checking that the
values agree (the script exits 1 when they do not). Every case runs with the default threads
and again with everything limited to one thread (``sparsekit.thread_limit(1)``: Numba, BLAS
and sparsekit's own pools). Each dtype is compared with the anchor on the same dtype
(scikit-learn computes float32 distances in float64 chunks and returns float32).
"""
import argparse
import os
import subprocess
import sys
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_time, blas_threads, check, finish, machine, print_table, threads  # noqa: E402

import sparsekit  # noqa: E402

COLUMNS = ["case", "threads (sparsekit / anchor)", "sparsekit (s)", "anchor (s)", "anchor",
           "speed-up", "max rel. diff", "target"]
#: largest relative difference accepted per dtype
RTOL = {np.float64: 1e-12, np.float32: 1e-5}


def _row(case, used, t_sk, t_anchor, anchor, err, target):
    return {"case": case, "threads (sparsekit / anchor)": used, "sparsekit (s)": f"{t_sk:.3f}",
            "anchor (s)": f"{t_anchor:.3f}", "anchor": anchor,
            "speed-up": f"{t_anchor / t_sk:.2f}x", "max rel. diff": f"{err:.1e}", "target": target}


def _anchor_threads(anchor):
    # scikit-learn's chi2 kernel is a Cython loop and its Laplacian kernel SciPy's cdist (one
    # thread each); its RBF kernel is a BLAS GEMM and a NumPy exp
    return f"{blas_threads()} (BLAS)" if "rbf" in anchor else "1"


def bench_vector(quick):
    from sklearn.metrics import pairwise as skp

    rng = np.random.default_rng(0)
    n_small = 500 if quick else 2000
    n_rbf = 1000 if quick else 5000
    X128 = rng.random((n_rbf, 128))
    cases = [  # (case, sparsekit kernel, anchor function, anchor name, data, target)
        (f"chi2 {n_small}x{n_small}, d=128, f64", "chi2", skp.chi2_kernel, "sklearn chi2_kernel",
         rng.random((n_small, 128)), ">= 2x"),
        (f"rbf {n_rbf}x{n_rbf}, d=128, f64", "rbf", skp.rbf_kernel, "sklearn rbf_kernel f64",
         X128, ">= 1x"),
        (f"rbf {n_rbf}x{n_rbf}, d=128, f32", "rbf", skp.rbf_kernel, "sklearn rbf_kernel f32",
         X128.astype(np.float32), ">= 1.5x"),
        (f"laplacian {n_small}x{n_small}, d=128, f64", "laplacian", skp.laplacian_kernel,
         "sklearn laplacian_kernel", rng.random((n_small, 128)), "-"),
    ]
    rows = []
    for case, name, anchor_fn, anchor, X, target in cases:
        k = sparsekit.get_kernel(name)
        ours, ref = k(X), anchor_fn(X)
        check(ref.dtype == X.dtype and ours.dtype == X.dtype, f"{case}: dtypes {ours.dtype}, {ref.dtype}")
        err = float(np.max(np.abs(ours.astype(np.float64) / ref.astype(np.float64) - 1)))
        check(err <= RTOL[X.dtype.type], f"{case}: max rel. diff {err:.1e}")
        del ours, ref
        for limit in (None, 1):
            with sparsekit.thread_limit(limit if limit else -1):
                t_sk = best_time(lambda: k(X))
                t_an = best_time(lambda: anchor_fn(X))
                used = f"{threads()} / {_anchor_threads(anchor)}"
            rows.append(_row(case, used, t_sk, t_an, anchor, err, target if limit is None else "-"))
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
    check(np.allclose(out[:100], k(X[:100], Y), rtol=1e-12, atol=0), "blocked RBF differs from one block")
    return {"case": f"rbf {n}x{m} block, cap 64 MiB", "output (MB)": f"{out.nbytes / 1e6:.0f}",
            "peak extra (MB)": f"{peak / 1e6:.1f}", "ratio": f"{peak / out.nbytes:.3f}",
            "target": "<= 2x output"}


def bench_import():
    code = "import time; t=time.perf_counter(); import sparsekit; print(time.perf_counter()-t)"
    times = [float(subprocess.check_output([sys.executable, "-c", code]).decode()) for _ in range(3)]
    return {"case": "import sparsekit", "seconds": f"{min(times):.3f}", "target": "< 1 s"}


def main(quick=False):
    print(f"Machine: {machine()}\n")
    rows = bench_vector(quick)
    try:
        from bench_shortest_path import bench_rows as sp_rows
    except ImportError:
        sp_rows = None
    if sp_rows is not None:
        rows += sp_rows(quick)
    print_table(rows, COLUMNS)
    print()
    print_table([bench_memory(quick)], ["case", "output (MB)", "peak extra (MB)", "ratio", "target"])
    print()
    print_table([bench_import()], ["case", "seconds", "target"])
    finish()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    main(parser.parse_args().quick)
