"""Nyström features on the GPU: phi(X) = K(X, S) M with K(X, S) never leaving the device.

The host path computes K(X, S) in row blocks (on the GPU or the CPU), brings each block to host
memory and multiplies it by M with host BLAS: for n = 200,000 and |S| = 2,000 that moves the
n × |S| Gram matrix over the bus and leaves a 1.6 TFLOP product to the CPU. Here, for each chunk
of rows of X:

1. the rows go to the device and the kernel's ``@cuda.jit`` entries
   (:mod:`sparsekit.kernels._cuda`) write the Gram chunk K(X_c, S) into a device buffer;
2. cuBLAS (through CuPy) multiplies it by M, already on the device;
3. only the product (rows × n_components_) comes back, through the page-locked staging buffer
   of :mod:`sparsekit.kernels._cuda`.

All chunks run in order on one stream. The staging buffer has two halves: while the device
computes chunk i and copies it into one half, the host copies chunk i − 1 from the other half
into the output, so the two overlap.

The eigendecomposition of K_S (float64, as on the host) runs on the device too (cuSOLVER's
``syevd`` through ``cupy.linalg.eigh``).

This path is taken when the kernel has a CUDA implementation, its ``backend`` resolves to
``"cuda"`` for the Gram matrix at hand (``"auto"``: a usable device and a large enough
matrix) and CuPy is installed (the ``cuda`` extra) and works; otherwise the host path runs
unchanged. A CuPy that is installed but cannot run (driver or library mismatch) is reported
once with a ``RuntimeWarning``.
"""

from __future__ import annotations

import math
import threading
import warnings

import numpy as np

from ..kernels.base import resolve_backend

_state = {"ops": None, "checked": False}
_state_lock = threading.Lock()


class CupyOps:
    """Device buffers, one stream and the GEMM, through CuPy (cuBLAS) and Numba.

    Buffers are CuPy arrays; Numba sees the same memory through ``__cuda_array_interface__``,
    and Numba's launches and copies run on CuPy's stream, so all work is ordered.
    """

    def __init__(self, cupy):
        from numba import cuda

        self.cupy = cupy
        self.cupy_stream = cupy.cuda.Stream(non_blocking=False)
        self.stream = cuda.external_stream(self.cupy_stream.ptr)

    def empty(self, shape, dtype):
        """``(array for matmul, the same memory as a Numba device array)``."""
        from numba import cuda

        with self.cupy_stream:
            a = self.cupy.empty(shape, dtype=dtype)
        return a, cuda.as_cuda_array(a)

    def matmul(self, a, b, out):
        """``out = a @ b`` on the stream (cuBLAS GEMM)."""
        with self.cupy_stream:
            self.cupy.matmul(a, b, out=out)

    def eigh(self, A):
        """Eigenvalues (ascending) and eigenvectors of the symmetric host matrix ``A``."""
        cp = self.cupy
        with self.cupy_stream:
            w, V = cp.linalg.eigh(cp.asarray(A))
            return w.get(), V.get()


def _load_cupy_ops():
    from numba import config

    if config.ENABLE_CUDASIM:  # CuPy cannot work on the simulator's arrays
        return None
    try:
        import cupy
    except ImportError:
        return None
    except Exception as exc:  # installed but broken (say, built for another NumPy)
        return _cupy_unusable(exc)
    try:
        ops = CupyOps(cupy)
        # a small GEMM and eigendecomposition: fails here, not in the middle of a transform,
        # when CuPy cannot use this device or its libraries
        a, _ = ops.empty((2, 2), np.float64)
        a[...] = cupy.asarray([[2.0, 1.0], [1.0, 2.0]])
        ops.matmul(a, a, a.copy())
        w, _ = ops.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
        if not np.allclose(w, [1.0, 3.0]):
            raise RuntimeError(f"eigh of a 2x2 test matrix gave {w}")
    except Exception as exc:
        return _cupy_unusable(exc)
    return ops


def _cupy_unusable(exc):
    warnings.warn(
        f"CuPy is installed but cannot run on this device ({exc!r}); Nystroem multiplies "
        "the Gram blocks on the host. Check that the CuPy package matches NumPy and the CUDA "
        "driver.",
        RuntimeWarning,
        stacklevel=5,
    )
    return None


def device_ops():
    """The :class:`CupyOps` of the process, or None when CuPy is absent or unusable."""
    if not _state["checked"]:
        with _state_lock:
            if not _state["checked"]:
                _state["ops"] = _load_cupy_ops()
                _state["checked"] = True
    return _state["ops"]


def _on_device(kernel, entries):
    """Whether ``kernel``'s backend sends a Gram matrix of ``entries`` entries to the GPU."""
    backend = getattr(kernel, "backend", None)
    if backend is None or not getattr(kernel, "has_cuda", False):
        return False
    return resolve_backend(backend, True, kernel.name, entries=entries) == "cuda"


def eigh_for(kernel, n_landmarks):
    """The eigensolver for K_S: the device's when the kernel computes on the GPU, else None
    (the caller's host ``eigh``)."""
    if not _on_device(kernel, n_landmarks * n_landmarks):
        return None
    ops = device_ops()
    return None if ops is None else ops.eigh


def device_features(kernel, components, M, X):
    """phi(X) = K(X, S) M computed on the device, or None when this path does not apply.

    Parameters
    ----------
    kernel : fitted vector kernel
    components : (k, d) array, the landmarks S
    M : (k, c) array, the normalization (dtype of the landmarks)
    X : prepared data (anything but a 2-D float array makes this return None)
    """
    if not isinstance(X, np.ndarray) or X.ndim != 2 or X.shape[0] == 0:
        return None
    if not _on_device(kernel, X.shape[0] * components.shape[0]):
        return None
    ops = device_ops()
    if ops is None:
        return None
    kernel._check_params()
    X, S = kernel._validate(X, components)
    if M.dtype != X.dtype:
        return None
    entries, args = kernel._cuda_entries(X)
    return transform_on_device(ops, entries, args, S, M, X)


def transform_on_device(ops, entries, args, S, M, X):
    """``K(X, S) @ M`` in chunks on the device (module docstring); returns a host array.

    ``ops`` provides ``empty``, ``matmul`` and ``stream`` (:class:`CupyOps`); ``entries`` is a
    kernel of :mod:`sparsekit.kernels._cuda` with its scalar ``args``.
    """
    from ..kernels import _cuda
    from ..kernels._cpu import copy_rows

    n, d = X.shape
    m, c = S.shape[0], M.shape[1]
    dtype = X.dtype
    rows = _cuda.chunk_rows(n, max(m, c), d, dtype.itemsize)
    out = np.empty((n, c), dtype=dtype)
    stream = ops.stream
    with _cuda._device_lock:
        _, d_St = ops.empty((d, m), dtype)
        d_St.copy_to_device(np.ascontiguousarray(S.T), stream=stream)
        a_M, d_M = ops.empty((m, c), dtype)
        d_M.copy_to_device(np.ascontiguousarray(M), stream=stream)
        _, d_X = ops.empty((rows, d), dtype)
        a_K, d_K = ops.empty((rows, m), dtype)
        a_out, d_out = ops.empty((rows, c), dtype)
        staging = _cuda._staging_view(2 * rows, c, dtype)
        halves = (staging[:rows], staging[rows:])
        pending = None
        for i, r0 in enumerate(range(0, n, rows)):
            r1 = min(n, r0 + rows)
            k = r1 - r0
            d_X[:k].copy_to_device(X[r0:r1], stream=stream)
            grid = (math.ceil(m / _cuda._THREADS[0]), math.ceil(k / _cuda._THREADS[1]))
            entries[grid, _cuda._THREADS, stream](d_X[:k], d_St, *args, d_K[:k])
            ops.matmul(a_K[:k], a_M, a_out[:k])
            host = halves[i % 2][:k]
            d_out[:k].copy_to_host(host, stream=stream)
            if pending is not None:  # the previous chunk, while the device works on this one
                copy_rows(*pending)
            stream.synchronize()
            pending = (host, out[r0:r1])
        if pending is not None:
            copy_rows(*pending)
    return out
