"""The Gram-matrix steps of exact kernel k-means, in blocks on the library's thread pool.

Every Lloyd step of the exact method reads the whole n x n Gram matrix once, so the steps are
bound by memory bandwidth, not by arithmetic. Two passes over the Gram matrix:

- :func:`symmetrize_inplace`: ``K <- (K + Kᵀ) / 2`` (kernels round differently in the two
  triangles), tile pair by tile pair on the pool, without the two n x n temporaries of
  ``0.5 * (K + K.T)``. Each entry is ``0.5 * (K[r, c] + K[c, r])``, so the values are those of
  that expression bit for bit, and the result is exactly symmetric; tile pairs that are
  symmetric already (the built-in vector kernels' Grams are) are only read, not written.
- :func:`row_cluster_sums`: ``S[j, c] = Σ_{i ∈ C_j} K[i, c]``, the per-cluster sums of every
  row of a symmetric K (``S = (K H)ᵀ`` for the 0/1 indicator H of the clusters), as a compiled
  scatter-add of the rows of K by label over strips of columns
  (:func:`sparsekit.cluster._cpu.label_sums_cols`): K is read once, with no one-hot matrix and
  no skinny GEMM (whose threaded form stalls on a busy machine, and which ran on one thread).
  Each entry is summed over i in increasing order whatever the strips and threads, so the
  result does not depend on the thread count.

:func:`distances` turns the sums into the squared distances of kernel k-means,
‖φ(x_i) − c_j‖² = K_ii − 2 (K H)_ij / |C_j| + Σ_{l ∈ C_j} (K H)_lj / |C_j|² (Dhillon, Guan &
Kulis, "Kernel k-means, spectral clustering and normalized cuts", KDD 2004, section 2.1).
"""

from __future__ import annotations

import numpy as np

from .._runtime.pools import run_blocks
from ._cpu import label_sums_cols

#: side of the square tiles of the in-place symmetrisation (two 128 x 128 float64 tiles and
#: their sum stay in a core's L2 cache; smaller tiles cost more Python per tile than they save)
SYM_TILE = 128
#: bytes of one strip of the per-cluster sums (k rows of the strip's columns): kept in L1
STRIP_BYTES = 16 * 2**10
#: fewest columns in a strip (shorter rows of K defeat the hardware prefetcher)
MIN_STRIP = 64


def symmetrize_inplace(K: np.ndarray, n_jobs: int | None = None) -> np.ndarray:
    """Replace a square K by ``0.5 * (K + K.T)`` in place, tile pair by tile pair.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Written in place.
    n_jobs : int, optional
        Threads (default: :func:`sparsekit._runtime.threads.effective_n_jobs`).

    Returns
    -------
    ndarray
        ``K``, now exactly symmetric; every entry equals that of ``0.5 * (K + K.T)``
        (a tile pair that is already symmetric is left as it is: ``0.5 * (a + a) == a`` for every
        finite a below half the largest float).
    """
    n = K.shape[0]
    b = SYM_TILE
    nt = -(-n // b)
    pairs = [(i, j) for i in range(nt) for j in range(i, nt)]

    def work(p):
        i, j = pairs[p]
        A = K[i * b : (i + 1) * b, j * b : (j + 1) * b]
        B = K[j * b : (j + 1) * b, i * b : (i + 1) * b]
        if np.array_equal(A, B.T):  # already symmetric (the built-in kernels' Grams): no write
            return
        M = A + B.T
        M *= 0.5
        A[...] = M  # on the diagonal A is B and M is symmetric: both writes agree
        B[...] = M.T

    run_blocks(work, len(pairs), n_jobs=n_jobs)
    return K


def row_cluster_sums(
    K: np.ndarray, labels: np.ndarray, k: int, n_jobs: int | None = None
) -> np.ndarray:
    """Per-cluster sums of every row of a symmetric K: ``S[j, c] = Σ_{i: labels[i] = j} K[i, c]``.

    Parameters
    ----------
    K : C-contiguous ndarray of shape (n, n)
        A symmetric matrix (the sums are those of the columns, equal to the rows').
    labels : int array of shape (n,)
        Cluster of every row, in [0, k).
    k : int
        Number of clusters; a cluster without rows gets sums 0.
    n_jobs : int, optional
        Threads (default: :func:`sparsekit._runtime.threads.effective_n_jobs`); the result does not
        depend on it.

    Returns
    -------
    ndarray of shape (k, n), dtype of K
        ``(K H)ᵀ`` for the 0/1 indicator H (n, k) of the labels.
    """
    n = K.shape[1]
    labels = np.ascontiguousarray(labels, dtype=np.intp)
    out = np.empty((k, n), dtype=K.dtype)
    w = max(MIN_STRIP, STRIP_BYTES // (K.dtype.itemsize * k))

    def work(s):
        label_sums_cols(s * w, min(n, (s + 1) * w), K, labels, out)

    run_blocks(work, -(-n // w), n_jobs=n_jobs)
    return out


def distances(
    K: np.ndarray, diag: np.ndarray, labels: np.ndarray, k: int, n_jobs: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Squared feature-space distances of every point to the centres of the clusters ``labels``.

    ‖φ(x_i) − c_j‖² = K_ii − 2 (K H)_ij + (Hᵀ K H)_jj with ``H[i, j] = 1/|C_j|`` for i ∈ C_j
    (Dhillon, Guan & Kulis 2004), clipped at 0; an empty cluster's centre is the origin.

    Parameters
    ----------
    K : C-contiguous ndarray of shape (n, n)
        The symmetric Gram matrix.
    diag : ndarray of shape (n,)
        Its diagonal.
    labels : int array of shape (n,)
    k : int
    n_jobs : int, optional
        Threads of the pass over K; the result does not depend on it.

    Returns
    -------
    D : ndarray of shape (n, k)
        The squared distances.
    cc : ndarray of shape (k,)
        ``(Hᵀ K H)_jj``, the squared norms of the centres.
    """
    n = len(labels)
    inv = 1.0 / np.maximum(np.bincount(labels, minlength=k).astype(np.float64), 1.0)
    KH = row_cluster_sums(K, labels, k, n_jobs).T * inv[None, :]
    cc = np.bincount(labels, weights=KH[np.arange(n), labels], minlength=k) * inv
    return np.maximum(diag[:, None] - 2.0 * KH + cc[None, :], 0.0), cc
