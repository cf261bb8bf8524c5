"""Linear and polynomial kernels (GEMM through BLAS).

- linear: k(x, z) = <x, z>
- polynomial: k(x, z) = (gamma <x, z> + coef0)^degree, gamma defaults to 1 / n_features
  (the definitions of scikit-learn's ``linear_kernel`` and ``polynomial_kernel``).

Sparse input: the products of the non-zeros that share a column, written straight into the
dense Gram block (:mod:`sparsekit.kernels._sparse_cpu`).
"""
from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_scalar
from .base import VectorKernel, cross_products, row_sq_norms


class LinearKernel(VectorKernel):
    """k(x, z) = <x, z>."""

    name = "linear"
    sparse_native = True

    def __init__(self, backend="auto"):
        self.backend = backend
        self._check_params()

    def _fill(self, Xb, Y, ctx, out, row0, same):
        cross_products(Xb, Y, out)

    def _diag(self, X):
        return row_sq_norms(X)


class PolynomialKernel(VectorKernel):
    """k(x, z) = (gamma <x, z> + coef0)^degree.

    Parameters
    ----------
    degree : int, default 3
    gamma : float > 0, optional
        Defaults to 1 / n_features (as scikit-learn).
    coef0 : float, default 1
    """

    name = "polynomial"
    sparse_native = True

    def __init__(self, degree=3, gamma=None, coef0=1.0, backend="auto"):
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.backend = backend
        self._check_params()

    def _check_params(self):
        super()._check_params()
        check_scalar(self.degree, "degree", kind=numbers.Integral, low=0, low_inclusive=True)
        if self.gamma is not None:
            check_scalar(self.gamma, "gamma", low=0)
        check_scalar(self.coef0, "coef0")

    def _gamma(self, d):
        return 1.0 / d if self.gamma is None else self.gamma

    def _fill(self, Xb, Y, ctx, out, row0, same):
        cross_products(Xb, Y, out)
        out *= out.dtype.type(self._gamma(Xb.shape[1]))
        out += out.dtype.type(self.coef0)
        np.power(out, self.degree, out=out)

    def _diag(self, X):
        d = row_sq_norms(X)
        return (d * X.dtype.type(self._gamma(X.shape[1])) + X.dtype.type(self.coef0)) ** self.degree
