"""Cosine-similarity and sigmoid kernels, built on sparsekit's public kernel base class."""

import numpy as np

from sparsekit.plugins import VectorKernel
from sparsekit.validation import check_scalar


def _unit_rows(X):
    """The rows of X divided by their norms (zero rows stay zero), at any scale of the data.

    Each row is first multiplied by the power of two that brings its largest |entry| to
    [0.5, 1) (only exponents change), so that its squares neither overflow (1e300) nor
    underflow (1e-300, float32 1e-38); the cosine is scale invariant.
    """
    scaled = np.ldexp(X, -np.frexp(np.abs(X).max(axis=1, initial=0.0))[1][:, None])
    norms = np.sqrt(np.einsum("ij,ij->i", scaled, scaled))
    norms[norms == 0] = 1  # a zero vector has zero similarity with everything
    scaled /= norms[:, None]
    return scaled


class CosineKernel(VectorKernel):
    """k(x, z) = <x, z> / (||x|| ||z||), with k = 0 when either vector is zero.

    Same values as scikit-learn's ``cosine_similarity``. PSD (a normalized linear kernel).
    Finite at any scale of the data (each row is brought near 1 by a power of two before its
    norm is taken).
    """

    name = "cosine"

    def __init__(self, backend="auto"):
        self.backend = backend
        self._check_params()

    def _prepare(self, X, Y, same):
        ux = _unit_rows(X)
        return ux, (ux if same else _unit_rows(Y))

    def _fill(self, Xb, Y, ctx, out, row0, same):
        ux, uy = ctx
        np.dot(ux[row0 : row0 + len(Xb)], uy.T, out=out)

    def _diag(self, X):
        return (X != 0).any(axis=1).astype(X.dtype)


class SigmoidKernel(VectorKernel):
    """k(x, z) = tanh(gamma <x, z> + coef0), gamma = 1 / n_features by default.

    Same values as scikit-learn's ``sigmoid_kernel``. Not positive semi-definite in general.
    Finite at any scale of the data: <x, z> is computed on rows scaled by a power of two, so
    a product beyond the float range gives tanh = ±1 (its sign), never NaN.
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

    def _prepare(self, X, Y, same):  # the rows times 2^-f, max |x| in [0.5, 1): exact
        f = int(np.frexp(max(np.abs(X).max(initial=0.0), np.abs(Y).max(initial=0.0)))[1])
        xs = np.ldexp(X, -f)
        return xs, (xs if same else np.ldexp(Y, -f)), f

    def _fill(self, Xb, Y, ctx, out, row0, same):
        xs, ys, f = ctx
        np.dot(xs[row0 : row0 + len(Xb)], ys.T, out=out)
        self._tanh(out, f, Xb.shape[1])

    def _tanh(self, t, f, d):
        """tanh(gamma 2^(2f) t + coef0) in place, gamma = m 2^e: gamma <x, z> saturates to
        ±inf (tanh ±1) only where it is beyond the float range, never inf - inf = NaN."""
        m, e = np.frexp(self._scale(d))
        t *= t.dtype.type(m)
        with np.errstate(over="ignore"):
            np.ldexp(t, 2 * f + int(e), out=t)
        t += t.dtype.type(self.coef0)
        return np.tanh(t, out=t)

    def _diag(self, X):
        xs, _, f = self._prepare(X, X, True)
        return self._tanh(np.einsum("ij,ij->i", xs, xs), f, X.shape[1])
