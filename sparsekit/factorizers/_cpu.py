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

    Step ``j`` sets ``w = Aᵀ A V[j]`` (one pass over the rows of ``A``), then
    :func:`_close_step`. Returns the step ``j`` at the test point and ``‖w‖`` there (``w``
    holds the unnormalized next vector).
    """
    n_rows, n = A.shape
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
        test, beta = _close_step(V, alpha, tol, j, w)
        if test:
            return j, beta
        j += 1


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def lanczos_csr_steps(shapes, ptr_off, nnz_off, indptr, indices, data, V, alpha, tol, j, w, buf):
    """Lanczos steps as :func:`lanczos_steps` on the symmetric ``P = M_{T−1} ⋯ M_1 M_0`` of
    sparse matrices (``M_0`` applied first): for a chain ``C = S_a ⋯ S_b``, ``C Cᵀ`` is
    ``S_aᵀ, …, S_bᵀ, S_b, …, S_a`` in that order.

    Each ``M_t`` is given by the CSR arrays of its transpose, stored back to back as
    :func:`sparsekit.linalg._spmm.csr_chain_block` takes them (row pointers
    ``indptr[ptr_off[t] :]`` from 0, entries ``indices[nnz_off[t] + p]`` and
    ``data[nnz_off[t] + p]``), with ``shapes[t] = (rows, cols)`` of ``M_t``: ``M_t x``
    scatters ``x[i] · (row i of M_tᵀ)``, so that the multiply-adds of a row are independent (a
    gathered dot product of the few non-zeros of a row waits on its own sum at every one). One
    step costs the non-zeros of the ``M_t`` where the dense ``Aᵀ A`` costs two passes over the
    product's entries.
    ``buf`` holds two vectors of the largest dimension of the ``M_t``.
    """
    n_mats = shapes.shape[0]
    while True:
        src = V[j]
        for t in range(n_mats):
            dst = w if t == n_mats - 1 else buf[t % 2]
            for i in range(shapes[t, 0]):
                dst[i] = 0.0
            p0 = ptr_off[t]
            e0 = nnz_off[t]
            for i in range(shapes[t, 1]):
                x = src[i]
                for p in range(indptr[p0 + i], indptr[p0 + i + 1]):
                    dst[indices[e0 + p]] += data[e0 + p] * x
            src = dst
        test, beta = _close_step(V, alpha, tol, j, w)
        if test:
            return j, beta
        j += 1


# inlined into each caller (Numba IR): a separately compiled callee made the first call of
# lanczos_steps compile 0.17 s longer (LLVM re-optimizes it inside the caller)
@njit(inline="always", nogil=True, fastmath={"reassoc", "contract"})
def _close_step(V, alpha, tol, j, w):
    """The rest of Lanczos step ``j`` once ``w = P V[j]``: ``alpha[0, j] = w · V[j]``, ``w``
    orthogonalized against ``V[: j + 1]`` twice (classical Gram-Schmidt).

    At a test point (``j % 4 == 3``, the last row of ``V``, or ``‖w‖ <= tol · alpha[0, j]``: an
    invariant subspace) it returns ``(True, ‖w‖)``; otherwise it sets ``V[j + 1] = w / ‖w‖``,
    ``alpha[1, j] = ‖w‖`` (the off-diagonal) and returns ``(False, ‖w‖)``.
    """
    n = w.shape[0]
    steps = V.shape[0]
    v = V[j]
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
        return True, beta
    inv_beta = 1.0 / beta  # one division: the loop below then vectorizes
    for k in range(n):
        V[j + 1, k] = w[k] * inv_beta
    alpha[1, j] = beta
    return False, beta
