"""How well a fitted feature map approximates its kernel: :func:`approximation_error`.

For a map phi fitted to a kernel k (a :class:`~sparsekit.Nystroem`: phi(x) = K(x, S) M) and
evaluation points E, the residual of the Gram matrix is R_E = K_E − phi(E) phi(E)ᵀ; the error is
one of its norms. The Gram matrix of E is computed in row blocks and never held whole (except for
the spectral norm, when it fits ``max_memory``).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .._runtime.progress import iterate
from .._typing import DataLike, RandomStateLike
from .._validation import check_option, check_random_state, check_scalar
from ._data import take_rows

NORMS = ("fro", "spectral", "trace")

#: Bytes of one row block of K_E (as the Nyström transform's blocks).
BLOCK_BYTES = 64 * 2**20

#: Below this many evaluation points the spectral norm uses a dense eigensolver.
_DENSE_SPECTRAL_MAX = 1000


def approximation_error(
    model: Any,
    X: DataLike,
    norm: str = "fro",
    n_eval: int = 10_000,
    relative: bool = False,
    random_state: RandomStateLike = None,
    max_memory: int = 256 * 2**20,
    verbose: bool | None = None,
) -> float:
    """‖K_E − phi(E) phi(E)ᵀ‖ of a fitted Nyström map on a random subset E of ``X``.

    E is ``n_eval`` points of ``X`` drawn uniformly without replacement (all of ``X`` when it
    has at most ``n_eval``); K_E is the kernel's Gram matrix of E, phi the fitted map
    (Nyström: K̂_E = K_{E,S} K_S⁺ K_{S,E}, Williams & Seeger 2001; Cherfaoui 2022, PhD thesis,
    §2.1.2). The residual is computed in row blocks of K_E.

    Parameters
    ----------
    model : Nystroem
        A fitted :class:`~sparsekit.Nystroem` (its ``kernel_`` and its map).
    X : array (n, d), sparse matrix or what the model's kernel takes (graphs)
        The samples E is drawn from.
    norm : {"fro", "spectral", "trace"}, default "fro"
        ``"fro"``: ‖R_E‖_F = (Σ_ij (K_E − K̂_E)_ij²)^{1/2}, the measure of the Chapter 3
        experiments (Cherfaoui 2022, PhD thesis, §3.3, absolute, on 10,000 points).
        ``"spectral"``: ‖R_E‖_2, the largest ``|eigenvalue|`` of the residual (dense below 1000
        points, otherwise Lanczos, ``scipy.sparse.linalg.eigsh``, on the blocks).
        ``"trace"``: tr(R_E) = Σ_i k(x_i, x_i) − ‖phi(x_i)‖², equal to the nuclear norm for a
        PSD kernel (the Nyström residual is then PSD); it needs only ``O(|E|)`` kernel values.
    n_eval : int, default 10000
        ``|E|``, the size of the random subset E.
    relative : bool, default False
        Divide by the same norm of K_E.
    random_state : None, int or Generator
        Draws E; default: the model's ``random_state``.
    max_memory : int, default 256 MiB
        ``norm="spectral"``: the blocks of K_E are cached when the ``|E| x |E|`` matrix fits in
        these many bytes (otherwise recomputed at every Lanczos step).
    verbose : bool, optional
        Show progress over the Gram blocks (default: on a terminal, for long runs; see
        :func:`sparsekit.show_progress`).

    Returns
    -------
    float
        The norm of the residual (divided by the norm of K_E with ``relative``).

    Raises
    ------
    ValueError
        An unknown ``norm``, ``n_eval`` < 1, a negative ``max_memory``, an empty ``X`` or
        ``X`` of another width than the fitted data.
    NotFittedError
        ``model`` is not fitted.
    """
    norm = check_option(norm, "norm", NORMS)
    n_eval = check_scalar(n_eval, "n_eval", kind=numbers.Integral, low=1, low_inclusive=True)
    max_memory = check_scalar(max_memory, "max_memory", low=0, low_inclusive=True)
    Xp = model._prepare(X)
    kernel = model.kernel_
    n = kernel.n_samples(Xp)
    if n == 0:
        raise ValueError("X is empty; at least one sample is needed")
    if n > n_eval:
        seed = getattr(model, "random_state", None) if random_state is None else random_state
        idx = np.sort(check_random_state(seed).choice(n, n_eval, replace=False))
        E = kernel.take(Xp, idx)
    else:
        E = Xp
    Phi = model._features(E).astype(np.float64, copy=False)
    n_e = Phi.shape[0]
    if norm == "trace":
        diag = np.asarray(kernel.diag(E), dtype=np.float64)
        err = float(diag.sum() - np.einsum("ij,ij->", Phi, Phi))
        return err / float(diag.sum()) if relative else err
    step = int(max(1, min(n_e, BLOCK_BYTES // max(1, 8 * n_e))))
    starts = list(range(0, n_e, step))

    def gram_block(r0):
        rows = take_rows(kernel, E, r0, min(n_e, r0 + step))
        return np.asarray(kernel(rows, E), dtype=np.float64)

    if norm == "fro":
        err2 = ref2 = 0.0
        for r0 in iterate(starts, "approximation error", unit="block", verbose=verbose):
            Kb = gram_block(r0)
            if relative:
                ref2 += float(np.einsum("ij,ij->", Kb, Kb))
            Kb -= Phi[r0 : r0 + len(Kb)] @ Phi.T
            err2 += float(np.einsum("ij,ij->", Kb, Kb))
        err = np.sqrt(err2)
        return float(err / np.sqrt(ref2)) if relative else float(err)
    cached = n_e * n_e * 8 <= max_memory
    blocks = (
        [gram_block(r0) for r0 in iterate(starts, "Gram blocks", unit="block", verbose=verbose)]
        if cached
        else None
    )

    def gram_matvec(v, subtract):
        w = Phi.T @ v if subtract else None
        parts = []
        for i, r0 in enumerate(starts):
            Kb = blocks[i] if cached else gram_block(r0)
            part = Kb @ v
            if subtract:
                part -= Phi[r0 : r0 + len(Kb)] @ w
            parts.append(part)
        return np.vstack(parts)

    err = _spectral_norm(lambda v: gram_matvec(v, True), n_e)
    if not relative:
        return err
    return err / _spectral_norm(lambda v: gram_matvec(v, False), n_e)


def _spectral_norm(matmat, n) -> float:
    """Largest |eigenvalue| of the symmetric n x n operator ``V -> matmat(V)``."""
    if n <= _DENSE_SPECTRAL_MAX:
        A = matmat(np.eye(n))
        return float(np.max(np.abs(np.linalg.eigvalsh(0.5 * (A + A.T)))))
    from scipy.sparse.linalg import LinearOperator, eigsh

    def mv(v):
        return matmat(np.asarray(v, dtype=np.float64).reshape(n, -1))

    op = LinearOperator((n, n), matvec=mv, matmat=mv, dtype=np.float64)
    vals = eigsh(op, k=1, which="LM", tol=1e-8, return_eigenvectors=False)
    return float(np.abs(vals).max())


__all__ = ["approximation_error"]
