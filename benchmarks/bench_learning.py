"""Nyström kernel ridge regression: ``NystromRidge`` against scikit-learn's Nystroem + Ridge.

Run: ``python benchmarks/bench_learning.py`` (``--quick`` for small sizes). In one process, on
the same data (float64, n samples in d = 28 dimensions, a smooth target plus noise), the same
landmarks (scikit-learn's uniform draw, handed to sparsekit as ``landmarks=``) and the same threads:

1. scikit-learn: ``make_pipeline(Nystroem(gamma, n_components=m), Ridge(alpha=λ n,
   fit_intercept=False))``, which materializes the n × m feature matrix and solves by Cholesky.
2. sparsekit: ``NystromRidge(solver="pcg")`` (FALKON's preconditioned conjugate gradient, no
   n × m matrix) and ``solver="direct"``.

``--without-anchor`` (for n where scikit-learn's n × m matrix does not fit in memory) fits
``solver="pcg"`` alone, once, with ``--max-iter`` iterations (the time per iteration does not
depend on their number) and ``--dtype float32`` if asked, and prints the memory the anchor would
need instead of running it.

``--dask`` fits ``sparsekit.dask.nystrom_ridge_fit`` on n rows generated chunk by chunk by
``dask.array.random`` (never held whole) on a ``LocalCluster`` of ``--workers`` processes with
``--memory-limit`` each, and prints the time per iteration (from the callback's clock), each
worker's peak resident memory (``getrusage``) and the size of the data it never held.

Printed: fit time (best of ``--repeat`` after one warm-up fit on a small slice, which compiles
the kernels), the ratio, test mean squared error (they must agree within 1 %: the script exits 1
otherwise), the largest difference of the predictions, conjugate gradient iterations, the time
per iteration against one pass K_nm v (its floor), and the peak of memory traced by
``tracemalloc`` during the fit (NumPy reports its buffers to it) against the size of X.
"""

import argparse
import os
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_time, blas_threads, check, finish, machine, print_table, threads  # noqa: E402

import sparsekit  # noqa: E402
from sparsekit.learning._passes import KernelPasses  # noqa: E402


def _data(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = rng.standard_normal(d) / np.sqrt(d)
    y = np.sin(2.0 * X @ w) + 0.3 * np.cos(X[:, 0] * X[:, 1]) + 0.1 * rng.standard_normal(n)
    return X, y


def _peak(fit):
    """Peak bytes traced during ``fit()`` (above what was allocated before)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    fit()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="n = 20,000, m = 1,000")
    parser.add_argument("--n", type=int, help="training samples (default 100,000)")
    parser.add_argument("--m", type=int, help="landmarks (default 4,000)")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many fits")
    parser.add_argument(
        "--without-anchor", action="store_true", help="sparsekit pcg only (large n), one fit"
    )
    parser.add_argument("--max-iter", type=int, default=200, help="CG iterations at most")
    parser.add_argument(
        "--tols", default="1e-4", help="comma-separated tol of the pcg rows (default 1e-4)"
    )
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    parser.add_argument("--dask", action="store_true", help="chunked data on a LocalCluster")
    parser.add_argument("--chunk", type=int, default=1_000_000, help="rows per chunk (--dask)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (--dask)")
    parser.add_argument("--memory-limit", default="2GiB", help="per worker (--dask)")
    args = parser.parse_args()
    if args.dask:
        _dask_fit(args)
        return
    from sklearn.kernel_approximation import Nystroem as SkNystroem
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline

    n = args.n or (20_000 if args.quick else 100_000)
    m = args.m or (1000 if args.quick else 4000)
    d, lam = 28, 1e-6
    gamma = 1.0 / d
    X, y = (a.astype(args.dtype) for a in _data(n, d, 0))
    X_test, y_test = _data(20_000, d, 1)
    print(machine())
    print(
        f"n = {n:,}, d = {d}, m = {m:,}, {args.dtype}, RBF gamma = 1/d, lambda = {lam:g}; "
        f"sparsekit threads {threads()}, BLAS threads {blas_threads()}\n"
    )
    if args.without_anchor:
        _without_anchor(X, y, X_test, y_test, m, gamma, lam, args.max_iter)
        return

    sk = make_pipeline(
        SkNystroem(kernel="rbf", gamma=gamma, n_components=m, random_state=0),
        Ridge(alpha=lam * n, fit_intercept=False),
    )
    sk.fit(X[:2000], y[:2000])  # warm-up
    indices = SkNystroem(kernel="rbf", gamma=gamma, n_components=m, random_state=0).fit(X)
    indices = indices.component_indices_

    def ours(solver, tol=1e-4):
        return sparsekit.NystromRidge(
            landmarks=X[indices],
            alpha=lam,
            solver=solver,
            tol=tol,
            max_iter=200,
            kernel_params={"gamma": gamma},
        )

    warm = ours("pcg").set_params(landmarks=X[:200])
    warm.fit(X[:2000], y[:2000])

    rows, fitted = [], {}
    tols = [float(t) for t in args.tols.split(",")]
    contenders = {"scikit-learn Nystroem + Ridge": lambda: sk}
    for tol in tols:
        suffix = "" if tol == 1e-4 else f" tol={tol:g}"
        contenders[f"sparsekit NystromRidge pcg{suffix}"] = lambda tol=tol: ours("pcg", tol)
    contenders["sparsekit NystromRidge direct"] = lambda: ours("direct")
    for name, make in contenders.items():
        model = make()
        seconds = best_time(lambda model=model: model.fit(X, y), repeat=args.repeat, warmup=0)
        peak = _peak(lambda model=model: model.fit(X, y))
        pred = model.predict(X_test)
        fitted[name] = (model, pred, seconds)
        rows.append(
            {
                "method": name,
                "fit (s)": f"{seconds:.2f}",
                "test MSE": f"{np.mean((pred - y_test) ** 2):.5f}",
                "CG iterations": getattr(model, "n_iter_", "") if "pcg" in name else "",
                "peak memory (MiB)": f"{peak / 2**20:,.0f}",
            }
        )
    _, ref_pred, ref_s = fitted["scikit-learn Nystroem + Ridge"]
    ref_mse = np.mean((ref_pred - y_test) ** 2)
    for row, (name, (_, pred, seconds)) in zip(rows, fitted.items()):
        row["speed-up"] = f"{ref_s / seconds:.2f}x"
        row["max |pred - sklearn|"] = f"{np.abs(pred - ref_pred).max():.2e}"
        mse = np.mean((pred - y_test) ** 2)
        check(abs(mse - ref_mse) <= 0.01 * ref_mse, f"{name}: test MSE {mse} vs {ref_mse}")
    print_table(
        rows,
        [
            "method",
            "fit (s)",
            "speed-up",
            "test MSE",
            "max |pred - sklearn|",
            "CG iterations",
            "peak memory (MiB)",
        ],
    )
    n_by_m = 8 * n * m / 2**20
    print(f"\nX is {X.nbytes / 2**20:,.0f} MiB; an n x m float64 matrix is {n_by_m:,.0f} MiB")

    pcg, _, pcg_s = next(v for k, v in fitted.items() if "pcg" in k)
    passes = KernelPasses(pcg.kernel_, X, pcg.components_)
    v = np.ones((m, 1))
    one_pass = best_time(lambda: passes.times(v), repeat=3, warmup=1)
    gram_pass = best_time(lambda: passes.gram(v), repeat=3, warmup=1)
    t0 = time.perf_counter()
    pcg.fit(X, y)
    per_iteration = (time.perf_counter() - t0) / max(1, pcg.n_iter_ + 1)
    print(
        f"\none pass K_nm v: {one_pass:.3f} s; one pass K_nm^T (K_nm v): {gram_pass:.3f} s; fit "
        f"time per CG iteration (incl. the right-hand side pass): {per_iteration:.3f} s = "
        f"{per_iteration / one_pass:.2f} x the pass K_nm v"
    )
    finish()


def _dask_fit(args):
    """``nystrom_ridge_fit`` on chunk-wise generated data on a local cluster."""
    import resource

    import dask.array as da
    from dask.distributed import Client, LocalCluster

    n, m, d, lam = args.n or 100_000, args.m or 1000, 28, 1e-6
    print(machine())
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            memory_limit=args.memory_limit,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        rs = da.random.RandomState(0)
        Xd = rs.standard_normal((n, d), chunks=(args.chunk, d)).astype(args.dtype)
        w = np.random.default_rng(0).standard_normal(d) / np.sqrt(d)
        yd = da.sin(2.0 * (Xd @ w.astype(args.dtype))) + 0.1 * rs.standard_normal(
            n, chunks=args.chunk
        )
        print(
            f"n = {n:,} rows in chunks of {args.chunk:,}, d = {d}, m = {m:,}, {args.dtype}, RBF "
            f"gamma = 1/d, lambda = {lam:g}; {args.workers} workers x 1 thread, memory limit "
            f"{args.memory_limit} each; X would be {n * d * Xd.dtype.itemsize / 2**30:,.1f} GiB\n"
        )
        clock = [time.perf_counter()]
        t0 = clock[0]
        from sparsekit.dask import nystrom_ridge_fit

        model = nystrom_ridge_fit(
            Xd,
            yd,
            n_components=m,
            alpha=lam,
            max_iter=args.max_iter,
            kernel_params={"gamma": 1.0 / d},
            callback=lambda i, coef: clock.append(time.perf_counter()),
            random_state=0,
        )
        total = time.perf_counter() - t0
        steps = np.diff(clock[1:]) if len(clock) > 2 else np.array([clock[-1] - t0])
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        print(
            f"fit {total:.1f} s, {model.n_iter_} CG iterations (max_iter {args.max_iter}); time "
            f"per iteration {np.median(steps):.1f} s (median of {len(steps)}); up to the first "
            f"iteration (landmarks, K_mm, the right-hand side pass) {clock[1] - t0:.1f} s\n"
            "peak resident memory per worker (MiB): "
            + ", ".join(f"{kib / 1024:,.0f}" for kib in peaks.values())
        )


def _without_anchor(X, y, X_test, y_test, m, gamma, lam, max_iter):
    """One pcg fit at a size where scikit-learn's pipeline does not fit in memory."""
    n = len(X)
    landmarks = X[np.random.default_rng(0).choice(n, m, replace=False)]
    model = sparsekit.NystromRidge(
        landmarks=landmarks, alpha=lam, max_iter=max_iter, kernel_params={"gamma": gamma}
    )
    model.set_params(landmarks=landmarks[:200]).fit(X[:2000], y[:2000])  # compile
    model.set_params(landmarks=landmarks)
    t0 = time.perf_counter()
    peak = _peak(lambda: model.fit(X, y))
    seconds = time.perf_counter() - t0
    passes = KernelPasses(model.kernel_, X, model.components_)
    one_pass = best_time(lambda: passes.times(np.ones((m, 1), X.dtype)), repeat=2, warmup=0)
    per_iteration = seconds / (model.n_iter_ + 1)
    mse = np.mean((model.predict(X_test) - y_test) ** 2)
    print(
        f"fit {seconds:.1f} s, {model.n_iter_} CG iterations (max_iter {max_iter}), test MSE "
        f"{mse:.5f} (variance of y_test {np.var(y_test):.5f}); peak traced memory "
        f"{peak / 2**20:,.0f} MiB with X {X.nbytes / 2**20:,.0f} MiB\n"
        f"one pass K_nm v: {one_pass:.2f} s; fit time per CG iteration (incl. the right-hand "
        f"side pass and the m x m work): {per_iteration:.2f} s = {per_iteration / one_pass:.2f} x "
        f"the pass\nscikit-learn's Nystroem + Ridge would hold an n x m {X.dtype} matrix of "
        f"{X.itemsize * n * m / 2**30:,.1f} GiB (and Ridge's copy): not run"
    )


if __name__ == "__main__":
    main()
