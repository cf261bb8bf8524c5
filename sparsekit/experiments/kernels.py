"""Demo section: Gram matrices of every registered vector kernel on generated data."""
from __future__ import annotations

import time

import numpy as np

from ..registry import default_registry
from .table import format_table

#: One line per kernel whose row needs reading (printed under the table when it appears).
KERNEL_NOTES = {
    "additive-chi2": "additive-chi2: -Σ (x-z)²/(x+z) is minus a distance, only conditionally "
                     "positive definite, so large negative eigenvalues are expected; exp(γ times "
                     "it), the chi2 row, is PSD",
    "sigmoid": "sigmoid: tanh(γ<x, z> + c0) is not PSD in general, so a negative eigenvalue is "
               "expected",
}


def kernel_table(n: int = 2000, d: int = 64, random_state: int = 0) -> str:
    """Time the n x n Gram matrix of each registered vector kernel and check its properties.

    The data are non-negative (uniform on [0, 1]^d) so the chi2 kernels apply. Columns: time,
    symmetry error, smallest eigenvalue of a 300 x 300 sub-block (>= 0 up to round-off for PSD
    kernels; the additive chi2 and sigmoid kernels are not PSD).
    """
    rng = np.random.default_rng(random_state)
    X = rng.random((n, d))
    X32 = X.astype(np.float32)
    rows = []
    for info in default_registry().list("kernel"):
        if info.registration.accepts != "vectors":
            continue
        kernel = default_registry().get("kernel", info.name)
        kernel(X[:8])  # compile both dtypes outside the timing
        kernel(X32[:8])
        t0 = time.perf_counter()
        K = kernel(X)
        t64 = time.perf_counter() - t0
        t0 = time.perf_counter()
        kernel(X32)
        t32 = time.perf_counter() - t0
        sub = K[:300, :300]
        rows.append([
            info.name, "sparsekit" if info.plugin.startswith("sparsekit.") else info.plugin,
            f"{t64 * 1e3:.0f}", f"{t32 * 1e3:.0f}", f"{np.abs(K - K.T).max():.1e}",
            f"{np.linalg.eigvalsh(sub).min():.2e}",
        ])
    table = format_table(
        ["kernel", "plugin", f"f64 {n}x{n} (ms)", "f32 (ms)", "max abs(K - K^T)", "min eig (300x300)"],
        rows, title=f"Gram matrices of {n} points in [0, 1]^{d}",
    )
    notes = [
        f"times: the whole {n} x {n} Gram matrix in float64 and float32, compiled beforehand",
        "min eig: smallest eigenvalue of a 300 x 300 block; >= 0 up to round-off (about 1e-13 "
        "here) for a positive semi-definite (PSD) kernel",
    ] + [KERNEL_NOTES[r[0]] for r in rows if r[0] in KERNEL_NOTES]
    return table + "\n" + "\n".join(f"- {line}" for line in notes)


def random_labelled_graphs(n_graphs: int, n_nodes: int = 30, p: float = 0.15, n_labels: int = 5,
                           random_state: int = 0):
    """Erdős–Rényi graphs G(n_nodes, p) as ``(adjacency, labels)`` pairs with random labels."""
    rng = np.random.default_rng(random_state)
    graphs = []
    for _ in range(n_graphs):
        upper = np.triu(rng.random((n_nodes, n_nodes)) < p, k=1)
        adjacency = (upper | upper.T).astype(np.uint8)
        graphs.append((adjacency, rng.integers(0, n_labels, n_nodes)))
    return graphs


def graph_kernel_table(n_graphs: int = 2000, random_state: int = 0) -> str:
    """Shortest-path kernel Gram matrices of random labelled graphs (30 nodes, p = 0.15)."""
    graphs = random_labelled_graphs(n_graphs, random_state=random_state)
    rows = []
    for with_labels in (True, False):
        for normalize in (False, True):
            kernel = default_registry().get("kernel", "shortest-path", with_labels=with_labels,
                                            normalize=normalize)
            kernel(graphs[:4])  # compile outside the timing
            t0 = time.perf_counter()
            K = kernel(graphs)
            elapsed = time.perf_counter() - t0
            rows.append([str(with_labels), str(normalize), f"{elapsed * 1e3:.0f}",
                         f"{np.median(K):.3g}", f"{np.linalg.eigvalsh(K[:300, :300]).min():.2e}"])
    return format_table(
        ["with_labels", "normalize", f"Gram {n_graphs}x{n_graphs} (ms)", "median k", "min eig (300x300)"],
        rows, title=f"Shortest-path kernel on {n_graphs} random labelled graphs (30 nodes, p = 0.15)",
    )
