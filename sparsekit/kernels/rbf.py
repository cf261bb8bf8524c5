"""Gaussian (RBF) and Laplacian kernels.

- rbf / gaussian: k(x, z) = exp(-gamma ||x - z||_2^2), gamma = 1 / (2 sigma^2) when ``sigma`` is
  given, chosen by a rule (see :mod:`sparsekit.kernels.bandwidth`) when ``bandwidth`` is given,
  and 1 / n_features by default (scikit-learn's ``rbf_kernel``).
- laplacian: k(x, z) = exp(-gamma ||x - z||_1), gamma defaults to 1 / n_features
  (scikit-learn's ``laplacian_kernel``).

The squared distances use ||x||^2 + ||z||^2 - 2 <x, z> on centred data (the mean of X and Y
removed, which leaves distances unchanged and avoids cancellation for data far from the origin)
with the cross term from BLAS, clipped at 0, scaled in a Numba loop in place, then exponentiated in place, so a Gram block needs no
memory beyond its own.
"""
from __future__ import annotations

import numpy as np

from .._validation import check_option, check_scalar
from . import _cpu
from .bandwidth import RULES, gamma_from_rule
from .base import VectorKernel


class RBFKernel(VectorKernel):
    """Gaussian kernel k(x, z) = exp(-gamma ||x - z||^2).

    In float32 the cross term is a float32 GEMM (about twice as fast as float64); the relative
    error of k is then about gamma * eps32 * max ||x - mean||^2, so prefer float64 when
    gamma times the squared spread of the data is large (> 1e2, say).

    Parameters
    ----------
    gamma : float > 0, optional
        Inverse length scale. Default: 1 / n_features.
    sigma : float > 0, optional
        Bandwidth; gamma = 1 / (2 sigma^2). Exclusive with ``gamma`` and ``bandwidth``.
    bandwidth : {"median", "mean-sq-dist", "scale"}, optional
        Rule that sets gamma from the data in :meth:`fit` (stored in ``gamma_``).
    backend : {"auto", "cpu", "cuda"}
    """

    name = "rbf"
    has_cuda = True

    def __init__(self, gamma=None, sigma=None, bandwidth=None, backend="auto"):
        self.gamma = gamma
        self.sigma = sigma
        self.bandwidth = bandwidth
        self.backend = backend
        self.gamma_ = None
        self._check_params()

    def _check_params(self):
        super()._check_params()
        given = [k for k in ("gamma", "sigma", "bandwidth") if getattr(self, k) is not None]
        if len(given) > 1:
            raise ValueError(f"give only one of gamma, sigma, bandwidth (got {', '.join(given)})")
        if self.gamma is not None:
            check_scalar(self.gamma, "gamma", low=0)
        if self.sigma is not None:
            check_scalar(self.sigma, "sigma", low=0)
        if self.bandwidth is not None:
            self.bandwidth = check_option(self.bandwidth, "bandwidth", RULES)

    def _reset_fitted(self):
        self.gamma_ = None

    def fit(self, X):
        """Resolve gamma (``gamma_``) from X when a bandwidth rule is set; returns self."""
        from .._validation import check_array

        self._check_params()
        X = check_array(X, "X")
        if self.bandwidth is not None:
            self.gamma_ = gamma_from_rule(X, self.bandwidth)
        else:
            self.gamma_ = self._static_gamma(X.shape[1])
        return self

    def _static_gamma(self, d):
        if self.gamma is not None:
            return float(self.gamma)
        if self.sigma is not None:
            return 1.0 / (2.0 * float(self.sigma) ** 2)
        return 1.0 / d

    def _ensure_fitted(self, X):
        if self.bandwidth is not None and self.gamma_ is None:
            self.gamma_ = gamma_from_rule(X, self.bandwidth)

    def effective_gamma(self, d):
        """The gamma used for data with ``d`` features."""
        if self.bandwidth is not None:
            if self.gamma_ is None:
                raise ValueError("bandwidth rule not resolved yet: call fit(X) first")
            return self.gamma_
        return self._static_gamma(d)

    def _prepare(self, X, Y, same):
        # Distances are translation invariant: centring first keeps the GEMM form accurate for
        # data far from the origin (in float32 the cancellation of ||x||^2 + ||z||^2 - 2<x, z>
        # would otherwise cost digits in proportion to ||x||^2 / ||x - z||^2).
        if same:
            mean = X.mean(axis=0, dtype=np.float64)
        else:
            mean = (X.sum(axis=0, dtype=np.float64) + Y.sum(axis=0, dtype=np.float64)) / (
                X.shape[0] + Y.shape[0])
        Xc = X - mean.astype(X.dtype)
        Yc = Xc if same else Y - mean.astype(Y.dtype)
        xsq = np.einsum("ij,ij->i", Xc, Xc)
        ysq = xsq if same else np.einsum("ij,ij->i", Yc, Yc)
        return Xc, Yc, xsq, ysq

    def _fill(self, Xb, Y, ctx, out, row0, same):
        Xc, Yc, xsq, ysq = ctx
        np.dot(Xc[row0:row0 + len(Xb)], Yc.T, out=out)
        gamma = out.dtype.type(self.effective_gamma(Xb.shape[1]))
        _cpu.scaled_sq_dist_from_inner_inplace(out, xsq[row0:row0 + len(Xb)], ysq, -gamma)
        _cpu.exp_inplace(out)
        if same:  # exact zero distance of x_i to itself (as scikit-learn): k(x_i, x_i) = 1
            idx = np.arange(len(Xb))
            out[idx, row0 + idx] = 1.0

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)

    def _cuda_entries(self, X):
        # the GPU sums differences, so x_i - x_i is exactly 0 and k(x_i, x_i) exactly 1
        from . import _cuda

        return _cuda.rbf_entries, (X.dtype.type(self.effective_gamma(X.shape[1])),)


class LaplacianKernel(VectorKernel):
    """Laplacian kernel k(x, z) = exp(-gamma ||x - z||_1).

    Parameters
    ----------
    gamma : float > 0, optional
        Default: 1 / n_features (scikit-learn's ``laplacian_kernel``).
    backend : {"auto", "cpu", "cuda"}
    """

    name = "laplacian"
    has_cuda = True

    def __init__(self, gamma=None, backend="auto"):
        self.gamma = gamma
        self.backend = backend
        self._check_params()

    def _check_params(self):
        super()._check_params()
        if self.gamma is not None:
            check_scalar(self.gamma, "gamma", low=0)

    def _gamma(self, d):
        return 1.0 / d if self.gamma is None else float(self.gamma)

    def _fill(self, Xb, Y, ctx, out, row0, same):
        _cpu.l1_distances(Xb, Y, out)
        _cpu.exp_scale_inplace(out, out.dtype.type(-self._gamma(Xb.shape[1])))

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)

    def _cuda_entries(self, X):
        from . import _cuda

        return _cuda.laplacian_entries, (X.dtype.type(self._gamma(X.shape[1])),)
