"""Projections onto the constraint sets of Palm4MSA factors (Giffon 2020, PhD thesis, Annex 3.A;
Le Magoarou & Gribonval 2016).

Each projection maps a matrix to the nearest point of a set ``E`` of matrices with a sparsity
pattern, then (for the sparse sets) rescales it to unit Frobenius norm, the "scale"
constraint of the sets ``E_q`` whose scale is carried by the factorization's ``λ``:

- ``global-top-k`` (alias ``sp``) keeps the ``k`` entries of largest magnitude (global hard
  thresholding);
- ``splin`` / ``spcol`` keep the ``k`` largest per row / per column;
- ``splincol`` keeps the union of the ``k`` largest per row and the ``k_col`` largest per column
  (the relaxed projection of Algorithm 3 of Annex 3.A);
- ``support`` keeps the entries of a fixed support mask;
- ``constant`` returns a fixed matrix (the factor is never updated);
- ``identity`` leaves the matrix unchanged (an unconstrained factor).

Decisions:

- Algorithm 3 of Annex 3.A prints its lines 4 and 5 as the same formula. The intended (and
  implemented) result is the union of the two supports with the values of the input,
  ``P(S) = S' + S'' ⊙ [S' = 0]``, then unit-Frobenius normalization.
- Ties: among entries of equal magnitude the one with the lowest index is kept (row-major
  order for ``sp``, column order within a row for ``splin``, row order within a column for
  ``spcol``). The selection uses the exact k-th largest magnitude as threshold, so the result
  never depends on the sorting algorithm; the input is not rounded.
- ``nonnegative=True`` first sets the negative entries to zero, then selects (the ``pos``
  option of FAµST's projections); the kept values are then ``>= 0``.
- An all-zero projection is returned as zeros (it has no unit-norm rescaling).
- Values equal those of ``pyfaust.proj`` (``sp``, ``splin``, ``spcol``, ``splincol``,
  ``supp``, ``const``, ``proj_id``) on matrices without ties.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._validation import check_array
from ._cpu import SMALL_K, small_k_keep, top_k_rows_mask


def _check_shape(shape: tuple[int, int]) -> tuple[int, int]:
    try:
        r, c = shape
    except (TypeError, ValueError):
        raise ValueError(f"shape must be a pair (n_rows, n_cols), got {shape!r}") from None
    for v in (r, c):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"shape must hold two positive integers, got {shape!r}")
    return int(r), int(c)


def _check_k(k: int, name: str, high: int, what: str) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{name} must be an integer (non-zeros to keep), got {k!r}")
    if k < 1:
        raise ValueError(f"{name} must be >= 1 (non-zeros to keep), got {k}")
    if k > high:
        raise ValueError(f"{name}={k} is larger than the {what} ({high}); use {name} <= {high}")
    return int(k)


class Projection(ABC):
    """Base class: ``P(M)`` for matrices of a fixed ``shape``.

    Subclasses implement :meth:`_project` (the selection on the possibly clipped input).

    Parameters
    ----------
    shape : (int, int)
        The shape of the matrices projected (the factor's shape).
    normalized : bool, default True
        Rescale the result to unit Frobenius norm.
    nonnegative : bool, default False
        Set negative entries to zero before selecting.

    Attributes
    ----------
    shape : (int, int)
        The shape of the matrices projected.
    normalized, nonnegative : bool
        The parameters.
    is_constant : bool
        The factor is fixed (Palm4MSA never updates it).
    """

    name = "projection"
    is_constant = False
    #: what input a projection takes (sparsekit._accepts): a matrix, not samples
    accepts = "any"

    def __init__(
        self, shape: tuple[int, int], *, normalized: bool = True, nonnegative: bool = False
    ):
        self.shape: tuple[int, int] = _check_shape(shape)
        self.normalized: bool = bool(normalized)
        self.nonnegative: bool = bool(nonnegative)

    def __call__(self, M: ArrayLike) -> np.ndarray:
        """Project ``M`` on the constraint set.

        Parameters
        ----------
        M : array-like of shape ``self.shape``
            A finite real matrix.

        Returns
        -------
        ndarray
            ``P(M)``: ``M`` clipped at zero when ``nonnegative``, projected, then scaled to unit
            Frobenius norm when ``normalized`` (float32 stays float32).

        Raises
        ------
        ValueError
            If ``M`` is not a finite 2-D array of shape ``self.shape``.
        """
        A = check_array(M, "M")
        if A.shape != self.shape:
            raise ValueError(
                f"{self.name} projection is for shape {self.shape}, got a matrix of shape {A.shape}"
            )
        if self.nonnegative:
            A = np.maximum(A, 0)
        return self.project_unchecked(A)

    def project_unchecked(self, M: np.ndarray) -> np.ndarray:
        """Compute ``P(M)`` for a finite float array of the right shape (no validation).

        Parameters
        ----------
        M : ndarray of shape ``shape``
            A finite float array, already clipped at zero when ``nonnegative``.

        Returns
        -------
        ndarray of shape ``shape``
            ``P(M)``.
        """
        out, sq = self._project_with_sq(M)
        if self.normalized:
            fresh = sq is not None  # the compiled selection's own new array
            if sq is None:
                sq = np.einsum("ij,ij->", out, out)
            norm = np.sqrt(sq)
            if norm > 0:
                if fresh:
                    out /= out.dtype.type(norm)
                else:
                    out = out / out.dtype.type(norm)
        return out

    @abstractmethod
    def _project(self, M):
        """The projection of a validated array, before normalization."""

    def _project_with_sq(self, M):
        """``(P(M) before normalization, its sum of squares or None)``; None: the caller sums
        (a subclass whose selection computes it returns it, and then a new array)."""
        return self._project(M), None

    def initial(self, dtype: DTypeLike = np.float64) -> np.ndarray:
        """Return a default starting point in (or near) the set: the rectangular identity.

        Parameters
        ----------
        dtype : numpy dtype, default numpy.float64
            The dtype of the result.

        Returns
        -------
        ndarray of shape ``shape``
            The starting point.
        """
        return np.eye(*self.shape, dtype=dtype)

    def __repr__(self):
        extra = "".join(f", {k}={v!r}" for k, v in self._repr_items())
        return (
            f"{type(self).__name__}(shape={self.shape}{extra}, normalized={self.normalized}, "
            f"nonnegative={self.nonnegative})"
        )

    def _repr_items(self):
        return ()


def _keep(M, mask):
    return np.where(mask, M, M.dtype.type(0))


def keep_largest(M, k_row, k_col):
    """``(M` with the ``k_row`` largest ``|M[i, j]|`` of every row or the ``k_col`` largest of
    every column kept (0: none) and the rest 0, its sum of squares or None)``, ties to the
    lowest index; compiled in one kernel for small counts (which also sums the squares), by
    partitions of ``|M|`` otherwise."""
    if k_row <= SMALL_K and k_col <= SMALL_K:
        M = np.ascontiguousarray(M)
        out = np.empty_like(M)
        sq = small_k_keep(M, k_row, k_col, np.empty(M.shape, dtype=bool), out)
        return out, sq
    A = np.abs(M)
    mask = np.zeros(A.shape, dtype=bool)
    if k_row:
        mask |= top_k_rows_mask(A, k_row)
    if k_col:
        mask |= top_k_rows_mask(np.ascontiguousarray(A.T), k_col).T
    return _keep(M, mask), None


class GlobalTopK(Projection):
    """``global-top-k`` (``sp``): keep the ``k`` entries of largest magnitude of the whole matrix.

    Parameters
    ----------
    shape : (int, int)
        The shape of the matrices projected (the factor's shape).
    k : int >= 1
        Entries kept in the whole matrix.
    normalized : bool, default True
        Rescale the result to unit Frobenius norm.
    nonnegative : bool, default False
        Set negative entries to zero before selecting.
    """

    name = "global-top-k"

    def __init__(
        self, shape: tuple[int, int], k: int, *, normalized: bool = True, nonnegative: bool = False
    ):
        super().__init__(shape, normalized=normalized, nonnegative=nonnegative)
        self.k: int = _check_k(k, "k", self.shape[0] * self.shape[1], "number of entries")

    def _project(self, M):
        flat = np.abs(M).ravel()
        n, k = flat.size, self.k
        if k >= n:
            return M.copy()
        t = np.partition(flat, n - k)[n - k]
        keep = flat > t
        need = k - int(keep.sum())
        if need:
            keep[np.flatnonzero(flat == t)[:need]] = True
        return _keep(M, keep.reshape(M.shape))

    def _repr_items(self):
        return (("k", self.k),)


class RowTopK(Projection):
    """``splin``: keep the ``k`` entries of largest magnitude in every row.

    Parameters
    ----------
    shape : (int, int)
        The shape of the matrices projected (the factor's shape).
    k : int >= 1
        Entries kept in every row.
    normalized : bool, default True
        Rescale the result to unit Frobenius norm.
    nonnegative : bool, default False
        Set negative entries to zero before selecting.
    """

    name = "splin"

    def __init__(
        self, shape: tuple[int, int], k: int, *, normalized: bool = True, nonnegative: bool = False
    ):
        super().__init__(shape, normalized=normalized, nonnegative=nonnegative)
        self.k: int = _check_k(k, "k", self.shape[1], "number of columns")

    def _project(self, M):
        return self._project_with_sq(M)[0]

    def _project_with_sq(self, M):
        return keep_largest(M, self.k, 0)

    def _repr_items(self):
        return (("k", self.k),)


class ColumnTopK(Projection):
    """``spcol``: keep the ``k`` entries of largest magnitude in every column.

    Parameters
    ----------
    shape : (int, int)
        The shape of the matrices projected (the factor's shape).
    k : int >= 1
        Entries kept in every column.
    normalized : bool, default True
        Rescale the result to unit Frobenius norm.
    nonnegative : bool, default False
        Set negative entries to zero before selecting.
    """

    name = "spcol"

    def __init__(
        self, shape: tuple[int, int], k: int, *, normalized: bool = True, nonnegative: bool = False
    ):
        super().__init__(shape, normalized=normalized, nonnegative=nonnegative)
        self.k: int = _check_k(k, "k", self.shape[0], "number of rows")

    def _project(self, M):
        return self._project_with_sq(M)[0]

    def _project_with_sq(self, M):
        return keep_largest(M, 0, self.k)

    def _repr_items(self):
        return (("k", self.k),)


class RowColumnTopK(Projection):
    """``splincol``: union of the ``k`` largest per row and the ``k_col`` largest per column.

    Annex 3.A, Algorithm 3 (corrected): ``P(S) = S' + S'' ⊙ [S' = 0]`` with ``S'`` the row
    selection and ``S''`` the column selection, so every row and every column keeps at least
    ``k`` (``k_col``) entries and the total is at most ``k·n_rows + k_col·n_cols``. For a
    rectangular factor with a total budget ``ε``, the reference choice is
    ``k = ε // n_cols`` and ``k_col = ε // n_rows``. ``k_col`` defaults to ``k``.

    Parameters
    ----------
    shape : (int, int)
        The shape of the matrices projected (the factor's shape).
    k : int >= 1
        Entries kept in every row.
    k_col : int >= 1, optional
        Entries kept in every column (default ``k``).
    normalized : bool, default True
        Rescale the result to unit Frobenius norm.
    nonnegative : bool, default False
        Set negative entries to zero before selecting.
    """

    name = "splincol"

    def __init__(
        self,
        shape: tuple[int, int],
        k: int,
        k_col: int | None = None,
        *,
        normalized: bool = True,
        nonnegative: bool = False,
    ):
        super().__init__(shape, normalized=normalized, nonnegative=nonnegative)
        self.k: int = _check_k(k, "k", self.shape[1], "number of columns")
        self.k_col: int = (
            self.k if k_col is None else _check_k(k_col, "k_col", self.shape[0], "number of rows")
        )
        if k_col is None and self.k > self.shape[0]:
            raise ValueError(
                f"k={self.k} is larger than the number of rows ({self.shape[0]}); pass k_col <= "
                f"{self.shape[0]} for the per-column count"
            )

    def _project(self, M):
        return self._project_with_sq(M)[0]

    def _project_with_sq(self, M):
        return keep_largest(M, self.k, self.k_col)

    def _repr_items(self):
        return (("k", self.k), ("k_col", self.k_col))


class SupportMask(Projection):
    """``support``: keep the entries where ``mask`` is non-zero.

    Parameters
    ----------
    mask : 2-D array
        The support: entries kept where non-zero (its shape is the factor's shape).
    normalized : bool, default True
        Rescale the result to unit Frobenius norm.
    nonnegative : bool, default False
        Set negative entries to zero before selecting.
    """

    name = "support"

    def __init__(self, mask: ArrayLike, *, normalized: bool = True, nonnegative: bool = False):
        mask = np.asarray(mask)
        if mask.ndim != 2:
            raise ValueError(f"mask must be a 2-D array, got shape {mask.shape}")
        super().__init__(mask.shape, normalized=normalized, nonnegative=nonnegative)
        self.mask: np.ndarray = mask != 0

    def _project(self, M):
        return _keep(M, self.mask)


class Constant(Projection):
    """``constant``: the fixed ``matrix`` (the factor is never updated).

    Parameters
    ----------
    matrix : 2-D array
        The factor's value (its shape is the factor's shape).
    normalized : bool, default False
        Rescale the matrix to unit Frobenius norm.
    """

    name = "constant"
    is_constant = True

    def __init__(self, matrix: ArrayLike, *, normalized: bool = False):
        matrix = check_array(matrix, "matrix")
        super().__init__(matrix.shape, normalized=normalized)
        self.matrix: np.ndarray = matrix

    def _project(self, M):
        return self.matrix.astype(M.dtype, copy=True)

    def initial(self, dtype: DTypeLike = np.float64) -> np.ndarray:
        return self.project_unchecked(self.matrix.astype(dtype))


class Identity(Projection):
    """``identity``: no constraint (the matrix itself; normalized only when asked).

    Parameters
    ----------
    shape : (int, int)
        The shape of the matrices projected (the factor's shape).
    normalized : bool, default False
        Rescale the result to unit Frobenius norm.
    nonnegative : bool, default False
        Set negative entries to zero before selecting.
    """

    name = "identity"

    def __init__(
        self, shape: tuple[int, int], *, normalized: bool = False, nonnegative: bool = False
    ):
        super().__init__(shape, normalized=normalized, nonnegative=nonnegative)

    def _project(self, M):
        return M.copy()


__all__ = [
    "Projection",
    "GlobalTopK",
    "RowTopK",
    "ColumnTopK",
    "RowColumnTopK",
    "SupportMask",
    "Constant",
    "Identity",
]
