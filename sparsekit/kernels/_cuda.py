"""CUDA compute for vector kernels: ``@cuda.jit`` twins of :mod:`sparsekit.kernels._cpu`.

One thread computes one Gram entry ``(i, j)`` by looping over the features of its pair. The
thread index that varies fastest within a warp runs over the columns ``j``, and ``Y`` is sent
transposed (``Yt[k, j]``), so the loads of ``Y`` and the stores of the output are coalesced
while ``X[i, k]`` is one broadcast per warp row. The RBF distance is summed from differences,
so it has none of the cancellation of the GEMM form.

:class:`DeviceGram` evaluates a Gram matrix in row blocks: ``Yt`` goes to the device once, one
device output buffer is reused, and each chunk of rows comes back through a page-locked staging
buffer into the caller's rows. A chunk holds at most ``STAGING_BYTES`` of output and of input
rows, so device memory is ``O(m d + STAGING_BYTES)`` whatever ``n``.

Imported only when ``backend="cuda"`` is chosen. Tested against the CPU kernels with
``NUMBA_ENABLE_CUDASIM=1`` in CI, and on a GPU (``benchmarks/bench_cuda.py``).
"""

import math
import threading

import numpy as np
from numba import cuda

from . import _numba_cuda_compat

# before any kernel of this module compiles (numba-cuda on NumPy >= 2.5)
_numba_cuda_compat.load_cuda_array_overloads()

#: threads per block: 32 columns (one warp) by 8 rows
_THREADS = (32, 8)


@cuda.jit(cache=True)
def rbf_entries(X, Yt, gamma, out):
    """out[i, j] = exp(-gamma ||X_i - Y_j||^2)."""
    j, i = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        acc = X[i, 0] - X[i, 0]  # a zero of the input's dtype
        for k in range(X.shape[1]):
            t = X[i, k] - Yt[k, j]
            acc += t * t
        out[i, j] = math.exp(-gamma * acc)


@cuda.jit(cache=True)
def laplacian_entries(X, Yt, gamma, out):
    """out[i, j] = exp(-gamma ||X_i - Y_j||_1)."""
    j, i = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        acc = X[i, 0] - X[i, 0]
        for k in range(X.shape[1]):
            acc += abs(X[i, k] - Yt[k, j])
        out[i, j] = math.exp(-gamma * acc)


@cuda.jit(cache=True)
def chi2_entries(X, Yt, scale, exponentiate, half, out):
    """out[i, j] = exp(scale S_ij) or scale S_ij, S_ij = sum_k (x_k - y_k)^2 / (x_k + y_k).

    Each term is ``t * (t / s)`` (|t / s| <= 1), from halved inputs where ``x + y`` overflows,
    as in the CPU loop: no term overflows or underflows unless its true value does. ``half`` is
    0.5 in the data's dtype (a literal 0.5 would make Numba compute float32 data in float64).
    """
    j, i = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        acc = X[i, 0] - X[i, 0]
        for k in range(X.shape[1]):
            a = X[i, k]
            b = Yt[k, j]
            s = a + b
            if s > 0:
                t = a - b
                if math.isinf(s):
                    acc += (t * half) * (t / (a * half + b * half))
                else:
                    acc += t * (t / s)
        if exponentiate:
            out[i, j] = math.exp(scale * acc)
        else:
            out[i, j] = scale * acc


@cuda.jit(cache=True)
def _probe_kernel(out):
    out[0] = 1.0


def probe():
    """Compile and run a one-thread kernel; raises if this Numba cannot use the device."""
    with _device_lock:
        d = cuda.to_device(np.zeros(1))
        _probe_kernel[1, 1](d)
        if d.copy_to_host()[0] != 1.0:
            raise RuntimeError("the probe kernel did not write its result")


#: size of the page-locked host buffer that GPU results pass through (and of one device chunk)
STAGING_BYTES = 64 * 2**20

#: serializes the device work of concurrent calls (one device; and Numba's simulator swaps this
#: module's ``cuda`` while a kernel runs, so host calls must not overlap a launch)
_device_lock = threading.Lock()
_staging = None


def _staging_view(rows, cols, dtype):
    """A ``(rows, cols)`` view of the process's page-locked staging buffer (grown on demand).

    Copies from the device into page-locked memory run at the bus speed, where copies into
    ordinary (pageable) memory go through a driver buffer at a fraction of it. The buffer is
    allocated once per process, because allocating page-locked memory is slow. Call with
    ``_device_lock`` held.
    """
    global _staging
    nbytes = rows * cols * np.dtype(dtype).itemsize
    if _staging is None or _staging.size < nbytes:
        _staging = cuda.pinned_array(max(nbytes, 1), dtype=np.uint8)
    return _staging[:nbytes].view(dtype).reshape(rows, cols)


#: CUDA allows at most 65,535 blocks along the grid's y axis, which runs over rows
MAX_GRID_ROWS = 65535 * _THREADS[1]


def chunk_rows(block_rows, n_cols, n_features, itemsize):
    """Rows of one device chunk: at most ``block_rows``, ``MAX_GRID_ROWS`` (one launch), and
    ``STAGING_BYTES`` of output or of input rows (so device memory stays bounded for any n)."""
    by_output = STAGING_BYTES // max(1, n_cols * itemsize)
    by_input = STAGING_BYTES // max(1, n_features * itemsize)
    return int(max(1, min(block_rows, by_output, by_input, MAX_GRID_ROWS)))


class DeviceGram:
    """Row blocks of the Gram matrix between rows of ``X`` and the fixed ``Y`` on the GPU.

    ``Yt`` is uploaded once. Each block is computed in chunks of :func:`chunk_rows` rows:
    launch, copy to the page-locked staging buffer, then a threaded copy into the
    caller's rows. The device and the staging buffer are shared by the process, so the chunks
    of concurrent calls (threads) take turns.

    Parameters
    ----------
    entries : a ``@cuda.jit`` kernel of this module, called ``entries(X, Yt, *args, out)``
    Y : (m, d) C-contiguous array, the dtype of the blocks
    args : tuple of scalars of the kernel (already cast to the data's dtype)
    block_rows : int
        Largest number of rows of one block.
    """

    def __init__(self, entries, Y, args, block_rows):
        self._entries = entries
        self._args = tuple(args)
        self._dtype = Y.dtype
        self._chunk = chunk_rows(block_rows, Y.shape[0], Y.shape[1], Y.dtype.itemsize)
        with _device_lock:
            self._Yt = cuda.to_device(np.ascontiguousarray(Y.T))
            self._out = cuda.device_array((self._chunk, Y.shape[0]), dtype=Y.dtype)

    def fill(self, Xb, out):
        """Write the Gram block of the rows ``Xb`` into ``out`` (host, C-contiguous)."""
        from ._cpu import copy_rows

        cols = out.shape[1]
        for r0 in range(0, Xb.shape[0], self._chunk):
            r1 = min(Xb.shape[0], r0 + self._chunk)
            grid = (math.ceil(cols / _THREADS[0]), math.ceil((r1 - r0) / _THREADS[1]))
            with _device_lock:
                d_out = self._out[: r1 - r0]
                d_X = cuda.to_device(np.ascontiguousarray(Xb[r0:r1]))
                self._entries[grid, _THREADS](d_X, self._Yt, *self._args, d_out)
                host = _staging_view(r1 - r0, cols, self._dtype)
                d_out.copy_to_host(host)
                copy_rows(host, out[r0:r1])
        return out
