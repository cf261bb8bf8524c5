"""Nyström kernel ridge regression on chunked arrays: one pass over the chunks per conjugate
gradient iteration, the landmarks' matrices and the iterates on the client.

The landmarks are chosen as :func:`sparsekit.dask.nystroem_fit` chooses them (chunk by chunk for
a sampler with ``sample_chunked``, on one worker otherwise). The client holds K_mm, FALKON's
two Cholesky factors and the (m, t) iterates; each iteration sends the (m, t) direction to the
workers, which return K_cᵀ (K_c v) for their chunk c (K_c = k(X_c, L)), summed on the client.
Nothing of size n × m exists anywhere, and a chunk's K_c lives only while its task runs. The
fit is that of :class:`sparsekit.NystromRidge` on the same landmarks: the same system and the
same iterations, up to the order in which the chunks' sums are added.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..learning._passes import KernelPasses
from ._checks import check_block, check_chunked
from ._heap import chunk_task
from .nystrom import chunked_landmarks

if TYPE_CHECKING:
    import dask.array as da

    from .._typing import RandomStateLike
    from ..learning.ridge import NystromRidge
    from ..registry import Registry


@chunk_task
def _gram_chunk(block, d, kernel, landmarks, V):
    return KernelPasses(kernel, check_block(block, d), landmarks).gram(V)


@chunk_task
def _adjoint_chunk(block, targets, d, kernel, landmarks):
    return KernelPasses(kernel, check_block(block, d), landmarks).adjoint(
        np.asarray(targets, dtype=np.float64).reshape(len(targets), -1)
    )


def _node(value):
    import dask

    return dask.delayed(value, pure=True, traverse=False)


class ChunkedPasses:
    """The products of :class:`~sparsekit.learning._passes.KernelPasses` over a chunked
    array: each chunk's share computed where the chunk is, the (m, t) results summed."""

    def __init__(self, Xd, kernel, landmarks):
        import dask

        self.Xd, self.n, self.m = Xd, Xd.shape[0], len(landmarks)
        self._d = Xd.shape[1]
        self._kernel, self._landmarks = _node(kernel), _node(landmarks)
        self._chunks = Xd.to_delayed().ravel()
        self._delayed = dask.delayed

    def _sum(self, parts):
        import dask

        return np.sum(dask.compute(*parts), axis=0)

    def gram(self, V):
        """K_nmᵀ (K_nm V), (m, t)."""
        V = _node(np.ascontiguousarray(V))
        task = self._delayed(_gram_chunk, pure=True)
        return self._sum([task(c, self._d, self._kernel, self._landmarks, V) for c in self._chunks])

    def adjoint(self, Yd):
        """K_nmᵀ Y for a dask array ``Yd`` of n rows chunked as the data."""
        task = self._delayed(_adjoint_chunk, pure=True)
        targets = Yd.to_delayed().ravel()
        return self._sum(
            [
                task(c, y, self._d, self._kernel, self._landmarks)
                for c, y in zip(self._chunks, targets)
            ]
        )


def nystrom_ridge_fit(
    Xd: da.Array,
    yd: Any,
    kernel: str | Any = "rbf",
    sampler: str | object = "uniform",
    n_components: int = 100,
    *,
    alpha: float = 1e-6,
    tol: float = 1e-4,
    max_iter: int = 100,
    kernel_params: dict[str, Any] | None = None,
    sampler_params: dict[str, Any] | None = None,
    callback: Any = None,
    random_state: RandomStateLike = None,
    registry: Registry | None = None,
) -> NystromRidge:
    """Fit a :class:`sparsekit.NystromRidge` (``solver="pcg"``) on chunked data.

    Parameters
    ----------
    Xd : dask array of shape (n, d)
        The data, chunked by rows.
    yd : dask array or array-like of shape (n,) or (n, n_targets)
        The targets (rechunked as the rows of ``Xd``).
    kernel : str, kernel object or callable, default "rbf"
        As for :class:`~sparsekit.NystromRidge`.
    sampler : str or sampler object, default "uniform"
        As for :func:`sparsekit.dask.nystroem_fit` (uniform and DAC-RLS choose chunk by chunk).
    n_components : int, default 100
        The number of landmarks m.
    alpha, tol, max_iter : float, float, int
        As for :class:`~sparsekit.NystromRidge`.
    kernel_params, sampler_params : dict, optional
        Parameters of the named kernel / sampler.
    callback : callable, optional
        ``callback(iteration, dual_coef)`` after each iteration.
    random_state : None, int or numpy Generator
        Passed to the sampler.
    registry : Registry, optional
        Where kernel and sampler names are resolved.

    Returns
    -------
    NystromRidge
        Fitted, in memory (``predict`` takes NumPy arrays; :func:`sparsekit.dask.transform`
        does not apply, use ``Xd.map_blocks(model.predict)`` for chunked predictions).
    """
    import dask.array as da

    from ..learning.ridge import NystromRidge

    Xd = check_chunked(Xd, "X")
    n, d = Xd.shape
    yd = yd if isinstance(yd, da.Array) else da.from_array(np.asarray(yd))
    if yd.ndim not in (1, 2) or yd.shape[0] != n:
        raise ValueError(
            f"y must have shape (n,) or (n, n_targets) with n = {n} (the rows of X), got {yd.shape}"
        )
    single = yd.ndim == 1
    Yd = (yd[:, None] if single else yd).rechunk((Xd.chunks[0], -1)).astype(np.float64)
    model = NystromRidge(
        kernel=kernel,
        sampler=sampler,
        n_components=n_components,
        alpha=alpha,
        solver="pcg",
        tol=tol,
        max_iter=max_iter,
        kernel_params=kernel_params,
        sampler_params=sampler_params,
        callback=callback,
        random_state=random_state,
        registry=registry,
    )
    model._solver_params()
    kernel_obj, sampler_obj, idx, _, points = chunked_landmarks(
        Xd, kernel, sampler, n_components, kernel_params, sampler_params, random_state, registry
    )
    points = kernel_obj.prepare(points)
    model._set_landmarks(kernel_obj, sampler_obj, np.asarray(idx, dtype=np.int64), points, d)
    model._solve(ChunkedPasses(Xd, kernel_obj, points), Yd, None)
    if single:
        model.dual_coef_ = model.dual_coef_[:, 0]
    return model


__all__ = ["nystrom_ridge_fit"]
