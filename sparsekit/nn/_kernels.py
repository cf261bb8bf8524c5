"""The kernels of :class:`~sparsekit.nn.NystromLayer` written with ``keras.ops``.

Each formula takes its constants from a sparsekit kernel object (the one that computes the
landmark Gram matrix and the initial W), so the layer and the library evaluate the same
function: :func:`formula` returns the resolved constants (what ``get_kernel(name, **params)``
needs to rebuild the kernel with nothing left to the data) and a differentiable function
``f(Z, L) -> (len(Z), len(L))`` of two row blocks.

Formulas (the library's definitions, :mod:`sparsekit.kernels`):

- linear: <z, l>;
- polynomial: (gamma <z, l> + coef0)^degree;
- rbf: exp(-gamma ||z - l||^2), the squared distance as ||z - m||^2 + ||l - m||^2 - 2 <z - m, l - m>
  with m the landmarks' mean (translation invariance; centring keeps float32 accurate away from
  the origin), clipped at 0;
- laplacian: exp(-gamma ||z - l||_1);
- additive-chi2: -sum_k (z_k - l_k)^2 / (z_k + l_k), terms with z_k + l_k = 0 count 0 (their
  gradient too);
- chi2: exp(-gamma sum_k (z_k - l_k)^2 / (z_k + l_k)).

Large data: as in :mod:`sparsekit.kernels.rbf`, the rbf, laplacian and chi2 formulas evaluate on
z / s and l / s, with s = max |l| taken from the landmarks at each call (at least 1, at most a
quarter of the largest float, whose reciprocal is still a normal number: XLA on CPU flushes
subnormals to 0), and scale back: ||z - l||^2 = s^2 ||z/s - l/s||^2, while ||z - l||_1 and the
chi2 sums are homogeneous of degree 1 (the division rounds each entry once). Without it, float64
data near 1e154 (float32 near 1e19) gives inf - inf = NaN in the expanded squared distance, and
float32 data near 1e38 inf / inf = NaN in the chi2 terms, where the kernel is finite. The
exponent's coefficient gamma s^2 (gamma s) is computed as (sqrt(gamma) s)^2
(sqrt(gamma) s sqrt(gamma)), so that a gamma below the smallest normal float (gamma ~ 1 / scale
for float32 data near 1e38) is not flushed to 0 where the data make it count, and clipped to the
largest float: at distance 0 the exponent is then 0 (k = 1, gradient finite), elsewhere it may
overflow (k = 0). s carries no gradient: the kernel does not depend on it.

Where |z_k - l_k| = 0 (an input equal to a landmark in a coordinate) the Laplacian kernel has no
derivative; back-propagation then uses the backend's subgradient of |t| at 0 (JAX: 1).

The L1 and chi2 formulas form a (batch, landmarks, features) tensor: memory grows as B·L·D.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes

from ..kernels.chi2 import AdditiveChi2Kernel, Chi2Kernel
from ..kernels.linear import LinearKernel, PolynomialKernel
from ..kernels.rbf import LaplacianKernel, RBFKernel


def _ops():
    from keras import ops

    return ops


def _linear(Z, L):
    return _ops().matmul(Z, _ops().transpose(L))


def _scaled(Z, L):
    """``(Z / s, L / s, s)`` with s = max |L| clipped to [1, largest float / 4] (module notes)."""
    ops = _ops()
    top = ops.max(ops.abs(L))
    s = ops.clip(top, 1.0, _largest(top) / 4)
    return Z / s, L / s, ops.stop_gradient(s)


def _largest(x):
    return float(ml_dtypes.finfo(_ops().dtype(x)).max)  # Keras depends on ml_dtypes


def _coefficient(gamma, s, degree):
    """gamma s^degree in the dtype of s, clipped to the largest float (module notes)."""
    r = math.sqrt(gamma)
    c = _ops().square(r * s) if degree == 2 else (r * s) * r
    return _ops().minimum(c, _largest(s))


def _sq_dist(Z, L):
    ops = _ops()
    m = ops.mean(L, axis=0, keepdims=True)
    Zc, Lc = Z - m, L - m
    zsq = ops.sum(Zc * Zc, axis=1, keepdims=True)
    lsq = ops.transpose(ops.sum(Lc * Lc, axis=1, keepdims=True))
    d = zsq + lsq - 2.0 * ops.matmul(Zc, ops.transpose(Lc))
    return ops.maximum(d, 0.0)


def _chi2_sums(Z, L):
    ops = _ops()
    a, b = ops.expand_dims(Z, 1), ops.expand_dims(L, 0)
    den = a + b
    pos = den > 0
    safe = ops.where(pos, den, ops.ones_like(den))
    return ops.sum(ops.where(pos, ops.square(a - b) / safe, ops.zeros_like(den)), axis=-1)


def _l1(Z, L):
    ops = _ops()
    return ops.sum(ops.abs(ops.expand_dims(Z, 1) - ops.expand_dims(L, 0)), axis=-1)


def _linear_formula(kernel, d):
    return {}, _linear


def _polynomial_formula(kernel, d):
    gamma = float(kernel._gamma(d))  # the kernel's own default rule (1 / n_features)
    degree, coef0 = int(kernel.degree), float(kernel.coef0)

    def f(Z, L):
        return _ops().power(gamma * _linear(Z, L) + coef0, degree)

    return {"degree": degree, "gamma": gamma, "coef0": coef0}, f


def _rbf_formula(kernel, d):
    gamma = float(kernel.effective_gamma(d))

    def f(Z, L):
        Zs, Ls, s = _scaled(Z, L)
        return _ops().exp(-_sq_dist(Zs, Ls) * _coefficient(gamma, s, 2))

    return {"gamma": gamma}, f


def _laplacian_formula(kernel, d):
    gamma = float(kernel._gamma(d))  # the kernel's own default rule (1 / n_features)

    def f(Z, L):
        Zs, Ls, s = _scaled(Z, L)
        return _ops().exp(-_l1(Zs, Ls) * _coefficient(gamma, s, 1))

    return {"gamma": gamma}, f


def _additive_chi2_formula(kernel, d):
    def f(Z, L):
        Zs, Ls, s = _scaled(Z, L)
        return -_chi2_sums(Zs, Ls) * s

    return {}, f


def _chi2_formula(kernel, d):
    gamma = float(kernel.gamma)

    def f(Z, L):
        Zs, Ls, s = _scaled(Z, L)
        return _ops().exp(-_chi2_sums(Zs, Ls) * _coefficient(gamma, s, 1))

    return {"gamma": gamma}, f


#: kernel class -> ``(kernel, n_features) -> (resolved params, f(Z, L))``
FORMULAS: dict[Any, Callable] = {
    LinearKernel: _linear_formula,
    PolynomialKernel: _polynomial_formula,
    RBFKernel: _rbf_formula,
    LaplacianKernel: _laplacian_formula,
    AdditiveChi2Kernel: _additive_chi2_formula,
    Chi2Kernel: _chi2_formula,
}


def supported_names() -> list[str]:
    """Registry names of the kernels with a formula here."""
    return [cls.name for cls in FORMULAS]


def has_formula(kernel) -> bool:
    """Whether ``kernel`` (an object) has a ``keras.ops`` formula (its exact class is listed:
    a subclass may change the formula)."""
    return type(kernel) in FORMULAS


def formula(kernel, d: int):
    """``(name, params, f)``: the registry name, the resolved constants and ``f(Z, L)`` of
    ``kernel`` on data with ``d`` features (a bandwidth rule must be resolved first)."""
    params, f = FORMULAS[type(kernel)](kernel, d)
    return kernel.name, params, f
