"""A layer's weight matrix as a product of sparse factors: supports, values, initialisations.

Giffon 2020, PhD thesis, §3.4 ("PALMinize, then fine-tune"): the weight ``W`` of a trained
dense layer (``D × F``, Keras' ``(in, out)`` layout, ``y = x W``) or convolution (the filter
tensor ``(S, S, C, F)`` reshaped row-major to ``(S·S·C) × F``) is approximated by
``W̃ = S_1 S_2 ⋯ S_Q`` (Eq. 3.25–3.27), each ``S_q`` in the ``splincol`` set of level ``K``;
the supports of the factors are then frozen and only their non-zero values are fine-tuned.
This module holds the NumPy side (no Keras): the factor shapes and constraints, the
Palm4MSA factorization, and the two control variants of §3.4.3.

Decisions:

- Factor shapes: ``D × A``, ``Q − 2`` times ``A × A``, ``A × F`` with ``A = min(D, F)`` (the
  shapes of the reference implementation; ``Q = 1`` is a single ``D × F`` factor).
- Sparsity level ``K`` (thesis §3.4.4.1: at least ``K`` non-zeros per row and per column, at
  most ``2K`` on average): a factor of shape ``r × c`` is projected by ``splincol`` with
  ``K·c/A`` per row and ``K·r/A`` per column (floored, at least 1): ``K`` per row and column
  for the inner ``A × A`` factors, and the budgets ``K·D`` (left-most) and ``K·F``
  (right-most) of the reference implementation's table for the rectangular ones. ``K`` must
  be in ``[1, A]``; ``K = A`` keeps every factor dense.
- The scale ``λ`` of Palm4MSA is folded into the first factor (the one applied to the input).
- Re-initialisation (§3.4.3, implementation details): the first factor is drawn from He's
  rule, ``Var = 2 / fan_in`` (its input follows a ReLU and is not centred), the others from
  Xavier's, ``Var = 2 / (fan_in + fan_out)`` (no non-linearity between factors), where
  ``fan_in`` of an entry ``(i, j)`` is the number of non-zeros of column ``j`` of its factor
  (the inputs that output unit ``j`` receives in the ``(in, out)`` layout) and ``fan_out`` the
  number of non-zeros of row ``i``, not the full dimensions (the thesis found this necessary
  for re-initialised models to train). The thesis gives the variances only; the values are
  drawn from centred normal distributions with those variances.
- Random support (the thesis' "aléatoire" variant): each factor's support is the ``splincol``
  projection, with the same levels, of a standard Gaussian matrix; its values follow the
  re-initialisation rule.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._typing import RandomStateLike
from .._validation import check_array, check_option, check_random_state, check_scalar
from ..projections.base import Projection, RowColumnTopK

if TYPE_CHECKING:
    from ..factorizers.base import Factorizer

#: How the values (and supports) of the factors are obtained: Palm4MSA's factors, Palm4MSA's
#: supports with re-initialised values, or random supports with re-initialised values
INITS = ("palm", "reinit", "random")
#: The factorizers (the thesis used flat Palm4MSA for §3.4, §3.4.4.3)
FACTORIZERS = ("palm4msa", "hierarchical-palm4msa")


def _check_q_k(n_factors, sparsity, shape):
    Q = check_scalar(n_factors, "n_factors", kind=numbers.Integral, low=1, low_inclusive=True)
    K = check_scalar(sparsity, "sparsity", kind=numbers.Integral, low=1, low_inclusive=True)
    A = min(shape)
    if K > A:
        raise ValueError(
            f"sparsity={K} is larger than the weight's smaller side min{tuple(shape)} = {A}: "
            f"splincol cannot keep {K} non-zeros per row and column of a factor with {A} "
            f"rows or columns; use sparsity <= {A}"
        )
    return Q, K


def factor_shapes(shape: tuple[int, int], n_factors: int) -> list[tuple[int, int]]:
    """Return the shapes of ``Q`` factors whose product has ``shape = (D, F)``.

    They are ``D × A``, ``A × A``, …, ``A × F`` with ``A = min(D, F)``.

    Parameters
    ----------
    shape : (int, int)
        The weight's shape ``(D, F)`` (``(S·S·C, F)`` for a convolution).
    n_factors : int
        ``Q >= 1``.

    Returns
    -------
    list of (int, int)
        The factors' shapes, left to right.
    """
    D, F = (int(v) for v in shape)
    Q = check_scalar(n_factors, "n_factors", kind=numbers.Integral, low=1, low_inclusive=True)
    if Q == 1:
        return [(D, F)]
    A = min(D, F)
    return [(D, A)] + [(A, A)] * (Q - 2) + [(A, F)]


def splincol_constraints(
    shape: tuple[int, int], n_factors: int, sparsity: int
) -> list[RowColumnTopK]:
    """The ``splincol`` projections of the ``Q`` factors at sparsity level ``K``.

    A factor of shape ``r × c`` keeps ``max(1, ⌊K·c/A⌋)`` entries per row and
    ``max(1, ⌊K·r/A⌋)`` per column (``A = min(D, F)``; see the module notes).

    Parameters
    ----------
    shape : (int, int)
        The weight's shape ``(D, F)``.
    n_factors : int
        ``Q >= 1``.
    sparsity : int
        ``K`` in ``[1, min(D, F)]``.

    Returns
    -------
    list of :class:`~sparsekit.projections.RowColumnTopK`
        One projection per factor, left to right.

    Raises
    ------
    ValueError
        ``n_factors < 1``, or ``sparsity`` outside ``[1, min(D, F)]``.
    """
    Q, K = _check_q_k(n_factors, sparsity, shape)
    A = min(int(v) for v in shape)
    out = []
    for r, c in factor_shapes(shape, Q):
        k_row = min(max(1, K * c // A), c)
        k_col = min(max(1, K * r // A), r)
        out.append(RowColumnTopK((r, c), k_row, k_col))
    return out


def reinit_values(
    masks: Sequence[ArrayLike], random_state: RandomStateLike = None, dtype: DTypeLike = np.float32
) -> list[np.ndarray]:
    """Draw values for the supports ``masks`` by the re-initialisation rule of §3.4.3.

    Entry ``(i, j)`` of factor ``q`` is drawn from ``N(0, σ²)`` with ``σ² = 2 / fan_in`` (He)
    for the first factor and ``σ² = 2 / (fan_in + fan_out)`` (Xavier) for the others, where
    ``fan_in = nnz(column j)`` and ``fan_out = nnz(row i)`` of that factor's support; entries
    outside the support are 0.

    Parameters
    ----------
    masks : list of 2-D bool arrays
        The supports, first factor (applied to the input) first.
    random_state : None, int or numpy Generator
        Seeds the draws.
    dtype : float dtype, default float32
        The dtype of the values.

    Returns
    -------
    list of arrays, the shapes of ``masks``
        The factors: the drawn values on the supports, 0 elsewhere.
    """
    rng = check_random_state(random_state)
    out = []
    for q, mask in enumerate(masks):
        mask = np.asarray(mask, dtype=bool)
        fan_in = mask.sum(axis=0, keepdims=True).astype(np.float64)
        fan_out = mask.sum(axis=1, keepdims=True).astype(np.float64)
        var = 2.0 / np.maximum(fan_in, 1.0) if q == 0 else 2.0 / np.maximum(fan_in + fan_out, 1.0)
        values = rng.standard_normal(mask.shape) * np.sqrt(var)
        out.append(np.where(mask, values, 0.0).astype(dtype))
    return out


def random_supports(
    constraints: Sequence[Projection], random_state: RandomStateLike = None
) -> list[np.ndarray]:
    """Random supports: each constraint's ``splincol`` projection of a standard Gaussian matrix.

    Parameters
    ----------
    constraints : list of projections
        From :func:`splincol_constraints`.
    random_state : None, int or numpy Generator
        Seeds the Gaussian matrices.

    Returns
    -------
    list of boolean arrays
        The supports, one per constraint.
    """
    rng = check_random_state(random_state)
    return [p.project_unchecked(rng.standard_normal(p.shape)) != 0 for p in constraints]


@dataclass
class PalminizedWeight:
    """A weight matrix as a product of sparse factors (the result of :func:`palminize`).

    Parameters
    ----------
    factors : list of ndarray
        ``S_1, …, S_Q`` (dense arrays, zeros outside the supports; ``λ`` folded into ``S_1``),
        with ``S_1 ⋯ S_Q ≈ W``.
    masks : list of bool ndarray
        The supports of the factors.
    relative_error : float
        ``‖W − S_1 ⋯ S_Q‖_F² / ‖W‖_F²`` (thesis Eq. 3.29), of these factors in their dtype.
    init : str
        ``"palm"``, ``"reinit"`` or ``"random"``.
    extra : dict
        ``n_iter`` and ``stop_reason`` of the factorizer (absent for ``"random"``).
    """

    factors: list
    masks: list
    relative_error: float
    init: str = "palm"
    extra: dict = field(default_factory=dict)

    @property
    def nnz(self) -> int:
        """Non-zeros of the supports (the stored values of the factored weight)."""
        return int(sum(int(m.sum()) for m in self.masks))

    def product(self) -> np.ndarray:
        """Multiply the factors out.

        Returns
        -------
        ndarray
            ``S_1 ⋯ S_Q`` in float64.
        """
        out = np.asarray(self.factors[0], dtype=np.float64)
        for f in self.factors[1:]:
            out = out @ np.asarray(f, dtype=np.float64)
        return out


def relative_error(W: ArrayLike, factors: Sequence[ArrayLike]) -> float:
    """Compute ``‖W − S_1 ⋯ S_Q‖_F² / ‖W‖_F²`` (Giffon 2020, Eq. 3.29) in float64.

    Parameters
    ----------
    W : array of shape (D, F)
        The weight matrix.
    factors : list of arrays
        ``S_1, …, S_Q``.

    Returns
    -------
    float
        The relative squared error of the product.
    """
    W = np.asarray(W, dtype=np.float64)
    P = np.asarray(factors[0], dtype=np.float64)
    for f in factors[1:]:
        P = P @ np.asarray(f, dtype=np.float64)
    return float(np.sum((W - P) ** 2) / np.sum(W**2))


def _solve(W, constraints, sparsity, factorizer, n_iter, tol):
    from ..factorizers.hierarchical import HierarchicalPalm4MSA, hierarchical_constraints
    from ..factorizers.palm4msa import Palm4MSA

    if isinstance(factorizer, str):
        name = check_option(factorizer, "factorizer", FACTORIZERS)
        factorizer = (
            Palm4MSA(n_iter=n_iter, tol=tol)
            if name == "palm4msa"
            else HierarchicalPalm4MSA(n_iter=n_iter, tol=tol)
        )
    elif not hasattr(factorizer, "factorize"):
        raise TypeError(
            f"factorizer must be one of {list(FACTORIZERS)} or a factorizer (an "
            f"object with factorize(M, constraints)), got {factorizer!r}"
        )
    if isinstance(factorizer, HierarchicalPalm4MSA) and len(constraints) > 1:
        # the residuals of the level schedule, the last one being the last factor's set
        _, residuals = hierarchical_constraints(W.shape, len(constraints), sparsity)
        residuals[-1] = constraints[-1]
        result = factorizer.factorize(W, (constraints[:-1], residuals))
    elif isinstance(factorizer, HierarchicalPalm4MSA):
        result = Palm4MSA(n_iter=factorizer.n_iter, tol=factorizer.tol).factorize(W, constraints)
    else:
        result = factorizer.factorize(W, constraints)
    op = result.factors
    factors = [S.toarray() for S in op.factors]
    factors[0] = factors[0] * op.scale
    return factors, {"n_iter": int(result.n_iter), "stop_reason": str(result.stop_reason)}


def palminize(
    W: ArrayLike,
    n_factors: int,
    sparsity: int,
    *,
    init: str = "palm",
    factorizer: str | Factorizer = "palm4msa",
    n_iter: int = 300,
    tol: float = 1e-6,
    random_state: RandomStateLike = None,
    dtype: DTypeLike = np.float32,
) -> PalminizedWeight:
    """Approximate ``W`` by a product of ``n_factors`` sparse factors (thesis §3.4.3).

    ``W ≈ S_1 ⋯ S_Q`` with each ``S_q`` in its ``splincol`` set of level ``K``
    (:func:`splincol_constraints`), by Palm4MSA (Eq. 3.27; thesis settings: at most 300
    iterations, relative objective change ``1e-6``); ``init`` picks the thesis' variant.

    Parameters
    ----------
    W : (D, F) array
        The weight matrix, Keras' ``(in, out)`` layout (a convolution's filters reshaped to
        ``(S·S·C) × F``).
    n_factors : int
        ``Q >= 1``.
    sparsity : int
        ``K`` in ``[1, min(D, F)]``.
    init : {"palm", "reinit", "random"}, default "palm"
        ``"palm"``: Palm4MSA's factors; ``"reinit"``: Palm4MSA's supports with values drawn by
        :func:`reinit_values`; ``"random"``: :func:`random_supports` with those values (no
        factorization is run).
    factorizer : {"palm4msa", "hierarchical-palm4msa"} or factorizer, default "palm4msa"
        ``"hierarchical-palm4msa"`` peels the factors off one at a time (its last residual
        constrained as the last factor); an object with ``factorize(M, constraints)`` is
        called with the list of constraints.
    n_iter : int, default 300
        Passed to the named factorizer.
    tol : float, default 1e-6
        Passed to the named factorizer.
    random_state : None, int or numpy Generator
        For ``"reinit"`` and ``"random"``.
    dtype : float dtype, default float32
        The factors' dtype (the factorization itself runs in float64).

    Returns
    -------
    PalminizedWeight
        The factors, their supports and the relative error.

    Raises
    ------
    ValueError
        ``W`` not a finite 2-D array or all zeros, ``n_factors < 1``, ``sparsity`` outside
        ``[1, min(D, F)]``, unknown ``init`` or ``factorizer``.
    """
    W = check_array(W, "W", dtype=np.float64)
    init = check_option(init, "init", INITS)
    constraints = splincol_constraints(W.shape, n_factors, sparsity)
    if not np.any(W):
        raise ValueError(
            "W is all zeros: there is nothing to factorize (relative error "
            "‖W − W̃‖²/‖W‖² is undefined)"
        )
    rng = check_random_state(random_state)
    extra: dict = {}
    if init == "random":
        masks = random_supports(constraints, rng)
    else:
        factors, extra = _solve(W, constraints, sparsity, factorizer, n_iter, tol)
        masks = [f != 0 for f in factors]
    if init == "palm":
        factors = [f.astype(dtype) for f in factors]
    else:
        factors = reinit_values(masks, rng, dtype)
    return PalminizedWeight(factors, masks, relative_error(W, factors), init, extra)


__all__ = [
    "INITS",
    "FACTORIZERS",
    "PalminizedWeight",
    "factor_shapes",
    "palminize",
    "random_supports",
    "reinit_values",
    "relative_error",
    "splincol_constraints",
]
