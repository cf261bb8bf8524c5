"""Factorization solvers: protocol, result record and constraint checks.

A factorization solver approximates a target matrix ``M`` by ``λ · S_1 ⋯ S_Q`` with each
factor in a constraint set given by a projection (:mod:`sparsekit.projections`):
``factorize(M, constraints) -> FactorizationResult``. It is a different protocol from the
sparse coding solvers (``solve(D, Y)``); calling the other method is a ``TypeError``.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from .._base import ParamsMixin
from .._validation import check_array
from ..projections.base import Projection


@dataclass
class FactorizationResult:
    """The result of a factorization solver.

    Parameters
    ----------
    factors : SparseFactors
        The operator ``λ · S_1 ⋯ S_Q`` (``factors.scale`` is ``λ``).
    objective : ndarray
        ``‖M − λ S_1 ⋯ S_Q‖_F²`` after every accepted iteration (for the hierarchical solver,
        after every level's global step).
    n_iter : int
        Iterations run (summed over the Palm4MSA calls for the hierarchical solver).
    stop_reason : str
        ``"max_iter"``, ``"tol"`` (relative objective change below ``tol``) or ``"safeguard"``
        (no step size decreased the objective).
    target_norm : float
        ``‖M‖_F``, so that :attr:`relative_error` needs no copy of ``M``.
    extra : dict, optional
        Solver-specific details (Palm4MSA with ``keep_best``: ``extra["last"]``).
    """

    factors: object
    objective: np.ndarray
    n_iter: int
    stop_reason: str = "max_iter"
    target_norm: float = 1.0
    extra: dict = field(default_factory=dict)

    @property
    def relative_error(self) -> float:
        """``‖M − λ S_1 ⋯ S_Q‖_F / ‖M‖_F`` at the end."""
        if self.objective.size == 0:
            return float("nan")
        return float(np.sqrt(max(self.objective[-1], 0.0)) / (self.target_norm or 1.0))


class FactorizationSolver(ParamsMixin, ABC):
    """Base class of the factorization solvers: ``factorize(M, constraints)``."""

    name = "factorization"

    @abstractmethod
    def factorize(self, M, constraints, **kwargs) -> FactorizationResult:
        """Factorize ``M`` under ``constraints`` (one per factor, left to right).

        Parameters
        ----------
        M : array-like of shape (m, n)
            The target matrix.
        constraints : sequence
            One constraint (a projection) per factor, left to right.
        **kwargs
            Options of the solver.

        Returns
        -------
        FactorizationResult
            The factors, the objective history and the stop reason.
        """

    def solve(self, *args, **kwargs):
        """Refuse the sparse coding protocol, which belongs to the sparse coding solvers.

        Parameters
        ----------
        *args, **kwargs
            Ignored.

        Raises
        ------
        TypeError
            Always: a factorization solver has ``factorize(M, constraints)``, not ``solve(D, Y)``.
        """
        raise TypeError(
            f"{self.name} is a factorization solver: call factorize(M, constraints) to "
            "approximate a matrix by a product of sparse factors; solve(D, Y) belongs to the "
            "sparse coding solvers (mp, omp, nn-omp, frank-wolfe)"
        )


def resolve_projection(spec, q, registry=None):
    """A projection from an object or a ``(name, params)`` pair."""
    if isinstance(spec, Projection) or (callable(spec) and hasattr(spec, "shape")
                                        and hasattr(spec, "project_unchecked")):
        return spec
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        from ..registry import default_registry

        return (registry or default_registry()).get("projection", spec[0], **dict(spec[1]))
    raise TypeError(
        f"constraints[{q}] must be a projection (e.g. sparsekit.get_projection('splincol', "
        f"shape=(m, n), k=2)) or a (name, params) pair, got {type(spec).__name__}"
    )


def check_target(M, name="M"):
    return check_array(M, name)


def check_constraints(shape, constraints, name="constraints"):
    """Resolve the projections; check that their shapes chain from ``shape[0]`` to ``shape[1]``."""
    if isinstance(constraints, (Projection, str)) or not hasattr(constraints, "__len__"):
        raise TypeError(f"{name} must be a list of projections, one per factor")
    if len(constraints) == 0:
        raise ValueError(f"{name} is empty; give one projection per factor")
    projs = [resolve_projection(c, q) for q, c in enumerate(constraints)]
    rows = shape[0]
    for q, p in enumerate(projs):
        r, c = p.shape
        if r != rows:
            where = "the target's rows" if q == 0 else f"the columns of factor {q - 1} ({rows})"
            raise ValueError(
                f"{name} do not chain: factor {q} has shape {p.shape} but its rows must equal "
                f"{where} ({rows}); shapes must go {shape[0]} x d_1, d_1 x d_2, ..., d_(Q-1) x "
                f"{shape[1]}; got {[pp.shape for pp in projs]}"
            )
        rows = c
    if rows != shape[1]:
        raise ValueError(
            f"{name} do not chain: the last factor has {rows} columns but the target has "
            f"{shape[1]}; got shapes {[p.shape for p in projs]} for a target of shape {shape}"
        )
    if all(p.is_constant for p in projs):
        raise ValueError(f"{name}: every factor is constant; at least one must be free")
    return projs

__all__ = ["FactorizationResult", "FactorizationSolver"]
