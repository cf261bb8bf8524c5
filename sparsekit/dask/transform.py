"""One chunk-wise transform for any fitted transformer: ``transform(est, Xd)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._checks import _dask_array, check_block, check_chunked
from ._heap import chunk_task


@chunk_task
def _transform_block(block, est, d, width, out_dtype):
    block = check_block(block, d)
    if len(block) == 0:  # an empty chunk (transformers refuse empty input)
        return np.empty((0, width), dtype=out_dtype)
    return np.asarray(est.transform(block))


def _check_fitted(est) -> None:
    if not callable(getattr(est, "transform", None)):
        raise TypeError(
            f"est must be a fitted transformer (with transform), got {type(est).__name__}"
        )
    is_fitted = getattr(est, "__sklearn_is_fitted__", None)
    if callable(is_fitted) and not is_fitted():
        from ..exceptions import not_fitted_error

        raise not_fitted_error(f"this {type(est).__name__} is not fitted yet: call fit first")


def transform(est: Any, Xd: Any, *, n_features_out: int | None = None, dtype: Any = None) -> Any:
    """Apply ``est.transform`` to a chunked array, chunk by chunk, as a lazy dask array.

    Works for any fitted transformer whose ``transform`` maps rows independently
    (:class:`~sparsekit.Nystroem`, :class:`~sparsekit.RandomFourierFeatures`, scikit-learn
    transformers, ...). The fitted transformer is one node of the task graph, sent once to each
    worker that needs it, not once per chunk.

    Parameters
    ----------
    est : fitted transformer
        Any fitted object with a ``transform`` that maps rows independently.
    Xd : dask array (n, d)
        Chunks along the features are merged (empty row chunks give empty blocks); ``d`` must
        be ``est.n_features_in_`` when the transformer has it.
    n_features_out, dtype : optional
        The width and dtype of the output. Default: the length of
        ``est.get_feature_names_out()`` and the dtype of ``est.transform`` of the first row
        (computed here, once).

    Returns
    -------
    dask array (n, n_features_out)
        ``est.transform(X)``, chunked as the rows of ``Xd``; nothing is computed until
        ``.compute()``.

    Raises
    ------
    TypeError
        ``est`` has no ``transform``, or ``Xd`` is not a dask array.
    NotFittedError
        ``est`` is not fitted.
    """
    import dask

    da = _dask_array()
    _check_fitted(est)
    Xd = check_chunked(Xd, "X", getattr(est, "n_features_in_", None), known_rows=False)
    d = Xd.shape[1]
    if n_features_out is None and callable(getattr(est, "get_feature_names_out", None)):
        n_features_out = len(est.get_feature_names_out())
    if n_features_out is None or dtype is None:
        probe = np.asarray(est.transform(np.asarray(Xd[:1].compute())))
        n_features_out = probe.shape[1] if n_features_out is None else n_features_out
        dtype = probe.dtype if dtype is None else dtype
    shared = dask.delayed(est, pure=True, traverse=False)  # one graph node: the fitted map
    return da.map_blocks(
        _transform_block,
        Xd,
        shared,
        d=d,
        width=int(n_features_out),
        out_dtype=dtype,
        dtype=dtype,
        chunks=(Xd.chunks[0], (int(n_features_out),)),
    )


__all__ = ["transform"]
