"""Where the time of two busy-machine paths goes: ``Nystroem`` fit + transform and the exact MMD².

Companion of ``bench_busy.py`` (same data): each path is timed idle and while one process spins
on a core, best of ``--repeat`` after a warm-up, and split into stages by timing, on the calling
thread, the calls that make it up: the RBF Gram matrices (``RBFKernel.__call__``, which includes
its product, distances and exp on whatever threads it uses), ``Nystroem``'s fit and its
``K(x, S) @ normalization_`` product (the rest of the transform), and the rest (validation,
sums). With ``--steps``, the three steps of the RBF Gram are timed too (the BLAS product
``cross_products``, the distances and the exp of ``sparsekit.kernels._cpu``), counting only the
calls made on the calling thread: the whole step where the Gram runs its steps one after the
other (each threaded inside), the calling thread's share of the blocks where it shares its blocks
out. Prints the BLAS / Numba thread counts, the load average and where sparsekit was imported
from; run it with ``PYTHONPATH=<checkout>`` to profile another checkout. The answers are checked
equal between the idle and busy runs (exit 1 otherwise).

Run ``python benchmarks/profile_busy.py`` (``--repeat N``).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import check, finish, machine  # noqa: E402
from bench_busy import Spinners, make_data  # noqa: E402

import sparsekit  # noqa: E402

STAGES = collections.defaultdict(float)

#: labels of the steps inside a stage (not subtracted again from the total)
STEPS = set()


def timed_stage(owner, name, label, step=False):
    """Wrap ``owner.name`` so that its wall time (calling thread) adds to ``STAGES[label]``."""
    fn = getattr(owner, name)
    depth = {"n": 0}
    main = threading.main_thread()
    if step:
        STEPS.add(label)

    def wrapper(*args, **kwargs):
        if depth["n"] or threading.current_thread() is not main:
            return fn(*args, **kwargs)
        depth["n"] += 1
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            STAGES[label] += time.perf_counter() - t0
            depth["n"] -= 1

    setattr(owner, name, wrapper)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per measurement (best of)")
    parser.add_argument("--steps", action="store_true", help="time the RBF Gram's steps too")
    args = parser.parse_args()

    import numba

    from sparsekit._runtime.threads import blas_threads
    from sparsekit.features.nystrom import Nystroem
    from sparsekit.kernels.rbf import RBFKernel
    from sparsekit.stats import mmd2_unbiased

    timed_stage(RBFKernel, "__call__", "RBF Gram")
    timed_stage(Nystroem, "_fit", "Nystroem fit (sampling, K_S, eigh)")
    if args.steps:
        from sparsekit.kernels import _cpu, rbf

        timed_stage(rbf, "cross_products", "  Gram step: product (3 passes only)", step=True)
        timed_stage(_cpu, "scaled_sq_dist_from_inner_inplace", "  Gram step: distances", True)
        timed_stage(_cpu, "exp_inplace", "  Gram step: exp", step=True)

    X54 = make_data(20_000, 54, seed=1)
    A = make_data(3_000, 10, seed=3)
    B = make_data(3_000, 10, seed=4) + 0.1

    def nystroem():
        ny = Nystroem(
            "rbf",
            sampler="uniform",
            n_components=200,
            kernel_params={"gamma": 1.0 / 54},
            random_state=0,
        )
        return ny.fit(X54).transform(X54)

    def mmd():
        return mmd2_unbiased(A, B, "rbf", kernel_params={"gamma": 0.1})

    print(machine())
    print(
        f"threads: BLAS {blas_threads()}, Numba {numba.get_num_threads()}; sparsekit from "
        f"{os.path.dirname(sparsekit.__file__)}; best of {args.repeat} after a warm-up run\n"
    )

    def best(fn):
        out = None
        for _ in range(args.repeat):
            STAGES.clear()
            t0 = time.perf_counter()
            result = fn()
            t = time.perf_counter() - t0
            if out is None or t < out[0]:
                out = (t, dict(STAGES), result)
        return out

    for name, fn in [
        ("Nystroem fit+transform, 20,000 x 54, m=200", nystroem),
        ("exact MMD² (unbiased), 3,000 + 3,000 x 10", mmd),
    ]:
        ref = fn()
        idle = best(fn)
        load_idle = os.getloadavg()[0]
        with Spinners(1):
            busy = best(fn)
        load_busy = os.getloadavg()[0]
        check(
            np.allclose(idle[2], ref, rtol=1e-10) and np.allclose(busy[2], ref, rtol=1e-10),
            f"{name}: idle and busy answers differ",
        )
        print(f"{name} (load {load_idle:.1f} / {load_busy:.1f})")
        print("| stage | idle (ms) | busy (ms) | busy / idle |")
        print("|---|---|---|---|")
        stages = sorted(set(idle[1]) | set(busy[1]), key=lambda k: (k.strip(), k))
        rest_idle = idle[0] - sum(v for k, v in idle[1].items() if k not in STEPS)
        rest_busy = busy[0] - sum(v for k, v in busy[1].items() if k not in STEPS)
        rows = [(s, idle[1].get(s, 0.0), busy[1].get(s, 0.0)) for s in stages]
        rows += [("rest (validation, products, sums)", rest_idle, rest_busy)]
        rows += [("total", idle[0], busy[0])]
        for s, a, b in rows:
            print(f"| {s} | {a * 1e3:.1f} | {b * 1e3:.1f} | {b / a if a else float('nan'):.2f}x |")
        print()
    finish()


if __name__ == "__main__":
    main()
