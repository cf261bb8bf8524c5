"""Kernel protocol and the block-wise evaluation shared by every vector kernel.

A kernel is a callable object::

    K = kernel(X, Y=None)       # Gram block, shape (len(X), len(Y)), dtype of the inputs
    d = kernel.diag(X)          # k(x_i, x_i), shape (len(X),)
    for rows, block in kernel.blocks(X, Y, max_memory=2**26): ...   # streamed row blocks

Data-dependent parameters (bandwidth rules) are set by ``fit(X)`` only. A kernel with such a rule
that was never fitted computes them, for each call, from that call's reference points (``Y``, or
``X`` when ``Y`` is omitted) and stores nothing: the result does not depend on the order of
calls and concurrent calls from several threads are safe. Estimators fit their kernel on the
training data.

Vector kernels accept ``scipy.sparse`` input (CSR, CSC or any format, converted to CSR).
Linear, polynomial, RBF and Laplacian kernels work on the sparse rows directly (they visit only
the pairs of non-zeros that share a column, :mod:`sparsekit.kernels._sparse_cpu`); kernels
without a sparse path
(the chi2 kernels) densify one row block of ``X`` and one row tile of ``Y`` at a time (at most
``SPARSE_TILE_BYTES`` each), never the whole matrix.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base import ParamsMixin
from .._runtime.memory import check_allocation
from .._runtime.pools import empty_touched
from .._runtime.small_blas import is_skinny, one_blas_thread
from .._validation import check_array, check_option, check_pair, check_scalar, is_sparse

BACKENDS = ("auto", "cpu", "cuda")

#: Default size of one row block (bytes of output) when no ``max_memory`` is given. The vector
#: kernels write their blocks in place into the output, so blocks only bound the working set;
#: large blocks avoid switching between BLAS and Numba thread pools many times.
DEFAULT_BLOCK_BYTES = 256 * 2**20

#: Largest dense copy of sparse rows made by the kernels without a sparse formula (one row
#: block of X and one row tile of Y, each at most this many bytes).
SPARSE_TILE_BYTES = 32 * 2**20


def cuda_usable() -> bool:
    """Tell whether a real CUDA device can run sparsekit's kernels.

    True when ``backend="auto"`` uses the GPU.

    Numba's simulator never counts. The first call on a machine with a device compiles and runs
    a one-thread kernel: a Numba CUDA install that cannot (say, one built for another NumPy)
    makes ``"auto"`` fall back to the CPU with a ``RuntimeWarning`` instead of failing at the
    first Gram matrix. The answer is kept for the process.

    Returns
    -------
    bool
        Whether ``backend="auto"`` may send work to the GPU.
    """
    global _CUDA_USABLE
    if _CUDA_USABLE is None:
        with _PROBE_LOCK:  # one probe (and one warning) even when threads ask first together
            if _CUDA_USABLE is None:
                _CUDA_USABLE = _probe_cuda()
    return _CUDA_USABLE


_CUDA_USABLE: bool | None = None
_PROBE_LOCK = threading.Lock()


def _cuda_driver_loadable() -> bool:
    """False when Numba could not load a CUDA driver library, found without importing
    ``numba.cuda`` (an import of 0.05-0.07 s of CPU, a tenth of a warm first call).

    Tries the names and directories that ``numba.cuda.is_available()`` tries first on Linux.
    Elsewhere, or when ``NUMBA_CUDA_DRIVER`` names a library, it answers True and leaves the
    decision to Numba.
    """
    if not sys.platform.startswith("linux") or os.environ.get("NUMBA_CUDA_DRIVER"):
        return True
    names = ("libcuda.so", "libcuda.so.1")
    for path in names + tuple(f"{d}/{n}" for d in ("/usr/lib", "/usr/lib64") for n in names):
        try:
            ctypes.CDLL(path)
        except OSError:
            continue
        return True
    return False


def _probe_cuda() -> bool:
    try:
        from numba import config
    except Exception:  # pragma: no cover - numba always importable when installed
        return False
    if config.ENABLE_CUDASIM or not _cuda_driver_loadable():
        return False
    try:
        from numba import cuda

        if not cuda.is_available():
            return False
    except Exception:
        return False
    try:
        from . import _cuda

        _cuda.probe()
    except Exception as exc:
        warnings.warn(
            f"a CUDA device is present but Numba cannot run kernels on it ({exc!r}); "
            "backend='auto' uses the CPU. Check that numba / numba-cuda match the installed "
            "NumPy and CUDA driver.",
            RuntimeWarning,
            stacklevel=3,
        )
        return False
    return True


#: ``backend="auto"`` sends a Gram matrix to the GPU only from this many entries on: below it
#: the fixed cost of a GPU call (copies, launch) exceeds the CPU's time (``bench_cuda.py``).
AUTO_CUDA_MIN_ENTRIES = 2**18


def resolve_backend(
    backend: str, has_cuda: bool, component: str, entries: int | None = None
) -> str:
    """Turn ``"auto"|"cpu"|"cuda"`` into ``"cpu"`` or ``"cuda"`` for one component.

    Parameters
    ----------
    backend : {"auto", "cpu", "cuda"}
        The requested backend.
    has_cuda : bool
        Whether the component has a ``@cuda.jit`` path.
    component : str
        The component's name, for the error message.
    entries : int, optional
        Number of entries of the Gram matrix to compute; ``"auto"`` keeps fewer than
        ``AUTO_CUDA_MIN_ENTRIES`` entries on the CPU.

    Returns
    -------
    str
        ``"cpu"`` or ``"cuda"``.

    Raises
    ------
    ValueError
        ``backend`` is not an option, or ``"cuda"`` is asked for a component without a CUDA path
        or on a machine without a device (and without the simulator).
    """
    backend = check_option(backend, "backend", BACKENDS)
    if backend == "cpu":
        return "cpu"
    if backend == "cuda":
        if not has_cuda:
            raise ValueError(f"{component} has no CUDA implementation; use backend='cpu' or 'auto'")
        from numba import config, cuda

        if not (config.ENABLE_CUDASIM or cuda.is_available()):
            raise ValueError(
                "backend='cuda' but no CUDA device is available (numba.cuda.is_available() is "
                "False); use backend='auto' or 'cpu', or set NUMBA_ENABLE_CUDASIM=1 to simulate"
            )
        return "cuda"
    if entries is not None and entries < AUTO_CUDA_MIN_ENTRIES:
        return "cpu"
    return "cuda" if has_cuda and cuda_usable() else "cpu"


class Kernel(ParamsMixin, ABC):
    """Base class of all kernels. Subclasses set ``name`` and implement ``__call__``/``diag``."""

    name = "kernel"
    #: ``"vectors"`` (2-D arrays) or ``"graphs"`` (sequences of graphs).
    accepts = "vectors"

    def fit(self, X: Any) -> Kernel:
        """Set data-dependent parameters from ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of graphs
            The data the parameters are computed from (ignored by kernels without data-dependent
            parameters).

        Returns
        -------
        Kernel
            The kernel itself.
        """
        self._check_params()
        return self

    def _check_params(self):
        """Validate the parameters: at construction, in ``set_params`` and at every evaluation
        (so that attributes assigned directly are checked too)."""
        if hasattr(self, "backend"):
            check_option(self.backend, "backend", BACKENDS)

    # -- data protocol: lets samplers and estimators handle vectors and graphs alike -------
    def prepare(self, X: Any) -> Any:
        """Validate ``X`` once and return it in the form this kernel evaluates fastest.

        Kernel calls, :meth:`~sparsekit.kernels.base.Kernel.take` and
        :meth:`~sparsekit.kernels.base.Kernel.n_samples` accept the prepared form (vector
        kernels: a C-contiguous float array; graph kernels: a prepared graph set).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of graphs
            The input.

        Returns
        -------
        object
            ``X`` in the prepared form.
        """
        return check_array(X, "X", nonnegative=getattr(self, "nonnegative", False))

    def take(self, X: Any, indices: ArrayLike) -> Any:
        """Select samples of prepared data.

        Parameters
        ----------
        X : object
            Data in the form :meth:`prepare` returns.
        indices : array-like of int
            The samples to keep, in order.

        Returns
        -------
        object
            The samples ``indices`` of ``X``, in the same form as ``X``.
        """
        return X[np.asarray(indices, dtype=np.intp)]

    def n_samples(self, X: Any) -> int:
        """Count the samples in prepared data ``X``.

        Parameters
        ----------
        X : object
            Data in the form :meth:`prepare` returns.

        Returns
        -------
        int
            The number of samples.
        """
        return X.shape[0]

    @abstractmethod
    def __call__(self, X: Any, Y: Any = None) -> np.ndarray:
        """Compute the Gram block between the inputs ``X`` and ``Y``.

        Parameters
        ----------
        X : array-like of shape (n, n_features) or sequence of graphs
            The inputs of the rows.
        Y : array-like of shape (m, n_features) or sequence of graphs, optional
            The inputs of the columns; ``X`` when omitted.

        Returns
        -------
        ndarray of shape (n, m)
            The Gram block ``K[i, j] = k(X[i], Y[j])``.
        """

    @abstractmethod
    def diag(self, X: Any) -> np.ndarray:
        """Compute ``k(x_i, x_i)`` for every input.

        Parameters
        ----------
        X : array-like of shape (n, n_features) or sequence of graphs
            The inputs.

        Returns
        -------
        ndarray of shape (n,)
            ``k(x_i, x_i)`` for each input.
        """


#: a whole Gram matrix below this many bytes is not checked against the available memory: the
#: check reads /proc and cgroup files (about 0.1 ms), more than a small Gram block costs
GRAM_CHECK_MIN_BYTES = 1 << 26


def check_gram_fits(name: str, n: int, m: int, itemsize: int) -> None:
    """Refuse (:class:`~sparsekit._runtime.memory.InsufficientMemoryError`) or warn before a whole
    n x m Gram matrix of at least ``GRAM_CHECK_MIN_BYTES`` is allocated that would not fit in
    the available memory, naming the ways that need no such matrix (row blocks, a Nystroem
    approximation)."""
    if n * m * itemsize < GRAM_CHECK_MIN_BYTES:
        return
    check_allocation(
        n * m * itemsize,
        f"the {name} Gram matrix of {n} x {m} rows",
        "stream it in row blocks (kernel.blocks(X, Y, max_memory=...)) or approximate it with "
        "a low-rank map (sparsekit.Nystroem(n_components=...))",
        matrices="an n x m matrix",
    )


def _block_rows(n_rows: int, n_cols: int, itemsize: int, max_memory) -> int:
    if max_memory is None:
        budget = DEFAULT_BLOCK_BYTES
    else:
        budget = check_scalar(max_memory, "max_memory", low=0)
    return int(max(1, min(n_rows, budget // max(1, n_cols * itemsize))))


class VectorKernel(Kernel):
    """A kernel on the rows of 2-D float arrays, evaluated in row blocks.

    Subclasses implement ``_prepare(X, Y, same)`` (per-call context such as squared norms) and
    ``_fill(Xb, Y, ctx, out, row0, same)``, which writes the Gram block of the rows ``Xb``
    (starting at row ``row0`` of X) into ``out``. On the GPU, ``_cuda_entries`` names the
    ``@cuda.jit`` kernel that computes the entries.
    """

    #: inputs must be non-negative (chi2 kernels)
    nonnegative = False
    #: a ``@cuda.jit`` path exists
    has_cuda = False
    #: ``_prepare``/``_fill``/``_diag`` take CSR input directly (otherwise sparse rows are
    #: densified tile by tile)
    sparse_native = False

    def prepare(self, X: Any) -> Any:
        return check_array(X, "X", nonnegative=self.nonnegative, accept_sparse=True)

    def _validate(self, X, Y):
        return check_pair(X, Y, nonnegative=self.nonnegative, accept_sparse=True)

    def _resolved(self, X, Y):
        """The kernel to evaluate ``k(X, Y)`` with: ``self``, or (kernels with data-dependent
        parameters that were never fitted) a copy with those parameters computed for this call.
        Never modifies ``self``, so concurrent calls are safe."""
        return self

    def _prepare(self, X, Y, same):
        return None

    def __call__(
        self, X: Any, Y: Any = None, *, out: np.ndarray | None = None, max_memory: int | None = None
    ) -> np.ndarray:
        """Compute the Gram matrix ``K[i, j] = k(X[i], Y[j])`` (``Y = X`` when omitted).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            The rows.
        Y : array-like or sparse matrix of shape (m, d), optional
            The columns; ``X`` when omitted.
        out : array of shape (n, m), optional
            Written in place and returned (C-contiguous, dtype of the inputs).
        max_memory : int, optional
            Bytes of output computed per block (the working set); the result is assembled
            block by block. Use :meth:`blocks` to stream blocks without holding the result.

        Returns
        -------
        ndarray of shape (n, m)
            The Gram matrix (``out`` when given).

        Raises
        ------
        sparsekit._runtime.memory.InsufficientMemoryError
            Without ``out``, an n x m result above 90 % of the available memory (a
            ``MemoryError`` naming its size and :meth:`blocks` / Nystroem instead), checked
            before anything is allocated; above half of it a ``LargeAllocationWarning``.
        """
        self._check_params()
        same = Y is None
        X, Y = self._validate(X, Y)
        kernel = self._resolved(X, None if same else Y)
        n, m = X.shape[0], Y.shape[0]
        if out is None:
            check_gram_fits(self.name, n, m, X.dtype.itemsize)
            out = empty_touched((n, m), X.dtype)
        elif (
            not isinstance(out, np.ndarray)
            or out.shape != (n, m)
            or out.dtype != X.dtype
            or not out.flags.c_contiguous
        ):
            raise ValueError(
                f"out must be a C-contiguous {X.dtype} array of shape {(n, m)}, got "
                f"{getattr(out, 'dtype', type(out))} {getattr(out, 'shape', '')}"
            )
        step = _block_rows(n, m, X.dtype.itemsize, max_memory)
        fill = kernel._block_filler(X, Y, same, step)
        for r0 in range(0, n, step):
            r1 = min(n, r0 + step)
            fill(r0, r1, out[r0:r1])
        return out

    def blocks(
        self, X: Any, Y: Any = None, *, max_memory: int | None = None
    ) -> Iterator[tuple[slice, np.ndarray]]:
        """Yield the Gram matrix in row blocks of at most ``max_memory`` bytes.

        Each item is ``(rows, block)``.

        ``rows`` is a ``slice`` of the rows of ``X``. Only one block is alive at a time (the
        generator reuses nothing the caller holds).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            The rows.
        Y : array-like or sparse matrix of shape (m, d), optional
            The columns; ``X`` when omitted.
        max_memory : int, optional
            Bytes of one block; the library's default block size when omitted.

        Yields
        ------
        rows : slice
            The rows of ``X`` the block covers.
        block : ndarray of shape (rows.stop - rows.start, m)
            The Gram matrix on those rows.
        """
        self._check_params()
        same = Y is None
        X, Y = self._validate(X, Y)
        kernel = self._resolved(X, None if same else Y)
        n, m = X.shape[0], Y.shape[0]
        step = _block_rows(n, m, X.dtype.itemsize, max_memory)
        fill = kernel._block_filler(X, Y, same, step)
        for r0 in range(0, n, step):
            r1 = min(n, r0 + step)
            yield slice(r0, r1), fill(r0, r1, np.empty((r1 - r0, m), dtype=X.dtype))

    def diag(self, X: Any) -> np.ndarray:
        """Compute ``k(x_i, x_i)`` for every row of ``X`` (O(n d), no Gram matrix).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d)
            The inputs.

        Returns
        -------
        ndarray of shape (n,)
            ``k(x_i, x_i)`` for each row.
        """
        self._check_params()
        X = check_array(X, "X", nonnegative=self.nonnegative, accept_sparse=True)
        return self._resolved(X, None)._diag(X)

    @abstractmethod
    def _fill(self, Xb, Y, ctx, out, row0, same):
        """Write the Gram block of the rows ``Xb`` (rows ``row0...`` of X) into ``out``."""

    @abstractmethod
    def _diag(self, X):
        """Diagonal of the Gram matrix of validated ``X``."""

    def _block_filler(self, X, Y, same, block_rows):
        """``fill(r0, r1, out)``: writes the Gram rows ``r0:r1`` into ``out`` and returns it.

        On the CPU the per-call context of :meth:`_prepare` is shared by the blocks; on the GPU
        (``backend`` resolved to ``"cuda"``) ``Y`` stays on the device across blocks and the
        device holds at most ``block_rows`` output rows at a time.
        """
        if is_sparse(X):
            if not self.sparse_native:
                return self._sparse_tile_filler(X, Y)
            backend = "cpu"
        else:
            backend = resolve_backend(
                getattr(self, "backend", "cpu"),
                self.has_cuda,
                self.name,
                entries=X.shape[0] * Y.shape[0],
            )
        if backend == "cuda":
            from . import _cuda

            entries, args = self._cuda_entries(X)
            gram = _cuda.DeviceGram(entries, Y, args, block_rows)

            def fill(r0, r1, out):
                return gram.fill(X[r0:r1], out)
        else:
            ctx = self._prepare(X, Y, same)

            def fill(r0, r1, out):
                self._fill(X[r0:r1], Y, ctx, out, r0, same)
                return out

        return fill

    def _sparse_tile_filler(self, X, Y):
        """``fill`` for sparse ``X``/``Y`` and a kernel without a sparse formula: the dense
        ``_fill`` on tiles of densified rows (at most ``SPARSE_TILE_BYTES`` each)."""
        d, m = X.shape[1], Y.shape[0]
        tile = int(max(1, SPARSE_TILE_BYTES // max(1, d * X.dtype.itemsize)))

        def fill(r0, r1, out):
            for a0 in range(r0, r1, tile):
                a1 = min(r1, a0 + tile)
                Xb = X[a0:a1].toarray()
                for c0 in range(0, m, tile):
                    c1 = min(m, c0 + tile)
                    Yt = Y[c0:c1].toarray()
                    part = np.empty((a1 - a0, c1 - c0), dtype=X.dtype)
                    self._fill(Xb, Yt, self._prepare(Xb, Yt, False), part, 0, False)
                    out[a0 - r0 : a1 - r0, c0:c1] = part
            return out

        return fill

    def _cuda_entries(self, X):  # pragma: no cover - only kernels with has_cuda
        """``(kernel of _cuda, scalar arguments cast to X's dtype)`` of the GPU path."""
        raise ValueError(f"{self.name} has no CUDA implementation")


def row_sq_norms(X):
    """``||x_i||^2`` for every row of a dense or CSR ``X`` (dtype of ``X``)."""
    if is_sparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=X.dtype).ravel()
    return np.einsum("ij,ij->i", X, X)


def cross_products(Xb, Y, out):
    """``out = Xb @ Y.T`` for dense or CSR inputs (CSR: straight into the dense ``out``).

    A block of a few rows or columns (:func:`sparsekit._runtime.small_blas.is_skinny`) runs on
    one BLAS thread.
    """
    if is_sparse(Xb):
        from ._sparse_cpu import csr_inner_products

        csr_inner_products(Xb, Y, out)
    else:
        with one_blas_thread(is_skinny(*out.shape)):
            np.dot(Xb, Y.T, out=out)
    return out


class CallableKernel(VectorKernel):
    """A user function ``func(X, Y, **params) -> Gram block`` as a sparsekit kernel.

    The function receives two validated 2-D arrays (dense, or both CSR when the input is
    sparse) and must return their Gram block of shape ``(len(X), len(Y))``. It is called on row
    blocks of ``X`` (``max_memory``), never on pairs of single rows: scikit-learn's
    ``pairwise_kernels(metric=callable)`` calls the function once per pair of rows instead.
    ``diag`` evaluates it on row blocks against themselves and keeps the diagonals.

    Parameters
    ----------
    func : callable
        The function ``func(X, Y, **params)`` that returns the Gram block of ``X`` and ``Y``.
    params : dict, optional
        Keyword arguments passed to every call of ``func``.
    """

    name = "callable"
    sparse_native = True

    def __init__(self, func: Callable[..., Any], params: dict[str, Any] | None = None) -> None:
        self.func = func
        self.params = params
        self._check_params()

    def _check_params(self):
        super()._check_params()
        if not callable(self.func) or isinstance(self.func, type):
            raise TypeError(
                "func must be a function k(X, Y) -> Gram matrix, got "
                f"{self.func!r} ({type(self.func).__name__})"
            )
        if self.params is not None and not isinstance(self.params, dict):
            raise TypeError(f"params must be a dict of keyword arguments, got {self.params!r}")

    def _evaluate(self, A, B):
        K = self.func(A, B, **(self.params or {}))
        K = K.toarray() if is_sparse(K) else np.asarray(K)
        shape = (A.shape[0], B.shape[0])
        if K.shape != shape:
            raise ValueError(
                f"kernel function {getattr(self.func, '__name__', self.func)!r} returned shape "
                f"{K.shape} for inputs of {shape[0]} and {shape[1]} rows; it must return the "
                f"Gram block of shape {shape}"
            )
        if K.dtype.kind not in "biuf":
            raise TypeError(
                f"kernel function returned dtype {K.dtype}; it must return real numbers"
            )
        return K

    def _fill(self, Xb, Y, ctx, out, row0, same):
        out[...] = self._evaluate(Xb, Y)

    def _diag(self, X):
        n = X.shape[0]
        out = np.empty(n, dtype=X.dtype)
        step = 256
        for r0 in range(0, n, step):
            Xb = X[r0 : r0 + step]
            out[r0 : r0 + Xb.shape[0]] = np.diagonal(self._evaluate(Xb, Xb))
        return out


class PrecomputedRows:
    """Rows of a precomputed Gram matrix: ``K`` (n_rows, n_train) and, per row, the position of
    that sample in the training set (``-1`` for a sample outside it).

    Slicing and integer indexing select rows (as for an array of samples), so samplers and
    estimators handle them through the kernel protocol (``take``, ``n_samples``).
    """

    def __init__(self, K, index):
        self.K = K
        self.index = index

    @property
    def shape(self):
        return self.K.shape

    @property
    def dtype(self):
        return self.K.dtype

    def __len__(self):
        return self.K.shape[0]

    def __getitem__(self, rows):
        return PrecomputedRows(self.K[rows], self.index[rows])


class PrecomputedKernel(Kernel):
    """A Gram matrix given instead of data (scikit-learn's ``kernel="precomputed"``).

    ``prepare(K)`` reads a square K as the Gram matrix of the training samples with themselves
    (``K[i, j] = k(x_i, x_j)``), and a K of another shape as the kernel between new samples
    (rows) and the training samples (columns). ``kernel(A, B)`` returns the columns of A at the
    training positions of the rows of B, so B must be training samples (landmarks are);
    ``diag`` needs training samples too. The samples are opaque (rows, not vectors): the
    samplers that take them are those that reach samples only through the kernel, the ones that
    accept graphs.
    """

    name = "precomputed"
    accepts = "graphs"

    def prepare(self, X: Any) -> PrecomputedRows:
        if isinstance(X, PrecomputedRows):
            return X
        K = check_array(X, "X")
        n, m = K.shape
        index = np.arange(n) if n == m else np.full(n, -1)
        return PrecomputedRows(K, index)

    def take(self, X: Any, indices: ArrayLike) -> PrecomputedRows:
        return X[np.asarray(indices, dtype=np.intp)]

    def n_samples(self, X: Any) -> int:
        return len(X)

    def _training(self, B, what):
        B = self.prepare(B)
        if B.index.size and B.index.min() < 0:
            raise ValueError(
                f"kernel='precomputed': {what} must be training samples (rows of the square "
                "training Gram matrix); a precomputed kernel only knows k(x, x_j) for training "
                "points x_j"
            )
        return B

    def __call__(self, X: Any, Y: Any = None) -> np.ndarray:
        A = self.prepare(X)
        B = A if Y is None else self._training(Y, "the second argument")
        if Y is None:
            B = self._training(A, "X")
        return np.ascontiguousarray(A.K[:, B.index])

    def diag(self, X: Any) -> np.ndarray:
        A = self._training(X, "X")
        return A.K[np.arange(len(A)), A.index]


__all__ = [
    "Kernel",
    "VectorKernel",
    "CallableKernel",
    "PrecomputedKernel",
    "resolve_backend",
    "cuda_usable",
]
