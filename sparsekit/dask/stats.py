"""The Nyström MMD between chunked samples.

The estimator of :class:`sparsekit.stats.NystromMMD` (Cherfaoui thesis, Ch. 4, Lemma 5:
MMD²_k̂ = ‖mean φ(A) − mean φ(B)‖² + λ‖v‖²), scheduled as follows:

- landmarks from the pooled samples by :func:`~sparsekit.dask.nystroem_fit` (chunk by chunk
  for a sampler with ``sample_chunked``, such as uniform and DAC-RLS; others on one worker);
- one pass over the chunks with the fitted map sent once: each chunk returns Σ K(x, S) over
  its rows (``|S|`` numbers; mean φ = (mean K(x, S)) K_S^{-1/2} is formed on the client, which
  saves the ``|S| × |S|`` product of every row) and a 64-bit key of each row's bit pattern (8
  bytes a point);
- ‖v‖² needs the distinct points of the pooled samples: rows whose keys collide are gathered
  on the client and identified exactly as in memory (:func:`sparsekit.stats._data.support_ids`
  on those rows only); with no collision every point is distinct.

The returned estimator is an in-memory ``NystromMMD`` (embeddings, support identities) whose
``mmd2``/``mmd`` compare any two of the samples; φ of a sample, if needed, is
``nystroem_transform(est.nystroem_, Xd)`` (``features_`` is not stored).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._runtime.small_blas import one_blas_thread
from .._validation import check_random_state
from ..components import resolve
from ..samplers.lam import check_lam
from ..stats._data import pooled_n_landmarks, support_ids
from ..stats.nystrom import NystromMMD
from ._checks import _dask_array, check_block, check_chunked, frozen_kernel
from ._heap import chunk_task

if TYPE_CHECKING:
    import dask.array as da

    from .._typing import RandomStateLike
    from ..registry import Registry

_KEY_MULT = np.uint64(0x9E3779B97F4A7C15)


def row_keys(rows: np.ndarray) -> np.ndarray:
    """A 64-bit key per row of a float array from its bit pattern (−0.0 counted as 0.0):
    equal rows get equal keys; different rows rarely do (collisions are resolved exactly)."""
    bits = np.ascontiguousarray(rows + rows.dtype.type(0.0))
    bits = bits.view(np.uint64 if bits.dtype.itemsize == 8 else np.uint32).astype(np.uint64)
    mult = (np.arange(1, bits.shape[1] + 1, dtype=np.uint64) * _KEY_MULT) | np.uint64(1)
    with np.errstate(over="ignore"):
        h = np.bitwise_xor.reduce(bits * mult, axis=1)
        h ^= h >> np.uint64(31)
        h *= _KEY_MULT
        h ^= h >> np.uint64(29)
    return h


#: Bytes of one row block of K(x, S) while a chunk is summed
SUM_BLOCK_BYTES = 2**22


@chunk_task
def _mmd_chunk(block, ny, d):
    """(Σ K(x, S) over the chunk, float64 (|S|,); the row keys of the chunk)."""
    kernel, S = ny.kernel_, ny.components_
    Xp = kernel.prepare(check_block(block, d))
    sums = np.zeros(len(S))
    step = max(1, SUM_BLOCK_BYTES // (8 * len(S)))
    ones = np.ones(min(step, len(Xp)))
    for r0 in range(0, len(Xp), step):
        Kb = np.asarray(kernel(Xp[r0 : r0 + step], S), dtype=np.float64)
        with one_blas_thread():  # a matrix-vector product: faster than Kb.sum(axis=0)
            sums += ones[: len(Kb)] @ Kb
    return sums, row_keys(Xp)


def distinct_ids(kernel, keys, take) -> np.ndarray:
    """:func:`~sparsekit.stats._data.support_ids` of a pool from its row keys.

    ``take(indices)`` returns the prepared rows ``indices`` (sorted). Only rows whose key is
    shared are gathered; equal rows share a key, so each one's first equal row is among them.
    """
    n = len(keys)
    ids = np.arange(n, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    same = keys[order][1:] == keys[order][:-1]
    if not same.any():
        return ids
    dup = np.zeros(n, dtype=bool)
    dup[1:] |= same
    dup[:-1] |= same
    cand = np.sort(order[dup])
    ids[cand] = cand[support_ids(kernel, take(cand))]
    return ids


def nystrom_mmd_fit(
    *samples: da.Array,
    kernel: str | object = "rbf",
    sampler: str | object = "uniform",
    n_landmarks: int | None = None,
    lam: float = 1e-6,
    kernel_params: dict[str, Any] | None = None,
    sampler_params: dict[str, Any] | None = None,
    random_state: RandomStateLike = None,
    registry: Registry | None = None,
) -> NystromMMD:
    """Fit a :class:`sparsekit.stats.NystromMMD` on chunked samples.

    The samples are dask arrays of the same width. Data-dependent kernel bandwidths must be
    resolved beforehand (a fitted kernel, or gamma).

    For the same ``random_state`` and uniform landmarks, ``est.mmd2(i, j)`` equals
    ``NystromMMD(...).fit(*[S.compute() for S in samples]).mmd2(i, j)`` (to rounding: sums over
    chunks).

    Parameters
    ----------
    *samples : dask arrays of shape (n_i, d)
        Two or more chunked samples of the same width.
    kernel : str or kernel object, default "rbf"
        As for :class:`~sparsekit.stats.nystrom.NystromMMD` (data-dependent bandwidths resolved
        beforehand: a fitted kernel, or gamma).
    sampler : str or sampler object, default "uniform"
        As for :class:`~sparsekit.stats.nystrom.NystromMMD`.
    n_landmarks : int, optional
        As for :class:`~sparsekit.stats.nystrom.NystromMMD`.
    lam : float > 0, default 1e-6
        As for :class:`~sparsekit.stats.nystrom.NystromMMD`.
    kernel_params, sampler_params : dict, optional
        Parameters of the named kernel / sampler.
    random_state : None, int or numpy.random.Generator
        Seeds the landmark sampler.
    registry : Registry, optional
        Where kernel and sampler names are resolved (default: the process-wide registry).

    Returns
    -------
    NystromMMD
        The fitted estimator (in memory).
    """
    import dask

    from .nystrom import nystroem_fit

    da = _dask_array()
    if len(samples) < 1:
        raise TypeError("nystrom_mmd_fit needs at least one sample")
    names = ["X", "Y"] if len(samples) == 2 else [f"samples[{i}]" for i in range(len(samples))]
    lam = check_lam(lam, rules=())
    arrays = [check_chunked(samples[0], names[0])]
    d = arrays[0].shape[1]
    arrays += [check_chunked(S, name, n_features=d) for S, name in zip(samples[1:], names[1:])]
    kernel_obj = frozen_kernel(resolve("kernel", kernel, kernel_params, registry=registry), d)
    sampler_obj = resolve("sampler", sampler, sampler_params, registry=registry)
    sizes = tuple(int(A.shape[0]) for A in arrays)
    pool = da.concatenate(arrays) if len(arrays) > 1 else arrays[0]
    n = int(sum(sizes))
    s = pooled_n_landmarks(n_landmarks, max(sizes), n)
    ny = nystroem_fit(
        pool,
        kernel_obj,
        sampler_obj,
        s,
        random_state=check_random_state(random_state),
        registry=registry,
    )

    shared = dask.delayed(ny, pure=True, traverse=False)
    per_sample = [
        [
            dask.delayed(_mmd_chunk, pure=True)(b, shared, d)
            for b, rows in zip(A.to_delayed().ravel(), A.chunks[0])
            if rows > 0
        ]
        for A in arrays
    ]
    (results,) = dask.compute(per_sample)
    # mean φ = (mean K(x, S)) M: the mean is taken before the product with M
    means = np.stack([sum(r[0] for r in parts) / size for parts, size in zip(results, sizes)])
    embeddings = means @ ny.normalization_.astype(np.float64)
    keys = np.concatenate([r[1] for parts in results for r in parts])
    ids = distinct_ids(
        kernel_obj, keys, lambda idx: kernel_obj.prepare(np.asarray(pool[idx].compute()))
    )

    est = NystromMMD(
        kernel=kernel,
        sampler=sampler,
        n_landmarks=n_landmarks,
        lam=lam,
        kernel_params=kernel_params,
        sampler_params=sampler_params,
        random_state=random_state,
        registry=registry,
    )
    est.kernel_ = kernel_obj
    est.nystroem_ = ny
    est.lam_ = lam
    est.n_landmarks_ = s
    est.sizes_ = sizes
    est.embeddings_ = embeddings
    est.support_ids_ = ids
    est._distinct = bool(np.array_equal(ids, np.arange(n)))
    est._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return est


def mmd2_nystrom(Xd: da.Array, Yd: da.Array, kernel: str | object = "rbf", **params: Any) -> float:
    """Compute the Nyström MMD² between two chunked samples.

    Parameters
    ----------
    Xd, Yd : dask arrays of shape (n, d) and (m, d)
        The two chunked samples.
    kernel : str or kernel object, default "rbf"
        As for :func:`nystrom_mmd_fit`.
    **params
        The other parameters of :func:`nystrom_mmd_fit`.

    Returns
    -------
    float
        ``nystrom_mmd_fit(Xd, Yd, ...).mmd2(0, 1)``.
    """
    return nystrom_mmd_fit(Xd, Yd, kernel=kernel, **params).mmd2(0, 1)


__all__ = ["nystrom_mmd_fit", "mmd2_nystrom"]
