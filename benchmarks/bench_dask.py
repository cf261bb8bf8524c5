"""The Dask backend: DAC-RLS scores and Nyström transform on a chunked array too big for one
worker, and the overhead of the Dask path against the in-memory path.

1. Large run (default n = 10⁷, d = 54, float64: 4.3 GB of data): a ``distributed.LocalCluster``
   of 2 worker processes with a memory limit of 2 GB each, 1 thread each. The data are never
   held whole: each chunk is generated on its worker from its own seed when a task needs it.
   Timed: DAC-RLS scores of every point (their sum comes back), the Nyström transform with
   |S| uniform landmarks (the column sums of phi(X) come back), and the Nyström MMD² between
   the two halves (one pass). Peak resident memory of each worker process is sampled every
   0.25 s; the script fails if a worker exceeds its limit or is restarted. Values: the scores
   and features of the first chunk, and the MMD² of the first two chunks, are compared with
   the in-memory computation on those chunks.
2. Overhead (default n = 10⁶): the same computations, and kernel k-means (Nyström features,
   k = 10, one seeding, at most 20 Lloyd steps), in memory (one thread) and through Dask on a
   cluster of one worker process with one thread, the data already in the worker's memory
   (``persist``), best of ``--repeat`` (3) after a warm-up. Besides the wall clock, the CPU
   seconds of all the processes involved (this one, which also runs the scheduler, and the
   worker), which depend less on other users of a shared machine. The answers are compared
   (exit 1 if they differ).

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

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import distributed  # noqa: E402
import numpy as np  # noqa: E402
from _timing import check, finish, machine, print_table  # noqa: E402

import sparsekit  # noqa: E402
import sparsekit.dask as skd  # noqa: E402
from sparsekit._runtime.threads import effective_n_jobs, thread_limit  # noqa: E402
from sparsekit.cluster import KernelKMeans  # noqa: E402
from sparsekit.samplers.rls import DACRLSSampler  # noqa: E402
from sparsekit.stats import NystromMMD  # noqa: E402

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
    parts = [
        da.from_delayed(dask.delayed(make_chunk, pure=True)(i, r), (r, D), np.float64)
        for i, r in enumerate(sizes)
    ]
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
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        memory_limit=limit,
        dashboard_address=None,
    )
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
            total = (
                skd.dac_rls_scores(Xd, kernel, LAM, block_size=m, random_state=0).sum().compute()
            )
            t_scores = time.perf_counter() - t0
        peak_scores = dict(mem.peak)
        # the first chunk in memory, same partition
        X0 = make_chunk(0, sizes[0])
        part0 = [b for b in skd.dac_rls_partition(sizes, m, random_state=0) if b.max() < sizes[0]]
        ref0 = DACRLSSampler(lam=LAM, n_jobs=1).scores_for_partition(X0, kernel, part0)
        got0 = skd.dac_rls_scores(
            Xd[: sizes[0]].rechunk((sizes[0], D)), kernel, LAM, block_size=m, random_state=0
        )
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
        half = sizes[0] * (len(sizes) // 2) or n // 2
        with PeakMemory(client) as mem:
            t0 = time.perf_counter()
            mmd2 = skd.mmd2_nystrom(
                Xd[:half], Xd[half:], kernel, n_landmarks=n_landmarks, random_state=0
            )
            t_mmd = time.perf_counter() - t0
        peak_mmd = dict(mem.peak)
        X1 = make_chunk(1, sizes[1]) if len(sizes) > 1 else X0
        ref_mmd = NystromMMD(kernel, n_landmarks=n_landmarks, random_state=0).fit(X0, X1).mmd2()
        got_mmd = skd.mmd2_nystrom(
            Xd[: sizes[0]],
            Xd[sizes[0] : sizes[0] + len(X1)],
            kernel,
            n_landmarks=n_landmarks,
            random_state=0,
        )
        check(np.isclose(got_mmd, ref_mmd, rtol=1e-8), "Nyström MMD² of chunks 0 and 1")
        ref_feat = ny.transform(X0)
        check(
            np.allclose(
                skd.nystroem_transform(ny, Xd[: sizes[0]]).compute(),
                ref_feat,
                rtol=1e-10,
                atol=1e-12,
            ),
            "Nyström features of chunk 0",
        )
        check(np.isfinite(colsum).all() and np.isfinite(total) and mmd2 > 0, "finite results")
        restarted = workers != set(client.scheduler_info()["workers"])
        check(not restarted, "no worker restarted")
        for what, t, peak in [
            (f"DAC-RLS scores (m = {m})", t_scores, peak_scores),
            (f"Nyström fit, |S| = {n_landmarks} uniform", t_fit, peak_ny),
            ("Nyström transform (column sums back)", t_transform, peak_ny),
            (f"Nyström MMD², |S| = {n_landmarks}, two halves", t_mmd, peak_mmd),
        ]:
            worst = max(peak.values()) if peak else float("nan")
            check(
                worst <= limit_bytes, f"{what}: peak worker memory {worst / 1e9:.2f} GB <= {limit}"
            )
            rows.append(
                {
                    "case": what,
                    "n": f"{n:,}",
                    "chunks": f"{len(sizes)} x {chunk:,} rows",
                    "time (s)": f"{t:.1f}",
                    "peak RSS per worker (GB)": ", ".join(f"{v / 1e9:.2f}" for v in peak.values()),
                    "limit": limit,
                }
            )
        print(
            f"large run: 2 workers x {worker_threads} thread(s), memory limit {limit} each; "
            f"Σ scores = {total:.6g} (effective dimension)"
        )
        return rows
    finally:
        client.close()
        cluster.close()


def _cpu_seconds():
    """User + system CPU seconds of this process (all its threads)."""
    import psutil

    t = psutil.Process().cpu_times()
    return t.user + t.system


def overhead_run(n, chunk, block_size, n_landmarks, n_clusters, repeat=3):
    sizes = [min(chunk, n - s) for s in range(0, n, chunk)]
    X = np.concatenate([make_chunk(i, r) for i, r in enumerate(sizes)])
    kernel = sparsekit.get_kernel("rbf", gamma=GAMMA)
    m = block_size or int(np.ceil(np.sqrt(n)))
    blocks = skd.dac_rls_partition(sizes, m, random_state=0)
    half = sizes[0] * (len(sizes) // 2) or n // 2  # two samples for the MMD, cut between chunks
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = distributed.Client(cluster)
    rows = []
    try:
        Xd = da.from_array(X, chunks=(chunk, D)).persist()  # the data in the worker's memory
        distributed.wait(Xd)
        worker_threads = sorted(set(client.run(effective_n_jobs).values()))

        def cpu_now():  # this process (client and scheduler) + the worker process
            return _cpu_seconds() + sum(client.run(_cpu_seconds).values())

        def best(fn, in_memory):
            if in_memory:
                with thread_limit(1):
                    out = fn()
            else:
                out = fn()
            times, cpus = [], []
            for _ in range(repeat):
                c0, t0 = cpu_now(), time.perf_counter()
                if in_memory:
                    with thread_limit(1):
                        fn()
                else:
                    fn()
                times.append(time.perf_counter() - t0)
                cpus.append(cpu_now() - c0)
            return min(times), min(cpus), out

        with thread_limit(1):
            ny = skd.nystroem_fit(Xd, kernel, "uniform", n_landmarks, random_state=0)
        km = dict(
            n_clusters=n_clusters,
            kernel=kernel,
            n_landmarks=n_landmarks,
            n_init=1,
            max_iter=20,
            random_state=0,
        )
        mmd = dict(kernel=kernel, n_landmarks=n_landmarks, random_state=0)
        cases = [
            (
                f"DAC-RLS scores (m = {m})",
                lambda: DACRLSSampler(lam=LAM, n_jobs=1).scores_for_partition(X, kernel, blocks),
                lambda: skd.dac_rls_scores(Xd, kernel, LAM, block_size=m, random_state=0).compute(),
                lambda a, b: np.allclose(a, b, rtol=1e-10, atol=1e-13),
            ),
            # both sides compute every feature row and return the column sums (small)
            (
                f"Nyström transform, |S| = {n_landmarks} (column sums back)",
                lambda: ny.transform(X).sum(axis=0),
                lambda: skd.nystroem_transform(ny, Xd).sum(axis=0).compute(),
                lambda a, b: np.allclose(a, b, rtol=1e-9),
            ),
            (
                f"Nyström MMD², |S| = {n_landmarks}, two samples of {half:,} and {n - half:,}",
                lambda: NystromMMD(**mmd).fit(X[:half], X[half:]).mmd2(),
                lambda: skd.mmd2_nystrom(Xd[:half], Xd[half:], **mmd),
                lambda a, b: np.isclose(a, b, rtol=1e-8),
            ),
            (
                f"kernel k-means, k = {n_clusters}, |S| = {n_landmarks} uniform, ≤ 20 Lloyd steps",
                lambda: KernelKMeans(method="nystrom", **km).fit(X),
                lambda: skd.kernel_kmeans_fit(Xd, **km),
                lambda a, b: (
                    np.array_equal(a.labels_, b.labels_.compute())
                    and np.isclose(a.inertia_, b.inertia_, rtol=1e-9)
                ),
            ),
        ]
        for what, mem_fn, dask_fn, same in cases:
            t_mem, c_mem, out_mem = best(mem_fn, True)
            t_dask, c_dask, out_dask = best(dask_fn, False)
            check(same(out_mem, out_dask), f"{what}: Dask = memory")
            rows.append(
                {
                    "case": what,
                    "n": f"{n:,}",
                    "in memory, 1 thread (s)": f"{t_mem:.2f}",
                    f"Dask, 1 worker x {worker_threads} thread (s)": f"{t_dask:.2f}",
                    "overhead": f"{100 * (t_dask / t_mem - 1):+.0f}%",
                    "CPU s, memory / Dask": f"{c_mem:.2f} / {c_dask:.2f}",
                    "CPU overhead": f"{100 * (c_dask / c_mem - 1):+.0f}%",
                }
            )
            print(f"  {what}: load average {os.getloadavg()[0]:.1f}", flush=True)
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
    parser.add_argument("--n-clusters", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.n_large, args.n_compare, args.chunk = 200_000, 50_000, 25_000
    print(f"machine: {machine()}")
    print(
        f"Dask {dask.__version__}, distributed {distributed.__version__}; data d = {D}, "
        f"float64; rbf gamma = {GAMMA:.4g}, lambda = {LAM}\n"
    )
    rows = overhead_run(
        args.n_compare, args.chunk, args.block_size, args.n_landmarks, args.n_clusters, args.repeat
    )
    print_table(rows, list(rows[0]))
    print()
    if not args.skip_large:
        rows = large_run(args.n_large, args.chunk, args.block_size, args.n_landmarks)
        print_table(rows, list(rows[0]))
    finish()


if __name__ == "__main__":
    sys.exit(main())
