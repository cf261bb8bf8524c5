"""Nyström on chunked arrays: DAC-RLS scores per chunk, landmark selection, chunked transform.

Where the work happens
----------------------
- ``uniform``: the landmark indices are drawn on the client (the same draw as
  :class:`~sparsekit.samplers.uniform.UniformSampler` for the same seed); only the ``|S|`` landmark
  rows are gathered.
- ``dac-rls``: the scores are computed chunk by chunk on the workers (:func:`dac_rls_scores`);
  the n scores (8 bytes each) come back to the client, which draws the landmarks ∝ scores as
  the in-memory sampler does (:func:`sparsekit.samplers._draw.fixed_size`).
- any other sampler (``recursive-rls``, ``greedy-trace``, ...): its landmark stage runs on one
  worker, which receives the whole array; it must fit in that worker's memory.

In every case the normalization K_S^{-1/2} is computed on the client from the ``|S|`` landmarks,
and :func:`nystroem_transform` maps chunk by chunk with the fitted map sent once to the cluster.

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

import copy
import math
import numbers

import numpy as np

from .._validation import check_random_state, check_scalar
from ..samplers.base import Sampler, check_n_landmarks
from ._checks import _dask_array, check_block, check_chunked, resolved_kernel
from ._heap import chunk_task


def _default_block_size(n, block_size):
    if block_size is None:
        return math.isqrt(n - 1) + 1
    return int(
        check_scalar(block_size, "block_size", kind=numbers.Integral, low=1, low_inclusive=True)
    )


def _chunk_rngs(n_chunks, random_state):
    seeds = np.random.SeedSequence(_seed_of(random_state)).spawn(n_chunks)
    return [np.random.default_rng(s) for s in seeds]


def _local_blocks(size, m, rng):
    perm = rng.permutation(size)
    return [perm[i:i + m] for i in range(0, size, m)]


def dac_rls_partition(row_chunks, block_size=None, random_state=None) -> list:
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
    n = int(sum(row_chunks))
    m = _default_block_size(n, block_size)
    blocks, start = [], 0
    for size, rng in zip(row_chunks, _chunk_rngs(len(row_chunks), random_state)):
        blocks += [start + b for b in _local_blocks(size, m, rng)]
        start += size
    return blocks


@chunk_task
def _dac_chunk(block, kernel, lam, m, seed_seq, d):
    from ..samplers.rls import DACRLSSampler

    block = check_block(block, d)
    local = _local_blocks(block.shape[0], m, np.random.default_rng(seed_seq))
    return (
        DACRLSSampler(lam=lam, n_jobs=1)
        .scores_for_partition(block, kernel, local)
        .astype(np.float64)
    )


def dac_rls_scores(Xd, kernel="rbf", lam=1.0, *, block_size=None, kernel_params=None,
                   random_state=None):
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

    Returns
    -------
    dask array of shape (n,)
        The scores, float64, chunked as the rows of ``Xd``.
    """
    da = _dask_array()
    Xd = check_chunked(Xd, "X")
    if isinstance(lam, str) or isinstance(lam, bool):
        raise TypeError(f"lam must be a number for the Dask backend (got {lam!r}); compute the "
                        "rule's value on the data first")
    lam = check_scalar(lam, "lam", low=0.0)
    n, d = Xd.shape
    kernel = resolved_kernel(kernel, kernel_params, d)
    m = _default_block_size(n, block_size)
    seeds = np.random.SeedSequence(int(_seed_of(random_state))).spawn(len(Xd.chunks[0]))
    parts = [da.from_delayed(_delayed(_dac_chunk)(blk, kernel, lam, m, s, d), (size,), np.float64)
             for blk, s, size in zip(Xd.to_delayed().ravel(), seeds, Xd.chunks[0])]
    return da.concatenate(parts)


def _delayed(f):
    import dask

    return dask.delayed(f, pure=True)


def _seed_of(random_state):
    """An integer seed: ``random_state`` itself, or one integer drawn from a Generator/None."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).integers(2**63))


class _GivenLandmarks(Sampler):
    """A sampler returning landmarks chosen elsewhere (the first k points of what it is given)."""

    name = "given"

    def __init__(self, weights=None):
        self.weights = weights

    def sample(self, X, kernel, n_landmarks, random_state=None):
        Xp = self.prepare_input(X, kernel)
        k = kernel.n_samples(Xp)
        return self.make_landmarks(Xp, kernel, np.arange(k), np.ones(k))


def _landmarks(Xd, kernel, sampler, m, rng, random_state, client_side_dac):
    """``(indices, weights)`` of the landmarks (module docstring: where each sampler runs)."""
    n = Xd.shape[0]
    name = getattr(sampler, "name", "")
    if name == "uniform" and not getattr(sampler, "replace", False):
        return np.sort(rng.choice(n, m, replace=False)), np.ones(m)
    if name == "dac-rls" and client_side_dac:
        from ..samplers import _draw

        if sampler.mode != "fixed":
            raise ValueError("the Dask DAC-RLS path draws a fixed number of landmarks; use "
                             "mode='fixed'")
        scores = dac_rls_scores(Xd, kernel, sampler.lam, block_size=sampler.block_size,
                                random_state=random_state).compute()
        return _draw.fixed_size(scores, m, rng)
    # the whole landmark stage on one worker; the generator's state comes back with the result,
    # so that the caller's draws after the fit continue as after an in-memory fit
    idx, weights, state = _delayed(_sample_on_one_worker)(sampler, Xd, kernel, m, rng).compute()
    rng.bit_generator.state = state
    return idx, weights


def _sample_on_one_worker(sampler, X, kernel, m, rng):
    land = sampler.sample(X, kernel, m, rng)
    return (np.asarray(land.indices, dtype=np.int64), np.asarray(land.weights, dtype=np.float64),
            rng.bit_generator.state)


def nystroem_fit(Xd, kernel="rbf", sampler="uniform", n_components=100, *, kernel_params=None,
                 sampler_params=None, rank=None, eigen_floor=None, random_state=None):
    """Fit a :class:`sparsekit.Nystroem` on a chunked array.

    The landmark stage runs as the module
    docstring says (uniform and DAC-RLS chunk-parallel, other samplers on one worker); the
    returned estimator is an ordinary in-memory ``Nystroem`` (landmarks, normalization) that
    :func:`nystroem_transform` applies chunk by chunk, and whose ``transform`` works on NumPy
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

    Returns
    -------
    Nystroem
        An ordinary in-memory fitted ``Nystroem``.
    """
    from ..features.nystrom import Nystroem
    from ..registry import default_registry, resolve

    Xd = check_chunked(Xd, "X")
    n, d = Xd.shape
    kernel = resolved_kernel(kernel, kernel_params, d)
    sampler_obj = resolve("sampler", sampler, sampler_params, registry=default_registry())
    m = check_n_landmarks(check_scalar(n_components, "n_components", kind=numbers.Integral, low=1,
                                       low_inclusive=True), n)
    integer_seed = isinstance(random_state, (int, np.integer)) and not isinstance(
        random_state, bool
    )
    rng = check_random_state(random_state)
    idx, weights = _landmarks(Xd, kernel, sampler_obj, m, rng,
                              random_state if integer_seed else rng, True)
    # every chunk checked before the rows are gathered (a lying chunk width fails clearly)
    points = Xd.map_blocks(check_block, d, "X", dtype=Xd.dtype)[np.asarray(idx)].compute()
    ny = Nystroem(copy.deepcopy(kernel), sampler=_GivenLandmarks(), n_components=len(idx),
                  rank=rank, eigen_floor=eigen_floor).fit(points)
    ny.set_params(sampler=sampler, kernel_params=None, sampler_params=sampler_params,
                  n_components=n_components, random_state=random_state)
    ny.sampler_ = sampler_obj
    ny.component_indices_ = np.asarray(idx, dtype=np.int64)
    ny.landmark_weights_ = np.asarray(weights, dtype=np.float64)
    return ny


@chunk_task
def _transform_block(block, ny, d):
    return np.asarray(ny.transform(check_block(block, d)))


def nystroem_transform(ny, Xd):
    """Compute phi(X) of a fitted Nystroem chunk by chunk, as a lazy dask array.

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
    da = _dask_array()
    if not hasattr(ny, "normalization_"):
        raise ValueError("nystroem_transform needs a fitted Nystroem (call fit or nystroem_fit)")
    d = getattr(ny, "n_features_in_", None)
    Xd = check_chunked(Xd, "X", n_features=d)
    k = ny.n_components_
    dtype = np.result_type(Xd.dtype, ny.normalization_.dtype)
    import dask

    shared = dask.delayed(ny, pure=True, traverse=False)  # one graph node: the fitted map
    return da.map_blocks(_transform_block, Xd, shared, d=Xd.shape[1], dtype=dtype,
                         chunks=(Xd.chunks[0], (k,)))

__all__ = ["dac_rls_scores", "dac_rls_partition", "nystroem_fit", "nystroem_transform"]
