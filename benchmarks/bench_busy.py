"""A busy machine: each main path idle and while another process keeps one core busy.

Multi-threaded BLAS waits for all its threads at every step of a product; when another process
holds a core, a descheduled BLAS thread stalls each step, and small or skinny products (kernel
k-means' cluster sums, a 3 x 20,000 by 20,000 x 100 GEMM, took 28-36 s per fit instead of well
under a second) slow down far more than the lost core explains. This script times each path on
the machine as it is ("idle"), then while a separate process spins on one core ("busy"), best
of ``--repeat`` after a warm-up run, and prints both times, their ratio (target: below 2x, the
busy core alone explains 2x on two cores), the BLAS and Numba thread counts and the load average
with each measurement. The answers of the idle and busy runs are checked equal (the script
exits 1 otherwise).

Paths (default threads: sparsekit's one setting, BLAS and Numba as the process starts):

- ``KernelKMeans`` fit, 20,000 x 10, 3 clusters (Nyström method, 100 uniform landmarks);
- the same fit on a Dask array in 4 chunks (threaded scheduler; skipped without dask);
- ``Nystroem`` fit + transform, 20,000 x 54, 200 uniform landmarks;
- OMP batch, 64 x 256 dictionary, 4,000 signals, 5 atoms;
- DAC-RLS scores, 20,000 x 54;
- exact unbiased MMD², 3,000 + 3,000 points x 10, RBF kernel.

Run ``python benchmarks/bench_busy.py`` (``--repeat N``, ``--spinners N``, ``--only NAME``).
To compare two checkouts of sparsekit, run the script with ``PYTHONPATH=<checkout>`` for each and
the same ``--answers FILE``: the first run stores each path's answer there, later runs check
theirs against it (relative 1e-10) and exit 1 when they differ.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import check, finish, machine, print_table  # noqa: E402

import sparsekit  # noqa: E402


def _spin(stop):
    """Keep one core busy until ``stop`` is set."""
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x += 1


class Spinners:
    """``n`` processes that each keep a core busy while the context is open."""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        ctx = mp.get_context("spawn")  # no copy of this process's BLAS or Numba state
        self.stop = ctx.Event()
        self.procs = [
            ctx.Process(target=_spin, args=(self.stop,), daemon=True) for _ in range(self.n)
        ]
        for p in self.procs:
            p.start()
        time.sleep(0.5)  # let them start spinning
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
                p.join()
        return False


def load():
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def make_data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((20, d))
    return centers[rng.integers(0, 20, n)] + 0.3 * rng.standard_normal((n, d))


def paths():
    """``(name, fn() -> result, same(a, b) -> bool)`` of the main paths."""
    X10 = make_data(20_000, 10)
    X54 = make_data(20_000, 54, seed=1)
    rbf54 = sparsekit.get_kernel("rbf", gamma=1.0 / 54)

    def kkm():
        return sparsekit.KernelKMeans(3, random_state=0).fit(X10)

    def same_kkm(a, b):
        return np.array_equal(np.asarray(a.labels_), np.asarray(b.labels_)) and np.isclose(
            a.inertia_, b.inertia_, rtol=1e-12
        )

    out = [("KernelKMeans fit, 20,000 x 10, k=3", kkm, same_kkm)]
    try:
        import dask.array as da

        from sparsekit.dask import kernel_kmeans_fit
    except ImportError:
        print("dask is not installed: the Dask kernel k-means row is skipped")
    else:
        Xd = da.from_array(X10, chunks=(5_000, 10))

        def kkm_dask():
            import dask

            with dask.config.set(scheduler="threads"):
                est = kernel_kmeans_fit(Xd, 3, random_state=0)
                est.labels_ = est.labels_.compute()
            return est

        def same_dask(a, b):  # chunked sums round differently: labels equal, inertia ~1e-12
            return np.array_equal(a.labels_, b.labels_) and np.isclose(
                a.inertia_, b.inertia_, rtol=1e-10
            )

        out.append(("Dask KernelKMeans fit, 20,000 x 10 in 4 chunks, k=3", kkm_dask, same_dask))

    def nystroem():
        ny = sparsekit.Nystroem(
            "rbf",
            sampler="uniform",
            n_components=200,
            kernel_params={"gamma": 1.0 / 54},
            random_state=0,
        )
        return ny.fit(X54).transform(X54)

    rng = np.random.default_rng(2)
    D = rng.standard_normal((64, 256))
    D /= np.linalg.norm(D, axis=0)
    Y = rng.standard_normal((64, 4_000))
    omp = sparsekit.get_solver("omp", n_nonzero_coefs=5)

    dac = sparsekit.get_sampler("dac-rls", lam=1.0)
    A = make_data(3_000, 10, seed=3)
    B = make_data(3_000, 10, seed=4) + 0.1

    def mmd():
        from sparsekit.stats import mmd2_unbiased

        return mmd2_unbiased(A, B, "rbf", kernel_params={"gamma": 0.1})

    def close(a, b):
        return np.allclose(a, b, rtol=1e-10, atol=1e-12)

    out += [
        ("Nystroem fit+transform, 20,000 x 54, m=200", nystroem, close),
        ("OMP batch, 64 x 256, 4,000 signals, k=5", lambda: omp.solve(D, Y).coef, close),
        ("DAC-RLS scores, 20,000 x 54", lambda: dac.scores(X54, rbf54, random_state=0), close),
        ("exact MMD² (unbiased), 3,000 + 3,000 x 10", mmd, close),
    ]
    return out


def answer_array(result):
    """The numbers of a path's answer (fitted estimators: labels and inertia)."""
    if hasattr(result, "labels_"):
        return np.append(np.asarray(result.labels_, dtype=np.float64), result.inertia_)
    return np.asarray(result, dtype=np.float64)


def timed(fn, repeat):
    """(best wall time of ``repeat`` runs, the last result, load average before the runs)."""
    before = load()
    best, result = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result, before


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best of)")
    parser.add_argument("--spinners", type=int, default=1, help="busy processes (cores held)")
    parser.add_argument("--only", default=None, help="run only the paths whose name has this")
    parser.add_argument(
        "--answers",
        default=None,
        help="an .npz file: stores each path's answer when absent, else checks them against it",
    )
    args = parser.parse_args()
    stored = dict(np.load(args.answers)) if args.answers and os.path.exists(args.answers) else None
    answers = {}

    import numba

    from sparsekit._runtime.threads import blas_threads, effective_n_jobs

    print(machine())
    print(
        f"threads: sparsekit {effective_n_jobs()}, BLAS {blas_threads()}, Numba "
        f"{numba.get_num_threads()} ({numba.config.THREADING_LAYER}); busy = "
        f"{args.spinners} spinning process(es); best of {args.repeat} after a warm-up run\n"
    )
    rows = []
    for name, fn, same in paths():
        if args.only and args.only.lower() not in name.lower():  # a part of the name
            continue
        ref = fn()  # warm-up: compilation, imports, caches
        t_idle, r_idle, load_idle = timed(fn, args.repeat)
        with Spinners(args.spinners):
            t_busy, r_busy, load_busy = timed(fn, args.repeat)
        ok = check(same(ref, r_idle) and same(ref, r_busy), f"{name}: idle and busy answers differ")
        answers[name] = answer_array(ref)
        if stored is not None and name in stored:
            ok = (
                check(
                    np.allclose(answers[name], stored[name], rtol=1e-10, atol=1e-12),
                    f"{name}: the answer differs from the one stored in {args.answers}",
                )
                and ok
            )
        ratio = t_busy / t_idle
        rows.append(
            {
                "path": name,
                "idle (s)": f"{t_idle:.3f}",
                "load idle": f"{load_idle:.1f}",
                "busy (s)": f"{t_busy:.3f}",
                "load busy": f"{load_busy:.1f}",
                "busy / idle": f"{ratio:.2f}x" + ("" if ratio < 2 else " (over 2x)"),
                "BLAS / Numba threads": f"{blas_threads()} / {numba.get_num_threads()}",
                "answers": "equal" if ok else "DIFFER",
            }
        )
        print(
            f"{name}: idle {t_idle:.3f} s (load {load_idle:.1f}), busy {t_busy:.3f} s "
            f"(load {load_busy:.1f}), {ratio:.2f}x",
            flush=True,
        )
    if args.answers and stored is None:
        np.savez(args.answers, **answers)
    print(f"sparsekit imported from {os.path.dirname(sparsekit.__file__)}")
    print()
    print_table(
        rows,
        [
            "path",
            "idle (s)",
            "load idle",
            "busy (s)",
            "load busy",
            "busy / idle",
            "BLAS / Numba threads",
            "answers",
        ],
    )
    finish()


if __name__ == "__main__":
    main()
