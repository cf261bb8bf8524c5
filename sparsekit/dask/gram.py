"""Kernel Gram matrices between chunked arrays, as blocked dask arrays."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..components import resolve
from ._checks import _dask_array, check_block, check_chunked, frozen_kernel
from ._heap import chunk_task

if TYPE_CHECKING:
    import dask.array as da

    from ..registry import Registry


@chunk_task
def _gram_block(A, B, kernel, d, out_dtype):
    A, B = check_block(A, d, "X"), check_block(B, d, "Y")
    if len(A) == 0 or len(B) == 0:  # an empty chunk (kernels refuse empty input)
        return np.empty((len(A), len(B)), dtype=out_dtype)
    return np.asarray(kernel(A, B))


def gram(
    kernel: str | Callable[..., Any],
    Xd: da.Array,
    Yd: da.Array | None = None,
    *,
    kernel_params: dict[str, Any] | None = None,
    registry: Registry | None = None,
) -> da.Array:
    """Compute K(X, Y) as a lazy dask array whose block (i, j) is ``kernel(X_i, Y_j)``.

    Parameters
    ----------
    kernel : str, kernel object or function
        A registered vector kernel (``kernel_params`` passed to its factory), a kernel object
        (copied) or a function ``k(X, Y) -> Gram``. Data-dependent bandwidth rules must be
        resolved first (a fitted kernel, or gamma).
    Xd, Yd : dask arrays of shape (n, d) and (m, d)
        Row chunks (empty ones included); chunks along the features are merged. ``Yd``
        defaults to ``Xd``.
    kernel_params : dict, optional
        Parameters of a named kernel.
    registry : Registry, optional
        Where a kernel name is resolved (default: the process-wide registry).

    Returns
    -------
    dask array of shape (n, m), chunks ``(Xd.chunks[0], Yd.chunks[0])``
        Nothing is computed until ``.compute()`` (or a reduction) is called; each block is
        evaluated by the kernel's own block code on a worker.
    """
    da = _dask_array()
    Xd = check_chunked(Xd, "X", known_rows=False)
    Yd = Xd if Yd is None else check_chunked(Yd, "Y", Xd.shape[1], known_rows=False)
    d = Xd.shape[1]
    kernel = frozen_kernel(resolve("kernel", kernel, kernel_params, registry=registry), d)
    dtype = np.result_type(Xd.dtype, Yd.dtype, np.float32)
    return da.blockwise(
        _gram_block,
        "ij",
        Xd,
        "ik",
        Yd,
        "jk",
        dtype=dtype,
        concatenate=True,
        kernel=kernel,
        d=d,
        out_dtype=dtype,
    )


__all__ = ["gram"]
