"""Gram matrices of scipy.sparse input: sparsekit against scikit-learn, in one process.

Run: ``python benchmarks/bench_sparse_kernels.py`` (``--quick`` for small sizes). Both libraries
get the same CSR matrix (float64) and run with the same thread count (sparsekit's Numba threads
and both libraries' BLAS threads limited to it); one warm-up, then the best of 3. Exits non-zero
when the Gram matrices differ by more than 1e-8 (relative to the largest entry).
"""

import argparse
import os
import sys

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_time, machine, print_table  # noqa: E402

import sparsekit  # noqa: E402
from sparsekit._runtime.threads import effective_n_jobs, thread_limit  # noqa: E402


def main(quick=False):
    from sklearn.metrics import pairwise as skp

    n, d, density = (500, 2000, 0.01) if quick else (3000, 5000, 0.005)
    X = sp.random(n, d, density=density, format="csr", random_state=0, dtype=np.float64)
    # chi2 has no sparse formula (row tiles are densified): a smaller problem keeps it short
    Xnn = abs(X[: n // 3, : d // 2]).tocsr()  # chi2 needs non-negative data
    cases = [
        ("linear", {}, lambda: skp.linear_kernel(X), X),
        ("polynomial", {"degree": 2}, lambda: skp.polynomial_kernel(X, degree=2), X),
        ("rbf", {"gamma": 0.5}, lambda: skp.rbf_kernel(X, gamma=0.5), X),
        ("laplacian", {"gamma": 0.5}, lambda: skp.laplacian_kernel(X, gamma=0.5), X),
        # scikit-learn's chi2_kernel does not take sparse input: it gets the dense array
        ("chi2", {"gamma": 0.5}, lambda: skp.chi2_kernel(Xnn.toarray(), gamma=0.5), Xnn),
    ]
    threads = effective_n_jobs(None)
    rows, ok = [], True
    with thread_limit(threads):
        for name, params, anchor, data in cases:
            kernel = sparsekit.get_kernel(name, backend="cpu", **params)
            ours, ref = kernel(data), anchor()
            err = float(np.abs(ours - ref).max() / max(np.abs(ref).max(), 1e-300))
            ok &= err <= 1e-8
            t_ours = best_time(lambda: kernel(data))
            t_ref = best_time(anchor)
            rows.append(
                {
                    "kernel": name,
                    "input": f"CSR {data.shape[0]}x{data.shape[1]}, {density:.1%} non-zeros",
                    "sparsekit (ms)": f"{t_ours * 1e3:.1f}",
                    "scikit-learn (ms)": f"{t_ref * 1e3:.1f}",
                    "speed-up": f"{t_ref / t_ours:.2f}x",
                    "threads (each side)": threads,
                    "max rel. diff": f"{err:.1e}",
                }
            )
    print(f"Machine: {machine()}\n")
    print_table(
        rows,
        [
            "kernel",
            "input",
            "sparsekit (ms)",
            "scikit-learn (ms)",
            "speed-up",
            "threads (each side)",
            "max rel. diff",
        ],
    )
    if not ok:
        print("\nERROR: sparsekit and scikit-learn disagree beyond 1e-8", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    sys.exit(main(parser.parse_args().quick))
