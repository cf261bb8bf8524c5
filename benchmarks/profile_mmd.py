"""Where the exact MMD² spends its time on 1 and 2 threads, and how its tile size scales.

Run: ``python benchmarks/profile_mmd.py`` (``--quick`` for 2,000 + 2,000 points; ``--tiles
MIB ...`` for the tile sizes of the second part). Data: the exact unbiased MMD² of
``bench_threads.py`` (10,000 + 10,000 points x 10, RBF kernel, gamma = 0.1).

1. With 1 and 2 threads (``sparsekit.thread_limit``: Numba, BLAS and sparsekit's pools),
   interleaved, best of 3 after a warm-up run: the total wall time, the time inside the tile
   pool (``sparsekit.stats.exact.block_sums``, timed from the calling thread: the kernel tiles
   and their sums, with the pool's start and its waits) and the serial rest (total − pool: data
   checks, pooling, the traces), with the process CPU time of the best runs. The rest bounds
   the scaling (Amdahl); equal CPU times on 1 and 2 threads and half the wall time would be
   perfect scaling.
2. The same statistic with ``sparsekit.stats.exact.POOL_TILE_BYTES`` set to each tile size,
   1 against 2 threads, interleaved, best of 3 after a warm-up run.
3. (``--strips KIB ...``, trees with ``sparsekit.stats._rbf_tiles``) the same with the RBF
   tiles' strip size ``STRIP_BYTES`` set to each size, the tiles at their default.

Every statistic is checked equal (bitwise) between 1 and 2 threads (the script exits 1
otherwise).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import check, finish, machine, print_table  # noqa: E402

import sparsekit  # noqa: E402
from sparsekit.stats import exact, mmd2_unbiased  # noqa: E402

SPENT = {"pool": 0.0}


def _timed_block_sums(fn):
    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT["pool"] += time.perf_counter() - t0

    return timed


def data(quick):
    n = 2_000 if quick else 10_000
    A = np.random.default_rng(4).random((n, 10))
    B = np.random.default_rng(5).random((n, 10)) + 0.1
    return A, B


def run_once(A, B, t):
    with sparsekit.thread_limit(t):
        SPENT["pool"] = 0.0
        c0, t0 = time.process_time(), time.perf_counter()
        value = mmd2_unbiased(A, B, "rbf", kernel_params={"gamma": 0.1})
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return value, wall, cpu, SPENT["pool"]


def interleaved(A, B, repeat=3):
    """{t: (value, wall, cpu, pool) of the best run} for t = 1, 2, after a warm-up run each."""
    best = {}
    for t in (1, 2):
        run_once(A, B, t)
    for _ in range(repeat):
        for t in (1, 2):
            run = run_once(A, B, t)
            if t not in best or run[1] < best[t][1]:
                best[t] = run
    check(best[1][0] == best[2][0], "1 and 2 threads give different statistics")
    return best


def sweep(A, B, module, name, values, unit, column):
    """Rows of the 1 / 2 thread table with ``module.name`` set to each of ``values`` x unit."""
    rows = []
    default = getattr(module, name)
    try:
        for v in values:
            setattr(module, name, int(v * unit))
            best = interleaved(A, B)
            rows.append(
                {
                    column: v,
                    "1 thread (s)": f"{best[1][1]:.3f}",
                    "2 threads (s)": f"{best[2][1]:.3f}",
                    "scaling": f"{best[1][1] / best[2][1]:.2f}x",
                    "CPU s (1 / 2 threads)": f"{best[1][2]:.2f} / {best[2][2]:.2f}",
                }
            )
    finally:
        setattr(module, name, default)
    return rows


def main(quick=False, tiles=(0.25, 0.5, 1, 2, 4, 8, 16, 32), strips=()):
    print(f"Machine: {machine()}\n")
    A, B = data(quick)
    exact.block_sums = _timed_block_sums(exact.block_sums)
    best = interleaved(A, B)
    rows = []
    for t in (1, 2):
        value, wall, cpu, pool = best[t]
        rows.append(
            {
                "threads": t,
                "total (s)": f"{wall:.3f}",
                "tile pool (s)": f"{pool:.3f}",
                "serial rest (s)": f"{wall - pool:.3f}",
                "CPU (s)": f"{cpu:.2f}",
                "scaling": "" if t == 1 else f"{best[1][1] / wall:.2f}x",
                "MMD²": f"{value:.17g}",
            }
        )
    print(f"## exact MMD² (unbiased), {len(A):,} + {len(B):,} x 10, best of 3, interleaved")
    print_table(rows, list(rows[0]))
    rows = []
    default = exact.POOL_TILE_BYTES
    try:
        for mib in tiles:
            exact.POOL_TILE_BYTES = int(mib * 2**20)
            best = interleaved(A, B)
            rows.append(
                {
                    "tile (MiB)": mib,
                    "side": exact._tile_side(None),
                    "1 thread (s)": f"{best[1][1]:.3f}",
                    "2 threads (s)": f"{best[2][1]:.3f}",
                    "scaling": f"{best[1][1] / best[2][1]:.2f}x",
                    "CPU s (1 / 2 threads)": f"{best[1][2]:.2f} / {best[2][2]:.2f}",
                }
            )
    finally:
        exact.POOL_TILE_BYTES = default
    print(
        f"\n## tile size (default {default / 2**20:g} MiB), load average {os.getloadavg()[0]:.1f}"
    )
    print_table(rows, list(rows[0]))
    if strips:
        from sparsekit.stats import _rbf_tiles

        rows = sweep(A, B, _rbf_tiles, "STRIP_BYTES", strips, 2**10, "strip (KiB)")
        print(
            f"\n## RBF tile strip (default {_rbf_tiles.STRIP_BYTES / 2**10:g} KiB), load average "
            f"{os.getloadavg()[0]:.1f}"
        )
        print_table(rows, list(rows[0]))
    finish()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 + 2,000 points")
    parser.add_argument("--tiles", type=float, nargs="*", default=[0.25, 0.5, 1, 2, 4, 8, 16, 32])
    parser.add_argument("--strips", type=float, nargs="*", default=[], help="strip sizes (KiB)")
    args = parser.parse_args()
    main(args.quick, args.tiles, args.strips)
