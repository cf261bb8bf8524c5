"""Dictionary coherence, the Babel function, recovery conditions and the Chapter 5 rates.

All quantities are those of Cherfaoui 2022, PhD thesis, §2.2.3 and §5.3, and are defined for
unit-norm atoms; the functions normalise the columns of ``D`` first (so they describe the dictionary
of directions, which is what the greedy selections see for unit-norm atoms). ``D.T @ D`` is never
held whole: it is formed in column blocks of ``block`` atoms.

- coherence ``mu(D) = max_{i != j} |<d_i, d_j>|``;
- Babel function ``mu_1(D, m) = max_{|S| = m} max_{j not in S} sum_{i in S} |<d_i, d_j>|``, computed
  exactly as ``max_j`` (sum of the ``m`` largest ``|<d_i, d_j>|``, ``i != j``) (thesis §2.2.3);
  ``mu_1(D, 0) = 0`` and ``mu_1(D, 1) = mu(D)``;
- the exact recovery condition (Tropp 2004) ``ERC(S) = max_{i not in S} ||D_S^+ d_i||_1 < 1``;
- the sufficient condition ``m < (1/mu + 1) / 2`` (Tropp 2004, Thm 3.5 / Cor. 3.6);
- the rate ``theta`` of Theorem 5, the factor of Theorem 6 and Gribonval–Vandergheynst's MP rate,
  with the bound ``||r_k||_2 <= ||y||_2 (1 - theta)^{k/2}`` used in the Chapter 5 plots.

Decision on a misprint (thesis §5.3, proof of Theorem 5 in App. B.1): Theorem 5's ``theta`` has
the square ``(1 - ||x*||_1 / beta)^2``; the proof writes ``eps^2 / (4 beta^2)`` as
``(1/16) (1 - ||x*||_1 / beta)``, without it. The theorem statement is followed.
"""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_scalar
from .base import _max_exponent, check_dictionary

_BLOCK = 1024


def _unit_atoms(D):
    D, _ = check_dictionary(D)
    D = np.ldexp(D, -_max_exponent(D))  # a power of two: squares neither overflow nor underflow
    return D / np.sqrt(np.einsum("ij,ij->j", D, D))


def _abs_gram_blocks(Dn, block):
    """Yield ``(cols, |Dn.T @ Dn[:, cols]|)`` with the diagonal entries set to 0."""
    n = Dn.shape[1]
    for a in range(0, n, block):
        b = min(n, a + block)
        blk = np.abs(Dn.T @ Dn[:, a:b])
        blk[np.arange(a, b), np.arange(b - a)] = 0.0
        yield a, blk


def mutual_coherence(D: ArrayLike, *, block: int = _BLOCK) -> float:
    """Compute the mutual coherence ``mu(D) = max_{i != j} |<d_i, d_j>|`` of the atoms.

    Cherfaoui 2022, PhD thesis, §2.2.3.

    Parameters
    ----------
    D : array-like of shape (n_features, n_atoms)
        The dictionary (atoms are columns; they are normalised here).
    block : int, default 1024
        Atoms per block of the Gram matrix (memory O(n_atoms · block)).

    Returns
    -------
    float
        ``mu(D)``.
    """
    Dn = _unit_atoms(D)
    if Dn.shape[1] < 2:
        raise ValueError("D needs at least 2 atoms to have a coherence")
    return float(max(blk.max() for _, blk in _abs_gram_blocks(Dn, block)))


def babel(D: ArrayLike, m: ArrayLike, *, block: int = _BLOCK) -> float | np.ndarray:
    """Compute the Babel function ``mu_1(D, m)`` (Tropp 2004; Cherfaoui 2022, §2.2.3).

    Parameters
    ----------
    D : array-like of shape (n_features, n_atoms)
        The dictionary (atoms are columns; they are normalised here).
    m : int or sequence of int
        Sizes of the sets of atoms, each in ``[0, n_atoms - 1]``.
    block : int, default 1024
        Atoms per block of the Gram matrix (memory O(n_atoms · block)).

    Returns
    -------
    float or ndarray of float
        ``mu_1(D, m)``: a float, or one value per entry of a sequence ``m``.
    """
    Dn = _unit_atoms(D)
    n = Dn.shape[1]
    ms = np.atleast_1d(np.asarray(m))
    if ms.dtype.kind not in "iu" or ms.ndim != 1 or ms.size == 0:
        raise TypeError(f"m must be an int or a sequence of ints, got {m!r}")
    if ms.min() < 0 or ms.max() > n - 1:
        raise ValueError(f"m must be in [0, n_atoms - 1] = [0, {n - 1}], got {m!r}")
    top = int(ms.max())
    out = np.zeros(ms.shape, dtype=np.float64)
    if top > 0:
        for _, blk in _abs_gram_blocks(Dn, block):
            # the ``top`` largest entries of every column, sorted decreasingly
            part = -np.partition(-blk, top - 1, axis=0)[:top] if top < n else blk
            part = -np.sort(-part, axis=0)
            csum = np.cumsum(part, axis=0)
            for q, mq in enumerate(ms):
                if mq > 0:
                    out[q] = max(out[q], float(csum[mq - 1].max()))
    return float(out[0]) if np.ndim(m) == 0 else out


def exact_recovery_condition(D: ArrayLike, support: ArrayLike) -> float:
    """Compute Tropp's exact recovery condition (Cherfaoui 2022, PhD thesis, eq. 5.6).

    ERC holds if < 1.

    Parameters
    ----------
    D : array-like of shape (n_features, n_atoms)
        The dictionary (atoms are columns; they are normalised here).
    support : sequence of int
        The support ``S``: distinct atom indices.

    Returns
    -------
    float
        ``max_{i not in S} ||D_S^+ d_i||_1``; the ERC holds if it is < 1.
    """
    Dn = _unit_atoms(D)
    n = Dn.shape[1]
    S = np.asarray(support)
    if S.ndim != 1 or S.size == 0 or S.dtype.kind not in "iu":
        raise ValueError(
            f"support must be a non-empty 1-D sequence of atom indices, got {support!r}"
        )
    if S.min() < 0 or S.max() >= n:
        raise ValueError(f"support indices must be in [0, {n - 1}], got {S.tolist()}")
    if np.unique(S).size != S.size:
        raise ValueError(f"support has repeated indices: {S.tolist()}")
    if S.size == n:
        raise ValueError("support holds every atom; the ERC needs at least one atom outside it")
    rest = np.setdiff1d(np.arange(n), S)
    P = np.linalg.pinv(Dn[:, S])  # (|S|, n_features)
    best = 0.0
    for a in range(0, rest.size, _BLOCK):
        cols = rest[a : a + _BLOCK]
        best = max(best, float(np.abs(P @ Dn[:, cols]).sum(axis=0).max()))
    return best


def coherence_sparsity_bound(mu: float) -> float:
    """Compute ``(1/mu + 1) / 2``: every smaller ``m`` satisfies the ERC for all supports.

    An orthonormal dictionary (``mu = 0``) gives ``inf``: every support is recovered.

    Parameters
    ----------
    mu : float in [0, 1]
        The mutual coherence of the dictionary.

    Returns
    -------
    float
        ``(1/mu + 1) / 2`` (``inf`` for ``mu = 0``).
    """
    mu = check_scalar(mu, "mu", low=0.0, high=1.0, low_inclusive=True)
    if mu == 0.0:
        return float("inf")
    return 0.5 * (1.0 / mu + 1.0)


def satisfies_coherence_condition(m: int, mu: float) -> bool:
    """Tell whether ``m < (1/mu + 1) / 2`` (Tropp 2004, Thm 3.5 / Cor. 3.6).

    Parameters
    ----------
    m : int
        The sparsity.
    mu : float in [0, 1]
        The mutual coherence of the dictionary.

    Returns
    -------
    bool
        Whether ``m < (1/mu + 1) / 2``.
    """
    m = check_scalar(m, "m", kind=numbers.Integral, low=0)
    return bool(m < coherence_sparsity_bound(mu))


def _check_babel_value(babel_m1):
    return check_scalar(
        babel_m1, "babel_m1", low=0.0, low_inclusive=True, high=1.0, high_inclusive=False
    )


def theorem5_rate(m: int, babel_m1: float, coef_l1: float, beta: float) -> float:
    """Compute the Frank–Wolfe rate ``theta`` of Theorem 5 (Cherfaoui 2022, §5.3).

    ``theta = (1/16) ((1 - mu_1(m-1)) / m) (1 - ||x*||_1 / beta)^2`` (Cherfaoui 2022, PhD
    thesis, §5.3, Theorem 5).

    Eventually ``||r_{k+1}||^2 <= (1 - theta) ||r_k||^2`` for Frank–Wolfe with line search when
    ``m < (1/mu + 1)/2`` and ``||x*||_1 < beta``.

    Parameters
    ----------
    m : int >= 1
        The sparsity of ``y = D x*``.
    babel_m1 : float in [0, 1)
        ``mu_1(D, m - 1)``.
    coef_l1 : float >= 0
        ``||x*||_1``.
    beta : float > coef_l1
        The radius of the l1 ball.

    Returns
    -------
    float
        ``theta``.
    """
    m = check_scalar(m, "m", kind=numbers.Integral, low=0)
    mu1 = _check_babel_value(babel_m1)
    beta = check_scalar(beta, "beta", low=0.0)
    a = check_scalar(coef_l1, "coef_l1", low=0.0, low_inclusive=True)
    if a >= beta:
        raise ValueError(f"Theorem 5 needs ||x*||_1 < beta, got coef_l1={a:g} >= beta={beta:g}")
    return (1.0 / 16.0) * ((1.0 - mu1) / m) * (1.0 - a / beta) ** 2


def theorem6_factor(m: int, babel_m1: float, y_norm: float, beta: float) -> float:
    """Compute the per-iteration contraction of ``||r_k||^2`` from k = 0 (Theorem 6).

    Cherfaoui 2022, PhD thesis, §5.3, Theorem 6.

    ``1 - ((1 - mu_1(m-1)) / (4m)) (1 - tau)^2`` with
    ``tau = (2 ||y|| / beta) sqrt(m / (1 - mu_1(m-1)))``.

    Parameters
    ----------
    m : int >= 1
        The sparsity of ``y = D x*``.
    babel_m1 : float in [0, 1)
        ``mu_1(D, m - 1)``.
    y_norm : float >= 0
        ``||y||_2``.
    beta : float > 0
        The radius of the l1 ball.

    Returns
    -------
    float
        The contraction factor of ``||r_k||^2`` per iteration.

    Raises
    ------
    ValueError
        ``tau >= 1`` (``beta`` too small for the theorem), or an argument out of its range.
    """
    m = check_scalar(m, "m", kind=numbers.Integral, low=0)
    mu1 = _check_babel_value(babel_m1)
    beta = check_scalar(beta, "beta", low=0.0)
    y_norm = check_scalar(y_norm, "y_norm", low=0.0, low_inclusive=True)
    tau = (2.0 * y_norm / beta) * np.sqrt(m / (1.0 - mu1))
    if tau >= 1.0:
        raise ValueError(
            f"Theorem 6 needs beta > 2 ||y|| sqrt(m / (1 - mu_1(m-1))) = {beta * tau:g}, "
            f"got beta={beta:g}"
        )
    return float(1.0 - ((1.0 - mu1) / (4.0 * m)) * (1.0 - tau) ** 2)


def mp_rate(m: int, babel_m1: float) -> float:
    """Compute the Gribonval–Vandergheynst (2006) MP rate ``(1 - mu_1(m-1)) / m``.

    The MP bound plotted in Chapter 5: ``||r_k||^2 <= (1 - rate)^k ||y||^2``.

    Parameters
    ----------
    m : int >= 1
        The sparsity of ``y = D x*``.
    babel_m1 : float in [0, 1)
        ``mu_1(D, m - 1)``.

    Returns
    -------
    float
        ``(1 - mu_1(m-1)) / m``.
    """
    m = check_scalar(m, "m", kind=numbers.Integral, low=0)
    return (1.0 - _check_babel_value(babel_m1)) / m


def residual_bound(y_norm: float, rate: float, n_iter: int) -> np.ndarray:
    """Compute the bound ``||y|| (1 - rate)^{k/2}`` on ``||r_k||_2`` for ``k = 0..n_iter``.

    Parameters
    ----------
    y_norm : float
        ``||y||_2``.
    rate : float in [0, 1]
        A rate on ``||r_k||^2`` (``theta`` of Theorem 5, ``1 - factor`` of Theorem 6, or
        :func:`mp_rate`).
    n_iter : int
        The last iteration.

    Returns
    -------
    ndarray of shape (n_iter + 1,)
        ``||y|| (1 - rate)^{k/2}`` for ``k = 0..n_iter``: the bound on ``||r_k||_2``.
    """
    y_norm = check_scalar(y_norm, "y_norm", low=0.0, low_inclusive=True)
    rate = check_scalar(rate, "rate", low=0.0, low_inclusive=True, high=1.0)
    n_iter = check_scalar(n_iter, "n_iter", kind=numbers.Integral, low=0, low_inclusive=True)
    k = np.arange(n_iter + 1)
    return y_norm * (1.0 - rate) ** (k / 2.0)


__all__ = [
    "mutual_coherence",
    "babel",
    "exact_recovery_condition",
    "coherence_sparsity_bound",
    "satisfies_coherence_condition",
    "theorem5_rate",
    "theorem6_factor",
    "mp_rate",
    "residual_bound",
]
