"""Compute layer of Palm4MSA: the Lanczos steps of its spectral norms, compiled.

Plain loops (no BLAS call, no allocation): the norms of the small factors' products cost far
less than the hand-over to a BLAS thread pool, and compiling these loops takes a fraction of a
second.
"""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def lanczos_steps(A, V, alpha, tol, j, w):
    """Lanczos steps ``j, j + 1, …`` on ``Aᵀ A`` (full reorthogonalization) up to a test point.

    Step ``j`` sets ``w = Aᵀ A V[j]`` (one pass over the rows of ``A``), ``alpha[0, j] = w ·
    V[j]``, then orthogonalizes ``w`` against ``V[: j + 1]`` twice (classical Gram-Schmidt).
    Unless the step is a test point (``j % 4 == 3``, the last row of ``V``, or ``‖w‖ <= tol ·
    alpha[0, j]``: an invariant subspace) it sets ``V[j + 1] = w / ‖w‖``, ``alpha[1, j] = ‖w‖``
    (the off-diagonal) and goes on.

    Returns the step ``j`` at the test point and ``‖w‖`` there (``w`` holds the unnormalized
    next vector).
    """
    n_rows, n = A.shape
    steps = V.shape[0]
    while True:
        v = V[j]
        for k in range(n):
            w[k] = 0.0
        for i in range(n_rows):
            s = 0.0
            for k in range(n):
                s += A[i, k] * v[k]
            for k in range(n):
                w[k] += s * A[i, k]
        a = 0.0
        for k in range(n):
            a += w[k] * v[k]
        alpha[0, j] = a
        for _ in range(2):  # twice is enough (Giraud et al. 2005): V stays orthonormal
            for r in range(j + 1):
                h = 0.0
                for k in range(n):
                    h += V[r, k] * w[k]
                for k in range(n):
                    w[k] -= h * V[r, k]
        beta = 0.0
        for k in range(n):
            beta += w[k] * w[k]
        beta = np.sqrt(beta)
        if j % 4 == 3 or j + 1 == steps or beta <= tol * a:
            return j, beta
        inv_beta = 1.0 / beta  # one division: the loop below then vectorizes
        for k in range(n):
            V[j + 1, k] = w[k] * inv_beta
        alpha[1, j] = beta
        j += 1
