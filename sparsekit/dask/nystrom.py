"""Nyström on chunked arrays: landmarks chunk by chunk, the map fitted on the client, transform
chunk by chunk.

Where the work happens
----------------------
- a sampler with the ``sample_chunked`` capability (:mod:`sparsekit.samplers.chunked`;
  built-in: ``uniform``, ``dac-rls``; a plugin's sampler may have it too) chooses the landmarks
  from the chunks where they are: ``uniform`` draws the indices on the client (the same draw as
  :class:`~sparsekit.samplers.uniform.UniformSampler` for the same seed; only the ``|S|`` landmark
  rows are gathered); ``dac-rls`` computes the scores chunk by chunk on the workers, the n
  scores (8 bytes each) come back to the client, which draws the landmarks ∝ scores as the
  in-memory sampler does (:func:`sparsekit.samplers._draw.fixed_size`);
- any other sampler (``recursive-rls``, ``greedy-trace``, ...): its landmark stage runs on one
  worker, which receives the whole array; it must fit in that worker's memory.

In every case the normalization K_S^{-1/2} is computed on the client from the ``|S|`` landmarks
(:meth:`sparsekit.Nystroem.fit_landmarks`), and :func:`nystroem_transform` maps chunk by chunk
with the fitted map sent once to the cluster (:func:`sparsekit.dask.transform`).

DAC-RLS partition
-----------------
The in-memory DAC-RLS cuts one random permutation of all n points into blocks of size m
(Calandriello et al. 2017; Cherfaoui thesis Algorithm 2). Over a chunked array a block must lie
inside one chunk, so the partition here is: chunk c (rows r_c .. r_{c+1}) is permuted by its own
generator ``numpy.random.default_rng(SeedSequence(seed).spawn(n_chunks)[c])`` and cut into
consecutive blocks of m = ``block_size`` (default ⌈√n⌉ with the global n, as in memory) rows;
the last block of a chunk holds the chunk's remainder. :func:`dac_rls_partition` returns this
partition as global index arrays, so that
``DACRLSSampler(lam).scores_for_partition(X, kernel, dac_rls_partition(...))`` reproduces the
chunked scores in memory. With chunks much larger than m, the blocks are the same size as in
memory; only the mixing across chunks is lost (each block draws from one chunk).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_random_state, check_scalar
from ..components import resolve
from ..samplers.base import Landmarks, check_n_landmarks
from ..samplers.chunked import (
    check_chunked_landmarks,
    check_numeric_lam,
    chunk_seeds,
    integer_seed,
    supports_chunked,
)
from ..samplers.rls import dac_block_size, dac_chunk_partition, dac_chunk_scores
from ._checks import _dask_array, check_block, check_chunked, frozen_kernel
from ._heap import chunk_task
from .transform import transform

if TYPE_CHECKING:
    import dask.array as da

    from .._typing import RandomStateLike
    from ..features.nystrom import Nystroem
    from ..registry import Registry


def dac_rls_partition(
    row_chunks: Sequence[int], block_size: int | None = None, random_state: RandomStateLike = None
) -> list[np.ndarray]:
    """Build the DAC-RLS partition used over the row chunks ``row_chunks``.

    The blocks are global index arrays (see the module docstring).

    Parameters
    ----------
    row_chunks : tuple of int
        The row chunk sizes (``Xd.chunks[0]``).
    block_size : int, optional
        The block size m; default ⌈√n⌉.
    random_state : int, numpy.random.Generator or None
        Seeds the partition.

    Returns
    -------
    list of ndarray of int
        The blocks, as global row indices (each inside one chunk).
    """
    return dac_chunk_partition(row_chunks, block_size, random_state)


@chunk_task
def _run_on_chunk(block, index, d, func, args):
    return func(check_block(block, d), index, *args)


class DaskChunks:
    """The rows of a chunked dask array as :class:`~sparsekit.samplers.chunked.ChunkedData`:
    what a sampler's ``sample_chunked`` receives from :func:`nystroem_fit`."""

    def __init__(self, Xd):
        self._Xd = Xd
        self.n_samples = int(Xd.shape[0])
        self.chunk_sizes = tuple(int(c) for c in Xd.chunks[0])

    def map_chunks(self, func, *args) -> list:
        """``[func(chunk, i, *args) for each chunk i]``, run on the workers (each chunk's width
        checked first); the results come back in chunk order."""
        import dask

        d = self._Xd.shape[1]
        blocks = self._Xd.to_delayed().ravel()
        return list(
            dask.compute(
                *[_delayed(_run_on_chunk)(blk, i, d, func, args) for i, blk in enumerate(blocks)]
            )
        )


def dac_rls_scores(
    Xd: da.Array,
    kernel: str | object = "rbf",
    lam: float = 1.0,
    *,
    block_size: int | None = None,
    kernel_params: dict[str, Any] | None = None,
    random_state: RandomStateLike = None,
    registry: Registry | None = None,
) -> da.Array:
    """Compute the DAC-RLS ridge leverage scores of every row of a chunked array, lazily.

    Each sample gets the exact ridge leverage score of its block, K_B (K_B + λ I)⁻¹ diagonal,
    with the global λ (Cherfaoui thesis Algorithm 2); blocks lie inside chunks (module
    docstring). Memory per task: one chunk and one m × m block.

    Parameters
    ----------
    Xd : dask array of shape (n, d)
        The data, chunked by rows.
    kernel : str or kernel object, default "rbf"
        A registered kernel name or a kernel object (data-dependent bandwidths resolved
        beforehand).
    lam : float > 0, default 1.0
        The ridge parameter λ, a number (rules such as ``"inverse-mean-norm"`` need a pass over
        the data: compute the value first).
    block_size : int, optional
        The block size m; default ⌈√n⌉.
    kernel_params : dict, optional
        Parameters of a named kernel.
    random_state : int, numpy.random.Generator or None
        Seeds the partition.
    registry : Registry, optional
        Where a kernel name is resolved (default: the process-wide registry).

    Returns
    -------
    dask array of shape (n,)
        The scores, float64, chunked as the rows of ``Xd``.
    """
    da = _dask_array()
    Xd = check_chunked(Xd, "X")
    lam = check_numeric_lam(lam)
    n, d = Xd.shape
    kernel = frozen_kernel(resolve("kernel", kernel, kernel_params, registry=registry), d)
    m = dac_block_size(n, block_size)
    seeds = chunk_seeds(len(Xd.chunks[0]), integer_seed(random_state))
    parts = [
        da.from_delayed(
            _delayed(_run_on_chunk)(blk, i, d, dac_chunk_scores, (kernel, lam, m, seeds)),
            (size,),
            np.float64,
        )
        for i, (blk, size) in enumerate(zip(Xd.to_delayed().ravel(), Xd.chunks[0]))
    ]
    return da.concatenate(parts)


def _delayed(f):
    import dask

    return dask.delayed(f, pure=True)


def _landmarks(Xd, kernel, sampler, m, rng, random_state):
    """``(indices, weights)`` of the landmarks (module docstring: where each sampler runs)."""
    if supports_chunked(sampler):
        result = sampler.sample_chunked(DaskChunks(Xd), kernel, m, random_state=random_state)
        return check_chunked_landmarks(result, Xd.shape[0], sampler)
    # the whole landmark stage on one worker; the generator's state comes back with the result,
    # so that the caller's draws after the fit continue as after an in-memory fit
    idx, weights, state = _delayed(_sample_on_one_worker)(sampler, Xd, kernel, m, rng).compute()
    rng.bit_generator.state = state
    return idx, weights


def _sample_on_one_worker(sampler, X, kernel, m, rng):
    land = sampler.sample(X, kernel, m, rng)
    return (
        np.asarray(land.indices, dtype=np.int64),
        np.asarray(land.weights, dtype=np.float64),
        rng.bit_generator.state,
    )


def chunked_landmarks(
    Xd, kernel, sampler, n_components, kernel_params, sampler_params, random_state, registry
):
    """``(kernel, sampler, indices, weights, points)``: the kernel (its bandwidth fixed) and the
    sampler resolved, and the landmarks chosen over the chunks of ``Xd`` (the module docstring
    says where), their rows gathered after every chunk's width was checked."""
    n, d = Xd.shape
    kernel = frozen_kernel(resolve("kernel", kernel, kernel_params, registry=registry), d)
    sampler_obj = resolve("sampler", sampler, sampler_params, registry=registry)
    m = check_n_landmarks(
        check_scalar(
            n_components, "n_components", kind=numbers.Integral, low=1, low_inclusive=True
        ),
        n,
    )
    integer = isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool)
    rng = check_random_state(random_state)
    idx, weights = _landmarks(Xd, kernel, sampler_obj, m, rng, random_state if integer else rng)
    # dask types Array.map_blocks as the module function (the array as its first argument)
    points = Xd.map_blocks(
        check_block,  # type: ignore[arg-type]
        d,
        "X",
        dtype=Xd.dtype,
    )[np.asarray(idx)].compute()
    return kernel, sampler_obj, idx, weights, points


def nystroem_fit(
    Xd: da.Array,
    kernel: str | Callable[..., Any] = "rbf",
    sampler: str | object = "uniform",
    n_components: int = 100,
    *,
    kernel_params: dict[str, Any] | None = None,
    sampler_params: dict[str, Any] | None = None,
    rank: int | None = None,
    eigen_floor: float | None = None,
    random_state: RandomStateLike = None,
    registry: Registry | None = None,
) -> Nystroem:
    """Fit a :class:`sparsekit.Nystroem` on a chunked array.

    The landmark stage runs as the module docstring says (chunk by chunk for a sampler with
    ``sample_chunked``, on one worker otherwise); the returned estimator is an ordinary in-memory
    ``Nystroem`` built from the landmarks (:meth:`~sparsekit.Nystroem.fit_landmarks`), which
    :func:`nystroem_transform` applies chunk by chunk and whose ``transform`` works on NumPy
    input too. For uniform landmarks it equals ``Nystroem(...).fit(Xd.compute())`` with the same
    ``random_state``.

    Parameters
    ----------
    Xd : dask array of shape (n, d)
        The data, chunked by rows.
    kernel : str, kernel object or callable, default "rbf"
        As for :class:`~sparsekit.features.nystrom.Nystroem`.
    sampler : str or sampler object, default "uniform"
        As for :class:`~sparsekit.features.nystrom.Nystroem`.
    n_components : int, default 100
        Number of landmarks.
    kernel_params, sampler_params : dict, optional
        Keyword parameters of the named kernel / sampler.
    rank : int, optional
        As for :class:`~sparsekit.features.nystrom.Nystroem`.
    eigen_floor : float >= 0, optional
        As for :class:`~sparsekit.features.nystrom.Nystroem`.
    random_state : None, int or numpy Generator
        Passed to the sampler.
    registry : Registry, optional
        Where kernel and sampler names are resolved (default: the process-wide registry).

    Returns
    -------
    Nystroem
        Fitted; ``kernel`` is the resolved kernel (bandwidth fixed), ``sampler_`` the resolved
        sampler.
    """
    from ..features.nystrom import Nystroem

    Xd = check_chunked(Xd, "X")
    kernel, _, idx, weights, points = chunked_landmarks(
        Xd, kernel, sampler, n_components, kernel_params, sampler_params, random_state, registry
    )
    ny = Nystroem(
        kernel,
        sampler=sampler,
        n_components=n_components,
        sampler_params=sampler_params,
        rank=rank,
        eigen_floor=eigen_floor,
        random_state=random_state,
        registry=registry,
    )
    return ny.fit_landmarks(Landmarks(idx, points, weights))


def nystroem_transform(ny: Nystroem, Xd: da.Array) -> da.Array:
    """Compute phi(X) of a fitted Nystroem chunk by chunk, as a lazy dask array.

    :func:`sparsekit.dask.transform` does the same for any fitted transformer.

    The fitted map (landmarks and normalization) is one node of the task graph, sent once to
    each worker that needs it, not once per chunk.

    Parameters
    ----------
    ny : Nystroem
        A fitted :class:`~sparsekit.features.nystrom.Nystroem`.
    Xd : dask array of shape (n, d)
        The data, chunked by rows.

    Returns
    -------
    dask array of shape (n, ``ny.n_components_``)
        The features phi(X), chunked as the rows of ``Xd``.
    """
    if not hasattr(ny, "normalization_"):
        raise ValueError("nystroem_transform needs a fitted Nystroem (call fit or nystroem_fit)")
    Xd = check_chunked(Xd, "X", getattr(ny, "n_features_in_", None), known_rows=False)
    dtype = np.result_type(Xd.dtype, ny.normalization_.dtype)
    return transform(ny, Xd, n_features_out=ny.n_components_, dtype=dtype)


__all__ = ["dac_rls_scores", "dac_rls_partition", "nystroem_fit", "nystroem_transform"]
