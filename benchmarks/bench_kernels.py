"""Kernel Gram matrices: sparsekit against scikit-learn (and GraKeL), in one process.

Run: ``python benchmarks/bench_kernels.py`` (``--quick`` for small sizes). Prints one table
with the time of each library and the speed-up ratio (anchor time / sparsekit time), after
checking that the values agree.
"""
import argparse
import os
import subprocess
import sys
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_time, machine, print_table  # noqa: E402

import sparsekit  # noqa: E402


def _row(case, t_sk, t_anchor, anchor, err, target):
    return {"case": case, "sparsekit (s)": f"{t_sk:.3f}", f"anchor (s)": f"{t_anchor:.3f}",
            "anchor": anchor, "speed-up": f"{t_anchor / t_sk:.2f}x", "max rel. diff": f"{err:.1e}",
            "target": target}


def bench_vector(quick):
    from sklearn.metrics import pairwise as skp

    rng = np.random.default_rng(0)
    rows = []
    n_chi2 = 500 if quick else 2000
    X = rng.random((n_chi2, 128))
    k = sparsekit.get_kernel("chi2")
    t_sk = best_time(lambda: k(X))
    t_an = best_time(lambda: skp.chi2_kernel(X), repeat=2)
    err = np.abs(k(X) / skp.chi2_kernel(X) - 1).max()
    rows.append(_row(f"chi2 {n_chi2}x{n_chi2}, d=128, f64", t_sk, t_an, "sklearn chi2_kernel", err, ">= 2x"))

    n_rbf = 1000 if quick else 5000
    X = rng.random((n_rbf, 128))
    k = sparsekit.get_kernel("rbf")
    t_an = best_time(lambda: skp.rbf_kernel(X), repeat=2)
    ref = skp.rbf_kernel(X)
    t_sk = best_time(lambda: k(X))
    rows.append(_row(f"rbf {n_rbf}x{n_rbf}, d=128, f64", t_sk, t_an, "sklearn rbf_kernel f64",
                     np.abs(k(X) / ref - 1).max(), ">= 1x"))
    X32 = X.astype(np.float32)
    t_sk32 = best_time(lambda: k(X32))
    rows.append(_row(f"rbf {n_rbf}x{n_rbf}, d=128, f32", t_sk32, t_an, "sklearn rbf_kernel f64",
                     np.abs(k(X32) / ref - 1).max(), ">= 1.5x"))
    del ref

    Xl = rng.random((n_chi2, 128))
    k = sparsekit.get_kernel("laplacian")
    t_sk = best_time(lambda: k(Xl))
    t_an = best_time(lambda: skp.laplacian_kernel(Xl), repeat=2)
    rows.append(_row(f"laplacian {n_chi2}x{n_chi2}, d=128, f64", t_sk, t_an, "sklearn laplacian_kernel",
                     np.abs(k(Xl) / skp.laplacian_kernel(Xl) - 1).max(), "-"))
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
    print_table(rows, ["case", "sparsekit (s)", "anchor (s)", "anchor", "speed-up", "max rel. diff", "target"])
    print()
    print_table([bench_memory(quick)], ["case", "output (MB)", "peak extra (MB)", "ratio", "target"])
    print()
    print_table([bench_import()], ["case", "seconds", "target"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    main(parser.parse_args().quick)
