"""Top or bottom eigenpairs of a symmetric (possibly indefinite) Gram matrix, signs fixed."""

from __future__ import annotations

import numpy as np
import scipy.linalg

#: up to this size the dense solver (LAPACK) is used; above it, ARPACK when few eigenpairs are
#: wanted (as scikit-learn's KernelPCA: dense LAPACK on 2,000 x 2,000 took 30x ARPACK's time)
DENSE_MAX = 200


def fix_signs(V):
    """Flip each column so that its entry of largest magnitude is positive (reproducible)."""
    rows = np.argmax(np.abs(V), axis=0)
    signs = np.sign(V[rows, np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return V * signs


def top_eigenpairs(M, k, *, skip=0):
    """The ``k`` largest eigenvalues (after skipping the ``skip`` largest) and unit eigenvectors,
    in decreasing order. ``M`` is a dense array or a LinearOperator/sparse matrix."""
    import scipy.sparse as sp  # SciPy's sparse modules load on first use (cold start)
    import scipy.sparse.linalg as spla

    n = M.shape[0]
    if k + skip > n:
        raise ValueError(
            f"asked for {k} components (+{skip} skipped) of a {n} x {n} Gram "
            "matrix: use fewer components or more training points"
        )
    if n <= DENSE_MAX or k + skip >= 10:
        dense = M.toarray() if sp.issparse(M) else np.asarray(M)
        w, V = scipy.linalg.eigh(dense, subset_by_index=(n - k - skip, n - 1 - skip))
    else:
        v0 = np.random.default_rng(0).uniform(-1.0, 1.0, n)  # deterministic start
        w, V = spla.eigsh(M, k=k + skip, which="LA", v0=v0)
        keep = np.argsort(w)[::-1][skip:]
        w, V = w[keep], V[:, keep]
    order = np.argsort(w)[::-1]
    return w[order], fix_signs(V[:, order])


def bottom_eigenpairs(A, k, *, skip=1):
    """The ``k`` smallest eigenvalues of the PSD matrix ``A`` after the ``skip`` smallest, and
    their unit eigenvectors, in increasing order (LLE's residual operator)."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    n = A.shape[0]
    if k + skip > n:
        raise ValueError(f"asked for {k} components (+{skip} skipped) of {n} training points")
    if n <= DENSE_MAX:
        dense = A.toarray() if sp.issparse(A) else np.asarray(A)
        w, V = scipy.linalg.eigh(dense, subset_by_index=(skip, skip + k - 1))
    else:
        v0 = np.random.default_rng(0).uniform(-1.0, 1.0, n)
        w, V = spla.eigsh(sp.csc_matrix(A), k=k + skip, sigma=0.0, which="LM", v0=v0)
        order = np.argsort(w)[skip:]
        w, V = w[order], V[:, order]
    return w, fix_signs(V)
