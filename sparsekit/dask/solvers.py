"""Sparse solvers over a chunked matrix of signals (signals as columns, chunked by column)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._checks import _dask_array
from ._heap import chunk_task

if TYPE_CHECKING:
    import dask.array as da

    from ..registry import Registry


@chunk_task
def _solve_block(Yb, D, solver, beta=None, *, out_dtype):
    Yb = np.asarray(Yb)
    if Yb.ndim != 2 or Yb.shape[0] != D.shape[0]:
        raise ValueError(
            f"a chunk of Y has shape {Yb.shape} but the dictionary has "
            f"{D.shape[0]} rows: every chunk must hold whole signals (columns)"
        )
    if Yb.shape[1] == 0:  # an empty chunk of signals (solvers refuse empty input)
        return np.empty((D.shape[1], 0), dtype=out_dtype)
    if beta is not None:
        import copy

        solver = copy.deepcopy(solver).set_params(beta=np.asarray(beta))
    return solver.solve(D, Yb).coef


def solve(
    solver: str | object,
    D: np.ndarray,
    Yd: da.Array,
    *,
    registry: Registry | None = None,
    **solver_params: Any,
) -> da.Array:
    """Solve for the coefficients X with Y ≈ D X, chunk of signals by chunk, lazily.

    The solvers treat each signal (column of Y) independently, so the result equals
    ``solver.solve(D, Yd.compute()).coef`` column for column.

    Parameters
    ----------
    solver : str or solver object
        A registered solver (``"omp"``, ``"mp"``, ``"frank-wolfe"``, ...; ``solver_params``
        passed to its factory) or a solver object (copied).
    D : ndarray (n_features, n_atoms)
        The dictionary: one node of the task graph, sent once to each worker.
    Yd : dask array (n_features, n_signals)
        Signals as columns; chunks along the rows are merged. A Frank–Wolfe radius ``beta``
        given per signal (an array) is split with the columns.
    registry : Registry, optional
        Where a solver name is resolved (default: the process-wide registry).
    **solver_params
        Parameters of the named solver.

    Returns
    -------
    dask array of shape (n_atoms, n_signals)
        The coefficients, chunked as the columns of ``Yd``.
    """
    import dask

    from ..components import resolve

    da = _dask_array()
    solver = resolve("solver", solver, solver_params, registry=registry)
    D = np.asarray(D)
    if D.ndim != 2:
        raise ValueError(f"D must be 2-D (n_features, n_atoms), got shape {D.shape}")
    if not isinstance(Yd, da.Array):
        raise TypeError(f"Yd must be a dask.array.Array, got {type(Yd).__name__}")
    if Yd.ndim != 2 or Yd.shape[0] != D.shape[0]:
        raise ValueError(f"Yd must have shape (n_features={D.shape[0]}, n_signals), got {Yd.shape}")
    if len(Yd.chunks[0]) > 1:
        Yd = Yd.rechunk({0: -1})
    dtype = np.result_type(D.dtype, Yd.dtype)
    Dd = dask.delayed(D, pure=True, traverse=False)
    beta = getattr(solver, "beta", None)
    per_signal: tuple = ()  # a per-signal beta travels with its chunk of signals
    if beta is not None and np.ndim(beta) == 1:
        beta = np.asarray(beta)
        if beta.shape[0] != Yd.shape[1]:
            raise ValueError(f"beta has {beta.shape[0]} entries for {Yd.shape[1]} signals")
        per_signal = (da.from_array(beta, chunks=(Yd.chunks[1],)), "j")
    return da.blockwise(
        _solve_block,
        "ij",
        Yd,
        "kj",
        Dd,
        None,
        solver,
        None,
        *per_signal,
        dtype=dtype,
        concatenate=True,
        out_dtype=dtype,
        new_axes={"i": D.shape[1]},
    )


__all__ = ["solve"]
