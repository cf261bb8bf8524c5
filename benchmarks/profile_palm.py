"""Where a Palm4MSA run spends its time: spectral norms, sparse products, projections, factor
set-up and the rest (dense products, element-wise updates, the Python around them).

Run: ``python benchmarks/profile_palm.py --sizes 64,128`` (``--threads 2``, ``--case
hadamard``). The cases are those of ``bench_palm.py``: ``palm``, Palm4MSA on an ``n × n``
uniform random matrix with 4 ``splincol(2)`` factors, 200 iterations, left-to-right;
``hadamard``, hierarchical Palm4MSA on the ``n × n`` Hadamard matrix, ``log2 n`` factors, 30
iterations per call. After a warm-up run, timers wrap ``_sq_norm2`` (the norms of ``L`` and
``R`` for the step size), ``_csr_times`` (the products with CSR factors),
``Projection.project_unchecked`` and ``_Factor`` (the count of non-zeros and, for sparse
factors, their CSR arrays); "rest" is the run's time minus these. CPU seconds of the process
(``time.process_time``), steadier than wall times on a shared machine; one run per row.
"""

import argparse
import os
import sys
import time
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import machine, print_table  # noqa: E402
from scipy.linalg import hadamard  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import sparsekit  # noqa: E402
from sparsekit import thread_limit  # noqa: E402
from sparsekit.factorizers import palm4msa  # noqa: E402
from sparsekit.projections.base import Projection  # noqa: E402

SPENT = defaultdict(float)
PIECES = ("norms", "csr products", "projection", "factor set-up")


def _timer(name, fn):
    def timed(*args, **kwargs):
        t0 = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT[name] += time.process_time() - t0

    return timed


def install():
    palm4msa._sq_norm2 = _timer("norms", palm4msa._sq_norm2)
    palm4msa._csr_times = _timer("csr products", palm4msa._csr_times)
    palm4msa._Factor.__init__ = _timer("factor set-up", palm4msa._Factor.__init__)
    Projection.project_unchecked = _timer("projection", Projection.project_unchecked)


def runner(case, n):
    if case == "palm":
        M = np.random.default_rng(0).random((n, n))
        cons = [sparsekit.get_projection("splincol", shape=(n, n), k=2) for _ in range(4)]
        solver = sparsekit.get_factorizer("palm4msa", n_iter=200, tol=0, update_way="left-to-right")
        return lambda: solver.factorize(M, cons)
    H = hadamard(n).astype(float)
    solver = sparsekit.get_factorizer("hierarchical-palm4msa", n_iter=30)
    return lambda: solver.factorize(H, 2, n_factors=n.bit_length() - 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="64,128", help="comma-separated n")
    ap.add_argument("--case", default="palm,hadamard", help="palm, hadamard or both")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    print(f"Machine: {machine()}; {args.threads} thread(s)")
    rows = []
    with threadpool_limits(args.threads), thread_limit(args.threads):
        jobs = [(c, int(n)) for c in args.case.split(",") for n in args.sizes.split(",")]
        for case, n in jobs:
            run = runner(case, n)
            run()  # compile, warm the caches
        install()
        for case, n in jobs:
            run = runner(case, n)
            SPENT.clear()
            t0 = time.process_time()
            run()
            total = time.process_time() - t0
            row = {"case": f"{case} {n}", "CPU s": f"{total:.3f}"}
            for name in PIECES:
                row[name] = f"{SPENT[name]:.3f} ({SPENT[name] / total:.0%})"
            rest = total - sum(SPENT[name] for name in PIECES)
            row["rest"] = f"{rest:.3f} ({rest / total:.0%})"
            rows.append(row)
    print_table(rows, ["case", "CPU s", *PIECES, "rest"])


if __name__ == "__main__":
    main()
