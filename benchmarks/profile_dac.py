"""Where DAC-RLS spends its time: a per-function profile of one run, and 1 vs 2 threads.

Run: ``python benchmarks/profile_dac.py`` (``--quick`` for n = 20,000). Prints

1. a cProfile (wall clock) of ``dac_rls`` with ``n_jobs=1`` at n = 100,000, d = 54 (blocks of
   ⌈√n⌉ = 317), grouped into: kernel blocks (GEMM, distances, exp), thread-pool hand-offs and
   lock waits, LAPACK factorizations, the scores, and the rest (Python), with the process CPU
   time of the same run (less sensitive to the machine's load than the wall clock);
2. best-of-5 times with ``n_jobs=1`` and ``n_jobs=2``, interleaved (1, 2, 1, 2, ...), at
   n = 100,000 and 200,000, with the machine's load average (``os.getloadavg``) before and after.

The output is a Markdown table per part.
"""

import argparse
import cProfile
import math
import os
import pstats
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import machine, print_table  # noqa: E402

import sparsekit  # noqa: E402
from sparsekit.samplers.rls import dac_rls, random_partition  # noqa: E402

GROUPS = [  # (group, substrings of "file:function" in the profile), first match wins
    ("thread-pool hand-offs and lock waits", ("acquire", "wait", "SimpleQueue", "submit")),
    # SciPy's LAPACK/BLAS wrappers are not profiled separately: their time is the own time
    # of the functions that call them
    (
        "Cholesky + triangular inverse (LAPACK/BLAS)",
        ("rls_from_gram", "_invert_upper", "potrf_upper", "trtri_upper"),
    ),
    ("kernel block: GEMM", ("numpy.dot", "matmul")),
    ("kernel block: distances (Numba)", ("scaled_sq_dist",)),
    ("kernel block: exp", ("exp",)),
    ("scores: row norms (einsum)", ("einsum",)),
]


def make_data(n, d=54, n_clusters=20, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((n_clusters, d))
    X = centers[rng.integers(0, n_clusters, n)]
    X += 0.3 * rng.standard_normal((n, d))
    return X


def profile_groups(X, kernel, blocks):
    prof = cProfile.Profile()
    prof.enable()
    t0, c0 = time.perf_counter(), time.process_time()
    dac_rls(X, kernel, 1.0, blocks, 1)
    total, cpu = time.perf_counter() - t0, time.process_time() - c0
    prof.disable()
    stats = pstats.Stats(prof).stats
    sums = {g: 0.0 for g, _ in GROUPS}
    rest = 0.0
    for (file, _, func), (_, _, tottime, _, _) in stats.items():
        key = f"{os.path.basename(file)}:{func}"
        for group, needles in GROUPS:
            if any(s in key for s in needles):
                sums[group] += tottime
                break
        else:
            rest += tottime
    rows = [
        {"part": g, "seconds": f"{t:.3f}", "share": f"{t / total:.0%}"} for g, t in sums.items()
    ]
    rows.append(
        {
            "part": "other (Python, indexing, copies)",
            "seconds": f"{rest:.3f}",
            "share": f"{rest / total:.0%}",
        }
    )
    rows.append(
        {
            "part": f"total ({len(blocks)} blocks, profiled)",
            "seconds": f"{total:.3f}",
            "share": "100%",
        }
    )
    rows.append(
        {
            "part": "process CPU time of that run (all threads)",
            "seconds": f"{cpu:.3f}",
            "share": "-",
        }
    )
    return rows


def interleaved(X, kernel, blocks, repeat=5):
    best = {1: np.inf, 2: np.inf}
    ref = dac_rls(X, kernel, 1.0, blocks, 1)
    for n_jobs in (1, 2):  # warm-up
        dac_rls(X, kernel, 1.0, blocks, n_jobs)
    for _ in range(repeat):
        for n_jobs in (1, 2):
            t0 = time.perf_counter()
            out = dac_rls(X, kernel, 1.0, blocks, n_jobs)
            best[n_jobs] = min(best[n_jobs], time.perf_counter() - t0)
            if not np.allclose(out, ref, rtol=0, atol=1e-12):
                raise SystemExit(f"n_jobs={n_jobs} changed the scores")
    return best


def main(quick=False):
    print(f"Machine: {machine()}\n")
    d = 54
    sizes = (20_000, 40_000) if quick else (100_000, 200_000)
    kernel = sparsekit.get_kernel("rbf", gamma=1.0 / d)
    X = make_data(sizes[0], d)
    blocks = random_partition(X.shape[0], math.isqrt(X.shape[0] - 1) + 1, np.random.default_rng(0))
    dac_rls(X, kernel, 1.0, blocks[:2], 1)  # compile outside the profile
    print(f"## Profile, n = {sizes[0]:,}, d = {d}, n_jobs = 1\n")
    print_table(profile_groups(X, kernel, blocks), ["part", "seconds", "share"])
    rows = []
    for n in sizes:
        X = make_data(n, d)
        blocks = random_partition(n, math.isqrt(n - 1) + 1, np.random.default_rng(0))
        load0 = os.getloadavg()[0]
        best = interleaved(X, kernel, blocks)
        rows.append(
            {
                "n": f"{n:,}",
                "blocks": len(blocks),
                "n_jobs=1 (s)": f"{best[1]:.3f}",
                "n_jobs=2 (s)": f"{best[2]:.3f}",
                "scaling": f"{best[1] / best[2]:.2f}x",
                "load avg (before, after)": f"{load0:.2f}, {os.getloadavg()[0]:.2f}",
            }
        )
    print(f"\n## 1 vs 2 threads, best of 5, interleaved ({os.cpu_count()} CPUs)\n")
    print_table(rows, list(rows[0]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 20,000 and 40,000")
    main(parser.parse_args().quick)
