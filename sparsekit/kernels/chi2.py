"""Chi-squared kernels on non-negative data (histograms).

- additive-chi2: k(x, z) = -sum_k (x_k - z_k)^2 / (x_k + z_k)
- chi2 (exponential): k(x, z) = exp(-gamma sum_k (x_k - z_k)^2 / (x_k + z_k)), gamma default 1

Terms with x_k + z_k = 0 count as 0. These are the definitions of scikit-learn's
``additive_chi2_kernel`` and ``chi2_kernel``; inputs with negative entries are rejected.
The additive kernel is conditionally positive definite only (not PSD).

Every term is computed without overflow or underflow where its true value is a float
(:func:`sparsekit.kernels._cpu.chi2_sums`). A sum of terms beyond the largest float (data near
it, d max|x| > max float), or rounded past it, makes an additive-chi2 entry -inf, with a
``RuntimeWarning`` naming the data's scale (:mod:`sparsekit.kernels._range`); the exponential
kernel's limit, 0, is right.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_scalar
from . import _cpu
from ._range import max_abs, warn_if_not_finite
from .base import VectorKernel


class AdditiveChi2Kernel(VectorKernel):
    """Additive chi-squared kernel on non-negative data.

    ``k(x, z) = -sum_k (x_k - z_k)^2 / (x_k + z_k)``.

    Parameters
    ----------
    backend : {"auto", "cpu", "cuda"}, default "auto"
        Where the Gram blocks are computed: ``"auto"`` takes CUDA only when a device is usable
        and the block is large enough (:func:`~sparsekit.kernels.base.resolve_backend`).
    """

    name = "additive-chi2"
    nonnegative = True
    has_cuda = True

    def __init__(self, backend: str = "auto"):
        self.backend: str = backend
        self._check_params()

    def _fill(self, Xb, Y, ctx, out, row0, same):
        _cpu.chi2_sums(Xb, Y, out)
        np.negative(out, out=out)

    def _block_filler(self, X, Y, same, block_rows):
        fill = super()._block_filler(X, Y, same, block_rows)
        # each term is at most max(x, z), and rounding makes a sum of d terms at most (1 + eps)^d
        # times its exact value: a sum can exceed the range only past d max|x| (1 + eps)^d (four
        # more factors 1 + eps cover the rounding of this bound itself, in float64)
        d, info = X.shape[1], np.finfo(X.dtype)
        scale = max(max_abs(X), 0.0 if same else max_abs(Y))
        if d * scale * (1.0 + float(info.eps)) ** (d + 4) <= float(info.max):
            return fill

        def checked(r0, r1, out):  # on every backend
            fill(r0, r1, out)
            warn_if_not_finite(out, "additive-chi2", scale)
            return out

        return checked

    def _diag(self, X):
        return np.zeros(X.shape[0], dtype=X.dtype)

    def _cuda_entries(self, X):
        from . import _cuda

        return _cuda.chi2_entries, (X.dtype.type(-1.0), np.bool_(False), X.dtype.type(0.5))


class Chi2Kernel(VectorKernel):
    """Exponential chi-squared kernel on non-negative data.

    ``k(x, z) = exp(-gamma sum_k (x_k - z_k)^2 / (x_k + z_k))``.

    Parameters
    ----------
    gamma : float > 0, default 1.0
        The scale of the chi-squared distance. A gamma beyond the float32 range multiplies
        float32 distances in float64: k(x, x) = 1 at any gamma.
    backend : {"auto", "cpu", "cuda"}, default "auto"
        Where the Gram blocks are computed: ``"auto"`` takes CUDA only when a device is usable
        and the block is large enough (:func:`~sparsekit.kernels.base.resolve_backend`).
    """

    name = "chi2"
    nonnegative = True
    has_cuda = True

    def __init__(self, gamma: float = 1.0, backend: str = "auto"):
        self.gamma: float = gamma
        self.backend: str = backend
        self._check_params()

    def _check_params(self):
        super()._check_params()
        check_scalar(self.gamma, "gamma", low=0)

    def _fill(self, Xb, Y, ctx, out, row0, same):
        _cpu.chi2_sums(Xb, Y, out)
        _cpu.exp_scale_inplace(out, -self.gamma)

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)

    def _cuda_entries(self, X):
        from . import _cuda

        scale = _cpu.scalar_of(X.dtype, -self.gamma)
        return _cuda.chi2_entries, (scale, np.bool_(True), X.dtype.type(0.5))


__all__ = ["AdditiveChi2Kernel", "Chi2Kernel"]
