"""Random Gaussian dictionaries and m-sparse signals (Cherfaoui 2022, PhD thesis, §5.4).

Atoms are i.i.d. standard Gaussian columns normalised to unit l2 norm; a signal is ``y = D x``
with a support of ``m`` atoms drawn uniformly without replacement and ``N(0, 1)`` coefficients.
"""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._typing import RandomStateLike
from .._validation import check_random_state, check_scalar

_DTYPES = (np.float32, np.float64)


def _check_dtype(dtype):
    dt = np.dtype(dtype)
    if dt not in [np.dtype(t) for t in _DTYPES]:
        raise TypeError(f"dtype must be float32 or float64, got {dt}")
    return dt


def gaussian_dictionary(
    n_features: int,
    n_atoms: int,
    random_state: RandomStateLike = None,
    dtype: DTypeLike = np.float64,
) -> np.ndarray:
    """Draw a ``(n_features, n_atoms)`` dictionary of unit-norm Gaussian atoms.

    Parameters
    ----------
    n_features : int
        The dimension of the atoms.
    n_atoms : int
        The number of atoms.
    random_state : None, int or numpy.random.Generator
        Seeds the draw.
    dtype : numpy dtype, default numpy.float64
        The dtype of the dictionary.

    Returns
    -------
    ndarray of shape (n_features, n_atoms)
        Gaussian atoms scaled to unit norm (the columns).
    """
    n_features = check_scalar(n_features, "n_features", kind=numbers.Integral, low=0)
    n_atoms = check_scalar(n_atoms, "n_atoms", kind=numbers.Integral, low=0)
    rng = check_random_state(random_state)
    D = rng.standard_normal((n_features, n_atoms))
    D /= np.linalg.norm(D, axis=0)
    return D.astype(_check_dtype(dtype), copy=False)


def sparse_signals(
    D: ArrayLike, n_nonzero: int, n_signals: int = 1, random_state: RandomStateLike = None
) -> tuple[np.ndarray, np.ndarray]:
    """Draw signals ``Y = D X`` with ``n_nonzero`` non-zeros per column of ``X``.

    Supports are uniform without replacement, values i.i.d. N(0, 1).

    Parameters
    ----------
    D : ndarray of shape (n_features, n_atoms)
        The dictionary.
    n_nonzero : int
        Non-zeros per signal.
    n_signals : int, default 1
        The number of signals.
    random_state : None, int or numpy.random.Generator
        Seeds the draw.

    Returns
    -------
    Y : ndarray of shape (n_features, n_signals)
        The signals, in the dtype of ``D``.
    X : ndarray of shape (n_atoms, n_signals)
        The true coefficients.
    """
    D = np.asarray(D)
    if D.ndim != 2:
        raise ValueError(f"D must be 2-D (n_features, n_atoms), got shape {D.shape}")
    n_atoms = D.shape[1]
    m = check_scalar(n_nonzero, "n_nonzero", kind=numbers.Integral, low=0)
    if m > n_atoms:
        raise ValueError(f"n_nonzero={m} exceeds the number of atoms ({n_atoms})")
    n_signals = check_scalar(n_signals, "n_signals", kind=numbers.Integral, low=0)
    rng = check_random_state(random_state)
    X = np.zeros((n_atoms, n_signals), dtype=D.dtype)
    for j in range(n_signals):
        S = rng.choice(n_atoms, size=m, replace=False)
        X[S, j] = rng.standard_normal(m)
    return D @ X, X


def make_sparse_coding_problem(
    n_features: int,
    n_atoms: int,
    n_nonzero: int,
    n_signals: int = 1,
    random_state: RandomStateLike = None,
    dtype: DTypeLike = np.float64,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw a Gaussian unit-norm dictionary and ``n_signals`` exactly sparse signals.

    Each signal has exactly ``n_nonzero`` non-zero coefficients.

    Parameters
    ----------
    n_features : int
        The dimension of the atoms and signals.
    n_atoms : int
        The number of atoms.
    n_nonzero : int
        Non-zeros per signal.
    n_signals : int, default 1
        The number of signals.
    random_state : None, int or numpy.random.Generator
        Seeds the draw.
    dtype : numpy dtype, default numpy.float64
        The dtype of the dictionary and signals.

    Returns
    -------
    D : ndarray of shape (n_features, n_atoms)
        The dictionary.
    Y : ndarray of shape (n_features, n_signals)
        The signals.
    X : ndarray of shape (n_atoms, n_signals)
        The true coefficients, with ``Y = D X``.
    """
    rng = check_random_state(random_state)
    D = gaussian_dictionary(n_features, n_atoms, rng, dtype)
    Y, X = sparse_signals(D, n_nonzero, n_signals, rng)
    return D, Y, X


__all__ = ["gaussian_dictionary", "sparse_signals", "make_sparse_coding_problem"]
