"""The iteration loop of the solvers' residual form (the prepared problem and the rest of the
frame are in :mod:`sparsekit.solvers.base`).

The "residual" strategy of MP, OMP and Frank–Wolfe runs a Python loop over iterations; each
iteration computes the correlations ``C = R D`` of the still-active signals with one BLAS
GEMM (the physical floor of an iteration) and hands them to a step kernel run over ranges of
signals on several threads.
"""

from __future__ import annotations

import numpy as np

from .._small_blas import is_skinny, one_blas_thread


def run_correlation_steps(R, D, active, n_steps, step):
    """Run ``step(k, rows, C)`` for ``k < n_steps`` while some signal is active.

    ``C = R[rows] @ D`` are the correlations of the active signals ``rows``. A skinny product
    (few active signals or atoms) runs on one BLAS thread; the limit is taken around the
    product alone, since ``step`` runs the library's own threads (which the limit would lower).
    """
    for k in range(n_steps):
        rows = np.flatnonzero(active)
        if rows.size == 0:
            break
        with one_blas_thread(is_skinny(rows.size, D.shape[1])):
            if rows.size == 1:  # one signal: a matrix-vector product (BLAS gemv)
                C = (D.T @ R[rows[0]])[None, :]
            elif rows.size == R.shape[0]:
                C = R @ D
            else:
                C = R[rows] @ D
        step(k, rows.astype(np.int64), C)
