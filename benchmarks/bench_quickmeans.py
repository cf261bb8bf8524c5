"""QuicK-means fit against scikit-learn's KMeans from the same start, with the same iterations.

For each size: a Gaussian mixture (``K`` centres of spread 0.5, unit noise, ``D`` features:
overlapping clusters, so that K-means runs every iteration asked), K-means++ centroids computed
once (on the first 100,000 points) and passed to all as ``init``;
``QuicKMeans(K, sparsity=3, tol=0)`` with its default Palm4MSA settings (hierarchical
initialization: 300 iterations per split, ``refit_iter=10`` per global refinement; refits of
``refit_iter`` iterations while the assignment moves, 300 once it has settled and at the last
iteration) for ``--iter`` iterations, with
``--thesis`` the same with the thesis' schedule (``refit_iter=None``: 300 at every refit), and
``KMeans(init=..., n_init=1, tol=0, algorithm="lloyd")`` for the same number of iterations.
One thread on all sides (``OMP_NUM_THREADS=1``, set by the script before NumPy and scikit-learn
are imported: threadpoolctl's limit did not reach the OpenMP loops of scikit-learn's Lloyd
here, which ran on two threads under it; plus threadpoolctl for BLAS and sparsekit's
``thread_limit(1)``); they run
interleaved, best of ``--repeat``, in wall and in process CPU time (on a loaded machine the
CPU times, one thread each, are the comparable figures).

Besides the totals, each row gives the per-iteration costs, from a second pair of fits with one
iteration (``(T(it) − T(1)) / (it − 1)``): QuicK-means' is a fixed refit cost plus an
assignment that grows with ``N``, K-means' grows with ``N``; their crossover ``N*`` is printed
(a linear fit of the per-iteration costs over the sizes run), with the fixed cost of the
QuicK-means fit (hierarchical initialization, ``T(1)`` minus one iteration).

Value checks (exit 1 on failure): the QuicK-means objective history does not increase, its
``inertia_`` equals the K-means objective recomputed from the dense centroids and its labels,
and the labels are the nearest dense centroids (on 2,000 points).
Run ``python benchmarks/bench_quickmeans.py`` (``--quick`` for small sizes).

``--small`` times instead the small problems a user meets first, where the factors are small:
digits (1,797 × 64, K = 10), a 500 × 8 standard normal array (K = 8) and breast cancer (569 × 30,
K = 64); ``QuicKMeans(K, sparsity=3, tol=0)`` with its defaults and Lloyd ``KMeans`` from the
same K-means++ centroids, both for ``--iter`` iterations, one thread each, interleaved, best of
``--repeat``, with the same value checks (``--small-dtype float32`` for float32 data).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ["OMP_NUM_THREADS"] = "1"  # before NumPy and scikit-learn start their OpenMP runtimes

import numpy as np  # noqa: E402
from _timing import blas_threads, check, finish, machine, print_table, threads  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import sparsekit  # noqa: E402
from sparsekit._runtime.threads import thread_limit  # noqa: E402
from sparsekit.cluster.quickmeans import kmeans_plusplus  # noqa: E402


def mixture(n, d, k, seed, dtype):
    rng = np.random.default_rng(seed)
    # overlapping clusters (centre spread 0.5 against unit noise): Lloyd needs tens of
    # iterations from K-means++ (14 at N = 5,000), so both sides run every iteration asked
    centers = rng.standard_normal((k, d)) * 0.5
    X = np.empty((n, d), dtype=dtype)
    for r0 in range(0, n, 50_000):  # in blocks: no float64 copy of a float32 set
        r1 = min(n, r0 + 50_000)
        X[r0:r1] = centers[rng.integers(k, size=r1 - r0)] + rng.standard_normal((r1 - r0, d))
    return X


def fit_qk(X, init, n_iter, **schedule):
    return sparsekit.QuicKMeans(
        init.shape[0], sparsity=3, init=init, max_iter=n_iter, tol=0, n_jobs=1, **schedule
    ).fit(X)


def fit_thesis(X, init, n_iter):
    return fit_qk(X, init, n_iter, refit_iter=None)


def fit_km(X, init, n_iter):
    from sklearn.cluster import KMeans

    return KMeans(
        init.shape[0], init=init, n_init=1, max_iter=n_iter, tol=0, algorithm="lloyd"
    ).fit(X)


def timed(fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return (time.perf_counter() - t0, time.process_time() - c0), out


def keep_best(best, name, times):
    best[name] = min(best.get(name, np.inf), times[0])
    best[name + "_cpu"] = min(best.get(name + "_cpu", np.inf), times[1])


def check_fit(X, qk, label):
    hist = qk.objective_history_
    check(np.all(np.diff(hist) <= 1e-9 * hist[:-1]), f"{label}: objective history increases")
    C = (qk.mean_ + qk.cluster_centers_.toarray()).astype(np.float64)
    Xs = X[:2000].astype(np.float64)
    d2 = (Xs**2).sum(1)[:, None] - 2 * Xs @ C.T + (C**2).sum(1)[None, :]
    nearest = np.argmin(d2, axis=1)
    gap = d2[np.arange(len(Xs)), qk.labels_[:2000]] - d2[np.arange(len(Xs)), nearest]
    check(np.all(gap <= 1e-6 * np.abs(d2).max()), f"{label}: labels are not the nearest centroids")
    inertia = 0.0
    for r0 in range(0, X.shape[0], 20_000):
        Xb = X[r0 : r0 + 20_000].astype(np.float64)
        inertia += float(((Xb - C[qk.labels_[r0 : r0 + 20_000]]) ** 2).sum())
    check(
        abs(inertia - qk.inertia_) <= 1e-4 * inertia,
        f"{label}: inertia_ {qk.inertia_:.6g} vs recomputed {inertia:.6g}",
    )
    return inertia


def bench_size(n, d, k, n_iter, repeat, dtype, slopes=True, thesis=False):

    X = mixture(n, d, k, seed=1, dtype=dtype)
    # K-means++ on the first 100,000 points (the seeding alone is O(N K D log K))
    init = X[kmeans_plusplus(X[:100_000].astype(np.float64), k, np.random.default_rng(0))].copy()
    best = {}
    out = {}
    for _ in range(repeat):  # interleaved: each repetition runs every fit once
        fits = [("qk", fit_qk, n_iter), ("km", fit_km, n_iter)]
        if thesis:
            fits.append(("th", fit_thesis, n_iter))
        if slopes:
            fits += [("qk1", fit_qk, 1), ("km1", fit_km, 1)]
        for name, fn, it in fits:
            t, res = timed(lambda: fn(X, init, it))
            keep_best(best, name, t)
            out.setdefault(name, res)
    qk, km = out["qk"], out["km"]
    check(
        qk.n_iter_ == n_iter and km.n_iter_ == n_iter,
        f"N={n}: iterations {qk.n_iter_} (QuicK-means) and {km.n_iter_} (K-means), "
        f"{n_iter} asked: the comparison needs the same iterations on both sides",
    )
    obj_qk = check_fit(X, qk, f"N={n}")
    row = dict(
        N=f"{n:,}",
        dtype=np.dtype(dtype).name,
        iterations=n_iter,
        quickmeans_s=f"{best['qk']:.2f}",
        kmeans_s=f"{best['km']:.2f}",
        ratio=f"{best['qk'] / best['km']:.2f}",
        cpu_s=f"{best['qk_cpu']:.2f} / {best['km_cpu']:.2f}",
        cpu_ratio=f"{best['qk_cpu'] / best['km_cpu']:.2f}",
        thesis_cpu_s=f"{best['th_cpu']:.2f}" if thesis else "",
        objective_vs_thesis=f"{qk.inertia_ / out['th'].inertia_:.4f}" if thesis else "",
        qk_per_iter_s=(f"{(best['qk'] - best['qk1']) / max(n_iter - 1, 1):.3f}" if slopes else ""),
        km_per_iter_s=(f"{(best['km'] - best['km1']) / max(n_iter - 1, 1):.3f}" if slopes else ""),
        objective_ratio=f"{obj_qk / km.inertia_:.4f}",
        nnz=f"{qk.cluster_centers_.nnz:,} vs {k * d:,}",
    )
    print("  " + ", ".join(f"{a}={b}" for a, b in row.items()), flush=True)
    per = (
        (
            (best["qk"] - best["qk1"]) / max(n_iter - 1, 1),
            (best["km"] - best["km1"]) / max(n_iter - 1, 1),
            best["qk1"],
        )
        if slopes
        else None
    )
    return row, per


def small_problems():
    from sklearn.datasets import load_breast_cancer, load_digits

    normal = np.random.default_rng(0).standard_normal((500, 8))
    return [
        ("digits, 1,797 x 64", load_digits().data.astype(np.float64), 10),
        ("standard normal, 500 x 8", normal, 8),
        ("breast cancer, 569 x 30", load_breast_cancer().data.astype(np.float64), 64),
    ]


def bench_small(n_iter, repeat, dtype=np.float64, thesis=False):
    rows = []
    for name, X, k in small_problems():
        X = X.astype(dtype)
        init = X[kmeans_plusplus(X.astype(np.float64), k, np.random.default_rng(0))].copy()
        best, out = {}, {}
        for _ in range(repeat):
            fits = (("qk", fit_qk), ("km", fit_km)) + ((("th", fit_thesis),) if thesis else ())
            for key, fn in fits:
                t, res = timed(lambda: fn(X, init, n_iter))
                keep_best(best, key, t)
                out.setdefault(key, res)
        qk, km = out["qk"], out["km"]
        check(qk.n_iter_ == n_iter, f"{name}: QuicK-means ran {qk.n_iter_} of {n_iter} iterations")
        obj_qk = check_fit(X, qk, name)
        row = dict(
            data=name,
            dtype=np.dtype(dtype).name,
            K=k,
            iterations=f"{n_iter} / {km.n_iter_}",
            quickmeans_s=f"{best['qk']:.2f}",
            kmeans_s=f"{best['km']:.3f}",
            ratio=f"{best['qk'] / best['km']:.0f}",
            cpu_s=f"{best['qk_cpu']:.2f} / {best['km_cpu']:.3f}",
            thesis_cpu_s=f"{best['th_cpu']:.2f}" if thesis else "",
            objective_vs_thesis=f"{qk.inertia_ / out['th'].inertia_:.4f}" if thesis else "",
            objective_ratio=f"{obj_qk / km.inertia_:.4f}",
            nnz=f"{qk.cluster_centers_.nnz:,} vs {k * X.shape[1]:,}",
        )
        print("  " + ", ".join(f"{a}={b}" for a, b in row.items()), flush=True)
        rows.append(row)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes")
    p.add_argument(
        "--small", action="store_true", help="small real data sets instead of the mixture"
    )
    p.add_argument("--small-dtype", choices=["float64", "float32"], default="float64")
    p.add_argument("--sizes", type=int, nargs="*", help="values of N (float64)")
    p.add_argument("--sizes32", type=int, nargs="*", default=[], help="values of N (float32)")
    p.add_argument("--iter", type=int, default=3, help="K-means iterations on both sides")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--clusters", type=int, default=256)
    p.add_argument("--features", type=int, default=784)
    p.add_argument(
        "--thesis",
        action="store_true",
        help="also fit with the thesis' schedule (refit_iter=None) and compare",
    )
    p.add_argument(
        "--no-slopes",
        action="store_true",
        help="skip the one-iteration fits (no per-iteration costs, no crossover)",
    )
    args = p.parse_args()
    sizes = args.sizes
    if sizes is None:
        sizes = [] if args.sizes32 else [2000, 5000] if args.quick else [5000, 20000, 100000]
    print(machine())
    print(f"uptime: {os.popen('uptime').read().strip()}")
    rows, pts = [], []
    with threadpool_limits(1), thread_limit(1):
        from sklearn.utils._openmp_helpers import _openmp_effective_n_threads

        print(
            f"threads: sparsekit {threads()}, BLAS (scikit-learn) {blas_threads()}, "
            f"OpenMP (scikit-learn) {_openmp_effective_n_threads()}"
        )
        for dtype in (np.float64, np.float32):  # warm-up: Numba compilation, imports
            Xw = mixture(300, 40, 16, seed=0, dtype=dtype)
            fit_qk(Xw, Xw[:16].copy(), 2)
            fit_km(Xw, Xw[:16].copy(), 2)
        if args.small:
            rows = bench_small(args.iter, args.repeat, np.dtype(args.small_dtype).type, args.thesis)
            cols = list(rows[0])
            print()
            print_table(rows, cols)
            print(f"uptime: {os.popen('uptime').read().strip()}")
            finish()
            return
        for n, dtype in [(n, np.float64) for n in sizes] + [(n, np.float32) for n in args.sizes32]:
            row, per = bench_size(
                n,
                args.features,
                args.clusters,
                args.iter,
                args.repeat,
                dtype,
                not args.no_slopes,
                args.thesis,
            )
            rows.append(row)
            if per is not None:
                pts.append((n, *per))
    cols = [
        "N",
        "dtype",
        "iterations",
        "quickmeans_s",
        "kmeans_s",
        "ratio",
        "cpu_s",
        "cpu_ratio",
        "thesis_cpu_s",
        "objective_vs_thesis",
        "qk_per_iter_s",
        "km_per_iter_s",
        "objective_ratio",
        "nnz",
    ]
    print()
    print_table(rows, cols)
    if len(pts) >= 2:
        n = np.array([p[0] for p in pts], dtype=float)
        qa, qb = np.polyfit(n, [p[1] for p in pts], 1)[::-1]
        ka, kb = np.polyfit(n, [p[2] for p in pts], 1)[::-1]
        fixed = float(np.mean([p[3] - p[1] for p in pts]))
        print(
            f"\nper iteration: QuicK-means {qa:.3g} s + {qb * 1e6:.3g} s per 10^6 points, "
            f"K-means {ka:.3g} s + {kb * 1e6:.3g} s per 10^6 points; "
            f"QuicK-means fixed cost (initialization) {fixed:.3g} s"
        )
        if min(qb, ka, kb) < 0 or qa <= 0:
            print(
                "per-iteration costs not linear in N here (timings too noisy): no crossover "
                "estimate; compare the totals"
            )
        elif kb > qb:
            print(
                f"per-iteration crossover N* ~ {(qa - ka) / (kb - qb):,.0f}; "
                f"with the fixed cost over {args.iter} iterations: "
                f"N* ~ {(qa - ka + fixed / args.iter) / (kb - qb):,.0f}"
            )
        else:
            print("no crossover: QuicK-means' per-point cost is not below K-means'")
    print(f"uptime: {os.popen('uptime').read().strip()}")
    finish()


if __name__ == "__main__":
    main()
