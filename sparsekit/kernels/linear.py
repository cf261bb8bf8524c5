"""Linear and polynomial kernels (GEMM through BLAS).

- linear: k(x, z) = <x, z>
- polynomial: k(x, z) = (gamma <x, z> + coef0)^degree, gamma defaults to 1 / n_features
  (the definitions of scikit-learn's ``linear_kernel`` and ``polynomial_kernel``).

Sparse input: the products of the non-zeros that share a column, written straight into the
dense Gram block (:mod:`sparsekit.kernels._sparse_cpu`).

At the edges of the floating range (:mod:`sparsekit.kernels._range`): where d max|x| max|z|
could overflow, the products are computed on the data scaled by powers of two and scaled back
exactly, so an entry is inf only where its true value exceeds the largest float, and then the
call warns (``RuntimeWarning`` naming the kernel and the data's scale) instead of returning inf
silently.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._validation import check_scalar
from ._range import (
    ProductScale,
    log_or_minus_inf,
    max_abs as _max_abs,
    sq_norms_exact,
    warn_if_not_finite,
)
from .base import VectorKernel, row_sq_norms


class LinearKernel(VectorKernel):
    """Linear kernel ``k(x, z) = <x, z>``.

    Entries whose true value exceeds the floating range are inf, with a ``RuntimeWarning``.

    Parameters
    ----------
    backend : {"auto", "cpu", "cuda"}, default "auto"
        Where the Gram blocks are computed: ``"auto"`` takes CUDA only when a device is usable
        and the block is large enough (:func:`~sparsekit.kernels.base.resolve_backend`).
    """

    name = "linear"
    sparse_native = True

    def __init__(self, backend: str = "auto"):
        self.backend: str = backend
        self._check_params()

    def _prepare(self, X, Y, same):
        return ProductScale(X, None if same else Y)

    def _fill(self, Xb, Y, ctx, out, row0, same):
        ctx.products(Xb, Y, out)
        if ctx.scaled:
            warn_if_not_finite(out, "linear", max(ctx.ax, ctx.ay), stacklevel=5)

    def _diag(self, X):
        d = sq_norms_exact(X, row_sq_norms)
        warn_if_not_finite(d, "linear", _max_abs(X))
        return d


class PolynomialKernel(VectorKernel):
    """Polynomial kernel ``k(x, z) = (gamma <x, z> + coef0)^degree``.

    Entries whose true value exceeds the floating range are inf, with a ``RuntimeWarning``
    naming the kernel and the data's scale (``warnings.simplefilter("error", RuntimeWarning)``
    makes it an error); intermediate products that would overflow are computed on the data
    scaled by powers of two, so no entry is inf where its true value is a float.

    Parameters
    ----------
    degree : int, default 3
        The degree.
    gamma : float > 0, optional
        Defaults to 1 / n_features (as scikit-learn).
    coef0 : float, default 1
        The constant term.
    backend : {"auto", "cpu", "cuda"}, default "auto"
        Where the Gram blocks are computed: ``"auto"`` takes CUDA only when a device is usable
        and the block is large enough (:func:`~sparsekit.kernels.base.resolve_backend`).
    """

    name = "polynomial"
    sparse_native = True

    def __init__(
        self, degree: int = 3, gamma: float | None = None, coef0: float = 1.0, backend: str = "auto"
    ):
        self.degree: int = degree
        self.gamma: float | None = gamma
        self.coef0: float = coef0
        self.backend: str = backend
        self._check_params()

    def _check_params(self):
        super()._check_params()
        check_scalar(self.degree, "degree", kind=numbers.Integral, low=0, low_inclusive=True)
        if self.gamma is not None:
            check_scalar(self.gamma, "gamma", low=0)
        check_scalar(self.coef0, "coef0")

    def _gamma(self, d):
        return 1.0 / d if self.gamma is None else self.gamma

    def _prepare(self, X, Y, same):
        return ProductScale(X, None if same else Y)

    def _may_overflow(self, log_products, d, dtype) -> bool:
        """Whether (gamma <x, z> + coef0)^degree can exceed the largest float of ``dtype``,
        given log of a bound on |<x, z>| (and |a + b| <= 2 max(|a|, |b|))."""
        log_a = math.log(float(self._gamma(d))) + log_products
        log_b = math.log(2.0) + max(log_a, log_or_minus_inf(abs(float(self.coef0))))
        return self.degree * log_b > math.log(float(np.finfo(dtype).max))

    def _fill(self, Xb, Y, ctx, out, row0, same):
        d = Xb.shape[1]
        ctx.products(Xb, Y, out, float(self._gamma(d)))
        out += out.dtype.type(self.coef0)
        with np.errstate(over="ignore"):
            np.power(out, self.degree, out=out)
        if self._may_overflow(ctx.log_bound, d, out.dtype):
            warn_if_not_finite(out, "polynomial", max(ctx.ax, ctx.ay), stacklevel=5)

    def _diag(self, X):
        d = sq_norms_exact(X, row_sq_norms, float(self._gamma(X.shape[1])))
        d += X.dtype.type(self.coef0)
        with np.errstate(over="ignore"):
            np.power(d, self.degree, out=d)
        warn_if_not_finite(d, "polynomial", _max_abs(X))
        return d


__all__ = ["LinearKernel", "PolynomialKernel"]
