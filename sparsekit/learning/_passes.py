"""Products with K_nm = k(X, L) computed in row blocks, never stored whole."""

from __future__ import annotations

import inspect

import numpy as np

from .._runtime.small_blas import is_skinny, one_blas_thread
from ..features.nystrom import _rows
from ..kernels.base import resolve_backend

#: Bytes of one block of K_nm. A block is written by the kernel and read by two products, so it
#: should stay in cache between them and its buffer should be reused rather than mapped afresh
#: (a fresh 64 MiB array faults its pages in at every block): for n = 100,000, m = 4,000, d = 28
#: on 2 cores one pass K_nmᵀ (K_nm v) took 1.86 s with fresh 64 MiB blocks, 1.42 s with a reused
#: 64 MiB buffer, 0.99 s with a reused 16 or 32 MiB one and 1.12 s with 8 MiB.
BLOCK_BYTES = 16 * 2**20
#: Bytes of a block for the direct solver, whose triangular solve per block reads the whole
#: m x m factor: larger blocks read it fewer times (same case: 35.6 s with 64 MiB blocks, 63 s
#: with 16 MiB ones)
DIRECT_BLOCK_BYTES = 64 * 2**20


def kernel_passes(kernel, Xp, landmarks):
    """The passes over ``Xp``: on the GPU (:mod:`sparsekit.learning._passes_cuda`) where the
    kernel has a CUDA path, its ``backend`` resolves to ``"cuda"`` for the n × m entries of
    K_nm and the data and landmarks are dense arrays; else :class:`KernelPasses`.

    Raises
    ------
    ValueError
        ``backend="cuda"`` on a machine without a usable device (from
        :func:`~sparsekit.kernels.base.resolve_backend`, which names the fix).
    """
    if (
        getattr(kernel, "has_cuda", False)
        and hasattr(kernel, "_cuda_entries")
        and isinstance(Xp, np.ndarray)
        and isinstance(landmarks, np.ndarray)
        and Xp.ndim == landmarks.ndim == 2
        and min(Xp.shape[0], landmarks.shape[0]) > 0
    ):
        resolved = kernel._resolved(Xp, landmarks)  # as the kernel's own call resolves it
        backend = getattr(resolved, "backend", "cpu")
        entries = Xp.shape[0] * landmarks.shape[0]
        if resolve_backend(backend, True, kernel.name, entries=entries) == "cuda":
            from ._passes_cuda import DevicePasses

            return DevicePasses(KernelPasses(resolved, Xp, landmarks))
    return KernelPasses(kernel, Xp, landmarks)


class KernelPasses:
    """K_nm V, K_nmᵀ U and K_nmᵀ (D ∘ K_nm V), one pass over the data each.

    Parameters
    ----------
    kernel : fitted kernel object
    Xp : prepared data of n samples
    landmarks : prepared landmarks (m of them)

    Notes
    -----
    A block holds at most ``BLOCK_BYTES`` of K_nm; its products with the (m, t) and (b, t)
    operands run on one BLAS thread when t is small, the kernel evaluation (the cost of a
    pass) on all of them.
    """

    def __init__(self, kernel, Xp, landmarks):
        self.kernel, self.Xp, self.landmarks = kernel, Xp, landmarks
        self.n = kernel.n_samples(Xp)
        self.m = kernel.n_samples(landmarks)
        try:
            self._fills = "out" in inspect.signature(kernel.__call__).parameters
        except (TypeError, ValueError):  # a callable without a signature
            self._fills = False
        self._buffers = {}

    def blocks(self, block_bytes=None):
        """``(r0, r1, K_b)`` for the row blocks of K_nm (``block_bytes`` each, default
        :data:`BLOCK_BYTES`), in order; a kernel that takes ``out=`` writes every block into one
        buffer (a block is valid until the next one is drawn)."""
        step = int(max(1, (block_bytes or BLOCK_BYTES) // max(1, 8 * self.m)))
        for r0 in range(0, self.n, step):
            r1 = min(self.n, r0 + step)
            rows = _rows(self.kernel, self.Xp, r0, r1)
            buffer = self._buffers.get(step)
            if buffer is not None:
                Kb = self.kernel(rows, self.landmarks, out=buffer[: r1 - r0])
            else:
                Kb = np.asarray(self.kernel(rows, self.landmarks))
                if self._fills and r1 - r0 == step and Kb.flags.c_contiguous:
                    self._buffers[step] = Kb
            yield r0, r1, Kb

    def times(self, V, dtype=np.float64):
        """K_nm V, (n, t) in ``dtype``."""
        out = np.empty((self.n, V.shape[1]), dtype=dtype)
        for r0, r1, Kb in self.blocks():
            with one_blas_thread(is_skinny(V.shape[1])):
                out[r0:r1] = Kb @ V.astype(Kb.dtype, copy=False)
        return out

    def adjoint(self, U):
        """K_nmᵀ U for an (n, t) array, as float64."""
        out = np.zeros((self.m, U.shape[1]))
        for r0, r1, Kb in self.blocks():
            with one_blas_thread(is_skinny(U.shape[1])):
                out += Kb.T @ U[r0:r1].astype(Kb.dtype, copy=False)
        return out

    def gram(self, V, weights=None):
        """K_nmᵀ (D ∘ (K_nm V)) for an (m, t) array V, as float64; D (n, t) is ``weights``
        (default all ones)."""
        out = np.zeros((self.m, V.shape[1]))
        for r0, r1, Kb in self.blocks():
            with one_blas_thread(is_skinny(V.shape[1])):  # the products, not the kernel
                Z = Kb @ V.astype(Kb.dtype, copy=False)
                if weights is not None:
                    Z *= weights[r0:r1]
                out += Kb.T @ Z
        return out
