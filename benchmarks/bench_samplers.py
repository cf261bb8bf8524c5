"""Landmark samplers against plain-NumPy reference implementations, side by side.

- DAC-RLS scores (n = 100,000, d = 54): sparsekit's ``dac-rls`` against the approach of the
  authors' public code (per block ``np.linalg.inv(K_b + λI)``, then the row sums of
  ``K_b * inv``, serially, with scikit-learn's ``rbf_kernel``), on the same partition.
- DAC-RLS scores at n = 1,000,000, d = 54 (Covertype's size), run in a child process that
  reports its time, its peak resident memory (``resource.getrusage``, data generation
  included; must stay below 4 GB) and the peak of the memory allocated by the DAC computation
  itself (``tracemalloc``).
- Recursive RLS (s = 500, n = 100,000, d = 54): sparsekit's ``recursive-rls`` against a plain
  NumPy version of the same algorithm written like the public Python port (full K_{level,S}
  blocks, ``np.linalg.inv``, ``KS @ inv``).

Run ``python benchmarks/bench_samplers.py`` (``--quick`` for a small version). Numba is warmed up
before timing; timings on shared machines are indicative.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
import tracemalloc

import numpy as np

from sparsekit.samplers._parallel import default_n_jobs

GB = 2**30


def make_data(n: int, d: int = 54, n_clusters: int = 20, seed: int = 0) -> np.ndarray:
    """A Gaussian mixture in d dimensions (cluster structure gives a decaying kernel spectrum)."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((n_clusters, d))
    X = centers[rng.integers(0, n_clusters, n)]
    X += 0.3 * rng.standard_normal((n, d))
    return X


# -- reference implementations (a few lines each, plain NumPy) ------------------------------
def reference_dac(X, lam, gamma, blocks):
    """The authors' public DAC code: per block inv(K_b + λI), row sums of K_b * inv, serially."""
    from sklearn.metrics.pairwise import rbf_kernel

    out = np.empty(X.shape[0])
    for idx in blocks:
        Kb = rbf_kernel(X[idx], gamma=gamma)
        inv = np.linalg.inv(Kb + lam * np.eye(len(idx)))
        out[idx] = np.sum(Kb * inv, axis=1)
    return out


def _gauss(A, B, gamma):
    sq = np.sum(A**2, 1)[:, None] - 2 * A @ B.T + np.sum(B**2, 1)[None, :]
    return np.exp(-gamma * sq)


def reference_recursive(X, s, gamma, seed=0):
    """Musco & Musco's recursive RLS as in the public Python port (adaptive λ), plain NumPy."""
    from scipy.linalg import eigvalsh

    rng = np.random.RandomState(seed)
    n = X.shape[0]
    over = np.log(s)
    k = int(np.ceil(s / (4 * over)))
    levels = int(np.ceil(np.log2(n / s)))
    perm = rng.permutation(n)
    sizes = [n]
    for _ in range(levels):
        sizes.append(int(np.ceil(sizes[-1] / 2)))
    sample = np.arange(sizes[-1])
    w = np.ones(sample.size)
    for level in reversed(range(levels)):
        cur = perm[: sizes[level]]
        KS = _gauss(X[cur], X[perm[sample]], gamma)
        SKS = KS[sample]
        if k >= SKS.shape[0]:
            lam = 1e-5
        else:
            top = eigvalsh(SKS * w[:, None] * w[None, :],
                           subset_by_index=[SKS.shape[0] - k, SKS.shape[0] - 1])
            lam = (np.sum(np.diag(SKS) * w**2) - np.sum(top)) / k
        R = KS @ np.linalg.inv(SKS + np.diag(lam / w**2))
        est = np.maximum(0.0, 1.0 - np.sum(R * KS, axis=1)) / lam   # k_ii = 1 for the RBF
        if level:
            p = np.minimum(1.0, over * est)
            sample = np.flatnonzero(rng.uniform(size=cur.size) < p)
            w = 1.0 / np.sqrt(p[sample])
        else:
            p = np.minimum(1.0, est)
            return perm[rng.choice(n, s, replace=False, p=p / p.sum())], p[np.argsort(perm)]


# -- measurements ----------------------------------------------------------------------------
def _timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t, out


def _warm_up(kernel):
    import sparsekit

    X = make_data(600, seed=1)
    sparsekit.get_sampler("dac-rls", lam=1.0).scores(X, kernel, random_state=0)
    sparsekit.get_sampler("recursive-rls").sample(X, kernel, 40, random_state=0)


def bench_dac(n, d, lam=1.0):
    import sparsekit
    from sparsekit.samplers.rls import dac_rls, random_partition

    X = make_data(n, d)
    gamma = 1.0 / d
    kernel = sparsekit.get_kernel("rbf", gamma=gamma)
    _warm_up(kernel)
    m = math.isqrt(n - 1) + 1
    blocks = random_partition(n, m, np.random.default_rng(0))
    sampler = sparsekit.get_sampler("dac-rls", lam=lam)
    t_ours, ours = _timed(dac_rls, X, kernel, lam, blocks, default_n_jobs(sampler.n_jobs))
    t_ours1, _ = _timed(dac_rls, X, kernel, lam, blocks, 1)
    t_ref, ref = _timed(reference_dac, X, lam, gamma, blocks)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, "blas"):
        t_ref1, _ = _timed(reference_dac, X, lam, gamma, blocks)
    err = float(np.max(np.abs(ours - ref)))
    return [
        (f"DAC-RLS scores n={n:,} d={d} m={m}, n_jobs={default_n_jobs(sampler.n_jobs)}", t_ours, t_ref, err),
        (f"DAC-RLS scores n={n:,} d={d} m={m}, n_jobs=1 vs reference on 1 BLAS thread", t_ours1,
         t_ref1, err),
    ]


def child_dac_big(n, d):
    """Run in a child process: DAC-RLS scores at size n; prints time and peak RSS as JSON."""
    import sparsekit

    X = make_data(n, d)
    kernel = sparsekit.get_kernel("rbf", gamma=1.0 / d)
    _warm_up(kernel)
    tracemalloc.start()  # NumPy reports its buffers to tracemalloc: the working memory of DAC
    t, scores = _timed(sparsekit.get_sampler("dac-rls", lam=1.0).scores, X, kernel,
                       random_state=0)
    work = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: kilobytes
    print(json.dumps({"time": t, "peak_bytes": peak, "work_bytes": work,
                      "sum": float(scores.sum())}))


def bench_dac_big(n, d):
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child-dac", str(n),
                           str(d)], capture_output=True, text=True, check=True)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    return res["time"], res["peak_bytes"], res["work_bytes"]


def bench_recursive(n, d, s):
    import sparsekit
    from threadpoolctl import threadpool_limits

    X = make_data(n, d)
    gamma = 1.0 / d
    kernel = sparsekit.get_kernel("rbf", gamma=gamma)
    _warm_up(kernel)
    sampler = sparsekit.get_sampler("recursive-rls")
    t_ours, _ = _timed(sampler.sample, X, kernel, s, random_state=0)
    t_ref, _ = _timed(reference_recursive, X, s, gamma, 0)
    t_ours1, _ = _timed(sparsekit.get_sampler("recursive-rls", n_jobs=1).sample, X, kernel, s,
                        random_state=0)
    with threadpool_limits(1, "blas"):
        t_ref1, _ = _timed(reference_recursive, X, s, gamma, 0)
    return [
        (f"recursive-rls s={s} n={n:,} d={d} (adaptive λ), n_jobs={default_n_jobs(sampler.n_jobs)}",
         t_ours, t_ref, None),
        (f"recursive-rls s={s} n={n:,} d={d}, n_jobs=1 vs reference on 1 BLAS thread",
         t_ours1, t_ref1, None),
    ]


def main(quick: bool = False):
    d = 54
    n_dac, n_big, n_rec, s = (20_000, 100_000, 20_000, 200) if quick else \
        (100_000, 1_000_000, 100_000, 500)
    rows = bench_dac(n_dac, d)
    rows += bench_recursive(n_rec, d, s)
    t_big, peak, work = bench_dac_big(n_big, d)
    print(f"\nlandmark samplers benchmark ({'quick' if quick else 'full'}), "
          f"{os.cpu_count()} CPUs; times in seconds")
    header = f"{'case':<78} {'sparsekit':>10} {'reference':>10} {'speedup':>8} {'max|diff|':>10}"
    print(header)
    print("-" * len(header))
    for name, t_ours, t_ref, err in rows:
        diff = "" if err is None else f"{err:.1e}"
        print(f"{name:<78} {t_ours:>10.3f} {t_ref:>10.3f} {t_ref / t_ours:>7.2f}x {diff:>10}")
    verdict = "OK" if peak < 4 * GB else "OVER 4 GB"
    print(f"{f'DAC-RLS scores n={n_big:,} d={d} (child process)':<78} {t_big:>10.3f} "
          f"{'-':>10} {'-':>8}   peak RSS {peak / GB:.2f} GB ({verdict}), "
          f"DAC working memory {work / 2**20:.0f} MiB (data: {n_big * d * 8 / 2**20:.0f} MiB)")
    return rows, (t_big, peak, work)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--child-dac":
        child_dac_big(int(sys.argv[2]), int(sys.argv[3]))
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    main(quick=parser.parse_args().quick)
