"""A kernel plugin: subclass VectorKernel and fill Gram blocks."""

import math

import numpy as np

from sparsekit.plugins import VectorKernel
from sparsekit.validation import check_positive


class RationalQuadraticKernel(VectorKernel):
    """k(x, z) = (1 + ||x - z||^2 / (2 alpha l^2))^(-alpha) (Rasmussen & Williams 2006, eq. 4.19).

    A scale mixture of RBF kernels, hence positive definite; the same values as scikit-learn's
    ``sklearn.gaussian_process.kernels.RationalQuadratic(length_scale=l, alpha=alpha)``.

    Notes
    -----
    Finite at any scale of the data and of ``length_scale``: the rows are multiplied by 2^-f,
    the power of two that brings max |x| to [0.5, 1) (only exponents change), so the squared
    distances neither overflow nor underflow, and 1 / l^2 by 2^(2f). Where
    u = ||x - z||^2 / (2 alpha l^2) could exceed the largest float (l tiny next to the data's
    spread), k = exp(-alpha log(1 + u)) is computed from log u instead.
    """

    name = "rational-quadratic"

    def __init__(self, length_scale=1.0, alpha=1.0, backend="auto"):
        self.length_scale = length_scale
        self.alpha = alpha
        self.backend = backend
        self._check_params()

    def _check_params(self):  # runs at construction, in set_params and at every call
        super()._check_params()
        check_positive(self.length_scale, "length_scale")
        check_positive(self.alpha, "alpha")

    def _prepare(self, X, Y, same):  # once per call: the rows at a safe scale, squared norms
        amax = max(np.abs(X).max(initial=0.0), 0.0 if same else np.abs(Y).max(initial=0.0))
        f = int(np.frexp(amax)[1])
        Xs = np.ldexp(X, -f)
        Ys = Xs if same else np.ldexp(Y, -f)
        x_sq = np.einsum("ij,ij->i", Xs, Xs)
        y_sq = x_sq if same else np.einsum("ij,ij->i", Ys, Ys)
        # log of 2^(2f) / (2 alpha l^2); u <= 4 d c as |entries| < 1
        log_c = 2 * f * math.log(2) - math.log(2 * self.alpha) - 2 * math.log(self.length_scale)
        small_u = log_c + math.log(4 * X.shape[1]) < math.log(float(np.finfo(X.dtype).max))
        return Xs, Ys, x_sq, y_sq, log_c, small_u

    def _fill(self, Xb, Y, ctx, out, row0, same):  # the Gram block of the rows Xb, into out
        Xs, Ys, x_sq, y_sq, log_c, small_u = ctx
        rows = slice(row0, row0 + len(Xb))
        np.dot(Xs[rows], Ys.T, out=out)  # squared distances, by BLAS
        out *= -2
        out += x_sq[rows, None]
        out += y_sq[None, :]
        np.maximum(out, 0, out=out)  # rounding can make them slightly < 0
        if same:  # exactly 0 from x_i to itself (rounding would lower k(x_i, x_i) for small l)
            i = np.arange(len(Xb))
            out[i, row0 + i] = 0
        if small_u:
            out *= out.dtype.type(math.exp(log_c))
            out += 1
            out **= out.dtype.type(-self.alpha)
            return
        with np.errstate(divide="ignore"):  # log u, -inf at u = 0
            np.log(out, out=out)
        out += out.dtype.type(log_c)
        np.logaddexp(0, out, out=out)  # log(1 + u) without forming u
        out *= out.dtype.type(-self.alpha)
        np.exp(out, out=out)

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)
