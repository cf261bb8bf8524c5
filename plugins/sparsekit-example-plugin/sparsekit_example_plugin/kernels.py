"""A kernel plugin: subclass VectorKernel and fill Gram blocks."""

import numpy as np

from sparsekit.plugins import VectorKernel, check_positive


class RationalQuadraticKernel(VectorKernel):
    """k(x, z) = (1 + ||x - z||^2 / (2 alpha l^2))^(-alpha) (Rasmussen & Williams 2006, eq. 4.19).

    A scale mixture of RBF kernels, hence positive definite; the same values as scikit-learn's
    ``sklearn.gaussian_process.kernels.RationalQuadratic(length_scale=l, alpha=alpha)``.
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

    def _prepare(self, X, Y, same):  # once per call: squared norms of the rows
        x_sq = np.einsum("ij,ij->i", X, X)
        return x_sq, (x_sq if same else np.einsum("ij,ij->i", Y, Y))

    def _fill(self, Xb, Y, ctx, out, row0, same):  # the Gram block of the rows Xb, into out
        x_sq, y_sq = ctx
        np.dot(Xb, Y.T, out=out)  # squared distances, by BLAS
        out *= -2
        out += x_sq[row0 : row0 + len(Xb), None]
        out += y_sq[None, :]
        np.maximum(out, 0, out=out)  # rounding can make them slightly < 0
        out *= out.dtype.type(1.0 / (2.0 * self.alpha * self.length_scale**2))
        out += 1
        out **= out.dtype.type(-self.alpha)

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)
