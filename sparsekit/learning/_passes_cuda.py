"""The passes of :class:`~sparsekit.learning._passes.KernelPasses` on the GPU.

The data X and the landmarks L go to the device once, when the passes are built (once per fit,
once per ``predict``). Every pass then walks X in chunks of rows: the kernel's ``@cuda.jit``
entries (:mod:`sparsekit.kernels._cuda`, the kernels of ``backend="cuda"``) write the chunk
K_b = k(X_b, L) into one reused device buffer, and the products with it run on the device
too, so K_nm never crosses the bus: a pass moves its (n, t) or (m, t) operand and result only.

Precision is the data's: float32 data gives float32 Gram entries and products, as on the host
(per chunk; the sums over chunks of K_nmᵀ U are float64). The m × m work (K_mm, the Cholesky
factors, the triangular solves) stays on the host.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from ..kernels import _cuda

#: threads per block of the product kernels (one dimension)
_THREADS = 128
#: rows of K summed by one thread of K_nmᵀ U
_ROWS = 64


@cuda.jit(cache=True)
def _block_times(K, V, D, row0, weighted, out):
    """out[i, c] = Σ_j K[i, j] V[j, c], times D[row0 + i, c] when ``weighted``."""
    idx = cuda.grid(1)
    t = out.shape[1]
    i = idx // t
    c = idx - i * t
    if i < K.shape[0]:
        acc = K[i, 0] - K[i, 0]  # a zero of the data's dtype
        for j in range(K.shape[1]):
            acc += K[i, j] * V[j, c]
        if weighted:
            acc *= D[row0 + i, c]
        out[row0 + i, c] = acc


@cuda.jit(cache=True)
def _block_adjoint(K, U, row0, out):
    """out[j, c] += Σ_i K[i, j] U[row0 + i, c] (``out`` float64): each thread sums ``_ROWS``
    rows i of one (j, c) and adds its sum atomically, so the threads are m t times the chunk's
    rows / ``_ROWS``, not m t; consecutive threads read consecutive columns j of K's rows."""
    idx = cuda.grid(1)
    m, t = out.shape
    j = idx % m
    c = (idx // m) % t
    i0 = (idx // (m * t)) * _ROWS
    if i0 < K.shape[0]:
        acc = K[i0, j] - K[i0, j]
        for i in range(i0, min(i0 + _ROWS, K.shape[0])):
            acc += K[i, j] * U[row0 + i, c]
        cuda.atomic.add(out, (j, c), float(acc))


def _launch(kernel, items, *args):
    kernel[max(1, math.ceil(items / _THREADS)), _THREADS](*args)


class DevicePasses:
    """K_nm V, K_nmᵀ U and K_nmᵀ (D ∘ K_nm V) computed on the GPU (module docstring).

    Parameters
    ----------
    host : :class:`~sparsekit.learning._passes.KernelPasses`
        The host passes over dense data and landmarks, with a kernel that has a CUDA path
        (``has_cuda``). Their ``blocks`` serve the direct solver, which reads K_nm on the host.
    """

    def __init__(self, host):
        self.kernel, self.n, self.m, self.blocks = host.kernel, host.n, host.m, host.blocks
        X, L = self.kernel._validate(host.Xp, host.landmarks)
        self.dtype = X.dtype
        self._entries, self._args = self.kernel._cuda_entries(X)
        self._chunk = _cuda.chunk_rows(self.n, self.m, X.shape[1], X.dtype.itemsize)
        with _cuda._device_lock:
            self._X = cuda.to_device(np.ascontiguousarray(X))
            self._Lt = cuda.to_device(np.ascontiguousarray(L.T))
            self._K = cuda.device_array((self._chunk, self.m), dtype=self.dtype)

    def _chunks(self):
        """``(r0, K_b)`` for the row chunks of K_nm, each computed into the device buffer
        (valid until the next one); call with the device lock held."""
        block = _cuda._THREADS
        for r0 in range(0, self.n, self._chunk):
            r1 = min(self.n, r0 + self._chunk)
            K = self._K[: r1 - r0]
            grid = (math.ceil(self.m / block[0]), math.ceil((r1 - r0) / block[1]))
            self._entries[grid, block](self._X[r0:r1], self._Lt, *self._args, K)
            yield r0, K

    def _operand(self, A):
        return cuda.to_device(np.ascontiguousarray(A, dtype=self.dtype))

    def times(self, V, dtype=np.float64):
        """K_nm V, (n, t) in ``dtype``."""
        t = V.shape[1]
        with _cuda._device_lock:
            d_V = self._operand(V)
            d_out = cuda.device_array((self.n, t), dtype=self.dtype)
            for r0, K in self._chunks():
                _launch(_block_times, K.shape[0] * t, K, d_V, d_out, r0, False, d_out)
            out = d_out.copy_to_host()
        return out.astype(dtype, copy=False)

    def adjoint(self, U):
        """K_nmᵀ U for an (n, t) array, as float64."""
        with _cuda._device_lock:
            d_U = self._operand(U)
            d_out = cuda.to_device(np.zeros((self.m, U.shape[1])))
            for r0, K in self._chunks():
                items = self.m * U.shape[1] * math.ceil(K.shape[0] / _ROWS)
                _launch(_block_adjoint, items, K, d_U, r0, d_out)
            return d_out.copy_to_host()

    def gram(self, V, weights=None):
        """K_nmᵀ (D ∘ (K_nm V)) for an (m, t) array V, as float64; D (n, t) is ``weights``
        (default all ones)."""
        t = V.shape[1]
        with _cuda._device_lock:
            d_V = self._operand(V)
            d_Z = cuda.device_array((self.n, t), dtype=self.dtype)
            d_D = d_Z if weights is None else self._operand(weights)
            d_out = cuda.to_device(np.zeros((self.m, t)))
            for r0, K in self._chunks():
                rows = K.shape[0]
                _launch(_block_times, rows * t, K, d_V, d_D, r0, weights is not None, d_Z)
                items = self.m * t * math.ceil(rows / _ROWS)
                _launch(_block_adjoint, items, K, d_Z, r0, d_out)
            return d_out.copy_to_host()
