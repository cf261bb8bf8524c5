"""Kernel values at the edges of the floating range: exact where they exist, never a silent inf.

The rule of the unbounded kernels (linear, polynomial, additive-chi2; the RBF and chi2 modules
rescale their own intermediates): an entry whose true value is a finite float is computed (the
data rescaled by powers of two where an intermediate result such as ``<x, z>`` would overflow
or underflow: exact, as only exponents change); an entry whose
true value lies beyond the largest float is ``±inf``, and the call warns with a
``RuntimeWarning`` that names the kernel and the data's scale. It warns rather than raises: as
with NumPy's overflow, the other entries are right, and
``warnings.simplefilter("error", RuntimeWarning)`` turns it into an error. The check of the
result costs a pass over it only where the data's scale lets a value overflow.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._validation import is_sparse


def max_abs(A) -> float:
    """max |A| of a dense or CSR array (0.0 when empty)."""
    data = A.data if is_sparse(A) else A
    # two reductions, no |A| temporary
    return max(float(data.max()), -float(data.min())) if data.size else 0.0


def times_power_of_two(A, k: int):
    """A * 2^k, exactly (``np.ldexp``: 2^k itself need not be a float of A's dtype)."""
    if is_sparse(A):
        A = A.copy()
        A.data = np.ldexp(A.data, k)
        return A
    return np.ldexp(A, k)


def exponent(a: float) -> int:
    """e with a = m 2^e, 0.5 <= m < 1 (0 for a = 0): a * 2^-e lies in [0.5, 1)."""
    return int(np.frexp(a)[1]) if a > 0 else 0


def log_or_minus_inf(a: float) -> float:
    return math.log(a) if a > 0 else -math.inf


class ProductScale:
    """How to compute ``factor * <x, z>`` for the rows of X and Y without overflow.

    When d max|x| max|z| could exceed the largest float, or max|x| max|z| is so small that
    the products would lose digits below the smallest normal float (then ``factor``, a large
    gamma, may bring them back to order one), X and Y are brought to [0.5, 1) by powers of two
    (``fx``, ``fy``) and the products multiplied back with ``np.ldexp``, which saturates to
    ±inf only where the true value is beyond the range.
    """

    def __init__(self, X, Y):
        self.ax = max_abs(X)
        self.ay = self.ax if Y is None else max_abs(Y)
        d = X.shape[1]
        info = np.finfo(X.dtype)
        self.log_bound = math.log(d) + log_or_minus_inf(self.ax) + log_or_minus_inf(self.ay)
        small = math.log(float(info.tiny) / float(info.eps))
        self.scaled = (
            self.log_bound > math.log(float(info.max) / 4)
            or -math.inf < self.log_bound - math.log(d) < small
        )
        self.fx = exponent(self.ax) if self.scaled else 0
        self.fy = exponent(self.ay) if self.scaled else 0
        source = X if Y is None else Y
        self.Ys = times_power_of_two(source, -self.fy) if self.scaled else None

    def products(self, Xb, Y, out, factor=1.0):
        """``out = factor * Xb @ Y.T`` (dense or CSR rows; ``Y`` as given to the constructor)."""
        from .base import cross_products

        if not self.scaled:
            cross_products(Xb, Y, out)
            return scale_values(out, factor)
        cross_products(times_power_of_two(Xb, -self.fx), self.Ys, out)
        return times_factor(out, factor, self.fx + self.fy)


def scale_values(values, factor: float):
    """``values * factor`` in place; through :func:`times_factor` when ``factor`` is no normal
    float of their dtype (gamma = 1e50 on float32 data)."""
    if factor == 1.0:
        return values
    info = np.finfo(values.dtype)
    if float(info.tiny) <= factor <= float(info.max):
        values *= values.dtype.type(factor)
        return values
    return times_factor(values, factor, 0)


def times_factor(values, factor: float, k: int):
    """``values * factor * 2^k`` in place, with one rounding of ``factor``: saturates to ±inf
    (or 0) only where the true product is beyond the range."""
    m, e = np.frexp(factor)  # factor = (2m) 2^(e-1), 1 <= 2m < 2
    if m != 0.5:
        values *= values.dtype.type(2 * m)
    with np.errstate(over="ignore", under="ignore"):
        np.ldexp(values, k + int(e) - 1, out=values)
    return values


def sq_norms_exact(X, row_sq_norms, factor=1.0):
    """``factor * ||x_i||^2`` of every row, computed on the data scaled by a power of two where
    the squares would overflow or lose digits below the smallest normal float."""
    ax = max_abs(X)
    info = np.finfo(X.dtype)
    log_sq = 2 * log_or_minus_inf(ax)
    if ax == 0.0 or math.log(float(info.tiny) / float(info.eps)) <= log_sq <= math.log(
        float(info.max) / (4 * X.shape[1])
    ):
        return scale_values(row_sq_norms(X), factor)
    f = exponent(ax)
    return times_factor(row_sq_norms(times_power_of_two(X, -f)), factor, 2 * f)


def warn_if_not_finite(values, kernel: str, scale: float, stacklevel: int = 4):
    """Warn when ``values`` (a Gram block or diagonal) holds ±inf: the true values exceed the
    floating range at this scale of the data."""
    if np.isfinite(values).all():
        return
    dtype = np.asarray(values).dtype
    warnings.warn(
        f"{kernel} kernel values exceed the {dtype} range (largest "
        f"{float(np.finfo(dtype).max):.3g}) for data at scale {scale:.3g} (largest |x|): those "
        "entries are inf; rescale the data "
        "(e.g. divide it by its largest absolute value) or use a kernel that stays bounded "
        "(rbf, laplacian)",
        RuntimeWarning,
        stacklevel=stacklevel,
    )
