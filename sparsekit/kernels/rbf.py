"""Gaussian (RBF) and Laplacian kernels.

- rbf / gaussian: k(x, z) = exp(-gamma ||x - z||_2^2), gamma = 1 / (2 sigma^2) when ``sigma`` is
  given, chosen by a rule (see :mod:`sparsekit.kernels.bandwidth`) when ``bandwidth`` is given,
  and 1 / n_features by default (scikit-learn's ``rbf_kernel``).
- laplacian: k(x, z) = exp(-gamma ||x - z||_1), gamma defaults to 1 / n_features
  (scikit-learn's ``laplacian_kernel``).

The squared distances use ||x||^2 + ||z||^2 - 2 <x, z> on centred data (the mean of X and Y
removed, which leaves distances unchanged and avoids cancellation for data far from the origin)
with the cross term from BLAS, clipped at 0, scaled in a Numba loop in place, then exponentiated
in place, so a Gram block needs no memory beyond its own. The whole Gram of dense X with itself
computes only its upper triangle, in row strips, and copies each strip below the diagonal
(:mod:`sparsekit.kernels._sym_gram`). On sparse rows the L1 distances and the
cross term come from the pairs of non-zeros that share a column
(:mod:`sparsekit.kernels._sparse_cpu`). Sparse input is not centred (that would densify it): the
norms and the cross term come from sparse products, as in scikit-learn's ``euclidean_distances``.

Data whose squared distances would overflow (entries beyond about L = sqrt(max float / (64 d)),
1e153 / sqrt(d) in float64) or underflow (all entries below 1 / L) is multiplied by a power of two
2^-f first, so that ``max |x|`` lies in [0.5, 1), and gamma by 2^(2f) (exact: ||x - z||^2 =
||x 2^-f - z 2^-f||^2 2^(2f)). Where gamma 2^(2f) overflows it is clipped to the largest float,
and where it underflows it becomes 0: the correct limits k = 1 at distance 0 and 0 elsewhere,
and k = 1 everywhere.

Bandwidth rules (``bandwidth="median"``, ...) are resolved by :meth:`RBFKernel.fit` and stored
in ``gamma_``, together with the scale of the data they were resolved on: gamma ~ 1 / max|x|^2
may lie outside the float range (float64 data beyond about 1e±154) and the kernel still
evaluates it exactly, by the rescaling above (:mod:`sparsekit.kernels.bandwidth`). An unfitted
kernel with a rule computes gamma for each call from the call's reference points (``Y``, or
``X`` when ``Y`` is omitted) without storing it, so results do not depend on which call comes
first and concurrent calls are safe.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from .._runtime.pools import run_blocks
from .._runtime.small_blas import one_blas_thread
from .._typing import DataLike
from .._validation import check_option, check_scalar, is_sparse
from . import _cpu, _sym_gram
from ._range import exponent, max_abs, times_power_of_two
from .bandwidth import (
    RULES,
    gamma_parts_from_rule,
    is_normal,
    out_of_range_message,
    parts_to_float,
)
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
        Bandwidth; gamma = 1 / (2 sigma^2). Exclusive with ``gamma`` and ``bandwidth``. Any
        float: where gamma is no float64 (sigma beyond about 1e+154 or below 1e-154) the
        kernel evaluates it exactly with the data's scale, as for the rules.
    bandwidth : {"median", "mean-sq-dist", "scale"}, optional
        Rule that sets gamma from the data in :meth:`fit` (stored in ``gamma_``). Before
        ``fit``, each call computes gamma from its reference points (``Y``, or ``X`` when
        ``Y`` is omitted) and stores nothing: ``kernel(X[:1], X)`` equals ``kernel(X)[:1]``,
        and ``kernel(X[:1])`` (one point, no distance) is an error asking for ``fit``.
        The rules are scale-equivariant and exact at any scale of the data: the Gram matrix of
        ``X * 1e-300`` equals that of ``X``.
    backend : {"auto", "cpu", "cuda"}, default "auto"
        Where the Gram blocks are computed: ``"auto"`` takes CUDA only when a device is usable
        and the block is large enough (:func:`~sparsekit.kernels.base.resolve_backend`).

    Attributes
    ----------
    gamma_ : float or None
        The resolved gamma (after :meth:`fit`). For data where a rule's gamma lies outside the
        float64 range (beyond about 1e±154) it is ``inf`` or ``0.0``: the kernel keeps the exact
        value with the data's scale and evaluates it exactly, but :meth:`effective_gamma` refuses.
    """

    name = "rbf"
    has_cuda = True
    sparse_native = True

    def __init__(
        self,
        gamma: float | None = None,
        sigma: float | None = None,
        bandwidth: str | None = None,
        backend: str = "auto",
    ):
        self.gamma: float | None = gamma
        self.sigma: float | None = sigma
        self.bandwidth: str | None = bandwidth
        self.backend: str = backend
        self.gamma_: float | None = None
        self._gamma_parts: tuple[float, int] | None = None
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
        self._gamma_parts = None

    def _set_rule_gamma(self, X):
        # (g, e): gamma = g 2^(-2e), exact even where gamma is no float
        self._gamma_parts = gamma_parts_from_rule(X, self.bandwidth)
        self.gamma_ = parts_to_float(*self._gamma_parts)

    def fit(self, X: DataLike, y: object = None) -> RBFKernel:
        """Resolve gamma (``gamma_``) from X when a bandwidth rule is set.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            The data the rule is applied to.
        y : None
            Ignored.

        Returns
        -------
        self
            The kernel.
        """
        from .._validation import check_array

        self._check_params()
        X = check_array(X, "X", accept_sparse=True)
        if self.bandwidth is not None:
            self._set_rule_gamma(X)
        else:
            self.gamma_ = self._static_gamma(X.shape[1])
            self._gamma_parts = None
        return self

    def _static_gamma(self, d):
        if self.gamma is not None:
            return float(self.gamma)
        if self.sigma is not None:
            return parts_to_float(*_sigma_parts(self.sigma))
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
                kernel._set_rule_gamma(ref)
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

    def effective_gamma(self, d: int) -> float:
        """Return the gamma used for data with ``d`` features.

        Parameters
        ----------
        d : int
            The number of features.

        Returns
        -------
        float
            The gamma.

        Raises
        ------
        ValueError
            A bandwidth rule (or ``sigma``) gave a gamma outside the float64 range (the message
            names the data's scale, or sigma; the kernel itself still evaluates it exactly).
        """
        if self.bandwidth is not None:
            if self.gamma_ is None:
                raise ValueError("bandwidth rule not resolved yet: call fit(X) first")
            parts = self._rule_parts()
            if parts is not None and not is_normal(self.gamma_):
                raise ValueError(out_of_range_message(self.bandwidth, *parts))
            return self.gamma_
        gamma = self._static_gamma(d)
        if self.sigma is not None and not is_normal(gamma):
            raise ValueError(
                f"sigma={float(self.sigma):.3g} gives gamma = 1 / (2 sigma^2) outside the float64 "
                "range; rescale the data and sigma by one factor (the kernel itself evaluates "
                "it exactly)"
            )
        return gamma

    def _rule_parts(self):
        """``(g, e)`` of the resolved rule (gamma_ = g 2^(-2e)), or None when there is none or
        ``gamma_`` was assigned since."""
        parts = getattr(self, "_gamma_parts", None)
        if self.bandwidth is None or self.gamma_ is None or parts is None:
            return None
        return parts if parts_to_float(*parts) == self.gamma_ else None

    def _gamma_at(self, d, f, dtype) -> float:
        """Gamma for the data multiplied by 2^-f, clipped to the largest float of ``dtype``."""
        parts = self._rule_parts()
        if parts is None and self.sigma is not None:  # sigma excludes gamma and bandwidth
            parts = _sigma_parts(self.sigma)
        g, e = parts if parts is not None else (self.effective_gamma(d), 0)
        return min(parts_to_float(g, e - f), float(np.finfo(dtype).max))

    def _prepare(self, X, Y, same):
        f = _rescale_exponent(X, None if same else Y)
        gamma = self._gamma_at(X.shape[1], f, X.dtype)
        if f:
            X = times_power_of_two(X, -f)
            Y = X if same else times_power_of_two(Y, -f)
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
        gamma = out.dtype.type(gamma)
        n = Xb.shape[0]
        # the whole Gram of X with itself is symmetric: its upper triangle is computed, in
        # strips, and copied below (half the flops and half the element-wise work)
        whole_sym = same and n == Xc.shape[0]
        step = n if is_sparse(Xc) or whole_sym else fill_block_rows(n, out.shape[1], out.itemsize)
        if whole_sym and not is_sparse(Xc) and n >= SYM_STRIPS_MIN_ROWS:
            # the upper triangle in row strips (product, distances, exp), each copied below
            _sym_gram.rbf_gram_upper(Xc, xsq, -gamma, out)
        elif step >= n:  # sparse rows, a Gram of one block: three passes, threaded inside
            cross_products(Xc[row0 : row0 + n], Yc, out)
            _cpu.scaled_sq_dist_from_inner_inplace(out, xsq[row0 : row0 + n], ysq, -gamma)
            _cpu.exp_inplace(out)
        else:
            # one pass per row block (product, distances, exp while the block is in cache),
            # blocks shared out dynamically: see fill_block_rows
            def block(i):
                lo, hi = i * step, min(n, (i + 1) * step)
                part = out[lo:hi]
                np.dot(Xc[row0 + lo : row0 + hi], Yc.T, out=part)
                _cpu.scaled_sq_dist_from_inner_inplace(
                    part, xsq[row0 + lo : row0 + hi], ysq, -gamma
                )
                _cpu.exp_inplace(part, n_threads=1)

            run_blocks(block, -(-n // step))
        if same:  # exact zero distance of x_i to itself (as scikit-learn): k(x_i, x_i) = 1
            idx = np.arange(Xb.shape[0])
            out[idx, row0 + idx] = 1.0

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)

    def _cuda_entries(self, X):
        # the GPU sums differences, so x_i - x_i is exactly 0 and k(x_i, x_i) exactly 1
        from . import _cuda

        return _cuda.rbf_entries, (X.dtype.type(self._gamma_at(X.shape[1], 0, X.dtype)),)


#: rows from which the dense Gram of X with itself is computed from its upper triangle in strips
#: (``_sym_gram``); below, one symmetric product (``syrk``) and two passes cost less (measured
#: at d = 54, one thread: 1,000 rows 2.5 ms against 2.9 ms, 1,500 5.7 against 6.3, 2,000 12.9
#: against 10.7, the strips ahead from there on)
SYM_STRIPS_MIN_ROWS = 2000

#: bytes of Gram output per block of the dense CPU pass (product, distances, exp): a block
#: stays in the cache between the three steps
FILL_BLOCK_BYTES = 1 << 20

#: fewest rows per block: every block's product packs all of Y again
FILL_MIN_ROWS = 32


def fill_block_rows(n_rows: int, n_cols: int, itemsize: int) -> int:
    """Rows per block of the dense RBF Gram pass: about ``FILL_BLOCK_BYTES`` of output, at
    least ``FILL_MIN_ROWS`` rows (all of them when fewer).

    The blocks depend only on the shape, never on the thread count, so a Gram matrix is the
    same whatever the threads. They are run by :func:`sparsekit._runtime.pools.run_blocks`, each on
    one thread and one BLAS thread, the threads taking the next block as they finish; the former
    three passes (a multi-threaded BLAS product, then distances and exp split evenly between
    the threads) waited at each pass for the slowest thread, which on a machine where another
    process holds a core is the one sharing that core. The whole Gram of X with itself in one
    call is symmetric and is computed from its upper triangle instead
    (:mod:`sparsekit.kernels._sym_gram`).
    """
    rows = FILL_BLOCK_BYTES // max(1, n_cols * itemsize)
    return int(min(max(1, n_rows), max(FILL_MIN_ROWS, rows)))


def _column_sums(A):
    """Σ_i A[i] in float64: for float64 a matrix-vector product (BLAS), several times faster
    than NumPy's ``sum(axis=0)`` over the rows of a C-contiguous array with few columns.

    On one BLAS thread: a threaded call leaves OpenBLAS's threads spinning through the Gram
    blocks that follow (RBF Gram of 5,000 against 5,000 points on two threads: 0.139 s for
    the blocks after a threaded sum, 0.107 s after this one; ``benchmarks/README.md``)."""
    if A.dtype == np.float64:
        with one_blas_thread():
            return np.ones(A.shape[0]) @ A
    return A.sum(axis=0, dtype=np.float64)


def _rescale_exponent(X, Y) -> int:
    """f with x 2^-f at a safe scale (max |x| 2^-f in [0.5, 1)), or 0 when no rescaling is needed.

    After centring every |entry| is at most 2 max|x|, so the squared norms and the cross term
    stay below d (2 max|x|)^2 < max float / 16 when max|x| <= L = sqrt(max float / (64 d)); from
    max|x| >= 1 / L on, the squares of the largest entries are at least 64 d / max float, a normal
    float in both dtypes (below, squared distances would underflow: at 1e-300 in float64, or
    1e-38 in float32, every one of them is 0).
    """
    amax = max(max_abs(X), 0.0 if Y is None else max_abs(Y))
    limit = np.sqrt(float(np.finfo(X.dtype).max) / (64.0 * X.shape[1]))
    if amax == 0.0 or 1.0 / limit <= amax <= limit:
        return 0
    return exponent(amax)


def _sigma_parts(sigma) -> tuple[float, int]:
    """``(g, e)`` with 1 / (2 sigma^2) = g 2^(-2e) (sigma = m 2^e, g = 1 / (2 m^2)): exact
    where sigma^2 or gamma is no float64 (sigma beyond about 1e+154 or below 1e-154)."""
    m, e = math.frexp(float(sigma))
    return 0.5 / (m * m), e


def _l1_rescale_exponent(X, Y) -> int:
    """f with max|x| 2^-f in [0.5, 1) where an L1 distance, at most d (max|x| + max|z|), could
    exceed the largest float (then the distances are computed on x 2^-f, exactly, and gamma
    multiplied by 2^f); 0 otherwise."""
    amax = max(max_abs(X), 0.0 if Y is None else max_abs(Y))
    return exponent(amax) if 4.0 * X.shape[1] * amax > float(np.finfo(X.dtype).max) else 0


def _needs_rescale(X, Y) -> bool:
    return _rescale_exponent(X, Y) != 0


class LaplacianKernel(VectorKernel):
    """Laplacian kernel k(x, z) = exp(-gamma ||x - z||_1).

    Where an L1 distance could exceed the largest float (data near it), the distances are
    computed on the data scaled by a power of two 2^-f and gamma multiplied by 2^f (exact), so
    a small gamma still gives the true values rather than exp(-gamma inf) = 0.

    Parameters
    ----------
    gamma : float > 0, optional
        Default: 1 / n_features (scikit-learn's ``laplacian_kernel``). A gamma beyond the
        float32 range multiplies float32 distances in float64: k(x, x) = 1 at any gamma.
    backend : {"auto", "cpu", "cuda"}, default "auto"
        Where the Gram blocks are computed: ``"auto"`` takes CUDA only when a device is usable
        and the block is large enough (:func:`~sparsekit.kernels.base.resolve_backend`).
    """

    name = "laplacian"
    has_cuda = True
    sparse_native = True

    def __init__(self, gamma: float | None = None, backend: str = "auto"):
        self.gamma: float | None = gamma
        self.backend: str = backend
        self._check_params()

    def _check_params(self):
        super()._check_params()
        if self.gamma is not None:
            check_scalar(self.gamma, "gamma", low=0)

    def _gamma(self, d):
        return 1.0 / d if self.gamma is None else float(self.gamma)

    def _resolved(self, X, Y):
        # the GPU path has no rescaling
        if str(self.backend).strip().lower() == "cpu" or not _l1_rescale_exponent(X, Y):
            return self
        kernel = copy.copy(self)
        kernel.backend = "cpu"
        return kernel

    def _prepare(self, X, Y, same):
        f = _l1_rescale_exponent(X, None if same else Y)
        return f, (times_power_of_two(Y, -f) if f else Y)

    def _fill(self, Xb, Y, ctx, out, row0, same):
        f, Ys = ctx
        if f:
            Xb = times_power_of_two(Xb, -f)
        if is_sparse(Xb):  # only the non-zeros sharing a column, nothing densified
            from . import _sparse_cpu

            _sparse_cpu.csr_l1_distances(Xb, Ys, out)
        else:
            _cpu.l1_distances(Xb, Ys, out)
        with np.errstate(over="ignore"):  # gamma 2^f beyond float64: the largest float
            gamma = min(float(np.ldexp(self._gamma(Xb.shape[1]), f)), float(np.finfo(float).max))
        _cpu.exp_scale_inplace(out, -gamma)

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)

    def _cuda_entries(self, X):
        from . import _cuda

        return _cuda.laplacian_entries, (_cpu.scalar_of(X.dtype, self._gamma(X.shape[1])),)


__all__ = ["RBFKernel", "LaplacianKernel"]
