"""The ridge parameter λ of leverage-score samplers: a number or a named rule.

- a real number λ > 0;
- ``"inverse-mean-norm"``: λ = ((1/n) Σ_i ‖x_i‖₂)⁻¹, the choice of Cherfaoui 2022, PhD
  thesis, §3.3 (after Brefeld et al. 2006). It reads the raw vectors, so it is not available
  for graph kernels.

The recursive-RLS sampler adds its own ``"adaptive"`` mode (see
:mod:`sparsekit.samplers.recursive`).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from .._validation import check_option, check_positive

if TYPE_CHECKING:
    from ..kernels.base import Kernel

LAM_RULES = ("inverse-mean-norm",)


# rules=() accepts numbers only, so the result is a float
@overload
def check_lam(lam: float | str, rules: tuple[()]) -> float: ...


@overload
def check_lam(lam: float | str, rules: Sequence[str] = ...) -> float | str: ...


def check_lam(lam: float | str, rules: Sequence[str] = LAM_RULES) -> float | str:
    """Validate ``lam`` (a positive number or one of ``rules``) and return it normalized.

    Parameters
    ----------
    lam : float or str
        The ridge parameter λ, or the name of a rule.
    rules : tuple of str, default ("inverse-mean-norm",)
        The rules accepted; ``()`` accepts numbers only (the λ of the regularized Nyström kernel
        in :mod:`sparsekit.stats`).

    Returns
    -------
    float or str
        ``lam``: a positive float, or the rule's canonical name.

    Raises
    ------
    TypeError
        ``lam`` is neither a number nor a string rule.
    ValueError
        ``lam`` is not positive, or names an unknown rule.
    """
    if isinstance(lam, str) and rules:
        return check_option(lam, "lam rule", rules)
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real):
        named = f" or one of {list(rules)}" if rules else ""
        raise TypeError(f"lam must be a positive number{named}, got {lam!r} ({type(lam).__name__})")
    if not lam > 0:
        raise ValueError(f"lam must be > 0 (the ridge parameter λ), got {lam!r}; try lam=1.0")
    return check_positive(lam, "lam")


def inverse_mean_norm(X: np.ndarray) -> float:
    """λ = ((1/n) Σ_i ‖x_i‖₂)⁻¹ on validated vectors ``X``."""
    norms = np.sqrt(np.einsum("ij,ij->i", X, X, dtype=np.float64))
    mean = float(norms.mean())
    if not mean > 0:
        raise ValueError(
            "lam='inverse-mean-norm' needs data with a non-zero mean norm (every row of X is 0); "
            "give lam as a number"
        )
    return 1.0 / mean


def resolve_lam(
    lam: float | str, Xp: Any, kernel: Kernel, rules: Sequence[str] = LAM_RULES
) -> float | str:
    """Return the numeric λ for prepared data ``Xp``.

    Parameters
    ----------
    lam : float or str
        The ridge parameter λ, or the name of a rule.
    Xp : object
        Data prepared by ``kernel``.
    kernel : Kernel
        The kernel (a rule that reads the raw vectors needs a vector kernel).
    rules : tuple of str, default ("inverse-mean-norm",)
        The rules accepted.

    Returns
    -------
    float or str
        The numeric λ (rules outside ``LAM_RULES`` pass through).

    Raises
    ------
    ValueError
        The rule cannot be applied (a graph kernel, or data of zero mean norm).
    """
    lam = check_lam(lam, rules)
    if not isinstance(lam, str):
        return lam
    if lam == "inverse-mean-norm":
        if (
            getattr(kernel, "accepts", "vectors") != "vectors"
            or not isinstance(Xp, np.ndarray)
            or Xp.ndim != 2
        ):
            raise ValueError(
                "lam='inverse-mean-norm' reads the raw vectors and cannot be used with a graph "
                "kernel; give lam as a number"
            )
        return inverse_mean_norm(Xp)
    return lam


__all__ = ["resolve_lam", "check_lam"]
