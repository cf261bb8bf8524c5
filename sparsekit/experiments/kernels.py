"""Demo section: Gram matrices of every registered vector kernel on generated data."""
from __future__ import annotations

import time

import numpy as np

from ..registry import default_registry
from .table import format_table


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
        kernel(X[:8])  # compile outside the timing
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
    return format_table(
        ["kernel", "plugin", f"f64 {n}x{n} (ms)", "f32 (ms)", "max |K-K^T|", "min eig (300x300)"], rows,
        title=f"Gram matrices of {n} points in [0, 1]^{d}",
    )
