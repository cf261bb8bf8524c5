"""Kernel protocol and the block-wise evaluation shared by every vector kernel.

A kernel is a callable object::

    K = kernel(X, Y=None)       # Gram block, shape (len(X), len(Y)), dtype of the inputs
    d = kernel.diag(X)          # k(x_i, x_i), shape (len(X),)
    for rows, block in kernel.blocks(X, Y, max_memory=2**26): ...   # streamed row blocks

Data-dependent parameters (bandwidth rules) are set by ``fit(X)``; a kernel with such a rule that
was never fitted fits itself on the first ``X`` it is called with.
"""
from __future__ import annotations

import threading
import warnings
from abc import ABC, abstractmethod

import numpy as np

from .._base import ParamsMixin
from .._validation import check_option, check_pair, check_array, check_scalar

BACKENDS = ("auto", "cpu", "cuda")

#: Default size of one row block (bytes of output) when no ``max_memory`` is given. The vector
#: kernels write their blocks in place into the output, so blocks only bound the working set;
#: large blocks avoid switching between BLAS and Numba thread pools many times.
DEFAULT_BLOCK_BYTES = 256 * 2**20


def cuda_usable() -> bool:
    """True when a real CUDA device can run sparsekit's kernels (``backend="auto"`` uses it).

    Numba's simulator never counts. The first call on a machine with a device compiles and runs
    a one-thread kernel: a Numba CUDA install that cannot (say, one built for another NumPy)
    makes ``"auto"`` fall back to the CPU with a ``RuntimeWarning`` instead of failing at the
    first Gram matrix. The answer is kept for the process.
    """
    global _CUDA_USABLE
    if _CUDA_USABLE is None:
        with _PROBE_LOCK:  # one probe (and one warning) even when threads ask first together
            if _CUDA_USABLE is None:
                _CUDA_USABLE = _probe_cuda()
    return _CUDA_USABLE


_CUDA_USABLE = None
_PROBE_LOCK = threading.Lock()


def _probe_cuda() -> bool:
    try:
        from numba import config, cuda
    except Exception:  # pragma: no cover - numba always importable when installed
        return False
    if config.ENABLE_CUDASIM:
        return False
    try:
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


def resolve_backend(backend: str, has_cuda: bool, component: str, entries=None) -> str:
    """Turn ``"auto"|"cpu"|"cuda"`` into ``"cpu"`` or ``"cuda"`` for one component.

    ``entries``, when given, is the size of the Gram matrix to compute: ``"auto"`` keeps
    matrices of fewer than ``AUTO_CUDA_MIN_ENTRIES`` entries on the CPU.
    """
    backend = check_option(backend, "backend", BACKENDS)
    if backend == "cpu":
        return "cpu"
    if backend == "cuda":
        if not has_cuda:
            raise ValueError(
                f"{component} has no CUDA implementation; use backend='cpu' or 'auto'"
            )
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

    def fit(self, X):
        """Set data-dependent parameters from ``X``; returns self."""
        self._check_params()
        return self

    def _check_params(self):
        """Validate the parameters: at construction, in ``set_params`` and at every evaluation
        (so that attributes assigned directly are checked too)."""
        if hasattr(self, "backend"):
            check_option(self.backend, "backend", BACKENDS)

    # -- data protocol: lets samplers and estimators handle vectors and graphs alike -------
    def prepare(self, X):
        """Validate ``X`` once and return it in the form this kernel evaluates fastest.

        Kernel calls, :meth:`take` and :meth:`n_samples` accept the prepared form (vector
        kernels: a C-contiguous float array; graph kernels: a prepared graph set).
        """
        return check_array(X, "X", nonnegative=getattr(self, "nonnegative", False))

    def take(self, X, indices):
        """The samples ``indices`` of prepared data ``X`` (same form as ``X``)."""
        return X[np.asarray(indices, dtype=np.intp)]

    def n_samples(self, X) -> int:
        """Number of samples in prepared data ``X``."""
        return X.shape[0]

    @abstractmethod
    def __call__(self, X, Y=None):
        """Gram block between the inputs ``X`` and ``Y`` (``Y = X`` when omitted)."""

    @abstractmethod
    def diag(self, X):
        """``k(x_i, x_i)`` for every input."""


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

    def _validate(self, X, Y):
        return check_pair(X, Y, nonnegative=self.nonnegative)

    def _ensure_fitted(self, X):
        """Hook for kernels with data-dependent parameters."""

    def _prepare(self, X, Y, same):
        return None

    def _dtype_scalar(self, value, dtype):
        return dtype.type(value)

    def __call__(self, X, Y=None, *, out=None, max_memory=None):
        """Gram matrix ``K[i, j] = k(X[i], Y[j])`` (``Y = X`` when omitted).

        Parameters
        ----------
        X : array of shape (n, d)
        Y : array of shape (m, d), optional
        out : array of shape (n, m), optional
            Written in place and returned (C-contiguous, dtype of the inputs).
        max_memory : int, optional
            Bytes of output computed per block (the working set); the result is assembled
            block by block. Use :meth:`blocks` to stream blocks without holding the result.
        """
        self._check_params()
        same = Y is None
        X, Y = self._validate(X, Y)
        self._ensure_fitted(X)
        n, m = X.shape[0], Y.shape[0]
        if out is None:
            out = np.empty((n, m), dtype=X.dtype)
        elif (not isinstance(out, np.ndarray) or out.shape != (n, m) or out.dtype != X.dtype
              or not out.flags.c_contiguous):
            raise ValueError(
                f"out must be a C-contiguous {X.dtype} array of shape {(n, m)}, got "
                f"{getattr(out, 'dtype', type(out))} {getattr(out, 'shape', '')}"
            )
        step = _block_rows(n, m, X.dtype.itemsize, max_memory)
        fill = self._block_filler(X, Y, same, step)
        for r0 in range(0, n, step):
            r1 = min(n, r0 + step)
            fill(r0, r1, out[r0:r1])
        return out

    def blocks(self, X, Y=None, *, max_memory=None):
        """Yield ``(rows, block)``: the Gram matrix in row blocks of at most ``max_memory`` bytes.

        ``rows`` is a ``slice`` of the rows of ``X``. Only one block is alive at a time (the
        generator reuses nothing the caller holds).
        """
        self._check_params()
        same = Y is None
        X, Y = self._validate(X, Y)
        self._ensure_fitted(X)
        n, m = X.shape[0], Y.shape[0]
        step = _block_rows(n, m, X.dtype.itemsize, max_memory)
        fill = self._block_filler(X, Y, same, step)
        for r0 in range(0, n, step):
            r1 = min(n, r0 + step)
            yield slice(r0, r1), fill(r0, r1, np.empty((r1 - r0, m), dtype=X.dtype))

    def diag(self, X):
        """``k(x_i, x_i)`` for every row of ``X`` (O(n d), no Gram matrix)."""
        self._check_params()
        X = check_array(X, "X", nonnegative=self.nonnegative)
        self._ensure_fitted(X)
        return self._diag(X)

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
        backend = resolve_backend(getattr(self, "backend", "cpu"), self.has_cuda, self.name,
                                  entries=X.shape[0] * Y.shape[0])
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

    def _cuda_entries(self, X):  # pragma: no cover - only kernels with has_cuda
        """``(kernel of _cuda, scalar arguments cast to X's dtype)`` of the GPU path."""
        raise ValueError(f"{self.name} has no CUDA implementation")
