"""Compute layer of the clustering estimators: nearest centroid from precomputed scores."""

from numba import njit


@njit(cache=True, nogil=True)
def nearest_from_scores(scores, sq_norms, labels, best):
    """``labels[j] = argmin_k sq_norms[k] - 2 scores[k, j]`` and ``best[j]`` its value.

    ``scores`` is (K, n) C-contiguous (``V Xᵀ``): the loop runs over the centroids outside and
    the points inside, so every pass reads one contiguous row; ties go to the lower index.
    """
    K, n = scores.shape
    for j in range(n):
        best[j] = sq_norms[0] - 2.0 * scores[0, j]
        labels[j] = 0
    for k in range(1, K):
        nk = sq_norms[k]
        for j in range(n):
            v = nk - 2.0 * scores[k, j]
            if v < best[j]:
                best[j] = v
                labels[j] = k
    return labels, best


@njit(cache=True, nogil=True)
def within_cluster_sum(X, U, labels):
    """``Σ_n ‖x_n − u_{labels[n]}‖²`` in float64 (one pass, no temporaries; ``U`` float64)."""
    total = 0.0
    for i in range(X.shape[0]):
        u = U[labels[i]]
        s = 0.0
        for j in range(X.shape[1]):
            d = X[i, j] - u[j]
            s += d * d
        total += s
    return total


@njit(cache=True, nogil=True)
def cluster_sums(Z, labels, sums):
    """``sums[j] = Σ_{i: labels[i] = j} Z[i]``: a scatter-add of the rows of Z, O(n s).

    ``sums`` (k, s) is zeroed here; every label must lie in [0, k). It replaces the product of
    a one-hot (n, k) matrix with Z, a skinny GEMM that threaded BLAS splits into steps its
    threads wait on each other for (on a busy machine, 100x its time).
    """
    sums[:] = 0.0
    s = Z.shape[1]
    for i in range(Z.shape[0]):
        j = labels[i]
        for c in range(s):
            sums[j, c] += Z[i, c]
    return sums


@njit(cache=True, nogil=True)
def label_sums_cols(lo, hi, K, labels, out):
    """``out[j, c] = Σ_{i: labels[i] = j} K[i, c]`` for the columns ``lo <= c < hi``.

    A scatter-add of the rows of K restricted to a strip of columns: for a symmetric K,
    ``out[:, c]`` are the per-cluster sums of row c (``(K H)[c]`` for the 0/1 indicator H),
    read from K once without a one-hot matrix. Each entry is summed over i in increasing
    order whatever the strips, so the result does not depend on how the columns are split.
    ``out`` (k, n) is zeroed here on the strip; every label must lie in [0, k).
    """
    out[:, lo:hi] = 0.0
    w = hi - lo
    for i in range(K.shape[0]):
        src = K[i, lo:hi]
        dst = out[labels[i], lo:hi]
        for c in range(w):  # from 0: no negative-index wrap-around, so the loop vectorizes
            dst[c] += src[c]
    return out
