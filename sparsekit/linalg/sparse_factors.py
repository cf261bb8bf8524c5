"""A product of sparse factors as a linear operator: ``A = λ · S_1 S_2 ⋯ S_Q``.

Products are written left to right, so ``S_Q`` is applied first to a vector (Giffon 2020,
PhD thesis, §3.2: a fast transform is a product of O(log D) sparse factors, applied with one
sparse matrix–vector product per factor). Each factor is stored in CSR form; the transpose of
each factor is built once, on first use, as a second CSR matrix (the CSC form of the factor),
so that ``A x`` and ``Aᵀ y`` both run as row-parallel gathers (:func:`~._spmm.csr_matmat`).

Costs (thesis, Table 3.3 convention): one product with a vector takes ``flops = 2 · nnz``
(a multiply and an add per non-zero); the storage is ``nnz`` values plus the CSR indices
(``nbytes``).
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterable
from typing import IO, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, DTypeLike
from scipy.sparse.linalg import LinearOperator

from .._runtime.pools import run_row_ranges
from ._spmm import csr_chain_block, csr_times_dense, stack_csr

#: Columns of a matrix operand multiplied per pass through the factors (the batch stays in cache).
COLUMN_BLOCK = 512

#: Rows of ``X`` per block of :meth:`SparseFactors.row_block_products` (transposed into a
#: buffer, then through the factors). Measured (QuicK-means' assignment, 9 factors of 256
#: rows, 10⁵ × 784 points, one thread): 0.30 s at 64 rows, 0.26–0.29 s at 96–128, 0.31 s at
#: 256, 0.41 s at 512.
ROW_BLOCK = 128
#: With at most this many entries (the 128 × 784 block above) all the rows go through the
#: factors as one block, a product per factor: as fast at that size, and a first small call
#: compiles no chain kernel.
ONE_BLOCK_ENTRIES = 128 * 784


def _packed(chain, dtype):
    """The CSR arrays of ``chain`` back to back, as :func:`~._spmm.csr_chain_block` takes them,
    and the rows of its widest intermediate product."""
    n_rows = np.array([S.shape[0] for S in chain], dtype=np.int64)
    # int32 indices (scipy's for such sizes) share the row kernel's compiled code with
    # ``csr_times_dense``
    big = max(max(S.shape) for S in chain) >= 2**31 or max(S.nnz for S in chain) >= 2**31
    arrays = stack_csr(
        [(S.indptr, S.indices, S.data) for S in chain],
        n_rows,
        index_dtype=np.int64 if big else np.int32,
        dtype=dtype,
    )
    width = int(max(n_rows[:-1].max(initial=1), 1))
    return (n_rows, *arrays), width


def _chain_by_column_blocks(chain, X, out):
    """``out = chain[-1] ⋯ chain[0] X`` block of ``COLUMN_BLOCK`` columns by block: each block
    goes through every factor on one thread (:func:`~._spmm.csr_chain_block`), the blocks are
    shared among the library's threads."""
    dtype = out.dtype
    packed, width = _packed(chain, dtype)
    n_cols = X.shape[1]
    n_blocks = -(-n_cols // COLUMN_BLOCK)

    def blocks(lo, hi):
        for blk in range(lo, hi):
            c0, c1 = blk * COLUMN_BLOCK, min(n_cols, (blk + 1) * COLUMN_BLOCK)
            B = np.ascontiguousarray(X[:, c0:c1], dtype=dtype)
            buf_a = np.empty((width, c1 - c0), dtype)
            buf_b = np.empty((width, c1 - c0), dtype)
            block_out = np.empty((out.shape[0], c1 - c0), dtype)
            csr_chain_block(*packed, B, buf_a, buf_b, block_out)
            out[:, c0:c1] = block_out

    run_row_ranges(blocks, n_blocks)


def _as_csr(factor, q, dtype):
    if sp.issparse(factor):
        S = sp.csr_matrix(factor, dtype=dtype, copy=True)  # sorted and pruned in place below
    else:
        arr = np.asarray(factor)
        if arr.ndim != 2:
            raise ValueError(f"factor {q} must be 2-D, got shape {arr.shape}")
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"factor {q} has dtype {arr.dtype}; pass real numeric factors")
        S = sp.csr_matrix(arr.astype(dtype, copy=False))
    if not np.isfinite(S.data).all():
        raise ValueError(f"factor {q} contains NaN or inf")
    S.eliminate_zeros()
    S.sort_indices()
    S.indptr = S.indptr.astype(np.int32, copy=False) if S.nnz < 2**31 else S.indptr
    S.indices = S.indices.astype(np.int32, copy=False) if S.nnz < 2**31 else S.indices
    return S


def _factor_dtype(factors, dtype):
    if dtype is not None:
        dtype = np.dtype(dtype)
    else:
        kinds = [np.asarray(f.data if sp.issparse(f) else f).dtype for f in factors]
        all32 = kinds and all(k == np.float32 for k in kinds)
        dtype = np.dtype(np.float32) if all32 else np.dtype(np.float64)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"dtype must be float32 or float64, got {dtype}")
    return dtype


class SparseFactors(LinearOperator):
    """The operator ``λ · S_1 S_2 ⋯ S_Q`` of sparse factors (a scipy ``LinearOperator``).

    Parameters
    ----------
    factors : sequence of 2-D arrays or scipy.sparse matrices
        ``S_1, …, S_Q`` with chained shapes (columns of ``S_q`` = rows of ``S_{q+1}``). They are
        copied: the matrices passed in are left as they were, and later changes to them do not
        change the operator.
    scale : float, default 1.0
        The scalar ``λ``.
    shape : (int, int), optional
        Only for an empty product (the identity): its shape ``(n, n)``.
    dtype : float32 or float64, optional
        Storage dtype; default float32 when every factor is float32, else float64.

    Attributes
    ----------
    scale : float
        The scalar ``λ``.
    dtype : numpy.dtype
        float32 or float64.
    shape : (int, int)
        ``(rows of S_1, columns of S_Q)``.

    Notes
    -----
    ``A @ X``, ``A.matvec``, ``A.matmat`` apply ``S_Q`` first; ``A.T`` is the operator
    ``λ S_Qᵀ ⋯ S_1ᵀ`` (no copy of the data). A matrix operand is processed ``COLUMN_BLOCK``
    columns at a time. The operand is converted to the operator's dtype when both are floats of
    the same kind; a float64 operand of a float32 operator gives a float64 result. A complex
    operand gives the complex product (its real and imaginary parts multiplied separately,
    complex64 for a float32 operator and operand).
    """

    #: the scalar λ
    scale: float
    #: the factors S_1, …, S_Q in CSR form, validated
    _csr: list[sp.csr_matrix]
    #: their transposes in CSR form, built on first use (None until then)
    _csr_t: list[sp.csr_matrix | None]
    #: the last vector of :meth:`norm2`'s power iteration (its warm start)
    _power_vector: np.ndarray | None

    def __init__(
        self,
        factors: Iterable[ArrayLike | sp.spmatrix | sp.sparray],
        scale: float = 1.0,
        *,
        shape: tuple[int, int] | None = None,
        dtype: DTypeLike | None = None,
    ):
        factors = list(factors)
        dtype = _factor_dtype(factors, dtype)
        csr = [_as_csr(f, q, dtype) for q, f in enumerate(factors)]
        for q in range(len(csr) - 1):
            if csr[q].shape[1] != csr[q + 1].shape[0]:
                raise ValueError(
                    f"factor shapes do not chain: factor {q} has shape {csr[q].shape} and factor "
                    f"{q + 1} has shape {csr[q + 1].shape}; columns of each factor must equal the "
                    "rows of the next"
                )
        if not csr:
            if shape is None or len(shape) != 2 or shape[0] != shape[1]:
                raise ValueError("an empty product needs shape=(n, n) (it is the n x n identity)")
            full_shape = (int(shape[0]), int(shape[1]))
        else:
            full_shape = (csr[0].shape[0], csr[-1].shape[1])
            if shape is not None and tuple(shape) != full_shape:
                raise ValueError(f"shape={tuple(shape)} does not match the factors' {full_shape}")
        if not isinstance(scale, numbers.Real) or not np.isfinite(scale):
            raise ValueError(f"scale must be a finite real number, got {scale!r}")
        self._csr = csr
        self._csr_t = [None] * len(csr)
        self.scale = float(scale)
        self._power_vector = None
        super().__init__(dtype=dtype, shape=full_shape)

    @classmethod
    def _from_csr(cls, csr, csr_t, scale, shape, dtype):
        """Internal: share already validated CSR factors (and transposes) without copying."""
        obj = cls.__new__(cls)
        obj._csr = list(csr)
        obj._csr_t = list(csr_t)
        obj.scale = float(scale)
        obj._power_vector = None
        LinearOperator.__init__(obj, dtype=dtype, shape=shape)
        return obj

    # -- structure ---------------------------------------------------------------------------
    @property
    def factors(self) -> list[sp.csr_matrix]:
        """The factors ``S_1, …, S_Q`` as CSR matrices (the operator's own storage)."""
        return list(self._csr)

    @property
    def n_factors(self) -> int:
        """Return the number of factors ``Q``.

        Returns
        -------
        int
            ``Q``.
        """
        return len(self._csr)

    @property
    def nnz(self) -> int:
        """Total non-zeros ``Σ_q nnz(S_q)``."""
        return int(sum(S.nnz for S in self._csr))

    @property
    def flops(self) -> int:
        """Floating-point operations of one matrix–vector product: ``2 · nnz``."""
        return 2 * self.nnz

    @property
    def nbytes(self) -> int:
        """Bytes of the stored values and CSR indices of every factor (plus the scale)."""
        return int(sum(S.data.nbytes + S.indices.nbytes + S.indptr.nbytes for S in self._csr)) + 8

    def _transposed(self, q):
        if self._csr_t[q] is None:
            St = self._csr[q].T.tocsr()
            St.sort_indices()
            self._csr_t[q] = St
        return self._csr_t[q]

    def left(self, q: int) -> SparseFactors:
        """Return the partial product ``S_1 ⋯ S_q`` of the first ``q`` factors (scale 1).

        No copy; ``left(0)`` is the identity of size ``shape[0]``.

        Parameters
        ----------
        q : int
            The number of factors, in ``[0, Q]``.

        Returns
        -------
        SparseFactors
            The partial product, sharing this operator's factors.
        """
        q = self._check_split(q)
        n = self.shape[0]
        return SparseFactors._from_csr(
            self._csr[:q],
            self._csr_t[:q],
            1.0,
            (n, self._csr[q - 1].shape[1]) if q else (n, n),
            self.dtype,
        )

    def right(self, q: int) -> SparseFactors:
        """Return the partial product ``S_{q+1} ⋯ S_Q`` of the factors after the first ``q``.

        Scale 1, no copy; ``right(Q)`` is the identity of size ``shape[1]``.

        Parameters
        ----------
        q : int
            The number of leading factors left out, in ``[0, Q]``.

        Returns
        -------
        SparseFactors
            The partial product, sharing this operator's factors.
        """
        q = self._check_split(q)
        n = self.shape[1]
        Q = self.n_factors
        return SparseFactors._from_csr(
            self._csr[q:],
            self._csr_t[q:],
            1.0,
            (self._csr[q].shape[0], n) if q < Q else (n, n),
            self.dtype,
        )

    def _check_split(self, q):
        integral = isinstance(q, numbers.Integral) and not isinstance(q, bool)
        if not integral or not 0 <= q <= self.n_factors:
            raise ValueError(f"q must be an integer in [0, {self.n_factors}], got {q!r}")
        return int(q)

    # -- products ------------------------------------------------------------------------------
    def _apply(self, X, transpose):
        X = np.asarray(X)
        if X.dtype.kind == "c":  # real factors: A (x + i y) = A x + i A y
            return self._apply(X.real, transpose) + 1j * self._apply(X.imag, transpose)
        if X.dtype.kind not in "biuf":
            raise TypeError(f"operand has dtype {X.dtype}; pass a numeric array")
        one_d = X.ndim == 1
        X2 = X.reshape(-1, 1) if one_d else X
        n_in = self.shape[0] if transpose else self.shape[1]
        if X2.ndim != 2 or X2.shape[0] != n_in:
            raise ValueError(f"operand has shape {X.shape}; expected ({n_in},) or ({n_in}, k)")
        dtype = np.result_type(self.dtype, X2.dtype)
        if dtype.kind != "f":
            dtype = np.dtype(np.float64)
        chain = (
            [self._transposed(q) for q in range(self.n_factors)] if transpose else self._csr[::-1]
        )
        if dtype != self.dtype:
            chain = [S.astype(dtype) for S in chain]
        n_out = self.shape[1] if transpose else self.shape[0]
        out = np.empty((n_out, X2.shape[1]), dtype=dtype)
        if not chain:
            out[...] = X2
        elif X2.shape[1] < 2 * COLUMN_BLOCK:
            for S in chain:  # one narrow operand: rows of each factor in parallel
                X2 = csr_times_dense(S, X2)
            out[...] = X2
        else:
            _chain_by_column_blocks(chain, X2, out)
        if self.scale != 1.0:
            out *= dtype.type(self.scale)
        return out[:, 0] if one_d else out

    def row_block_products(
        self, X: ArrayLike, consume: Any, *, block_rows: int | None = None
    ) -> None:
        """Call ``consume(r0, r1, P)`` with ``P = A @ X[r0:r1].T`` for consecutive blocks of rows.

        The rows of ``X`` are the operands (samples, as in ``X @ Aᵀ``). Each block of
        ``block_rows`` rows is transposed into a ``D × block_rows`` buffer and goes through
        every factor while it stays in cache (one compiled pass per block); ``consume``
        reads the product there, before the buffer is reused: the ``n × K`` product of all the
        rows is never formed. The blocks run on the library's threads (ranges of blocks), so
        ``consume`` is called from several threads, each time for other rows.

        Parameters
        ----------
        X : array-like of shape (n, n_cols)
            The rows; ``n_cols`` is ``A``'s number of columns.
        consume : callable
            ``consume(r0, r1, P)`` with ``P`` of shape ``(A.shape[0], r1 - r0)``, C-contiguous,
            of dtype ``result_type(A.dtype, X.dtype)`` (float64 for integer ``X``); valid only
            during the call.
        block_rows : int, optional
            Rows per block (default ``sparsekit.linalg.sparse_factors.ROW_BLOCK``, 128, or all
            the rows when ``X`` has at most ``ONE_BLOCK_ENTRIES`` entries).

        Raises
        ------
        ValueError
            If ``X`` is not 2-D with ``A.shape[1]`` columns.
        """
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != self.shape[1]:
            raise ValueError(f"X has shape {X.shape}; expected (n, {self.shape[1]})")
        dtype = np.result_type(self.dtype, X.dtype)
        if dtype.kind != "f":
            dtype = np.dtype(np.float64)
        chain = [S.astype(dtype) if S.dtype != dtype else S for S in self._csr[::-1]]
        n, n_out, scale = X.shape[0], self.shape[0], dtype.type(self.scale)
        step = max(1, int(ROW_BLOCK if block_rows is None else block_rows))
        if block_rows is None and n * X.shape[1] <= ONE_BLOCK_ENTRIES:
            step = max(n, 1)
        # one block: a product per factor (the kernel Palm4MSA compiles), no chain kernel to
        # compile on a first small call
        packed, width = _packed(chain, dtype) if chain and n > step else (None, 0)

        def blocks(lo, hi):
            bufs = {}
            for blk in range(lo, hi):
                r0, r1 = blk * step, min(n, (blk + 1) * step)
                w = r1 - r0
                if w not in bufs:  # the last block may be narrower
                    bufs[w] = tuple(
                        np.empty(shape, dtype)
                        for shape in ((self.shape[1], w), (width, w), (width, w), (n_out, w))
                    )
                B, buf_a, buf_b, out = bufs[w]
                np.copyto(B, X[r0:r1].T)
                if packed is None:  # one block, or no factor (the identity)
                    out = B
                    for S in chain:
                        out = csr_times_dense(S, out)
                else:
                    csr_chain_block(*packed, B, buf_a, buf_b, out)
                if scale != 1:
                    out *= scale
                consume(r0, r1, out)

        run_row_ranges(blocks, -(-n // step))

    def _matvec(self, x):
        return self._apply(np.ravel(x), False)

    def _matmat(self, X):
        return self._apply(X, False)

    def _rmatvec(self, x):
        return self._apply(np.ravel(x), True)

    def _rmatmat(self, X):
        return self._apply(X, True)

    def _transpose(self):
        Q = self.n_factors
        csr_t = [self._transposed(q) for q in range(Q)][::-1]
        return SparseFactors._from_csr(
            csr_t, self._csr[::-1], self.scale, (self.shape[1], self.shape[0]), self.dtype
        )

    _adjoint = _transpose

    def __matmul__(self, other: Any) -> Any:
        """The product ``A @ other``.

        Parameters
        ----------
        other : SparseFactors, array-like, scipy.sparse matrix or LinearOperator
            The right operand; its rows must match ``A``'s columns.

        Returns
        -------
        SparseFactors, ndarray or LinearOperator
            A ``SparseFactors`` (the factors concatenated, scales multiplied) for a
            ``SparseFactors``; an array for a 1-D or 2-D array or a sparse matrix (``S_Q``
            applied first); otherwise what :class:`~scipy.sparse.linalg.LinearOperator` gives.

        Raises
        ------
        ValueError
            If the shapes do not align.
        """
        if isinstance(other, SparseFactors):
            if self.shape[1] != other.shape[0]:
                raise ValueError(f"shapes {self.shape} and {other.shape} do not align")
            dtype = np.result_type(self.dtype, other.dtype)
            if not self._csr:
                return SparseFactors(
                    other._csr, self.scale * other.scale, shape=other.shape, dtype=dtype
                )
            return SparseFactors(
                self._csr + other._csr,
                self.scale * other.scale,
                shape=(self.shape[0], other.shape[1]),
                dtype=dtype,
            )
        if sp.issparse(other):
            other = other.toarray()
        if isinstance(other, np.ndarray) or np.ndim(other) in (1, 2):
            return self._apply(np.asarray(other), False)
        return super().__matmul__(other)

    def __rmatmul__(self, other: Any) -> Any:
        """The product ``other @ A``.

        Parameters
        ----------
        other : SparseFactors or array-like
            The left operand; its columns (its length, for a 1-D array) must match ``A``'s rows.

        Returns
        -------
        SparseFactors or ndarray
            A ``SparseFactors`` for a ``SparseFactors``; else the array ``other @ A``, computed
            as ``(Aᵀ otherᵀ)ᵀ``.

        Raises
        ------
        ValueError
            If the shapes do not align.
        """
        if isinstance(other, SparseFactors):
            return other.__matmul__(self)
        X = np.asarray(other)
        if X.ndim == 1:
            return self._apply(X, True)
        return self._apply(X.T, True).T

    def toarray(self) -> np.ndarray:
        """Return the dense matrix ``λ S_1 ⋯ S_Q``.

        It is built from the right-most factor, never larger.

        Returns
        -------
        ndarray of shape ``shape``
            The matrix, in the operator's dtype.
        """
        if not self._csr:
            return np.eye(self.shape[0], dtype=self.dtype) * self.dtype.type(self.scale)
        Y = self._csr[-1].toarray()
        for S in self._csr[-2::-1]:
            Y = csr_times_dense(S, Y)
        if self.scale != 1.0:
            Y *= self.dtype.type(self.scale)
        return Y

    # -- norms -------------------------------------------------------------------------------
    def norm2(
        self,
        *,
        tol: float = 1e-6,
        max_iter: int = 100,
        warm_start: bool = True,
        random_state: int | np.random.Generator | None = 0,
    ) -> float:
        """Compute the spectral norm ``‖A‖_2`` by power iteration on ``AᵀA``.

        Iterates ``v ← Aᵀ A v / ‖Aᵀ A v‖`` until the relative change of ``‖A v‖`` is below
        ``tol`` (or ``max_iter``). With ``warm_start`` the last vector of the previous call is
        the starting point, so repeated calls on slowly changing operators converge in a few
        iterations (Giffon 2020, §3.2.2: the reference implementation warm-starts its
        eigen-solver the same way). The estimate approaches the norm from below.

        Parameters
        ----------
        tol : float, default 1e-6
            Relative change of ``‖A v‖`` below which the iteration stops.
        max_iter : int, default 100
            The most iterations.
        warm_start : bool, default True
            Start from the last vector of the previous call.
        random_state : int, numpy.random.Generator or None, default 0
            Seeds the starting vector when there is no previous one.

        Returns
        -------
        float
            The estimate of ``‖A‖_2`` (from below).
        """
        n = self.shape[1]
        v = self._power_vector if warm_start else None
        if v is None or v.shape != (n,):
            v = np.random.default_rng(random_state).standard_normal(n)
        v = v.astype(np.float64)
        v /= np.linalg.norm(v) or 1.0
        sigma = 0.0
        for _ in range(int(max_iter)):
            Av = self._apply(v, False)
            new_sigma = float(np.linalg.norm(Av))
            w = self._apply(Av, True)
            nw = float(np.linalg.norm(w))
            if nw == 0.0:
                sigma = new_sigma
                break
            v = w / nw
            done = abs(new_sigma - sigma) <= tol * new_sigma
            sigma = new_sigma
            if done:
                break
        self._power_vector = v
        return sigma

    # -- persistence -------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str] | IO[bytes]) -> None:
        """Write the factors and scale to a ``.npz`` file (see :meth:`load`).

        Parameters
        ----------
        path : str, path-like or binary file
            Where to write (``numpy.savez`` adds ``.npz`` to a name without it).
        """
        # values of Any type: np.savez's stub would read the ``allow_pickle`` key into **arrays
        arrays: dict[str, Any] = {
            "scale": np.array(self.scale),
            "shape": np.array(self.shape, dtype=np.int64),
            "n_factors": np.array(self.n_factors),
            "dtype": np.array(self.dtype.str),
        }
        for q, S in enumerate(self._csr):
            arrays[f"f{q}_data"] = S.data
            arrays[f"f{q}_indices"] = S.indices
            arrays[f"f{q}_indptr"] = S.indptr
            arrays[f"f{q}_shape"] = np.array(S.shape, dtype=np.int64)
        np.savez(path, **arrays)

    @classmethod
    def load(cls, path: str | os.PathLike[str] | IO[bytes]) -> SparseFactors:
        """Read an operator written by :meth:`save`.

        Parameters
        ----------
        path : str, path-like or binary file
            A file written by :meth:`save`.

        Returns
        -------
        SparseFactors
            The operator.
        """
        with np.load(path, allow_pickle=False) as z:
            factors = [
                sp.csr_matrix(
                    (z[f"f{q}_data"], z[f"f{q}_indices"], z[f"f{q}_indptr"]),
                    shape=tuple(z[f"f{q}_shape"]),
                )
                for q in range(int(z["n_factors"]))
            ]
            return cls(
                factors, float(z["scale"]), shape=tuple(z["shape"]), dtype=np.dtype(str(z["dtype"]))
            )

    def __repr__(self):
        shapes = " x ".join(f"{S.shape[0]}x{S.shape[1]}" for S in self._csr) or "identity"
        return (
            f"<SparseFactors {self.shape[0]}x{self.shape[1]}, scale={self.scale:.6g}, "
            f"factors {shapes}, nnz={self.nnz}, dtype={self.dtype}>"
        )


__all__ = ["SparseFactors"]
