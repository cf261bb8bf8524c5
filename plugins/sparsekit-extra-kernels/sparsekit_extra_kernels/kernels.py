"""Cosine-similarity and sigmoid kernels, built on sparsekit's public kernel base class."""

import numpy as np

from sparsekit.plugins import VectorKernel, check_scalar


def _safe_norms(X):
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    norms[norms == 0] = 1  # a zero vector has zero similarity with everything
    return norms


class CosineKernel(VectorKernel):
    """k(x, z) = <x, z> / (||x|| ||z||), with k = 0 when either vector is zero.

    Same values as scikit-learn's ``cosine_similarity``. PSD (a normalized linear kernel).
    """

    name = "cosine"

    def __init__(self, backend="auto"):
        self.backend = backend
        self._check_params()

    def _prepare(self, X, Y, same):
        xn = _safe_norms(X)
        return xn, (xn if same else _safe_norms(Y))

    def _fill(self, Xb, Y, ctx, out, row0, same):
        xn, yn = ctx
        np.dot(Xb, Y.T, out=out)
        out /= xn[row0 : row0 + len(Xb), None]
        out /= yn[None, :]

    def _diag(self, X):
        return (np.einsum("ij,ij->i", X, X) > 0).astype(X.dtype)


class SigmoidKernel(VectorKernel):
    """k(x, z) = tanh(gamma <x, z> + coef0), gamma = 1 / n_features by default.

    Same values as scikit-learn's ``sigmoid_kernel``. Not positive semi-definite in general.
    """

    name = "sigmoid"

    def __init__(self, gamma=None, coef0=1.0, backend="auto"):
        self.gamma = gamma
        self.coef0 = coef0
        self.backend = backend
        self._check_params()

    def _check_params(self):
        super()._check_params()
        if self.gamma is not None:
            check_scalar(self.gamma, "gamma", low=0)
        check_scalar(self.coef0, "coef0")

    def _scale(self, d):
        return 1.0 / d if self.gamma is None else self.gamma

    def _fill(self, Xb, Y, ctx, out, row0, same):
        np.dot(Xb, Y.T, out=out)
        out *= out.dtype.type(self._scale(Xb.shape[1]))
        out += out.dtype.type(self.coef0)
        np.tanh(out, out=out)

    def _diag(self, X):
        d = np.einsum("ij,ij->i", X, X)
        return np.tanh(d * X.dtype.type(self._scale(X.shape[1])) + X.dtype.type(self.coef0))
