"""Landmark samplers against plain-NumPy reference implementations, side by side.

- DAC-RLS scores (n = 100,000, d = 54): sparsekit's ``dac-rls`` against the approach of the
  authors' public code (per block ``np.linalg.inv(K_b + λI)``, then the row sums of
  ``K_b * inv``, serially, with scikit-learn's ``rbf_kernel``), on the same partition.
- DAC-RLS scores at n = 1,000,000, d = 54 (Covertype's size), run in a child process that
  reports its time, its peak resident memory (``resource.getrusage``, data generation
  included; must stay below 4 GB) and the peak of the memory allocated by the DAC computation
  itself (``tracemalloc``).
- Recursive RLS scores (s = 500, n = 100,000, d = 54, adaptive λ): sparsekit's
  ``recursive-rls`` against a plain NumPy version of the same algorithm written like the public
  Python port (full K_{level,S} blocks, ``np.linalg.inv``, ``KS @ inv``). The reference draws
  its random numbers from the same generator in the same order, so both compute the same
  scores (checked).

Both sides: best of 3 after one warm-up run (Numba compiled, imports done), first with the
default threads (sparsekit's blocks on every usable CPU, the reference's BLAS likewise), then
with everything on one thread (``sparsekit.thread_limit(1)``, which also limits the reference's
BLAS). The values are checked (the script exits 1 when they differ). Run
``python benchmarks/bench_samplers.py`` (``--quick`` for a small version; ``--only dac`` or
``--only recursive`` for the rows of one sampler in the first table).
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
from scipy.linalg import eigvalsh
from sklearn.metrics.pairwise import rbf_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_time, blas_threads, check, finish, machine, print_table, threads  # noqa: E402

import sparsekit  # noqa: E402
from sparsekit.samplers.rls import dac_rls, random_partition  # noqa: E402

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
    """Musco & Musco's recursive RLS as in the public Python port (adaptive λ), plain NumPy.

    Returns the last-level scores min(1, l̃_i) in data order. Random numbers come from
    ``np.random.default_rng(seed)`` in sparsekit's order (permutation, then one uniform per
    point and level), so that both implementations draw the same dictionaries.
    """
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    over = np.log(s)
    k = int(np.ceil(s / (4 * over)))
    levels = max(1, int(np.ceil(np.log2(n / s))))
    sizes = [n]
    for _ in range(levels):
        sizes.append(int(np.ceil(sizes[-1] / 2)))
    perm = rng.permutation(n)
    sample = np.arange(sizes[-1])
    w = np.ones(sample.size)
    for level in reversed(range(levels)):
        cur = perm[: sizes[level]]
        KS = _gauss(X[cur], X[perm[sample]], gamma)
        SKS = KS[sample]
        if k >= SKS.shape[0]:
            lam = 1e-5
        else:
            top = eigvalsh(
                SKS * w[:, None] * w[None, :], subset_by_index=[SKS.shape[0] - k, SKS.shape[0] - 1]
            )
            lam = max(1e-5, (np.sum(np.diag(SKS) * w**2) - np.sum(top)) / k)
        R = KS @ np.linalg.inv(SKS + np.diag(lam / w**2))
        est = np.maximum(0.0, 1.0 - np.sum(R * KS, axis=1)) / lam  # k_ii = 1 for the RBF
        if level == 0:
            return np.minimum(1.0, est)[np.argsort(perm)]
        p = np.minimum(1.0, over * est)
        sample = np.flatnonzero(rng.random(cur.size) < p)
        if sample.size == 0:
            sample = np.sort(rng.choice(cur.size, min(s, cur.size), replace=False))
            w = np.full(sample.size, np.sqrt(cur.size / sample.size))
        else:
            w = 1.0 / np.sqrt(p[sample])


# -- measurements ----------------------------------------------------------------------------
THREAD_SETTINGS = (-1, 1)  # every usable CPU, then one thread on both sides


def _timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t, out


def _warm_up(kernel):
    X = make_data(600, seed=1)
    sparsekit.get_sampler("dac-rls", lam=1.0).scores(X, kernel, random_state=0)
    sparsekit.get_sampler("recursive-rls").sample(X, kernel, 40, random_state=0)


def _row(case, used, t_ours, t_ref, diff):
    return {
        "case": case,
        "threads (sparsekit / reference)": used,
        "sparsekit (s)": f"{t_ours:.3f}",
        "reference (s)": f"{t_ref:.3f}",
        "speed-up": f"{t_ref / t_ours:.2f}x",
        "max abs. diff": f"{diff:.1e}",
    }


def bench_dac(n, d, lam=1.0, repeat=3):
    X = make_data(n, d)
    gamma = 1.0 / d
    kernel = sparsekit.get_kernel("rbf", gamma=gamma)
    _warm_up(kernel)
    m = math.isqrt(n - 1) + 1
    blocks = random_partition(n, m, np.random.default_rng(0))
    diff = float(
        np.max(np.abs(dac_rls(X, kernel, lam, blocks, 1) - reference_dac(X, lam, gamma, blocks)))
    )
    check(diff <= 1e-10, f"DAC-RLS scores differ from the reference by {diff:.1e}")
    rows = []
    for setting in THREAD_SETTINGS:
        with sparsekit.thread_limit(setting):
            n_jobs = threads()
            t_ours = best_time(lambda: dac_rls(X, kernel, lam, blocks, n_jobs), repeat)
            t_ref = best_time(lambda: reference_dac(X, lam, gamma, blocks), repeat)
            used = f"{n_jobs} / {blas_threads()} (BLAS)"
        rows.append(_row(f"DAC-RLS scores n={n:,} d={d} m={m}", used, t_ours, t_ref, diff))
    return rows


def child_dac_big(n, d):
    """Run in a child process: DAC-RLS scores at size n; prints time and peak RSS as JSON."""
    import sparsekit

    X = make_data(n, d)
    kernel = sparsekit.get_kernel("rbf", gamma=1.0 / d)
    _warm_up(kernel)
    tracemalloc.start()  # NumPy reports its buffers to tracemalloc: the working memory of DAC
    t, scores = _timed(sparsekit.get_sampler("dac-rls", lam=1.0).scores, X, kernel, random_state=0)
    work = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: kilobytes
    print(
        json.dumps({"time": t, "peak_bytes": peak, "work_bytes": work, "sum": float(scores.sum())})
    )


def bench_dac_big(n, d):
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child-dac", str(n), str(d)],
        capture_output=True,
        text=True,
        check=True,
    )
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    return res["time"], res["peak_bytes"], res["work_bytes"]


def bench_recursive(n, d, s, repeat=3):
    X = make_data(n, d)
    gamma = 1.0 / d
    kernel = sparsekit.get_kernel("rbf", gamma=gamma)
    _warm_up(kernel)

    def ours(n_jobs):
        return sparsekit.get_sampler("recursive-rls", level_size=s, n_jobs=n_jobs).scores(
            X, kernel, random_state=0
        )

    diff = float(np.max(np.abs(ours(1) - reference_recursive(X, s, gamma, 0))))
    check(diff <= 1e-6, f"recursive-RLS scores differ from the reference by {diff:.1e}")
    rows = []
    for setting in THREAD_SETTINGS:
        with sparsekit.thread_limit(setting):
            n_jobs = threads()
            t_ours = best_time(lambda: ours(n_jobs), repeat)
            t_ref = best_time(lambda: reference_recursive(X, s, gamma, 0), repeat)
            used = f"{n_jobs} / {blas_threads()} (BLAS)"
        rows.append(
            _row(
                f"recursive-RLS scores s={s} n={n:,} d={d} (adaptive λ)", used, t_ours, t_ref, diff
            )
        )
    return rows


def main(quick: bool = False, only: str | None = None):
    d = 54
    n_dac, n_big, n_rec, s = (
        (20_000, 100_000, 20_000, 200) if quick else (100_000, 1_000_000, 100_000, 500)
    )
    print(f"Machine: {machine()}\n")
    rows = bench_dac(n_dac, d) if only in (None, "dac") else []
    rows += bench_recursive(n_rec, d, s) if only in (None, "recursive") else []
    print_table(rows, list(rows[0]))
    if only is not None:
        finish()
        return rows, None
    t_big, peak, work = bench_dac_big(n_big, d)
    check(peak < 4 * GB, f"DAC-RLS at n={n_big:,}: peak RSS {peak / GB:.2f} GB >= 4 GB")
    print()
    print_table(
        [
            {
                "case": f"DAC-RLS scores n={n_big:,} d={d} (child process)",
                "threads": threads(),
                "time (s)": f"{t_big:.1f}",
                "peak RSS (GB)": f"{peak / GB:.2f}",
                "DAC working memory (MiB)": f"{work / 2**20:.0f}",
                "data (MiB)": f"{n_big * d * 8 / 2**20:.0f}",
                "target": "< 4 GB",
            }
        ],
        [
            "case",
            "threads",
            "time (s)",
            "peak RSS (GB)",
            "DAC working memory (MiB)",
            "data (MiB)",
            "target",
        ],
    )
    finish()
    return rows, (t_big, peak, work)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--child-dac":
        child_dac_big(int(sys.argv[2]), int(sys.argv[3]))
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    parser.add_argument(
        "--only", choices=("dac", "recursive"), help="only the first table's rows of one sampler"
    )
    args = parser.parse_args()
    main(quick=args.quick, only=args.only)
