"""Factorizers: the base class, the result record and the constraint checks.

A factorizer approximates a target matrix ``M`` by ``λ · S_1 ⋯ S_Q`` with each factor in a
constraint set given by a projection (:mod:`sparsekit.projections`):
``factorize(M, constraints) -> FactorizationResult``. Factorizers are a registry family of their
own (hook ``sparsekit_factorizers``, :func:`sparsekit.get_factorizer`), apart from the sparse
coding solvers (``solve(D, Y) -> SparseResult``, family ``"solver"``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base import ParamsMixin
from .._validation import check_array
from ..projections.base import Projection


@dataclass
class FactorizationResult:
    """The result of a factorizer (``factorize(M, constraints)``).

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
        ``"max_iter"``, ``"tol"`` (relative objective change below ``tol``), ``"exact"`` (the
        objective reached 0 with ``tol > 0``) or ``"safeguard"`` (no step size decreased the
        objective).
    target_norm : float
        ``‖M‖_F``, so that :attr:`relative_error` needs no copy of ``M``.
    extra : dict, optional
        Solver-specific details (Palm4MSA with ``keep_best``: ``extra["last"]``; hierarchical
        Palm4MSA: ``extra["stop_reasons"]``, the reason of every stage).
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


class Factorizer(ParamsMixin, ABC):
    """Base class of the factorizers: ``factorize(M, constraints) -> FactorizationResult``.

    A subclass sets ``name`` and implements :meth:`factorize`; ``ParamsMixin`` gives it
    ``get_params``/``set_params`` from its ``__init__`` signature (QuicK-means sets
    ``keep_best=True`` through them when the factorizer has that parameter).
    """

    name = "factorizer"
    #: ``factorize(M, s, n_factors=Q)`` also takes an integer sparsity level ``s`` and builds
    #: its own constraint schedule (the hierarchical factorizer); the ``palm4msa`` task of
    #: ``sparsekit run`` then passes the level instead of a list of projections
    takes_sparsity_level = False

    @abstractmethod
    def factorize(
        self, M: ArrayLike, constraints: Sequence[Any], **kwargs: Any
    ) -> FactorizationResult:
        """Factorize ``M`` under ``constraints`` (one projection per factor, left to right).

        Parameters
        ----------
        M : (m, n) array
            The target.
        constraints : list of projections
            One per factor, shapes chaining from ``m`` to ``n``.
        **kwargs
            Warm start (``init_factors``, ``init_scale``) and solver-specific options.

        Returns
        -------
        FactorizationResult
            The factors, the objective history and the stop reason.
        """


def resolve_projection(spec, q, registry=None):
    """A projection from an object or a ``(name, params)`` pair."""
    if isinstance(spec, Projection) or (
        callable(spec) and hasattr(spec, "shape") and hasattr(spec, "project_unchecked")
    ):
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


def check_constraints(
    shape: tuple[int, int], constraints: Sequence[Any], name: str = "constraints"
) -> list[Projection]:
    """Resolve the projections; check that their shapes chain from ``shape[0]`` to ``shape[1]``.

    Parameters
    ----------
    shape : (int, int)
        The target's shape.
    constraints : sequence
        One per factor: a projection object or a ``(name, params)`` pair (built through the
        default registry).
    name : str
        The argument's name in error messages.

    Returns
    -------
    list of projections
        One per factor, checked.

    Raises
    ------
    TypeError, ValueError
        Not a list of projections, empty, shapes that do not chain, or every factor constant.
    """
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


__all__ = ["Factorizer", "FactorizationResult"]
