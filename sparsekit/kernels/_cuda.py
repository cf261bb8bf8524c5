"""CUDA compute for vector kernels: ``@cuda.jit`` twins of :mod:`sparsekit.kernels._cpu`.

One thread computes one Gram entry by looping over the features of its pair (i, j); the RBF
distance is summed from differences, so it has none of the cancellation of the GEMM form.
Imported only when ``backend="cuda"`` is chosen. Tested against the CPU kernels with
``NUMBA_ENABLE_CUDASIM=1``.
"""
import math

import numpy as np
from numba import cuda

_THREADS = (16, 16)


@cuda.jit(cache=True)
def _rbf_kernel(X, Y, gamma, out):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        acc = X[i, 0] - X[i, 0]  # a zero of the input's dtype
        for k in range(X.shape[1]):
            t = X[i, k] - Y[j, k]
            acc += t * t
        out[i, j] = math.exp(-gamma * acc)


@cuda.jit(cache=True)
def _laplacian_kernel(X, Y, gamma, out):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        acc = X[i, 0] - X[i, 0]
        for k in range(X.shape[1]):
            acc += abs(X[i, k] - Y[j, k])
        out[i, j] = math.exp(-gamma * acc)


@cuda.jit(cache=True)
def _chi2_kernel(X, Y, scale, exponentiate, out):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        acc = X[i, 0] - X[i, 0]
        for k in range(X.shape[1]):
            a = X[i, k]
            b = Y[j, k]
            s = a + b
            if s > 0:
                t = a - b
                acc += t * t / s
        if exponentiate:
            out[i, j] = math.exp(scale * acc)
        else:
            out[i, j] = scale * acc


def _launch(kernel, X, Y, out, *args):
    blocks = (math.ceil(X.shape[0] / _THREADS[0]), math.ceil(Y.shape[0] / _THREADS[1]))
    dX = cuda.to_device(X)
    dY = dX if Y is X else cuda.to_device(Y)
    dout = cuda.device_array(out.shape, dtype=out.dtype)
    kernel[blocks, _THREADS](dX, dY, *args, dout)
    dout.copy_to_host(out)
    return out


def rbf_gram(X, Y, gamma, out):
    """out[i, j] = exp(-gamma ||X_i - Y_j||^2) on the GPU (direct differences, no cancellation)."""
    return _launch(_rbf_kernel, X, Y, out, gamma)


def laplacian_gram(X, Y, gamma, out):
    """out[i, j] = exp(-gamma ||X_i - Y_j||_1) on the GPU."""
    return _launch(_laplacian_kernel, X, Y, out, gamma)


def chi2_gram(X, Y, scale, exponentiate, out):
    """out = exp(scale * S) or scale * S with S[i, j] = sum (x-y)^2/(x+y), on the GPU."""
    return _launch(_chi2_kernel, X, Y, out, scale, np.bool_(exponentiate))
