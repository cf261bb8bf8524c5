"""Where a QuicK-means fit spends its time: the factorization against the assignment steps.

Run: ``python benchmarks/profile_quickmeans.py`` (``--quick`` for N = 2,000). One fit of
``QuicKMeans(256, sparsity=3, tol=0)`` on the Gaussian mixture of ``bench_quickmeans.py``
(``D = 784``, ``K = 256``, float64, one thread, ``--iter`` iterations, K-means++ start), after a
warm-up fit on a small set. Timers wrap module-level functions and methods (wall time, calls
from the calling thread): the hierarchical initialization, the refits (``factorize``), the
assignments, and inside every Palm4MSA run the spectral norms (Lanczos, ``_sq_norm2``), the
sparse products (``_csr_times``), the projections (``project_unchecked``) and the CSR
construction of each new factor (``_Factor``); "rest of Palm4MSA" is the dense products, the
element-wise updates and the Python around them. It also counts the factor updates (one
projection each), so that the cost per update can be compared with the K-means iteration.

``--norms`` times instead one squared spectral norm (``_sq_norm2``) per matrix shape, exact (the
top eigenvalue of the smaller Gram matrix, the path of matrices with at most ``EXACT_NORM_DIM``
rows or columns) against Lanczos, both on a sequence of slowly changing matrices with the
Lanczos warm start carried from call to call as in Palm4MSA; one thread; values checked against
``numpy.linalg.norm(A, 2) ** 2``. A second table times the norm of a product ``S_a ⋯ S_b`` of
QuicK-means' factors (``splincol``, ``sparsity=3``, ``K = 256``, ``D = 784``) through the factors
(``_ChainGram``: Lanczos steps that scatter the factors' non-zeros) against Lanczos on the dense
product, per chain length, with the rule of ``NORM_CHAIN_RATIO`` (which path Palm4MSA takes).
"""

import argparse
import os
import sys
import time
from collections import defaultdict

os.environ["OMP_NUM_THREADS"] = "1"  # scikit-learn's Lloyd on one thread (bench_quickmeans.py)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import machine, print_table  # noqa: E402
from bench_quickmeans import fit_km, fit_qk, mixture  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from sparsekit import get_projection  # noqa: E402
from sparsekit._runtime.threads import thread_limit  # noqa: E402
from sparsekit.cluster import quickmeans  # noqa: E402
from sparsekit.cluster.quickmeans import kmeans_plusplus  # noqa: E402
from sparsekit.factorizers import palm4msa  # noqa: E402
from sparsekit.projections.base import Projection  # noqa: E402

SPENT = defaultdict(float)
CALLS = defaultdict(int)


def _timer(name, fn):
    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT[name] += time.perf_counter() - t0
            CALLS[name] += 1

    return timed


def install():
    for module, names in {
        quickmeans: ("hierarchical_dense", "_assign"),
        palm4msa: ("palm4msa_dense", "_sq_norm2", "_csr_times"),
    }.items():
        for name in names:
            setattr(module, name, _timer(name, getattr(module, name)))
    Projection.project_unchecked = _timer("project", Projection.project_unchecked)
    palm4msa._Factor.__init__ = _timer("factor", palm4msa._Factor.__init__)
    palm4msa.Palm4MSA.factorize = _timer("factorize", palm4msa.Palm4MSA.factorize)


def norm_costs(
    shapes=((4, 4), (16, 16), (64, 16), (32, 32), (32, 784), (64, 64), (128, 128), (256, 256)),
):
    """Microseconds per ``_sq_norm2`` call, exact and by Lanczos, per shape."""
    rng = np.random.default_rng(0)
    rows = []
    for shape in shapes:
        base = rng.standard_normal(shape)
        mats = [base + 1e-3 * rng.standard_normal(shape) for _ in range(50)]
        costs, worst = {}, 0.0
        for path, dim in (("exact", max(shape)), ("lanczos", 0)):
            palm4msa.EXACT_NORM_DIM = dim
            vectors = {}
            palm4msa._sq_norm2(base, "k", vectors)  # warm start, as after a first iteration
            best = np.inf
            for _ in range(3):
                t0 = time.perf_counter()
                values = [palm4msa._sq_norm2(A, "k", vectors) for A in mats]
                best = min(best, (time.perf_counter() - t0) / len(mats))
            exact = [np.linalg.norm(A, 2) ** 2 for A in mats]
            worst = max(worst, max(abs(v / e - 1) for v, e in zip(values, exact)))
            costs[path] = best
        rows.append(
            dict(
                shape=f"{shape[0]} x {shape[1]}",
                exact_us=f"{costs['exact'] * 1e6:.1f}",
                lanczos_us=f"{costs['lanczos'] * 1e6:.1f}",
                ratio=f"{costs['lanczos'] / costs['exact']:.2f}",
                max_rel_error=f"{worst:.1e}",
            )
        )
        if worst > 1e-6:
            raise SystemExit(f"{shape}: squared norm off by {worst:.1e} (more than 1e-6)")
    return rows


def chain_norm_costs(lengths=(1, 2, 4, 6, 8), rows=256, cols=784, repeat=30):
    """Microseconds per squared norm of a product of ``splincol(3)`` factors, through the
    factors and from the dense product (both by Lanczos, warm-started as in Palm4MSA)."""
    rng = np.random.default_rng(0)

    def factor(shape):
        return get_projection("splincol", shape=shape, k=3)(rng.standard_normal(shape))

    out = []
    for wide in (True, False):
        for n in lengths:
            shapes = [(rows, rows)] * (n - 1) + [(rows, cols)] if wide else [(rows, rows)] * n
            mats = [factor(s) for s in shapes]
            F = [palm4msa._Factor(m) for m in mats]
            dense = np.linalg.multi_dot(mats) if n > 1 else mats[0]
            nnz = sum(f.nnz for f in F)
            costs = {}
            for path in ("chain", "dense"):
                operand = palm4msa._ChainGram(F) if path == "chain" else dense
                vectors = {}
                palm4msa._sq_norm2(operand, "k", vectors)
                t0 = time.perf_counter()
                for _ in range(repeat):
                    value = palm4msa._sq_norm2(operand, "k", vectors)
                costs[path] = (time.perf_counter() - t0) / repeat
                exact = np.linalg.norm(dense, 2) ** 2
                if abs(value / exact - 1) > 1e-6:
                    raise SystemExit(f"{path} {shapes}: squared norm off by more than 1e-6")
            chosen = palm4msa.NORM_CHAIN_RATIO * nnz <= dense.size
            out.append(
                dict(
                    product=f"{dense.shape[0]} x {dense.shape[1]}",
                    factors=n,
                    nnz_per_entry=f"{nnz / dense.size:.3f}",
                    chain_us=f"{costs['chain'] * 1e6:.0f}",
                    dense_us=f"{costs['dense'] * 1e6:.0f}",
                    ratio=f"{costs['dense'] / costs['chain']:.2f}",
                    rule="chain" if chosen else "dense",
                )
            )
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="N = 2,000")
    p.add_argument("--norms", action="store_true", help="time one spectral norm per shape")
    p.add_argument("--sizes", type=int, nargs="*", default=None)
    p.add_argument("--iter", type=int, default=3)
    args = p.parse_args()
    sizes = args.sizes or ([2000] if args.quick else [5000, 100000])
    print(machine())
    print(f"uptime: {os.popen('uptime').read().strip()}")
    if args.norms:
        default = palm4msa.EXACT_NORM_DIM
        with threadpool_limits(1), thread_limit(1):
            rows = norm_costs()
        palm4msa.EXACT_NORM_DIM = default
        print(f"\none squared spectral norm (_sq_norm2), one thread; exact up to {default}")
        print_table(rows, list(rows[0]))
        with threadpool_limits(1), thread_limit(1):
            rows = chain_norm_costs()
        print(
            "\nsquared norm of a product of splincol(3) factors, one thread: through the "
            f"factors against the dense product (rule: chain when {palm4msa.NORM_CHAIN_RATIO}"
            " x nnz <= entries)"
        )
        print_table(rows, list(rows[0]))
        print(f"uptime: {os.popen('uptime').read().strip()}")
        return
    rows = []
    with threadpool_limits(1), thread_limit(1):
        Xw = mixture(300, 40, 16, seed=0, dtype=np.float64)
        fit_qk(Xw, Xw[:16].copy(), 2)  # compilation, imports
        fit_km(Xw, Xw[:16].copy(), 2)
        install()
        for n in sizes:
            X = mixture(n, 784, 256, seed=1, dtype=np.float64)
            init = X[kmeans_plusplus(X[:100_000], 256, np.random.default_rng(0))].copy()
            t0 = time.perf_counter()
            fit_km(X, init, args.iter)
            km = time.perf_counter() - t0
            SPENT.clear()
            CALLS.clear()
            t0 = time.perf_counter()
            fit_qk(X, init, args.iter)
            total = time.perf_counter() - t0
            palm = SPENT["palm4msa_dense"]
            inner = sum(SPENT[k] for k in ("_sq_norm2", "_csr_times", "project", "factor"))
            updates = CALLS["project"]
            rows.append(
                {
                    "N": f"{n:,}",
                    "iterations": args.iter,
                    "fit (s)": f"{total:.2f}",
                    "K-means (s)": f"{km:.2f}",
                    "hierarchical init (s)": f"{SPENT['hierarchical_dense']:.2f}",
                    "refits (s)": f"{SPENT['factorize']:.2f}",
                    "assignments (s)": f"{SPENT['_assign']:.2f}",
                    "Palm4MSA (s)": f"{palm:.2f} ({palm / total:.0%})",
                    "norms": f"{SPENT['_sq_norm2'] / palm:.0%}",
                    "sparse products": f"{SPENT['_csr_times'] / palm:.0%}",
                    "projections": f"{SPENT['project'] / palm:.0%}",
                    "factor CSR": f"{SPENT['factor'] / palm:.0%}",
                    "rest of Palm4MSA": f"{(palm - inner) / palm:.0%}",
                    "factor updates": f"{updates:,}",
                    "ms per update": f"{1e3 * palm / max(updates, 1):.2f}",
                }
            )
            print("  " + ", ".join(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
    print()
    print_table(rows, list(rows[0]))
    print(f"uptime: {os.popen('uptime').read().strip()}")


if __name__ == "__main__":
    main()
