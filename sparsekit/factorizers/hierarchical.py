"""Hierarchical Palm4MSA: factors peeled off one at a time, each followed by a global fine-tune.

Le Magoarou & Gribonval 2016; Giffon 2020, PhD thesis, §3.2.3 and §3.3.5.1 (used to initialize
QuicK-means). With the residual kept on the right, level ``k = 1, …, Q−1``:

1. split: a 2-factor Palm4MSA approximates the current residual ``T_{k−1}`` (``T_0 = U``) by
   ``λ' S_k T_k`` with ``S_k ∈ E_k`` and ``T_k ∈ Ẽ_k`` (default initialization);
2. ``λ ← λ'`` at the first level, else ``λ ← λ · λ'``;
3. global: Palm4MSA on ``U`` with the ``k + 1`` factors ``S_1, …, S_k, T_k``, warm-started at
   the current values and ``λ``.

The last residual is the last factor, ``S_Q = T_{Q−1}``.

:func:`hierarchical_constraints` builds the constraint schedule from the target's shape, the
number of factors and the sparsity level ``s`` (non-zeros per row and column), with the budgets
of the reference implementation (thesis §3.3.5.1; Le Magoarou & Gribonval 2016): for
``A = min(m, n)``, the left-most ``m × A`` factor keeps ``s`` per row and ``s·m/A`` per column,
inner ``A × A`` factors ``s`` per row and column, and the residual after level ``k`` has the
total budget ``max(s·A, ⌊n·A / 2^k⌋)`` (halved at each level down to the factor budget; the last
one is at least the right-most factor's budget ``s·n``, i.e. ``s·n/A`` per row, ``s`` per column).
The reference implementation's rule for rectangular factors (per row ε/#cols) would give the
``K × A`` factor ``s·K/A`` per row; the table of budgets (and the definition of ``s`` as the
count per row *and* column, §3.3.5.1) gives ``s`` per row and ``s·K/A`` per column, which is
implemented.
For the ``2^Q × 2^Q`` Hadamard matrix with ``s = 2`` this is FAµST's schedule: factors with 2
per row and column, residuals with ``2^Q / 2^k`` per row and column.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._runtime.threads import thread_limit
from .._validation import check_scalar
from ..projections.base import RowColumnTopK
from .base import FactorizationResult, Factorizer, check_constraints, check_target
from .palm4msa import (
    UPDATE_WAYS,
    _objective,
    default_factors,
    palm_threads,
    run_palm,
    to_sparse_factors,
)


def _per_row_col(budget, shape):
    """Per-row and per-column counts of a total budget: ``budget // n_rows`` per row and
    ``budget // n_cols`` per column (each row and each column then holds at least its share)."""
    r, c = shape
    k_row = int(min(max(budget // r, 1), c))
    k_col = int(min(max(budget // c, 1), r))
    return k_row, k_col


def hierarchical_constraints(
    shape: tuple[int, int], n_factors: int, sparsity: int, *, projection: str = "splincol"
) -> tuple[list, list]:
    """Factor and residual constraints of hierarchical Palm4MSA for an ``m × n`` target.

    Parameters
    ----------
    shape : (int, int)
        The target's shape ``(m, n)``.
    n_factors : int
        ``Q >= 2`` factors: ``m × A``, ``Q − 2`` times ``A × A``, ``A × n`` with ``A = min(m, n)``.
    sparsity : int
        ``s``: non-zeros per row and per column of each factor (at least; ``splincol`` keeps the
        union of the row and column selections).
    projection : {"splincol"}
        The projection used (the only one the schedule is defined for).

    Returns
    -------
    factor_constraints : list of projections
        ``Q − 1`` projections, of ``S_1 … S_{Q−1}``.
    residual_constraints : list of projections
        ``Q − 1`` projections, of ``T_1 … T_{Q−1}`` (``T_{Q−1}`` is ``S_Q``).
    """
    if projection != "splincol":
        raise ValueError(f"projection must be 'splincol', got {projection!r}")
    try:
        m, n = (int(v) for v in shape)
    except (TypeError, ValueError):
        raise ValueError(f"shape must be a pair (n_rows, n_cols), got {shape!r}") from None
    if m < 1 or n < 1:
        raise ValueError(f"shape must hold positive integers, got {shape!r}")
    Q = check_scalar(n_factors, "n_factors", kind=numbers.Integral, low=2, low_inclusive=True)
    s = check_scalar(sparsity, "sparsity", kind=numbers.Integral, low=1, low_inclusive=True)
    A = min(m, n)
    if s > A:
        raise ValueError(f"sparsity={s} is larger than the factors' smaller side min(m, n) = {A}")
    facts, res = [], []
    rows = m
    for k in range(1, Q):
        fshape = (rows, A)
        budget = s * rows  # s per row, s*rows/A per column
        facts.append(RowColumnTopK(fshape, *_per_row_col(budget, fshape)))
        rshape = (A, n)
        budget_res = max(s * A, (n * A) // 2**k)
        if k == Q - 1:
            budget_res = max(budget_res, s * n)
        res.append(RowColumnTopK(rshape, *_per_row_col(budget_res, rshape)))
        rows = A
    return facts, res


def hierarchical_dense(
    U, fact_projs, res_projs, *, n_iter, n_iter_global, tol, safeguard, update_way
):
    """The compute core of :class:`HierarchicalPalm4MSA` on dense arrays; also returns the
    stop reason of every Palm4MSA call, in run order (split 1, global 1, split 2, …)."""
    dtype = U.dtype
    T = U
    lam = 1.0
    left = []
    history = []
    total = 0
    reasons = []
    for k in range(len(fact_projs)):
        pair = [fact_projs[k], res_projs[k]]
        f, lam2, _, it, why = run_palm(
            T,
            pair,
            default_factors(pair, dtype, update_way),
            1.0,
            n_iter=n_iter,
            tol=tol,
            safeguard=safeguard,
            update_way=update_way,
        )
        total += it
        reasons.append(why)
        lam = lam2 if k == 0 else lam * lam2
        factors = left + f
        projs = list(fact_projs[: k + 1]) + [res_projs[k]]
        factors, lam, hist, it, why = run_palm(
            U,
            projs,
            factors,
            lam,
            n_iter=n_iter_global,
            tol=tol,
            safeguard=safeguard,
            update_way=update_way,
        )
        total += it
        reasons.append(why)
        if not hist:  # the safeguard refused every step: the warm start stands
            hist = [_objective(U, np.linalg.multi_dot(factors), lam)]
        history.append(hist[-1])
        left = factors[:-1]
        T = factors[-1]
    return left + [T], lam, history, total, reasons


class HierarchicalPalm4MSA(Factorizer):
    """Hierarchical Palm4MSA (registered as ``"hierarchical-palm4msa"``).

    ``factorize(M, constraints)`` takes ``constraints`` as a pair ``(factor_constraints,
    residual_constraints)`` of ``Q − 1`` projections each (see :func:`hierarchical_constraints`),
    or as an integer sparsity level with ``n_factors`` to build that schedule.

    Parameters
    ----------
    n_iter : int, default 300
        Palm4MSA iterations of each split.
    n_iter_global : int, optional
        Palm4MSA iterations of each global fine-tune (default: ``n_iter``).
    tol : float, default 1e-6
        As for :class:`~sparsekit.factorizers.palm4msa.Palm4MSA`.
    update_way : {"right-to-left", "left-to-right"}, default "right-to-left"
        As for :class:`~sparsekit.factorizers.palm4msa.Palm4MSA`.
    safeguard : bool, default False
        As for :class:`~sparsekit.factorizers.palm4msa.Palm4MSA`.
    n_jobs : int, optional
        As for :class:`~sparsekit.factorizers.palm4msa.Palm4MSA`.

    Notes
    -----
    The result's ``n_iter`` sums the iterations of every split and global stage, and its
    ``stop_reason`` is ``"max_iter"`` only when every one of them ran all its iterations
    (``n_iter`` is then ``(Q − 1)(n_iter + n_iter_global)``, always the case with ``tol=0``);
    otherwise it is the reason of the last stage that stopped early (``"tol"``, ``"exact"`` or
    ``"safeguard"``, as for :class:`~sparsekit.factorizers.palm4msa.Palm4MSA`).
    ``extra["stop_reasons"]`` lists the reason of every stage in run order: split 1, global 1,
    split 2, …
    """

    name = "hierarchical-palm4msa"
    takes_sparsity_level = True

    def __init__(
        self,
        n_iter: int = 300,
        n_iter_global: int | None = None,
        tol: float = 1e-6,
        update_way: str = "right-to-left",
        safeguard: bool = False,
        n_jobs: int | None = None,
    ) -> None:
        self.n_iter = n_iter
        self.n_iter_global = n_iter_global
        self.tol = tol
        self.update_way = update_way
        self.safeguard = safeguard
        self.n_jobs = n_jobs

    def factorize(
        self, M: ArrayLike, constraints: Any, *, n_factors: int | None = None
    ) -> FactorizationResult:
        """Approximate ``M`` by ``λ S_1 ⋯ S_Q`` level by level.

        Parameters
        ----------
        M : array-like of shape (m, n)
            The target matrix.
        constraints : (list, list) or int
            ``(factor_constraints, residual_constraints)``, or a sparsity level ``s`` (then
            ``n_factors`` is required and the schedule is :func:`hierarchical_constraints`).
        n_factors : int, optional
            The number of factors Q, with an integer ``constraints``.

        Returns
        -------
        FactorizationResult
            The factors, the objective after every level's global step, and the stop reason.
        """
        from .palm4msa import Palm4MSA

        n_iter, tol, way = Palm4MSA(self.n_iter, self.tol, self.update_way)._checked()
        n_glob = (
            n_iter
            if self.n_iter_global is None
            else check_scalar(
                self.n_iter_global,
                "n_iter_global",
                kind=numbers.Integral,
                low=1,
                low_inclusive=True,
            )
        )
        U = check_target(M)
        if isinstance(constraints, numbers.Integral) and not isinstance(constraints, bool):
            if n_factors is None:
                raise TypeError("with a sparsity level as constraints, give n_factors as well")
            facts, res = hierarchical_constraints(U.shape, n_factors, int(constraints))
        else:
            try:
                facts, res = constraints
            except (TypeError, ValueError):
                raise TypeError(
                    "constraints must be (factor_constraints, residual_constraints) or an "
                    "integer sparsity level (see hierarchical_constraints)"
                ) from None
            if len(facts) != len(res) or not len(facts):
                raise ValueError(
                    f"factor and residual constraints must be two non-empty lists of the same "
                    f"length (Q - 1), got {len(facts)} and {len(res)}"
                )
        facts = list(facts)
        res = list(res)
        # every level's factors must chain: S_1..S_k, T_k
        for k in range(len(facts)):
            level = check_constraints(
                U.shape, facts[: k + 1] + [res[k]], name=f"constraints of level {k + 1}"
            )
            facts[: k + 1] = level[:-1]
            res[k] = level[-1]
        shapes = [U.shape] + [p.shape for p in facts + res]
        with thread_limit(palm_threads(self.n_jobs, shapes)):
            factors, lam, hist, it, reasons = hierarchical_dense(
                U,
                facts,
                res,
                n_iter=n_iter,
                n_iter_global=n_glob,
                tol=tol,
                safeguard=bool(self.safeguard),
                update_way=way,
            )
        early = [why for why in reasons if why != "max_iter"]
        return FactorizationResult(
            factors=to_sparse_factors(factors, lam, U.dtype),
            objective=np.asarray(hist),
            n_iter=it,
            stop_reason=early[-1] if early else "max_iter",
            target_norm=float(np.linalg.norm(U)),
            extra={"stop_reasons": reasons},
        )


__all__ = ["HierarchicalPalm4MSA", "hierarchical_constraints", "UPDATE_WAYS"]
