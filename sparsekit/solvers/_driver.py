"""Shared plumbing of the solver components: the prepared problem and the iteration loop.

The "residual" strategy of MP, OMP and Frank–Wolfe runs a Python loop over iterations; each
iteration computes the correlations ``C = R D`` of the still-active signals with one BLAS
GEMM (the physical floor of an iteration) and hands them to a step kernel run over ranges of
signals on several threads.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._small_blas import is_skinny, one_blas_thread
from .base import check_dictionary, check_gram, check_signals, correlation_floor


@dataclass
class Problem:
    """A validated ``(D, Y)`` pair in the compute layout (signals as rows)."""

    D: np.ndarray  # (n_features, n_atoms), C-contiguous
    Yt: np.ndarray  # (n_signals, n_features), C-contiguous
    norms_sq: np.ndarray  # (n_atoms,), dtype of D
    y_sq: np.ndarray  # (n_signals,), float64
    corr_floor: np.ndarray  # (n_signals,), float64
    one_d: bool

    @property
    def n_features(self):
        return self.D.shape[0]

    @property
    def n_atoms(self):
        return self.D.shape[1]

    @property
    def n_signals(self):
        return self.Yt.shape[0]

    @property
    def dtype(self):
        return self.D.dtype

    @property
    def Dt(self):
        """The atoms as contiguous rows, shape (n_atoms, n_features) (built once)."""
        if not hasattr(self, "_Dt"):
            self._Dt = np.ascontiguousarray(self.D.T)
        return self._Dt

    def gram(self, gram=None):
        """``D.T @ D``: the validated user matrix, or computed with BLAS."""
        if gram is not None:
            return check_gram(gram, self.D, self.norms_sq)
        G = self.D.T @ self.D
        return np.ascontiguousarray(G)

    def correlations(self):
        """``Y.T D`` (one row of correlations per signal), by BLAS."""
        return self.Yt @ self.D


def prepare(D, Y) -> Problem:
    """Validate ``D`` and ``Y`` once (the component boundary)."""
    D, _ = check_dictionary(D)
    D, Yt, one_d = check_signals(Y, D)
    norms_sq = np.einsum("ij,ij->j", D, D)
    y_sq = np.einsum("ij,ij->i", Yt, Yt, dtype=np.float64)
    return Problem(D=D, Yt=Yt, norms_sq=norms_sq, y_sq=y_sq,
                   corr_floor=correlation_floor(Yt, norms_sq), one_d=one_d)


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
