"""OMP forest pruning against scikit-learn's ``orthogonal_mp`` path on the same tree dictionary.

A 500-tree random forest is fitted on 10,000 generated regression samples (Friedman #1, 20
features); the tree-prediction matrix ``T`` (10,000 x 500) is built once. Both sides then prune
to ``m`` trees on the centred, column-normalised ``T`` and return the path (the solution for every
size 1..m):

- sparsekit: the selection that ``OMPForestRegressor.fit`` runs (``omp`` with ``return_path``,
  Gram form from m >= 50, weights of every prefix mapped back to the raw tree outputs);
- scikit-learn: ``orthogonal_mp(D, y, n_nonzero_coefs=m, return_path=True)``.

Both timings include centring and normalising ``T``.

The selected trees and the final weights are checked equal (the script exits non-zero if not).
Both sides use every core (BLAS threads and Numba threads are printed); best of 3 after one
warm-up call. Run ``python benchmarks/bench_forest.py`` (``--quick``: 2,000 samples, 100 trees).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from _timing import best_time, machine, print_table
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import orthogonal_mp
from threadpoolctl import threadpool_info

from sparsekit._runtime.threads import effective_n_jobs
from sparsekit.ensemble import OMPForestRegressor
from sparsekit.ensemble._selection import centred_dictionary, select


def blas_threads():
    infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return infos[0]["num_threads"] if infos else 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    n, n_trees, sizes = (2_000, 100, (20, 100)) if args.quick else (10_000, 500, (50, 150, 500))
    X, y = make_friedman1(n_samples=n, n_features=20, noise=1.0, random_state=0)
    forest = RandomForestRegressor(
        n_estimators=n_trees, max_depth=12, max_features=0.5, random_state=0, n_jobs=-1
    ).fit(X, y)
    T = np.column_stack([t.predict(X) for t in forest.estimators_])
    D, yc, _, norms, _ = centred_dictionary([T], [y])
    print(f"machine: {machine()}")
    print(
        f"threads: sparsekit Numba {effective_n_jobs()} + BLAS {blas_threads()}; "
        f"scikit-learn BLAS {blas_threads()}\n"
    )
    rows, ok = [], True
    for m in sizes:
        solver = OMPForestRegressor(n_trees=m)._make_solver(m, n_trees)

        def ours():
            return select([T], [y], solver, n_trees=m, uniform=False)

        def theirs():
            D, yc, _, _, _ = centred_dictionary([T], [y])
            return orthogonal_mp(D, yc, n_nonzero_coefs=m, return_path=True)

        t_ours = best_time(ours, repeat=3, warmup=1)
        t_theirs = best_time(theirs, repeat=3, warmup=1)
        sel = ours()
        ref = theirs()[:, -1]
        same_trees = set(np.flatnonzero(ref).tolist()) == set(sel.order.tolist())
        w_ref = ref / np.where(norms > 0, norms, 1.0)
        weights_ok = np.allclose(sel.weights, w_ref, rtol=1e-6, atol=1e-9 * np.abs(w_ref).max())
        ok &= same_trees and weights_ok
        rows.append(
            {
                "samples x trees": f"{n:,} x {n_trees}",
                "m": m,
                "sparsekit (s)": f"{t_ours:.4f}",
                "orthogonal_mp path (s)": f"{t_theirs:.4f}",
                "speed-up": f"{t_theirs / t_ours:.1f}x",
                "same trees": "yes" if same_trees else "NO",
                "same weights": "yes" if weights_ok else "NO",
            }
        )
    print_table(rows, list(rows[0]))
    if not ok:
        print("\nFAILED: the selections differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
