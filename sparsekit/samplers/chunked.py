"""Landmarks of data held in row chunks: the optional ``sample_chunked`` capability of samplers.

A sampler may implement, beside ``sample``::

    sample_chunked(data, kernel, n_landmarks, random_state=None) -> (indices, weights)

``data`` is a :class:`ChunkedData`: the rows of X split into chunks that stay where they are
(on the workers of a Dask cluster), with a way to run a function on every chunk there and get
the (small) results back. The method returns the positions of the landmarks in X (int64, shape
(k,)) and their weights (float64, shape (k,)); the caller gathers the k landmark rows.

An execution backend that holds the data in chunks (:mod:`sparsekit.dask`) asks the component
for the capability (:func:`supports_chunked`), never for its name: a plugin sampler that
implements the method is used chunk by chunk like the built-in ones; a sampler without it runs
its ``sample`` on one worker that receives all the rows.

Built-in implementations:

- ``uniform``: the indices are drawn from n alone (the same draw as ``sample`` for the same
  seed); no chunk is read.
- ``dac-rls``: each chunk computes the DAC scores of its rows
  (``sparsekit.samplers.rls.dac_chunk_scores``: the chunk permuted by its own generator
  and cut into blocks of m rows, m = ``block_size``, default ⌈√n⌉ with the global n); the n
  scores come back and the landmarks are drawn ∝ scores as in memory.
  ``sparsekit.samplers.rls.dac_chunk_partition`` gives this partition as global index
  arrays, so that ``DACRLSSampler(lam).scores_for_partition(X, kernel,
  dac_chunk_partition(...))`` reproduces the chunked scores in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .._typing import RandomStateLike
from .._validation import check_random_state, check_scalar


@runtime_checkable
class ChunkedData(Protocol):
    """Rows of X in chunks held elsewhere: what ``sample_chunked`` receives.

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol describes objects, it is not instantiated.

    Attributes
    ----------
    n_samples : int
        n, the number of rows of X.
    chunk_sizes : tuple of int
        The number of rows of each chunk, in order (they add up to n).
    """

    n_samples: int
    chunk_sizes: tuple[int, ...]

    def map_chunks(self, func: Callable[..., Any], *args: Any) -> list:
        """Compute ``[func(chunk, i, *args) for each chunk i]``, where the chunks are.

        ``chunk`` is a 2-D ndarray holding whole rows of X (rows ``offset_i`` to
        ``offset_i + chunk_sizes[i]``); ``func`` and ``args`` are sent to the workers (keep them
        small and picklable).

        Parameters
        ----------
        func : callable
            ``func(chunk, i, *args)``, a function of one chunk and its index.
        *args
            Further arguments of ``func``.

        Returns
        -------
        list
            The results, in chunk order.
        """


def supports_chunked(sampler: Any) -> bool:
    """Tell whether ``sampler`` implements ``sample_chunked`` (read from the component).

    Parameters
    ----------
    sampler : object
        A sampler.

    Returns
    -------
    bool
        Whether ``sampler.sample_chunked`` is callable.
    """
    return callable(getattr(sampler, "sample_chunked", None))


def check_chunked_landmarks(result: Any, n: int, sampler: Any) -> tuple[np.ndarray, np.ndarray]:
    """Check the ``(indices, weights)`` returned by ``sampler.sample_chunked``.

    Parameters
    ----------
    result : object
        What ``sample_chunked`` returned.
    n : int
        The number of rows of the data.
    sampler : object
        The sampler (named in the errors).

    Returns
    -------
    indices : int64 ndarray of shape (s,)
        The landmark positions.
    weights : float64 ndarray of shape (s,)
        Their weights.

    Raises
    ------
    TypeError
        Not a pair.
    ValueError
        Indices that are not a non-empty 1-D array of positions in [0, n), or weights of
        another length.
    """
    who = f"sampler {getattr(sampler, 'name', type(sampler).__name__)!r}"
    if not isinstance(result, tuple) or len(result) != 2:
        raise TypeError(
            f"{who}: sample_chunked must return (indices, weights), got {type(result).__name__}"
        )
    indices = np.asarray(result[0])
    weights = np.asarray(result[1], dtype=np.float64)
    if (
        indices.ndim != 1
        or indices.size == 0
        or indices.dtype.kind not in "iu"
        or indices.min() < 0
        or indices.max() >= n
    ):
        raise ValueError(
            f"{who}: sample_chunked returned invalid landmark indices (need a "
            f"non-empty 1-D integer array of positions in [0, {n}))"
        )
    if weights.shape != indices.shape:
        raise ValueError(
            f"{who}: sample_chunked returned {weights.size} weights for {indices.size} landmarks"
        )
    return indices.astype(np.int64, copy=False), weights


def integer_seed(random_state: RandomStateLike) -> int:
    """An integer seed: ``random_state`` itself, or one integer drawn from a Generator/None."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).integers(2**63))


def check_numeric_lam(lam: Any) -> float:
    """λ as a number: a rule such as ``"inverse-mean-norm"`` needs a pass over all the data."""
    if isinstance(lam, (str, bool)):
        raise TypeError(
            f"lam must be a number for chunked data (got {lam!r}); compute the "
            "rule's value on the data first"
        )
    return check_scalar(lam, "lam", low=0.0)


def chunk_seeds(n_chunks: int, seed: int) -> list:
    """One :class:`numpy.random.SeedSequence` per chunk, spawned from ``seed``."""
    return np.random.SeedSequence(int(seed)).spawn(n_chunks)


__all__ = ["ChunkedData", "supports_chunked", "check_chunked_landmarks"]
