"""Sparse approximation: MP, OMP, NN-OMP, Frank–Wolfe on the l1 ball, and dictionary utilities.

Solvers are registered by name (``"mp"``, ``"omp"``, ``"nn-omp"``, ``"frank-wolfe"``) and share
``solve(D, Y) -> SparseResult`` (see :mod:`sparsekit.solvers.base`); ``SparseCoder`` wraps them as
an estimator; :mod:`~sparsekit.solvers.coherence` and :mod:`~sparsekit.solvers.dictionaries` hold
the coherence / Babel / recovery-condition utilities and the Gaussian problem generator.

Backends: CPU only. An iteration is one GEMM for the correlations (``R D``, BLAS) plus per-signal
work of O(n_features + n_atoms) (MP, FW) or O(n_atoms k) (OMP on the Gram matrix), done by
Numba kernels run over ranges of signals on several threads. A ``@cuda.jit`` path is not
provided: the GEMM belongs to cuBLAS rather than to a hand-written kernel, and the remaining
per-signal work is a sequential chain of small triangular solves and argmax reductions (one
thread or one small block per signal), which would need the whole solve resident on the device
to pay for the transfers; that is a separate design (batched solver on device arrays), not a
drop-in twin of these kernels.
"""

__all__: list[str] = []  # a namespace of modules: each submodule lists its names
