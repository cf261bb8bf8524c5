"""The hot Numba loops compile to SIMD code: a refactor cannot make them scalar silently.

Each loop is compiled afresh from its Python source with the options of the library's
dispatcher (its ``targetoptions``: ``error_model``, ``fastmath``, ...; no cache, so the check
never depends on what an earlier run left on disk), for float64 and float32, and its optimized
LLVM IR must contain the loop's arithmetic on a vector type (``<N x double>``,
``<N x float>``). Reading the IR rather than the assembly makes the criterion independent of
the vector width the CPU offers (SSE2 gives ``<2 x double>``, AVX2 ``<4 x double>``, AVX-512
up to ``<8 x double>``; checked with ``NUMBA_CPU_NAME=generic`` and ``haswell``).

What it guards against: Numba's default ``error_model="python"`` tests every divisor for zero
(to raise ``ZeroDivisionError``), and that branch keeps a dividing loop scalar (the chi2 Gram
was 6.4x slower in float64 and 9.7x in float32 on one thread); dropping ``fastmath``
re-association makes a float reduction scalar.
"""

import platform
import re
import warnings

import numba
import numpy as np
import pytest

from sparsekit.cluster import _cpu as cluster_cpu
from sparsekit.factorizers import _cpu as factorizers_cpu
from sparsekit.kernels import _cpu as kernels_cpu
from sparsekit.linalg import _spmm
from sparsekit.manifold import _graph_cpu
from sparsekit.solvers import _cpu as solvers_cpu

pytestmark = [
    pytest.mark.skipif(
        platform.machine().lower() not in ("x86_64", "amd64"),
        reason="the vectorization criterion is checked on x86_64 only",
    ),
    pytest.mark.skipif(
        numba.config.DISABLE_JIT or int(numba.config.OPT) < 2 or bool(numba.config.BOUNDSCHECK),
        reason="JIT disabled, optimization below -O2 or bounds checks on: nothing is vectorized",
    ),
]

DTYPES = [np.float64, np.float32]
#: element-wise floating-point arithmetic (instructions and intrinsics)
ARITH = r"(?:fadd|fsub|fmul|fdiv|fneg|call[^\n]*@llvm\.(?:fmuladd|fma|fabs|minnum|maxnum)\.)"


def _chi2(dt):
    X, Y = _rand(dt, 6, 24), _rand(dt, 5, 24)
    return kernels_cpu._chi2_sums_rows, (0, 6, X, Y, np.empty((6, 5), dt))


def _rbf_tail(dt):
    return kernels_cpu._scaled_sq_dist_rows, (
        0,
        6,
        _rand(dt, 6, 5),
        _rand(dt, 6),
        _rand(dt, 5),
        dt(-0.5),
    )


def _l1(dt):
    return kernels_cpu._l1_distances_rows, (
        0,
        6,
        _rand(dt, 6, 24),
        _rand(dt, 5, 24),
        np.empty((6, 5), dt),
    )


def _label_sums(dt):
    return cluster_cpu.label_sums_cols, (
        3,
        37,
        _rand(dt, 40, 40),
        np.zeros(40, np.intp),
        np.empty((3, 40), dt),
    )


def _nearest(dt):
    return cluster_cpu.nearest_from_scores, (
        _rand(dt, 3, 40),
        _rand(dt, 3),
        np.empty(40, np.int64),
        np.empty(40, dt),
    )


def _cluster_sums(dt):
    return cluster_cpu.cluster_sums, (_rand(dt, 40, 7), np.zeros(40, np.intp), np.empty((3, 7), dt))


def _geodesic(dt):
    return _graph_cpu.geodesic_extension_rows, (
        _rand(dt, 4, 3),
        np.zeros((4, 3), np.int64),
        _rand(dt, 5, 30),
        np.arange(4),
        0,
        4,
        np.empty((4, 30), dt),
    )


def _csr_chain(dt):
    i64 = np.zeros(3, np.int64)
    return _spmm.csr_chain_block, (
        i64,
        i64,
        i64,
        i64,
        i64,
        _rand(dt, 3),
        _rand(dt, 4, 16),
        _rand(dt, 4, 16),
        _rand(dt, 4, 16),
        _rand(dt, 4, 16),
    )


def _csr_matmat(dt):
    return _spmm._csr_matmat_rows, (
        0,
        3,
        np.array([0, 2, 3, 3]),
        np.array([0, 2, 1]),
        _rand(dt, 3),
        _rand(dt, 4, 16),
        _rand(dt, 3, 16),
    )


def _lanczos(dt):
    return factorizers_cpu.lanczos_steps, (
        _rand(dt, 5, 16),
        _rand(dt, 4, 16),
        np.zeros((2, 4)),
        1e-6,
        0,
        _rand(dt, 16),
    )


def _lanczos_close(dt):
    return factorizers_cpu._close_step, (_rand(dt, 4, 16), np.zeros((2, 4)), 1e-6, 1, _rand(dt, 16))


def _omp_gram(dt):
    n_sig, n_atoms, n_max = 3, 20, 4
    return solvers_cpu.omp_gram, (
        0,
        n_sig,
        _rand(dt, n_atoms, n_atoms),
        _rand(dt, n_sig, n_atoms),
        _rand(dt, n_sig),
        n_max,
        -1.0,
        _rand(dt, n_sig),
        1e-12,
        np.zeros((n_sig, n_max), np.int64),
        _rand(dt, n_sig, n_max),
        _rand(dt, n_sig, n_max + 1),
        np.zeros(n_sig, np.int64),
        np.zeros(n_sig, np.int64),
        _rand(dt, 1, 1, 1),
        False,
        _rand(dt, n_max, n_max),
        _rand(dt, 3, n_max),
        np.zeros(n_atoms, np.bool_),
        _rand(dt, n_atoms),
    )


#: (loop, its arguments for a dtype, the operation that must be vectorized)
HOT_LOOPS = {
    "chi2 sums (division)": (_chi2, "fdiv"),
    "rbf scaled squared distances": (_rbf_tail, ARITH),
    "laplacian L1 distances": (_l1, ARITH),
    "kernel k-means nearest centroid": (_nearest, ARITH),
    "kernel k-means cluster sums (scatter-add)": (_cluster_sums, "fadd"),
    "exact kernel k-means row cluster sums (column strips)": (_label_sums, "fadd"),
    "geodesic extension": (_geodesic, ARITH),
    "sparse factor chain (AXPY)": (_csr_chain, ARITH),
    "sparse times dense (two AXPYs per pass)": (_csr_matmat, ARITH),
    "Palm4MSA spectral norm (dense Lanczos steps)": (_lanczos, ARITH),
    "Palm4MSA spectral norm (reorthogonalization)": (_lanczos_close, ARITH),
    "batch OMP correlation update": (_omp_gram, ARITH),
}


def _rand(dt, *shape):
    return np.random.default_rng(0).random(shape).astype(dt)


def optimized_ir(dispatcher, args):
    """LLVM IR (after optimization) of a fresh, uncached compile of ``dispatcher``'s source
    with its own options, for the types of ``args``."""
    options = {k: v for k, v in dispatcher.targetoptions.items() if k != "nopython"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", numba.NumbaWarning)
        fresh = numba.njit(**options)(dispatcher.py_func)
        signature = tuple(numba.typeof(a) for a in args)
        fresh.compile(signature)
    return fresh.inspect_llvm(signature)


def vector_ops(ir, op):
    """The instructions of ``ir`` where ``op`` acts on a vector of floats or doubles (a float32
    loop may compute in double: ``nearest_from_scores`` multiplies by the float64 ``2.0``)."""
    return re.findall(rf"= {op}[^\n]*<\d+ x (?:double|float)>", ir)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: t.__name__)
@pytest.mark.parametrize("loop", list(HOT_LOOPS))
def test_hot_loop_is_vectorized(loop, dtype):
    build, op = HOT_LOOPS[loop]
    dispatcher, args = build(dtype)
    ir = optimized_ir(dispatcher, args)
    assert vector_ops(ir, op), (
        f"{loop} ({dispatcher.__name__}, {dtype.__name__}): no {op} on a vector type in the "
        f"optimized IR, the loop no longer vectorizes (options "
        f"{dispatcher.targetoptions}; a loop that divides needs error_model='numpy')"
    )


def test_criterion_detects_a_scalar_division_loop():
    """The same chi2 loop under Numba's default error model is scalar: the criterion sees it."""
    dispatcher, args = _chi2(np.float64)
    options = {k: v for k, v in dispatcher.targetoptions.items() if k != "nopython"}
    options["error_model"] = "python"
    scalar = numba.njit(**options)(dispatcher.py_func)
    signature = tuple(numba.typeof(a) for a in args)
    scalar.compile(signature)
    assert not vector_ops(scalar.inspect_llvm(signature), "fdiv")
