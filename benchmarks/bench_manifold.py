"""Isomap against scikit-learn's, and landmark Isomap at a size a full fit cannot reach.

1. Isomap (10 neighbours, 2 components) ``fit`` on 5,000 swiss-roll points and ``transform`` of
   5,000 new ones: sparsekit against ``sklearn.manifold.Isomap`` (its default ``eigen_solver``,
   ARPACK at this size, as sparsekit's), best of 3 after one warm-up call each; the embeddings
   are checked equal up to the sign of each component (the script exits non-zero if not).
2. Landmark Isomap: 1,000 uniform landmarks on 100,000 swiss-roll points (fit embeds all of
   them) and ``transform`` of 10,000 new points; the embedding is compared with the unrolled
   coordinates of the roll (absolute correlation of each component with the roll's two
   intrinsic coordinates), one run.

Threads: sparsekit uses the library's setting (shortest paths, neighbour queries, BLAS);
scikit-learn its own defaults (``n_jobs=None``: one thread for the graph, BLAS threads for the
eigensolver). Both are printed. Run ``python benchmarks/bench_manifold.py`` (``--quick``:
2,000 points and 20,000 for the landmark run).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from _timing import best_time, machine, print_table
from sklearn.datasets import make_swiss_roll
from sklearn.manifold import Isomap as SkIsomap
from threadpoolctl import threadpool_info

from sparsekit._runtime.threads import effective_n_jobs
from sparsekit.manifold import Isomap


def blas_threads():
    infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return infos[0]["num_threads"] if infos else 1


def equal_up_to_sign(a, b, rtol):
    signs = np.sign((a * b).sum(axis=0))
    return float(np.abs(a - b * signs).max() / np.abs(b).max()) <= rtol


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    n, n_big = (2_000, 20_000) if args.quick else (5_000, 100_000)
    print(f"machine: {machine()}")
    print(
        f"threads: sparsekit {effective_n_jobs()} (graph, neighbours) + BLAS {blas_threads()}; "
        f"scikit-learn graph 1 + BLAS {blas_threads()}\n"
    )
    X, _ = make_swiss_roll(n, random_state=0)
    X_new, _ = make_swiss_roll(n, random_state=1)
    ours = Isomap(2, n_neighbors=10)
    ref = SkIsomap(n_components=2, n_neighbors=10)
    t_fit_ours = best_time(lambda: ours.fit(X), repeat=3, warmup=1)
    t_fit_ref = best_time(lambda: ref.fit(X), repeat=3, warmup=1)
    t_tr_ours = best_time(lambda: ours.transform(X_new), repeat=3, warmup=1)
    t_tr_ref = best_time(lambda: ref.transform(X_new), repeat=3, warmup=1)
    fit_ok = equal_up_to_sign(ours.embedding_, ref.embedding_, 1e-6)
    tr_ok = equal_up_to_sign(ours.transform(X_new), ref.transform(X_new), 1e-6)
    rows = [
        {
            "case": f"Isomap fit, {n:,} points",
            "sparsekit (s)": f"{t_fit_ours:.3f}",
            "scikit-learn (s)": f"{t_fit_ref:.3f}",
            "speed-up": f"{t_fit_ref / t_fit_ours:.1f}x",
            "equal up to sign": "yes" if fit_ok else "NO",
        },
        {
            "case": f"Isomap transform, {n:,} new points",
            "sparsekit (s)": f"{t_tr_ours:.3f}",
            "scikit-learn (s)": f"{t_tr_ref:.3f}",
            "speed-up": f"{t_tr_ref / t_tr_ours:.1f}x",
            "equal up to sign": "yes" if tr_ok else "NO",
        },
    ]
    print_table(rows, list(rows[0]))

    Xb, t = make_swiss_roll(n_big, random_state=2)
    Xb_new, _ = make_swiss_roll(10_000, random_state=3)
    big = Isomap(2, n_neighbors=10, n_landmarks=1_000, sampler="uniform", random_state=0)
    t0 = time.perf_counter()
    big.fit(Xb)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    big.transform(Xb_new)
    t_tr = time.perf_counter() - t0
    intrinsic = np.column_stack([t, Xb[:, 1]])  # position along the roll, and its height
    corr = np.abs(np.corrcoef(big.embedding_.T, intrinsic.T)[:2, 2:])
    quality = float(np.max(corr, axis=1).min())
    print()
    print_table(
        [
            {
                "case": f"landmark Isomap, {n_big:,} points, 1,000 landmarks",
                "fit (embeds all points) (s)": f"{t_fit:.2f}",
                "transform 10,000 new (s)": f"{t_tr:.2f}",
                "min |corr| with the roll's coordinates": f"{quality:.3f}",
            }
        ],
        [
            "case",
            "fit (embeds all points) (s)",
            "transform 10,000 new (s)",
            "min |corr| with the roll's coordinates",
        ],
    )
    if not (fit_ok and tr_ok and quality > 0.9):
        print(
            "\nFAILED: embeddings differ from scikit-learn's or the landmark embedding does "
            "not unroll the roll",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
