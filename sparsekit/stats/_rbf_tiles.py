"""Sums of RBF Gram tiles in one pass in cache (the exact MMD²'s tiles, dense data on the CPU).

A tile's sum is taken strip by strip: ``STRIP_BYTES`` of the tile's rows against all its
columns, each strip's cross term (BLAS), squared distances and exp (NumPy's SIMD exp, in place)
computed in one work array that stays in the core's L2 cache, then summed in float64 while it is
still there. The tile is never written out, so its work no longer depends on the memory
bandwidth the two cores share. The data are centred and their squared norms taken once for the
whole pool (the kernel's own call does that per tile).
"""

from __future__ import annotations

import numpy as np

from ..kernels._cpu import _scaled_sq_dist_rows

#: Bytes (as float64) of one strip of a tile: 128 rows of a 1024-column tile. The strips depend
#: on the tile's shape only, never on the thread count.
STRIP_BYTES = 2**20


def fused_rbf(kernel, data):
    """A :class:`RBFTiles` for ``kernel`` on pooled ``data``, or None where the fused pass does
    not apply (another kernel class, sparse or non-array data)."""
    from ..kernels.rbf import RBFKernel

    if type(kernel) is not RBFKernel or not isinstance(data, np.ndarray) or data.ndim != 2:
        return None
    return RBFTiles(kernel, data)


def strip_rows(n_cols: int) -> int:
    """Rows per strip of a tile with ``n_cols`` columns (at least one)."""
    return max(1, STRIP_BYTES // (8 * max(1, n_cols)))


class RBFTiles:
    """The RBF kernel's Gram tiles of one pool of dense data, summed without storing them.

    k(x, z) = exp(−γ ‖x − z‖²), with ‖x − z‖² = ‖x‖² + ‖z‖² − 2⟨x, z⟩ on data centred on the
    pool's mean (clipped at 0), as the kernel computes it; k(x_i, x_i) = 1 exactly.
    """

    def __init__(self, kernel, data: np.ndarray):
        kernel._check_params()
        k = kernel._resolved(data, None)
        self.Xc, _, self.sq, _, gamma = k._prepare(data, data, True)
        self.scale = data.dtype.type(-gamma)
        self.dtype = data.dtype

    def work_size(self, blocks) -> int:
        """Entries of the work array one thread needs for ``blocks``."""
        return max((min(b - a, strip_rows(c1 - c0)) * (c1 - c0) for a, b, c0, c1, _ in blocks))

    def tile_sum(self, a: int, b: int, c0: int, c1: int, buf: np.ndarray) -> float:
        """Σ k(x_i, x_j) over i in a:b, j in c0:c1 in float64, the strips' sums added in order;
        ``buf`` is a flat work array of at least :meth:`work_size` entries."""
        Xc, sq, m = self.Xc, self.sq, c1 - c0
        cols, col_sq = Xc[c0:c1].T, sq[c0:c1]
        step = strip_rows(m)
        total = 0.0
        for r in range(a, b, step):
            e = min(b, r + step)
            part = buf[: (e - r) * m].reshape(e - r, m)
            np.dot(Xc[r:e], cols, out=part)
            _scaled_sq_dist_rows(0, e - r, part, sq[r:e], col_sq, self.scale)
            np.exp(part, out=part)
            # rows that meet their own column: exact zero distance (as the kernel on X alone)
            lo, hi = max(r, c0), min(e, c1)
            if lo < hi:
                idx = np.arange(lo, hi)
                part[idx - r, idx - c0] = 1.0
            total += float(part.sum(dtype=np.float64))
        return total
