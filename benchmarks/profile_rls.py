"""Where recursive and two-pass RLS spend their time: the row-block pool against the serial rest.

Run: ``python benchmarks/profile_rls.py`` (``--quick`` for n = 20,000). For each sampler at
n = 100,000, d = 54 (recursive: s = 500, adaptive λ; two-pass: λ = 1), with 1 and 2 threads
(``thread_limit`` and ``n_jobs`` alike), interleaved, best of 3 after a warm-up run: the total
wall time, the time inside the row-block pools (``run_blocks``: kernel blocks, products and
triangular products on ``n_jobs`` threads), the serial rest (total − pools: the dictionary's
Gram matrix, its adaptive λ, Cholesky factor and inverse, the data checks), and of that rest the
adaptive λ (``eigvalsh``) and the Cholesky factor + inverse. Timers wrap the module-level
functions the samplers call (calls from the calling thread only), so the pool's time includes
its start and its waits. The serial rest bounds the scaling (Amdahl):
total(1) / (rest + pools(1) / 2).
"""

import argparse
import os
import sys
import time
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import machine, print_table  # noqa: E402

import sparsekit  # noqa: E402
from sparsekit.samplers import recursive, rls  # noqa: E402

TIMED = {  # module: functions whose calls from the calling thread are timed
    recursive: ("run_blocks", "adaptive_lambda", "cholesky_upper", "inverse_upper"),
    rls: ("run_blocks", "cholesky_upper", "inverse_upper"),
}
SPENT = defaultdict(float)


def _timer(name, fn):
    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT[name] += time.perf_counter() - t0

    return timed


def make_data(n, d=54, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((20, d))
    return centers[rng.integers(0, 20, n)] + 0.3 * rng.standard_normal((n, d))


def main(quick=False):
    for module, names in TIMED.items():
        for name in names:
            setattr(module, name, _timer(name, getattr(module, name)))
    n = 20_000 if quick else 100_000
    X = make_data(n)
    kernel = sparsekit.get_kernel("rbf", gamma=1.0 / 54)
    cases = {
        f"recursive-rls, s=500, n={n:,}": ("recursive-rls", {"level_size": 500}),
        f"two-pass-rls, n={n:,}": ("two-pass-rls", {"lam": 1.0}),
    }
    print(f"Machine: {machine()}\n")
    rows = []
    for label, (name, params) in cases.items():
        best = {}
        load0 = os.getloadavg()[0]
        for rep in range(4):  # the first round is the warm-up
            for t in (1, 2):
                SPENT.clear()
                with sparsekit.thread_limit(t):
                    t0 = time.perf_counter()
                    sparsekit.get_sampler(name, n_jobs=t, **params).scores(
                        X, kernel, random_state=0
                    )
                    total = time.perf_counter() - t0
                if rep and total < best.get(t, (np.inf,))[0]:
                    best[t] = (total, dict(SPENT))
        for t, (total, spent) in best.items():
            pools = spent.get("run_blocks", 0.0)
            rest = total - pools
            rows.append(
                {
                    "sampler": label,
                    "threads": t,
                    "total (s)": f"{total:.3f}",
                    "row-block pools (s)": f"{pools:.3f}",
                    "serial rest (s)": f"{rest:.3f}",
                    "of which adaptive λ (s)": f"{spent.get('adaptive_lambda', 0.0):.3f}",
                    "of which Cholesky + inverse (s)": (
                        f"{spent.get('cholesky_upper', 0.0) + spent.get('inverse_upper', 0.0):.3f}"
                    ),
                    "Amdahl bound on 2 threads": (
                        f"{total / (rest + pools / 2):.2f}x" if t == 1 else ""
                    ),
                    "load avg (before, after)": f"{load0:.1f}, {os.getloadavg()[0]:.1f}",
                }
            )
    print_table(rows, list(rows[0]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 20,000")
    main(parser.parse_args().quick)
