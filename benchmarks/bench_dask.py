"""The Dask backend: DAC-RLS scores and Nyström transform on a chunked array too big for one
worker, and the overhead of the Dask path against the in-memory path.

1. Large run (default n = 10⁷, d = 54, float64: 4.3 GB of data): a ``distributed.LocalCluster``
   of 2 worker processes with a memory limit of 2 GB each, 1 thread each. The data are never
   held whole: each chunk is generated on its worker from its own seed when a task needs it.
   Timed: DAC-RLS scores of every point (their sum comes back), and the Nyström transform with
   |S| uniform landmarks (the column sums of phi(X) come back). Peak resident memory of each
   worker process is sampled every 0.25 s; the script fails if a worker exceeds its limit or
   is restarted. Values: the scores and features of the first chunk are compared with the
   in-memory computation on that chunk.
2. Overhead (default n = 10⁶): the same computations in memory (one thread) and through Dask
   on a cluster of one worker process with one thread, the data already in the worker's memory
   (``persist``), best of 2 after a warm-up. The answers are compared (exit 1 if they differ).

``--block-size`` sets DAC-RLS's m (default ⌈√n⌉: at n = 10⁷, m = 3,163 makes the run cost
≈ n·m² ≈ 10¹⁴ flops, hours on two cores; pass e.g. ``--block-size 317`` for the m of
n = 10⁵). ``--quick``: n = 200,000 and 50,000.
Run ``python benchmarks/bench_dask.py [--n-large N] [--n-compare N] [--block-size M]``.
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # the worker processes inherit one thread each

import numpy as np  # noqa: E402
from _timing import check, finish, machine, print_table  # noqa: E402

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import distributed  # noqa: E402

import sparsekit  # noqa: E402
import sparsekit.dask as skd  # noqa: E402
from sparsekit._threads import effective_n_jobs, thread_limit  # noqa: E402
from sparsekit.samplers.rls import DACRLSSampler  # noqa: E402

D = 54
LAM = 1e-3
GAMMA = 1.0 / (2 * D)


def make_chunk(i, rows, d=D):
    """Chunk ``i``: ``rows`` points of a 10-component Gaussian mixture, from seed ``i``."""
    rng = np.random.default_rng(1000 + i)
    centers = np.random.default_rng(0).normal(0.0, 2.0, (10, d))
    return centers[rng.integers(0, 10, rows)] + rng.standard_normal((rows, d))


def lazy_data(n, chunk):
    sizes = [min(chunk, n - s) for s in range(0, n, chunk)]
    parts = [da.from_delayed(dask.delayed(make_chunk, pure=True)(i, r), (r, D), np.float64)
             for i, r in enumerate(sizes)]
    return da.concatenate(parts), sizes


class PeakMemory:
    """Peak RSS of each worker process, sampled in a thread through ``client.run``."""

    def __init__(self, client, interval=0.25):
        self.client, self.interval, self.peak = client, interval, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    @staticmethod
    def _rss():
        import psutil

        return psutil.Process().memory_info().rss

    def _loop(self):
        while not self._stop.is_set():
            try:
                for w, rss in self.client.run(self._rss).items():
                    self.peak[w] = max(self.peak.get(w, 0), rss)
            except Exception:  # a worker being restarted: seen by the worker-set check
                pass
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def large_run(n, chunk, block_size, n_landmarks, limit="2GB"):
    rows = []
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit=limit, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        workers = set(client.scheduler_info()["workers"])
        limit_bytes = dask.utils.parse_bytes(limit)
        worker_threads = sorted(set(client.run(effective_n_jobs).values()))
        Xd, sizes = lazy_data(n, chunk)
        kernel = sparsekit.get_kernel("rbf", gamma=GAMMA)
        m = block_size or (int(np.ceil(np.sqrt(n))))
        with PeakMemory(client) as mem:
            t0 = time.perf_counter()
            total = skd.dac_rls_scores(Xd, kernel, LAM, block_size=m, random_state=0).sum().compute()
            t_scores = time.perf_counter() - t0
        peak_scores = dict(mem.peak)
        # the first chunk in memory, same partition
        X0 = make_chunk(0, sizes[0])
        part0 = [b for b in skd.dac_rls_partition(sizes, m, random_state=0) if b.max() < sizes[0]]
        ref0 = DACRLSSampler(lam=LAM, n_jobs=1).scores_for_partition(X0, kernel, part0)
        got0 = skd.dac_rls_scores(Xd[: sizes[0]].rechunk((sizes[0], D)), kernel, LAM,
                                  block_size=m, random_state=0)
        # Xd[:chunk] keeps chunk 0 alone, so the same seed gives the same local partition
        got0 = got0.compute()
        check(np.allclose(got0, ref0, rtol=1e-10, atol=1e-13), "DAC-RLS scores of chunk 0")
        with PeakMemory(client) as mem:
            t0 = time.perf_counter()
            ny = skd.nystroem_fit(Xd, kernel, "uniform", n_landmarks, random_state=0)
            t_fit = time.perf_counter() - t0
            t0 = time.perf_counter()
            colsum = skd.nystroem_transform(ny, Xd).sum(axis=0).compute()
            t_transform = time.perf_counter() - t0
        peak_ny = dict(mem.peak)
        ref_feat = ny.transform(X0)
        check(np.allclose(skd.nystroem_transform(ny, Xd[: sizes[0]]).compute(), ref_feat,
                          rtol=1e-10, atol=1e-12), "Nyström features of chunk 0")
        check(np.isfinite(colsum).all() and np.isfinite(total), "finite results")
        restarted = workers != set(client.scheduler_info()["workers"])
        check(not restarted, "no worker restarted")
        for what, t, peak in [(f"DAC-RLS scores (m = {m})", t_scores, peak_scores),
                              (f"Nyström fit, |S| = {n_landmarks} uniform", t_fit, peak_ny),
                              ("Nyström transform (column sums back)", t_transform, peak_ny)]:
            worst = max(peak.values()) if peak else float("nan")
            check(worst <= limit_bytes, f"{what}: peak worker memory {worst / 1e9:.2f} GB <= {limit}")
            rows.append({"case": what, "n": f"{n:,}", "chunks": f"{len(sizes)} x {chunk:,} rows",
                         "time (s)": f"{t:.1f}",
                         "peak RSS per worker (GB)": ", ".join(f"{v / 1e9:.2f}" for v in peak.values()),
                         "limit": limit})
        print(f"large run: 2 workers x {worker_threads} thread(s), memory limit {limit} each; "
              f"Σ scores = {total:.6g} (effective dimension)")
        return rows
    finally:
        client.close()
        cluster.close()


def overhead_run(n, chunk, block_size, n_landmarks, repeat=2):
    sizes = [min(chunk, n - s) for s in range(0, n, chunk)]
    X = np.concatenate([make_chunk(i, r) for i, r in enumerate(sizes)])
    kernel = sparsekit.get_kernel("rbf", gamma=GAMMA)
    m = block_size or int(np.ceil(np.sqrt(n)))
    blocks = skd.dac_rls_partition(sizes, m, random_state=0)
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    rows = []
    try:
        Xd = da.from_array(X, chunks=(chunk, D)).persist()  # the data in the worker's memory
        distributed.wait(Xd)
        worker_threads = sorted(set(client.run(effective_n_jobs).values()))

        def best(fn):
            fn()
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                out = fn()
                times.append(time.perf_counter() - t0)
            return min(times), out

        with thread_limit(1):
            t_mem, s_mem = best(lambda: DACRLSSampler(lam=LAM, n_jobs=1).scores_for_partition(X, kernel, blocks))
            ny = skd.nystroem_fit(Xd, kernel, "uniform", n_landmarks, random_state=0)
        t_dask, s_dask = best(lambda: skd.dac_rls_scores(Xd, kernel, LAM, block_size=m,
                                                         random_state=0).compute())
        check(np.allclose(s_dask, s_mem, rtol=1e-10, atol=1e-13), "DAC-RLS scores, Dask = memory")

        # both sides compute every feature row and return the column sums (small)
        with thread_limit(1):
            t_mem_tr, z_mem = best(lambda: ny.transform(X).sum(axis=0))
        t_dask_tr, z_dask = best(lambda: skd.nystroem_transform(ny, Xd).sum(axis=0).compute())
        check(np.allclose(z_dask, z_mem, rtol=1e-9), "Nyström features (column sums), Dask = memory")
        for what, tm, td in [(f"DAC-RLS scores (m = {m})", t_mem, t_dask),
                             (f"Nyström transform, |S| = {n_landmarks} (column sums back)",
                              t_mem_tr, t_dask_tr)]:
            rows.append({"case": what, "n": f"{n:,}", "in memory, 1 thread (s)": f"{tm:.2f}",
                         f"Dask, 1 worker x {worker_threads} thread (s)": f"{td:.2f}",
                         "overhead": f"{100 * (td / tm - 1):+.0f}%"})
        return rows
    finally:
        client.close()
        cluster.close()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-large", type=int, default=10_000_000)
    parser.add_argument("--n-compare", type=int, default=1_000_000)
    parser.add_argument("--chunk", type=int, default=250_000)
    parser.add_argument("--block-size", type=int, default=None)
    parser.add_argument("--n-landmarks", type=int, default=100)
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.n_large, args.n_compare, args.chunk = 200_000, 50_000, 25_000
    print(f"machine: {machine()}")
    print(f"Dask {dask.__version__}, distributed {distributed.__version__}; data d = {D}, "
          f"float64; rbf gamma = {GAMMA:.4g}, lambda = {LAM}\n")
    rows = overhead_run(args.n_compare, args.chunk, args.block_size, args.n_landmarks)
    print_table(rows, list(rows[0]))
    print()
    if not args.skip_large:
        rows = large_run(args.n_large, args.chunk, args.block_size, args.n_landmarks)
        print_table(rows, list(rows[0]))
    finish()


if __name__ == "__main__":
    sys.exit(main())
