"""Shortest-path graph kernel: sparsekit against GraKeL ``ShortestPath``, in one process.

Run: ``python benchmarks/bench_shortest_path.py`` (``--quick`` for small sizes). Random
labelled graphs (30 nodes, edge probability 0.15, 5 labels); each row times the full Gram
matrix from raw adjacency matrices (parsing, all-pairs shortest paths, features, product),
checks the values against GraKeL (the script exits 1 when they differ) and prints the speed-up
(GraKeL time / sparsekit time). Both sides: best of 3 after one warm-up run; the comparison runs
with the default threads and again with sparsekit limited to one thread (GraKeL's
``ShortestPath`` is single-threaded Python and NumPy).
"""

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_time, check, finish, machine, print_table, threads  # noqa: E402

import sparsekit  # noqa: E402
from sparsekit.kernels.graph import ShortestPathKernel  # noqa: E402

COLUMNS = [
    "case",
    "threads (sparsekit / anchor)",
    "sparsekit (s)",
    "anchor (s)",
    "anchor",
    "speed-up",
    "max rel. diff",
    "target",
]


def random_graphs(n_graphs, n_nodes=30, p=0.15, n_labels=5, seed=0):
    """Undirected Erdos-Renyi graphs with uniform random integer node labels."""
    rng = np.random.default_rng(seed)
    graphs = []
    for _ in range(n_graphs):
        A = np.triu(rng.random((n_nodes, n_nodes)) < p, 1).astype(np.float64)
        graphs.append((A + A.T, rng.integers(0, n_labels, n_nodes)))
    return graphs


def _grakel_input(graphs):
    return [[A, {i: int(x) for i, x in enumerate(L)}] for A, L in graphs]


def _grakel_gram(graphs, normalize=False):
    from grakel.kernels import ShortestPath

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ShortestPath(with_labels=True, normalize=normalize).fit_transform(
            _grakel_input(graphs)
        )


def _rel_diff(K, ref):
    return float(np.max(np.abs(K - ref) / np.maximum(np.abs(ref), 1e-300)))


def bench_rows(quick=False):
    """Rows of the comparison table (also used by ``bench_kernels.py``)."""
    kernel = ShortestPathKernel(with_labels=True)
    kernel(random_graphs(4, seed=99))  # compile (or load the Numba cache) outside the timings
    rows = []
    n_vs = 50 if quick else 200
    graphs = random_graphs(n_vs, seed=1)
    err = _rel_diff(kernel(graphs), _grakel_gram(graphs))
    check(err <= 1e-12, f"shortest-path vs GraKeL: max rel. diff {err:.1e}")
    for limit in (-1, 1):
        with sparsekit.thread_limit(limit):
            t_sk = best_time(lambda: kernel(graphs), repeat=3)
            t_an = best_time(lambda: _grakel_gram(graphs), repeat=3)
            used = f"{threads()} / 1"
        rows.append(
            {
                "case": f"shortest-path {n_vs} graphs, 30 nodes",
                "threads (sparsekit / anchor)": used,
                "sparsekit (s)": f"{t_sk:.4f}",
                "anchor (s)": f"{t_an:.3f}",
                "anchor": "GraKeL ShortestPath",
                "speed-up": f"{t_an / t_sk:.1f}x",
                "max rel. diff": f"{err:.1e}",
                "target": ">= 10x" if not quick and limit == -1 else "-",
            }
        )

    n_big = 500 if quick else 2000
    big = random_graphs(n_big, seed=2)
    t_big = best_time(lambda: kernel(big), repeat=3)
    rows.append(
        {
            "case": f"shortest-path {n_big} graphs, 30 nodes",
            "threads (sparsekit / anchor)": f"{threads()} / -",
            "sparsekit (s)": f"{t_big:.3f}",
            "anchor (s)": "-",
            "anchor": "GraKeL not run at this size",
            "speed-up": "-",
            "max rel. diff": "-",
            "target": "< 1 s" if not quick else "-",
        }
    )
    return rows


def main(quick=False):
    print(f"Machine: {machine()}\n")
    print_table(bench_rows(quick), COLUMNS)
    finish()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    main(parser.parse_args().quick)
