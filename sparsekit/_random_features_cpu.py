"""CPU compute of the random Fourier features: a Numba loop on contiguous arrays.

- :func:`cos_sin_inplace`: the trigonometric tail of random Fourier features, written into the
  two halves of the output row block.

Nothing here compiles at import time; the loop keeps the dtype of its inputs. It is a serial
``nogil`` Numba kernel over a row range, run on row ranges from several threads by
:func:`sparsekit._runtime.pools.run_row_ranges`.
"""

import numpy as np
from numba import njit

from ._runtime.pools import run_row_ranges


def cos_sin_inplace(P, scale, out):
    """out[:, :s] <- scale * cos(P), out[:, s:2s] <- scale * sin(P), with s = P.shape[1]."""
    run_row_ranges(_cos_sin_rows, P.shape[0], P, scale, out)


@njit(cache=True, nogil=True)
def _cos_sin_rows(lo, hi, P, scale, out):
    s = P.shape[1]
    for i in range(lo, hi):
        for j in range(s):
            p = P[i, j]
            out[i, j] = scale * np.cos(p)
            out[i, s + j] = scale * np.sin(p)
