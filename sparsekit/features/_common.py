"""Checks shared by the feature-map estimators (fitted state, feature counts, output width)."""
from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_scalar
from . import _cpu

#: Target bytes of one intermediate row block in ``transform`` (large enough that the GEMM of a
#: block with the normalization runs at full BLAS speed; small next to the output).
BLOCK_BYTES = 64 * 2**20


__all__ = ["check_n_components", "n_frequencies", "fourier_features_into",
           "block_rows"]


def check_n_components(n_components) -> int:
    """Output width of a random Fourier feature map: an integer >= 1."""
    return check_scalar(n_components, "n_components", kind=numbers.Integral, low=1,
                        low_inclusive=True)


def n_frequencies(n_components: int) -> int:
    """Random frequencies behind ``n_components`` features: one per [cos, sin] pair, plus one
    for the single offset cosine of an odd width."""
    return -(-n_components // 2)


def fourier_features_into(P, n_components, offset, out):
    """Write the features of the projections ``P`` (rows, s) into ``out`` (rows, n_components).

    With p = n_components // 2 pairs and s = n_frequencies(n_components)::

        out = s^(-1/2) [cos P[:, :p], sin P[:, :p], sqrt(2) cos(P[:, p] + offset)]

    the last column only for an odd width. Each pair has E[cos cos + sin sin] = k(x - z) and
    the offset cosine (offset ~ U[0, 2 pi), Rahimi & Recht 2008) E[2 cos(.+b) cos(.+b)] =
    k(x - z), so E[phi(x)ᵀ phi(z)] = (p k + (s - p) k) / s = k for every width.
    """
    s = P.shape[1]
    p = n_components // 2
    scale = out.dtype.type(1.0 / np.sqrt(s))
    if s > p:
        last = P[:, p] + out.dtype.type(offset)
        P = np.ascontiguousarray(P[:, :p])
        np.cos(last, out=last)
        out[:, 2 * p] = last * (scale * out.dtype.type(np.sqrt(2.0)))
    if p:
        _cpu.cos_sin_inplace(P, scale, out)
    return out


def block_rows(n_rows: int, n_cols: int, itemsize: int) -> int:
    """Rows per block so that an (rows, n_cols) block holds about ``BLOCK_BYTES``."""
    return int(max(1, min(n_rows, BLOCK_BYTES // max(1, n_cols * itemsize))))
