"""Exact empirical MMD², computed in row blocks (memory O(block), never an (n_A + n_B)² matrix).

With samples A = {x_1..x_n} and B = {z_1..z_m} and the kernel sums S_AA = Σ_ij k(x_i, x_j),
S_BB = Σ_ij k(z_i, z_j), S_AB = Σ_ij k(x_i, z_j):

- biased V-statistic (Gretton et al. 2012, Eq. 5; Cherfaoui thesis §4.2, Eq. 4.2)::

      MMD²_b = S_AA / n² + S_BB / m² − 2 S_AB / (n m)

- unbiased U-statistic (Gretton et al. 2012, Eq. 3), the diagonals left out::

      MMD²_u = (S_AA − tr K_AA) / (n (n − 1)) + (S_BB − tr K_BB) / (m (m − 1)) − 2 S_AB / (n m)

The symmetric sums are taken over the upper block triangle (each off-diagonal block counted
twice), so the kernel is evaluated on n²/2 + m²/2 + n m pairs. With the library's vector kernels
on the CPU the blocks are square tiles evaluated on the block pool
(:func:`sparsekit._runtime.pools.run_blocks`: each tile on one thread and one BLAS thread, the
threads taking the next tile as they finish); each tile is reduced to its float64 sum and the
sums are added in the tiles' order, so the statistic does not depend on the thread count. The
library's RBF kernel on dense data sums each tile strip by strip in cache without writing it out
(:mod:`sparsekit.stats._rbf_tiles`).
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from .._runtime.threads import n_jobs_limit
from .._typing import DataLike
from ..components import resolve
from ..registry import Registry
from ._data import Pooled, take_rows
from ._rbf_tiles import fused_rbf

#: Bytes of one Gram block (its rows times all the columns it is computed against).
DEFAULT_BLOCK_BYTES = 32 * 2**20

#: Bytes of one square tile of the threaded path (at most ``max_memory``; 1024 x 1024 float64).
#: Each kernel call runs some Python under the GIL (checks, centring: tens of microseconds), so
#: tiles must be large for two threads to overlap: on two cores 1 MiB tiles scaled 1.1x, 4 to
#: 8 MiB tiles 1.6-1.8x; the RBF tiles summed in cache 1.8x from 1 MiB, 1.9x from 4 MiB
#: (benchmarks/README.md, "Threads").
POOL_TILE_BYTES = 8 * 2**20

#: Fewest kernel entries (n² / 2 + m² / 2 + n m) for which the tiles go to the thread pool: a
#: hand-off costs tens of microseconds, more than a small Gram matrix.
POOL_MIN_ENTRIES = 2**18

# how a block's sum counts: all of it once (a block of K_AB or a diagonal tile), its diagonal
# square once and the rest twice (a row block of the upper block triangle), all of it twice (an
# off-diagonal tile of the upper triangle)
_ONCE, _ROW_TRIANGLE, _TWICE = 0, 1, 2


def _block_step(n_cols: int, max_memory) -> int:
    budget = DEFAULT_BLOCK_BYTES if max_memory is None else int(max_memory)
    return int(max(1, budget // max(1, 8 * n_cols)))


def _tile_side(max_memory) -> int:
    budget = POOL_TILE_BYTES if max_memory is None else min(POOL_TILE_BYTES, int(max_memory))
    return max(1, math.isqrt(max(0, budget) // 8))


def _sym_blocks(r0: int, r1: int, max_memory, tiles: bool = False) -> list:
    """Blocks ``(a, b, c0, c1, count)`` whose weighted sums add up to Σ_ij k(x_i, x_j) over the
    rows r0:r1: row blocks ``(a, b, a, r1)`` of the upper block triangle, or (``tiles``) the
    square tiles of that triangle."""
    if not tiles:
        step = _block_step(r1 - r0, max_memory)
        return [(a, min(r1, a + step), a, r1, _ROW_TRIANGLE) for a in range(r0, r1, step)]
    side = _tile_side(max_memory)
    blocks = []
    for a in range(r0, r1, side):
        b = min(r1, a + side)
        blocks.append((a, b, a, b, _ONCE))
        blocks.extend((a, b, c, min(r1, c + side), _TWICE) for c in range(b, r1, side))
    return blocks


def _cross_blocks(a0: int, a1: int, b0: int, b1: int, max_memory, tiles: bool = False) -> list:
    """Blocks ``(a, b, c0, c1, count)`` of the rows a0:a1 against the columns b0:b1: row blocks
    against all the columns, or (``tiles``) square tiles."""
    if not tiles:
        step = _block_step(b1 - b0, max_memory)
        return [(a, min(a1, a + step), b0, b1, _ONCE) for a in range(a0, a1, step)]
    side = _tile_side(max_memory)
    return [
        (a, min(a1, a + side), c, min(b1, c + side), _ONCE)
        for a in range(a0, a1, side)
        for c in range(b0, b1, side)
    ]


def _block_sum(kernel, data, block, cols, out=None) -> float:
    """The weighted float64 sum of the Gram block ``k(rows a:b, cols)`` (``cols`` the rows
    c0:c1). ``out``, when given, is a flat work array the block is written into (a vector
    kernel's ``out``)."""
    a, b, c0, c1, count = block
    rows = take_rows(kernel, data, a, b)
    if out is None:
        Kb = np.asarray(kernel(rows, cols))
    else:
        Kb = kernel(rows, cols, out=out[: (b - a) * (c1 - c0)].reshape(b - a, c1 - c0))
    if count == _ROW_TRIANGLE:
        diag_block = float(Kb[:, : b - a].sum(dtype=np.float64))
        rest = float(Kb[:, b - a :].sum(dtype=np.float64))
        return diag_block + 2.0 * rest
    total = float(Kb.sum(dtype=np.float64))
    return 2.0 * total if count == _TWICE else total


def _entries(block) -> int:
    a, b, c0, c1, _ = block
    return (b - a) * (c1 - c0)


def _pool_safe(kernel, data) -> bool:
    """Whether the blocks may be evaluated from several threads at once: one of the library's
    vector kernels on the CPU (they release the GIL and share nothing between calls). A user's
    function or kernel class, a graph kernel and a GPU kernel are called from one thread, one
    block after the other, as before."""
    from ..kernels.base import CallableKernel, VectorKernel, resolve_backend

    if not isinstance(kernel, VectorKernel) or isinstance(kernel, CallableKernel):
        return False
    if not type(kernel).__module__.startswith("sparsekit."):
        return False
    if not (isinstance(data, np.ndarray) or hasattr(data, "tocsr")):
        return False
    # no size given: "auto" counts as the GPU wherever a device is usable
    backend = getattr(kernel, "backend", "cpu")
    return resolve_backend(backend, kernel.has_cuda, kernel.name) == "cpu"


def _pooled(kernel, data, n_entries: int) -> bool:
    """Whether the sums go to the thread pool in tiles (see :func:`block_sums`)."""
    return n_entries >= POOL_MIN_ENTRIES and _pool_safe(kernel, data)


def block_sums(kernel, data, blocks, pooled: bool = False) -> np.ndarray:
    """The weighted float64 sums of the Gram ``blocks`` (see :func:`_block_sum`), in order.

    With ``pooled``, the threads of :func:`sparsekit._runtime.pools.run_blocks` take the blocks
    as they finish (the largest first), each on one thread and one BLAS thread, the kernel
    writing into one work array per thread; otherwise the calling thread evaluates them in
    order. The blocks are cut from the shapes and ``max_memory`` only, never from the thread
    count, so each block's sum, and any sum of them taken in a fixed order, is the same on any
    number of threads.
    """
    out = np.empty(len(blocks))
    fused = fused_rbf(kernel, data) if pooled else None
    if fused is not None:
        return _fused_sums(fused, blocks)
    taken: dict = {}  # the column sets, each taken once (graphs are copied out of the pool)
    cols = []
    for _, _, c0, c1, _ in blocks:
        if (c0, c1) not in taken:
            taken[c0, c1] = take_rows(kernel, data, c0, c1)
        cols.append(taken[c0, c1])
    if not pooled or len(blocks) < 2:
        for i, block in enumerate(blocks):
            out[i] = _block_sum(kernel, data, block, cols[i])
        return out
    from .._runtime.pools import run_blocks

    size = max(_entries(block) for block in blocks)
    local = threading.local()
    order = sorted(range(len(blocks)), key=lambda i: -_entries(blocks[i]))

    def work(j):
        i = order[j]
        buf = getattr(local, "buf", None)
        if buf is None:  # a fresh array per block would be fresh pages for every block
            buf = local.buf = np.empty(size, dtype=data.dtype)
        out[i] = _block_sum(kernel, data, blocks[i], cols[i], buf)

    run_blocks(work, len(blocks))
    return out


def _fused_sums(fused, blocks) -> np.ndarray:
    """The weighted sums of the square ``blocks`` (counts once or twice) of the RBF kernel,
    each tile summed strip by strip in cache (:mod:`._rbf_tiles`) on the block pool."""
    from .._runtime.pools import run_blocks

    out = np.empty(len(blocks))
    size = fused.work_size(blocks)
    local = threading.local()
    order = sorted(range(len(blocks)), key=lambda i: -_entries(blocks[i]))

    def work(j):
        i = order[j]
        buf = getattr(local, "buf", None)
        if buf is None:
            buf = local.buf = np.empty(size, dtype=fused.dtype)
        a, b, c0, c1, count = blocks[i]
        total = fused.tile_sum(a, b, c0, c1, buf)
        out[i] = 2.0 * total if count == _TWICE else total

    run_blocks(work, len(blocks))
    return out


def _ordered_sum(values) -> float:
    total = 0.0
    for v in values:  # left to right, as the blocks were cut
        total += float(v)
    return total


def sym_sum(kernel, data, r0: int, r1: int, max_memory=None) -> float:
    """Σ_ij k(x_i, x_j) over rows r0:r1 of prepared ``data`` (upper block triangle)."""
    n = r1 - r0
    pooled = _pooled(kernel, data, n * n // 2)
    return _ordered_sum(block_sums(kernel, data, _sym_blocks(r0, r1, max_memory, pooled), pooled))


def cross_sum(kernel, data, a0, a1, b0, b1, max_memory=None) -> float:
    """Σ_ij k(x_i, z_j) with x the rows a0:a1 and z the rows b0:b1 of ``data``."""
    pooled = _pooled(kernel, data, (a1 - a0) * (b1 - b0))
    return _ordered_sum(
        block_sums(kernel, data, _cross_blocks(a0, a1, b0, b1, max_memory, pooled), pooled)
    )


def kernel_sums(pool: Pooled, i: int, j: int, max_memory=None):
    """(S_AA, S_BB, S_AB, tr K_AA, tr K_BB) of samples i and j of a pool.

    A library vector kernel on the CPU with enough work (``POOL_MIN_ENTRIES``) is evaluated in
    square tiles of at most ``POOL_TILE_BYTES`` (and ``max_memory``) shared out to the threads,
    the blocks of the three sums in one pool; otherwise (small inputs, a user's function, a
    graph kernel, the GPU) in row blocks of ``max_memory`` bytes on the calling thread. Each
    sum is taken over its blocks' sums in a fixed order, so the result does not depend on the
    thread count.
    """
    k, data, off = pool.kernel, pool.data, pool.offsets
    a0, a1, b0, b1 = int(off[i]), int(off[i + 1]), int(off[j]), int(off[j + 1])
    n, m = a1 - a0, b1 - b0
    pooled = _pooled(k, data, n * n // 2 + m * m // 2 + n * m)
    parts = [
        _sym_blocks(a0, a1, max_memory, pooled),
        _sym_blocks(b0, b1, max_memory, pooled),
        _cross_blocks(a0, a1, b0, b1, max_memory, pooled),
    ]
    values = block_sums(k, data, [block for part in parts for block in part], pooled)
    ends = np.cumsum([0] + [len(part) for part in parts])
    s_aa, s_bb, s_ab = (_ordered_sum(values[ends[p] : ends[p + 1]]) for p in range(3))
    tr_a = float(np.sum(k.diag(take_rows(k, data, a0, a1)), dtype=np.float64))
    tr_b = float(np.sum(k.diag(take_rows(k, data, b0, b1)), dtype=np.float64))
    return s_aa, s_bb, s_ab, tr_a, tr_b


def v_statistic(sums, n, m) -> float:
    s_aa, s_bb, s_ab, _, _ = sums
    return s_aa / (n * n) + s_bb / (m * m) - 2.0 * s_ab / (n * m)


def u_statistic(sums, n, m) -> float:
    s_aa, s_bb, s_ab, tr_a, tr_b = sums
    return (s_aa - tr_a) / (n * (n - 1)) + (s_bb - tr_b) / (m * (m - 1)) - 2.0 * s_ab / (n * m)


def _run(X, Y, kernel, kernel_params, max_memory, n_jobs, unbiased, registry):
    k = resolve("kernel", kernel, kernel_params, registry=registry)
    pool = Pooled([X, Y], k, names=["X", "Y"])
    n, m = pool.sizes
    if unbiased and min(n, m) < 2:
        raise ValueError(
            f"the unbiased MMD² needs at least two points per sample (got {n} and {m}); "
            "use mmd2_biased for single points"
        )
    with n_jobs_limit(n_jobs):
        sums = kernel_sums(pool, 0, 1, max_memory)
    return u_statistic(sums, n, m) if unbiased else v_statistic(sums, n, m)


def mmd2_biased(
    X: DataLike,
    Y: DataLike,
    kernel: str | object = "rbf",
    *,
    kernel_params: dict[str, Any] | None = None,
    max_memory: int | None = None,
    n_jobs: int | None = None,
    registry: Registry | None = None,
) -> float:
    """Exact biased MMD² (V-statistic) between the samples ``X`` and ``Y``.

    MMD²_b = (1/n²) Σ k(x_i, x_j) + (1/m²) Σ k(z_i, z_j) − (2/(n m)) Σ k(x_i, z_j)
    (Gretton et al. 2012, Eq. 5; Cherfaoui thesis Eq. 4.2). It is the squared RKHS distance
    between the empirical mean embeddings, hence ≥ 0 for a PSD kernel.

    Parameters
    ----------
    X, Y : array-like of shape (n, d) and (m, d), or sequences of graphs
        The two samples (sequences of graphs for a graph kernel).
    kernel : str, kernel object or function, default "rbf"
        A registered kernel name (with ``kernel_params``), a kernel object (copied) or a
        function ``k(X, Y) -> Gram``. A data-dependent bandwidth is resolved on the pooled
        samples.
    kernel_params : dict, optional
        Parameters of a named kernel (``{"gamma": 0.5}``).
    max_memory : int, optional
        Bytes of one Gram block (default 32 MiB); the memory used is O(block) per thread, the
        time O((n + m)²) kernel evaluations. A library vector kernel on the CPU (from 2**18
        kernel evaluations on) evaluates square tiles of at most 8 MiB (and ``max_memory``),
        shared out to the threads, each tile summed in float64; a user's function, a graph
        kernel or the GPU gets row blocks of ``max_memory`` bytes, one after the other on the
        calling thread.
    n_jobs : int, optional
        Threads (default: the library-wide thread setting). The tiles are cut from the
        shapes and ``max_memory`` only, so the result is the same on any number of threads.
    registry : Registry, optional
        Where a kernel name is resolved (default: the process-wide registry).

    Returns
    -------
    float
        MMD²_b (≥ 0 for a PSD kernel).
    """
    return _run(X, Y, kernel, kernel_params, max_memory, n_jobs, False, registry)


def mmd2_unbiased(
    X: DataLike,
    Y: DataLike,
    kernel: str | object = "rbf",
    *,
    kernel_params: dict[str, Any] | None = None,
    max_memory: int | None = None,
    n_jobs: int | None = None,
    registry: Registry | None = None,
) -> float:
    """Compute the exact unbiased MMD² (U-statistic) between ``X`` and ``Y``.

    MMD²_u = Σ_{i≠j} k(x_i, x_j) / (n(n−1)) + Σ_{i≠j} k(z_i, z_j) / (m(m−1))
    − 2 Σ_ij k(x_i, z_j) / (n m) (Gretton et al. 2012, Eq. 3). Its expectation is the
    population MMD²; it can be negative. Parameters as :func:`mmd2_biased`.

    Parameters
    ----------
    X, Y : array-like of shape (n, d) and (m, d), or sequences of graphs
        The two samples, at least 2 points each.
    kernel : str or kernel object, default "rbf"
        A registered kernel name (with ``kernel_params``) or a kernel object. A data-dependent
        bandwidth is resolved on the pooled samples.
    kernel_params : dict, optional
        Parameters of a named kernel (``{"gamma": 0.5}``).
    max_memory : int, optional
        Bytes of one Gram block (default 32 MiB; see :func:`mmd2_biased`).
    n_jobs : int, optional
        Threads (default: the library-wide thread setting; the result does not depend on it).
    registry : Registry, optional
        Where a kernel name is resolved (default: the process-wide registry).

    Returns
    -------
    float
        MMD²_u (may be negative).
    """
    return _run(X, Y, kernel, kernel_params, max_memory, n_jobs, True, registry)


__all__ = ["mmd2_biased", "mmd2_unbiased"]
