"""A projection plugin: subclass Projection and select the entries to keep."""

import numbers

import numpy as np

from sparsekit.plugins import Projection
from sparsekit.validation import check_scalar


class BandProjection(Projection):
    """Keep the entries within ``bandwidth`` of the diagonal (``|i - j| <= bandwidth``).

    The set of banded matrices has a fixed support, so zeroing the other entries is the exact
    Euclidean projection onto it; as for the built-in projections, the result is then scaled to
    unit Frobenius norm when ``normalized`` (Palm4MSA's scale ``lambda`` carries the norm).

    Parameters
    ----------
    shape : (int, int)
        The shape of the factor.
    bandwidth : int >= 0
        Diagonals kept on each side of the main one (0: diagonal matrices).
    """

    name = "band"

    def __init__(self, shape, bandwidth, *, normalized=True, nonnegative=False):
        super().__init__(shape, normalized=normalized, nonnegative=nonnegative)
        self.bandwidth = check_scalar(
            bandwidth, "bandwidth", kind=numbers.Integral, low=0, low_inclusive=True
        )
        rows, cols = np.indices(self.shape)
        self._keep = np.abs(rows - cols) <= self.bandwidth

    def _project(self, M):  # M: validated, of the factor's shape, negatives clipped if asked
        return np.where(self._keep, M, M.dtype.type(0))

    def _repr_items(self):
        return (("bandwidth", self.bandwidth),)
