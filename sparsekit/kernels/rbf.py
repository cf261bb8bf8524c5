"""Gaussian (RBF) and Laplacian kernels.

- rbf / gaussian: k(x, z) = exp(-gamma ||x - z||_2^2), gamma = 1 / (2 sigma^2) when ``sigma`` is
  given, chosen by a rule (see :mod:`sparsekit.kernels.bandwidth`) when ``bandwidth`` is given,
  and 1 / n_features by default (scikit-learn's ``rbf_kernel``).
- laplacian: k(x, z) = exp(-gamma ||x - z||_1), gamma defaults to 1 / n_features
  (scikit-learn's ``laplacian_kernel``).

The squared distances use ||x||^2 + ||z||^2 - 2 <x, z> on centred data (the mean of X and Y
removed, which leaves distances unchanged and avoids cancellation for data far from the origin)
with the cross term from BLAS, clipped at 0, scaled in a Numba loop in place, then exponentiated in place, so a Gram block needs no
memory beyond its own. On sparse rows the L1 distances and the cross term come from the pairs
of non-zeros that share a column (:mod:`sparsekit.kernels._sparse_cpu`). Sparse input is not
centred (that would densify it): the norms and the
cross term come from sparse products, as in scikit-learn's ``euclidean_distances``.

Data whose squared distances would overflow (entries beyond about sqrt(max float / (64 d)),
1e153 / sqrt(d) in float64) is divided by a power of two s first and gamma multiplied by s^2
(exact: ||x/s - z/s||^2 s^2 = ||x - z||^2); when gamma s^2 itself overflows it is clipped to the
largest float, which gives the correct limits k = 1 at distance 0 and 0 elsewhere.

Bandwidth rules (``bandwidth="median"``, ...) are resolved by :meth:`RBFKernel.fit` and stored
in ``gamma_``; an unfitted kernel with a rule computes gamma for each call from the call's
reference points (``Y``, or ``X`` when ``Y`` is omitted) without storing it, so results do not
depend on which call comes first and concurrent calls are safe.
"""
from __future__ import annotations

import copy

import numpy as np

from .._validation import is_sparse, check_option, check_scalar
from . import _cpu
from .bandwidth import RULES, gamma_from_rule
from .base import VectorKernel, cross_products, cuda_usable, row_sq_norms


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
        Rule that sets gamma from the data in :meth:`fit` (stored in ``gamma_``). Before
        ``fit``, each call computes gamma from its reference points (``Y``, or ``X`` when
        ``Y`` is omitted) and stores nothing: ``kernel(X[:1], X)`` equals ``kernel(X)[:1]``,
        and ``kernel(X[:1])`` (one point, no distance) is an error asking for ``fit``.
    backend : {"auto", "cpu", "cuda"}
    """

    name = "rbf"
    has_cuda = True
    sparse_native = True

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

    def fit(self, X, y=None):
        """Resolve gamma (``gamma_``) from X when a bandwidth rule is set; returns self."""
        from .._validation import check_array

        self._check_params()
        X = check_array(X, "X", accept_sparse=True)
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

    def _resolved(self, X, Y):
        # only the GPU path needs to know now (it has no rescaling); the CPU path's _prepare
        # scans the data for it anyway, so it is scanned once
        rescale = self._may_use_gpu(X) and _needs_rescale(X, Y)
        if (self.bandwidth is None or self.gamma_ is not None) and not rescale:
            return self
        kernel = copy.copy(self)
        if self.bandwidth is not None and self.gamma_ is None:
            ref = X if Y is None else Y
            try:
                kernel.gamma_ = gamma_from_rule(ref, self.bandwidth)
            except ValueError as exc:
                raise ValueError(
                    f"{exc}. This kernel was not fitted, so gamma comes from the reference "
                    "points of each call (Y, or X when Y is omitted); call kernel.fit(X_train) "
                    "to fix the bandwidth from training data"
                ) from None
        if rescale:  # the GPU path has no rescaling
            kernel.backend = "cpu"
        return kernel

    def _may_use_gpu(self, X) -> bool:
        backend = str(self.backend).strip().lower()
        return not is_sparse(X) and backend != "cpu" and (backend == "cuda" or cuda_usable())

    def effective_gamma(self, d):
        """The gamma used for data with ``d`` features."""
        if self.bandwidth is not None:
            if self.gamma_ is None:
                raise ValueError("bandwidth rule not resolved yet: call fit(X) first")
            return self.gamma_
        return self._static_gamma(d)

    def _prepare(self, X, Y, same):
        gamma = self.effective_gamma(X.shape[1])
        s = _rescale_factor(X, None if same else Y)
        if s != 1.0:
            inv = X.dtype.type(1.0 / s)
            X = X * inv
            Y = X if same else Y * inv
            gamma = min(gamma * s * s, float(np.finfo(X.dtype).max))
        if is_sparse(X):
            xsq = row_sq_norms(X)
            return X, (X if same else Y), xsq, (xsq if same else row_sq_norms(Y)), gamma
        # Distances are translation invariant: centring first keeps the GEMM form accurate for
        # data far from the origin (in float32 the cancellation of ||x||^2 + ||z||^2 - 2<x, z>
        # would otherwise cost digits in proportion to ||x||^2 / ||x - z||^2).
        if same:
            mean = _column_sums(X) / X.shape[0]
        else:
            mean = (_column_sums(X) + _column_sums(Y)) / (X.shape[0] + Y.shape[0])
        Xc = X - mean.astype(X.dtype)
        Yc = Xc if same else Y - mean.astype(Y.dtype)
        xsq = np.einsum("ij,ij->i", Xc, Xc)
        ysq = xsq if same else np.einsum("ij,ij->i", Yc, Yc)
        return Xc, Yc, xsq, ysq, gamma

    def _fill(self, Xb, Y, ctx, out, row0, same):
        Xc, Yc, xsq, ysq, gamma = ctx
        cross_products(Xc[row0:row0 + Xb.shape[0]], Yc, out)
        gamma = out.dtype.type(gamma)
        _cpu.scaled_sq_dist_from_inner_inplace(out, xsq[row0:row0 + Xb.shape[0]], ysq, -gamma)
        _cpu.exp_inplace(out)
        if same:  # exact zero distance of x_i to itself (as scikit-learn): k(x_i, x_i) = 1
            idx = np.arange(Xb.shape[0])
            out[idx, row0 + idx] = 1.0

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)

    def _cuda_entries(self, X):
        # the GPU sums differences, so x_i - x_i is exactly 0 and k(x_i, x_i) exactly 1
        from . import _cuda

        return _cuda.rbf_entries, (X.dtype.type(self.effective_gamma(X.shape[1])),)


def _column_sums(A):
    """Σ_i A[i] in float64: for float64 a matrix-vector product (BLAS), several times faster
    than NumPy's ``sum(axis=0)`` over the rows of a C-contiguous array with few columns."""
    if A.dtype == np.float64:
        return np.ones(A.shape[0]) @ A
    return A.sum(axis=0, dtype=np.float64)


def _max_abs(A) -> float:
    data = A.data if is_sparse(A) else A
    # two reductions, no |A| temporary
    return max(float(data.max()), -float(data.min())) if data.size else 0.0


def _rescale_factor(X, Y) -> float:
    """A power of two s with ||x/s - z/s||^2 safely finite, or 1.0 when no rescaling is needed.

    After centring every |entry| is at most 2 max|x|, so the squared norms and the cross term
    stay below d (2 max|x|)^2 < max float / 16 when max|x| <= sqrt(max float / (64 d)).
    """
    amax = max(_max_abs(X), 0.0 if Y is None else _max_abs(Y))
    limit = np.sqrt(float(np.finfo(X.dtype).max) / (64.0 * X.shape[1]))
    if amax <= limit:
        return 1.0
    return float(2.0 ** np.ceil(np.log2(amax)))


def _needs_rescale(X, Y) -> bool:
    return _rescale_factor(X, Y) != 1.0


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
    sparse_native = True

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
        if is_sparse(Xb):  # only the non-zeros sharing a column, nothing densified
            from . import _sparse_cpu

            _sparse_cpu.csr_l1_distances(Xb, Y, out)
        else:
            _cpu.l1_distances(Xb, Y, out)
        _cpu.exp_scale_inplace(out, out.dtype.type(-self._gamma(Xb.shape[1])))

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)

    def _cuda_entries(self, X):
        from . import _cuda

        return _cuda.laplacian_entries, (X.dtype.type(self._gamma(X.shape[1])),)
