"""Threads: how the threaded paths scale from 1 to 2 threads, and the OMP_WAIT_POLICY effect.

Run: ``python benchmarks/bench_threads.py`` (``--quick`` for small sizes; ``--only WORD`` runs
the paths whose name contains WORD (repeatable) and skips the OMP_WAIT_POLICY part;
``--busy N`` runs everything while N other processes each keep a core busy, the spinners of
``bench_busy.py``; ``--save FILE.npz`` writes each path's 1-thread answer, ``--compare
FILE.npz`` checks the answers against such a file (another tree's, before a change: the script
exits 1 when one differs beyond rounding) and prints the largest difference).

1. Each threaded path runs with 1 and with 2 threads (``sparsekit.thread_limit``: Numba, BLAS
   and sparsekit's own pools; the samplers' ``n_jobs`` set alike), interleaved (1, 2, 1, 2, ...)
   so that a change of machine load hits both, best of 5 after a warm-up run. Each row also
   gives the process CPU time of the best runs (equal CPU times and half the wall time is
   perfect scaling) and the load average before and after. Results are checked equal across
   thread counts (the script exits 1 otherwise). The first row is a control: independent
   GIL-free NumPy calls on 1 and 2 threads, the scaling the machine allows at that moment.
   Paths: the RLS samplers (DAC, recursive, two-pass), the Nyström transform, the chi2 and RBF
   Gram matrices, the exact MMD², the OMP batch, the kernel k-means fit and Isomap's shortest
   paths (landmark Isomap: Dijkstra from every landmark on a thread pool). The ``memory read``
   rows are a STREAM-like control for the exact kernel k-means: one read of an array the size
   of its Gram matrix (fixed 6 MB row blocks on the block pool, each reduced by NumPy's sum or
   by a BLAS dot on one thread), the read bandwidth 1 and 2 threads reach; the ``Lloyd pass``
   row is the pass over the Gram matrix of one exact Lloyd step (``--only memory --only
   lloyd --only kernelkmeans`` runs these with the fit).
2. ``OMP_WAIT_POLICY``: child processes time a 200 x 200 ``eigh`` right after a Numba parallel
   region (the chi2 kernel), with ``PASSIVE`` (what ``import sparsekit`` sets by default) and
   ``ACTIVE`` (spinning OpenMP workers).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import check, finish, machine, print_table  # noqa: E402

import sparsekit  # noqa: E402


def make_data(n, d=54, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((20, d))
    return centers[rng.integers(0, 20, n)] + 0.3 * rng.standard_normal((n, d))


def paths(quick):
    """``(name, fn(n_threads) -> array)`` of the threaded paths."""
    n = 20_000 if quick else 100_000
    X = make_data(n)
    rbf = sparsekit.get_kernel("rbf", gamma=1.0 / 54)
    Xc = np.random.default_rng(1).random((800 if quick else 2000, 128))
    Xr = np.random.default_rng(2).random((1500 if quick else 5000, 128))
    Yr = np.random.default_rng(12).random((1500 if quick else 5000, 128))
    chi2 = sparsekit.get_kernel("chi2")
    m = 200 if quick else 1000
    s = 200 if quick else 500
    n_ny = 5000 if quick else 50_000
    ny = sparsekit.Nystroem(
        "rbf", sampler="uniform", n_components=m, kernel_params={"gamma": 1.0 / 54}, random_state=0
    ).fit(X[:n_ny])

    def sampler(name, **params):
        return lambda t: sparsekit.get_sampler(name, n_jobs=t, **params).scores(
            X, rbf, random_state=0
        )

    arrays = [
        np.random.default_rng(3).random(2_000_000 if not quick else 500_000) for _ in range(8)
    ]

    def control(t):  # independent np.exp calls (GIL released) on t threads: the machine's ceiling
        with ThreadPoolExecutor(max_workers=t) as pool:
            return np.array([a.sum() for a in pool.map(np.exp, arrays)])

    A = make_data(2_000 if quick else 10_000, 10, seed=4)
    B = make_data(2_000 if quick else 10_000, 10, seed=5) + 0.1

    def mmd(t):
        from sparsekit.stats import mmd2_unbiased

        return np.array([mmd2_unbiased(A, B, "rbf", kernel_params={"gamma": 0.1})])

    rng = np.random.default_rng(6)
    D = rng.standard_normal((128, 512))
    D /= np.linalg.norm(D, axis=0)
    Y = rng.standard_normal((128, 1_500 if quick else 30_000))
    omp = sparsekit.get_solver("omp", n_nonzero_coefs=10)
    n_kkm = 2_000 if quick else 6_000
    X10 = make_data(n_kkm, 10, seed=7)

    def kkm(t):
        est = sparsekit.KernelKMeans(8, method="exact", n_init=1, random_state=0).fit(X10)
        return np.r_[est.labels_, est.inertia_]

    # the memory-bandwidth ceiling of a loop that reads a Gram of the kernel k-means size once:
    # fixed row blocks of 6 MB, each reduced on one thread of the block pool (one BLAS thread)
    from sparsekit._runtime.pools import run_blocks

    G = np.random.default_rng(8).random((n_kkm, n_kkm))
    step = max(1, 6 * 2**20 // G.strides[0])
    n_blocks = -(-n_kkm // step)
    ones = np.ones(step * n_kkm)

    def read(reduce):
        def fn(t):
            out = np.empty(n_blocks)

            def work(b):
                block = G[b * step : (b + 1) * step].reshape(-1)
                out[b] = reduce(block, ones[: block.size])

            run_blocks(work, n_blocks)
            return out

        return fn

    labels8 = np.random.default_rng(9).integers(0, 8, n_kkm)

    def lloyd_pass(t):
        from sparsekit.cluster._exact import row_cluster_sums  # not in trees before it

        return row_cluster_sums(G, labels8, 8)

    gram_mb = G.nbytes / 1e6

    from sklearn.datasets import make_swiss_roll

    n_iso = 5_000 if quick else 20_000
    roll, _ = make_swiss_roll(n_iso, random_state=0)

    def isomap(t):
        est = sparsekit.Isomap(
            2, n_neighbors=10, n_landmarks=500, sampler="uniform", random_state=0
        ).fit(roll)
        return np.abs(est.embedding_)  # the sign of each component is arbitrary

    return [
        ("control: 8 independent np.exp calls on t threads", control),
        (f"dac-rls scores, n={n:,}, d=54 (block pool)", sampler("dac-rls", lam=1.0)),
        (
            f"recursive-rls scores, s={s}, n={n:,} (row-block pool)",
            sampler("recursive-rls", level_size=s),
        ),
        (f"two-pass-rls scores, n={n:,} (row-block pool)", sampler("two-pass-rls", lam=1.0)),
        (f"Nystroem transform, n={n_ny:,}, m={m} (BLAS)", lambda t: ny.transform(X[:n_ny])),
        (f"chi2 Gram {len(Xc)}x{len(Xc)}, d=128 (row ranges)", lambda t: chi2(Xc)),
        (f"rbf Gram {len(Xr)}x{len(Xr)}, d=128 (BLAS, Numba, exp pool)", lambda t: rbf(Xr)),
        (
            f"rbf Gram X against Y, {len(Xr)}x{len(Yr)}, d=128 (row blocks)",
            lambda t: rbf(Xr, Yr),
        ),
        (f"exact MMD² (unbiased), {len(A):,} + {len(B):,} x 10 (Gram blocks)", mmd),
        (
            f"OMP batch, 128 x 512, {Y.shape[1]:,} signals, k=10 (row ranges)",
            lambda t: omp.solve(D, Y).coef,
        ),
        (
            f"memory read: {n_kkm:,}² float64 ({gram_mb:.0f} MB), NumPy sum per row block",
            read(lambda block, ones: block.sum()),
        ),
        (
            f"memory read: {n_kkm:,}² float64 ({gram_mb:.0f} MB), BLAS dot per row block",
            read(np.dot),
        ),
        (
            f"kernel k-means Lloyd pass: per-cluster row sums of a {gram_mb:.0f} MB Gram, k=8",
            lloyd_pass,
        ),
        (f"KernelKMeans fit (exact), {n_kkm:,} x 10, k=8, one init", kkm),
        (f"Isomap fit, swiss roll {n_iso:,}, 500 landmarks (Dijkstra pool)", isomap),
    ]


def scaling(fn, repeat=5):
    """(best (wall, CPU) per thread count, 1 and 2 threads agree, the 1-thread answer)."""
    best = {1: (np.inf, 0.0), 2: (np.inf, 0.0)}
    with sparsekit.thread_limit(1):
        ref = np.asarray(fn(1), dtype=np.float64)
    with sparsekit.thread_limit(2):
        same = np.allclose(fn(2), ref, rtol=1e-12, atol=1e-14)
    for _ in range(repeat):
        for t in (1, 2):
            with sparsekit.thread_limit(t):
                c0, t0 = time.process_time(), time.perf_counter()
                fn(t)
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            if wall < best[t][0]:
                best[t] = (wall, cpu)
    return best, same, ref


def _secs(t):
    """Seconds with three decimals, four below 0.1 s (the memory-read rows take milliseconds)."""
    return f"{t:.4f}" if t < 0.1 else f"{t:.3f}"


def wait_policy_child():
    """In a child: best time of eigh(200 x 200) right after a Numba parallel region."""
    import sparsekit as sk

    X = np.random.default_rng(0).random((400, 64))
    A = np.cov(np.random.default_rng(1).random((400, 200)), rowvar=False)
    k = sk.get_kernel("chi2")
    k(X)
    best = np.inf
    for _ in range(30):
        k(X)
        t0 = time.perf_counter()
        np.linalg.eigh(A)
        best = min(best, time.perf_counter() - t0)
    print(json.dumps({"eigh": best}))


def wait_policy():
    rows = []
    for policy in ("PASSIVE", "ACTIVE"):
        env = dict(os.environ, OMP_WAIT_POLICY=policy)
        out = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--child-wait"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        eigh_ms = 1e3 * json.loads(out.strip().splitlines()[-1])["eigh"]
        rows.append(
            {
                "OMP_WAIT_POLICY": policy,
                "eigh 200x200 after a Numba region (ms)": f"{eigh_ms:.2f}",
            }
        )
    return rows


def main(quick=False, only=None, save=None, compare=None, busy=0):
    print(f"Machine: {machine()}; {busy} busy process(es)\n")
    if busy:
        from bench_busy import Spinners

        with Spinners(busy):
            return _main(quick, only, save, compare)
    return _main(quick, only, save, compare)


def _main(quick, only, save, compare):
    rows, answers = [], {}
    previous = dict(np.load(compare)) if compare else {}
    for name, fn in paths(quick):
        if only and not any(word.lower() in name.lower() for word in only):
            continue
        load0 = os.getloadavg()[0]
        best, same, answers[name] = scaling(fn, repeat=3 if quick else 5)
        check(same, f"{name}: 1 and 2 threads give different results")
        if compare:
            if name not in previous:
                print(f"{name}: not in {compare}, not compared")
            else:
                diff = float(np.max(np.abs(answers[name] - previous[name]), initial=0.0))
                print(f"{name}: largest difference from {compare}: {diff:.1e}")
                check(
                    np.allclose(answers[name], previous[name], rtol=1e-10, atol=1e-12),
                    f"{name}: the answer differs from {compare}",
                )
        rows.append(
            {
                "path": name,
                "1 thread (s)": _secs(best[1][0]),
                "2 threads (s)": _secs(best[2][0]),
                "scaling": f"{best[1][0] / best[2][0]:.2f}x",
                "CPU s (1 / 2 threads)": f"{best[1][1]:.2f} / {best[2][1]:.2f}",
                "load avg (before, after)": f"{load0:.1f}, {os.getloadavg()[0]:.1f}",
            }
        )
    try:
        layer = __import__("numba").threading_layer()
    except ValueError:  # no parallel region ran: the library's kernels run on its own pools
        layer = "not started"
    print(
        f"## 1 vs 2 threads, interleaved, best of {3 if quick else 5} "
        f"(threading layer of Numba: {layer})\n"
    )
    print_table(rows, list(rows[0]))
    if save:
        np.savez(save, **answers)
    if not only:
        print("\n## OMP_WAIT_POLICY (child processes)\n")
        print_table(wait_policy(), ["OMP_WAIT_POLICY", "eigh 200x200 after a Numba region (ms)"])
    finish()


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--child-wait":
        wait_policy_child()
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument(
        "--only", action="append", metavar="WORD", help="run the paths whose name has WORD"
    )
    parser.add_argument("--save", metavar="FILE", help="write the 1-thread answers (.npz)")
    parser.add_argument("--compare", metavar="FILE", help="check the answers against a --save file")
    parser.add_argument(
        "--busy", type=int, default=0, metavar="N", help="N other processes keep a core busy"
    )
    args = parser.parse_args()
    main(args.quick, args.only, args.save, args.compare, args.busy)
