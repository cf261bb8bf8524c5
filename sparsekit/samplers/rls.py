"""Ridge-leverage-score samplers: exact RLS, two-pass (uniform) RLS and DAC-RLS.

Definitions (Cherfaoui 2022, PhD thesis, §2.1.3, Def. 6; Alaoui & Mahoney 2015): for λ > 0,

    l_i = [K (K + λI)⁻¹]_ii                                (2.1)
        = Σ_j ς_j / (ς_j + λ) U[i, j]²   (K = U diag(ς) Uᵀ)  (2.2)
        = 1 − λ [(K + λI)⁻¹]_ii                             (2.3)

and the effective dimension d_eff = Σ_i l_i = Σ_j ς_j / (ς_j + λ) (2.4). We compute (2.3) from a
Cholesky factorization (see :mod:`sparsekit.samplers._rls_cpu`).

- ``rls``: exact scores of the whole Gram matrix (Θ(n³) time, Θ(n²) memory: only for small n).
- ``two-pass-rls``: Alaoui & Mahoney's uniform RLS (thesis §3.1.2): a uniform first-pass set
  S₀ of size m, B = K_{X,S₀} (K_{S₀}⁺)^{1/2}, and l̂_i = B_i (BᵀB + λI)⁻¹ B_iᵀ (Woodbury form of
  [K̃(K̃ + λI)⁻¹]_ii, eq. 3.2). These under-estimate l_i (l_i − 2ε ≤ l̂_i ≤ l_i, as §3.1.2
  quotes), while Algorithm 3 of §3.2 needs over-estimates: the thesis' Bernoulli rule with these
  scores under-samples, so it is refused for them.
- ``dac-rls``: DAC-RLS (thesis §3.2, Algorithm 2): a random permutation cut into blocks of
  size m (default ⌈√n⌉, the last block holds the remainder), exact scores inside each block with
  the same global λ, concatenated. Corollary 1: every DAC score is ≥ the exact score. Blocks are
  evaluated one at a time and factored by a pool of threads (each running single-threaded
  LAPACK), so the peak memory is O(n_jobs m² + n d) and no n×n matrix is formed. Complexity
  Θ(Σ m_i³) = Θ(n m²) (the conclusion of Chapter 3, thesis §3.4, prints "Θ(nm)", a typo for the
  Θ(nm²) of §3.2).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._runtime.memory import check_allocation, dense_gram_bytes
from .._runtime.pools import run_blocks
from .._runtime.progress import progress, tracked
from .._runtime.small_blas import (
    THREADED_FACTOR_MIN_ROWS,  # exact RLS factors below it on one thread
)
from .._runtime.threads import blas_limit, effective_n_jobs, numba_limit
from .._typing import RandomStateLike
from .._validation import check_random_state, check_scalar
from . import _draw
from ._rls_cpu import cholesky_upper, inverse_upper, nystrom_factor, quadratic_rows, rls_from_gram
from .base import ScoreSampler, check_n_landmarks
from .chunked import ChunkedData, check_numeric_lam, chunk_seeds, integer_seed

if TYPE_CHECKING:
    from ..kernels.base import Kernel

#: bytes of kernel values evaluated per row block in the streamed passes
ROW_BLOCK_BYTES = 16 * 2**20
#: the streamed passes of two-pass and recursive RLS take at most this many bytes of kernel
#: values per row block: blocks and their products then stay in cache (with 16 MiB blocks on
#: 2 threads every block took about 20 % longer than on 1; of 16, 4, 2 and 1 MiB, 2 MiB was the
#: fastest on 1 and on 2 threads at n = 100,000, ``benchmarks/bench_threads.py``)
STREAM_BLOCK_BYTES = 2 * 2**20
#: ... and cut the rows into at least this many blocks, so that the threads share a small
#: level of recursive RLS (the cut does not depend on ``n_jobs``: every thread count gives
#: the same scores), but not into blocks of fewer than MIN_BLOCK_ROWS rows (each block costs
#: a kernel call and a hand-off: 256 made a 600-point two-pass sample 1 ms slower, 1.6 ms
#: instead of 0.5 ms; 1024 is as fast as one block there and as 256 at n = 100,000)
MIN_ROW_BLOCKS = 8
MIN_BLOCK_ROWS = 1024


def _gram64(kernel, A, B=None) -> np.ndarray:
    """Kernel block as a C-contiguous float64 array (no copy when the kernel returns float64)."""
    K = kernel(A) if B is None else kernel(A, B)
    return np.ascontiguousarray(K, dtype=np.float64)


def _row_step(n_cols: int) -> int:
    return max(1, ROW_BLOCK_BYTES // (8 * max(1, n_cols)))


def _stream_step(n_rows: int, n_cols: int) -> int:
    """Rows per block of a streamed pass over ``n_rows`` rows of ``n_cols`` kernel values."""
    by_bytes = min(ROW_BLOCK_BYTES, STREAM_BLOCK_BYTES) // (8 * max(1, n_cols))
    return max(1, min(by_bytes, max(MIN_BLOCK_ROWS, -(-n_rows // MIN_ROW_BLOCKS))))


def exact_rls(Xp: Any, kernel: Kernel, lam: float) -> np.ndarray:
    """Compute the exact ridge leverage scores (2.3) of prepared ``Xp``.

    Refuses (``InsufficientMemoryError``) or warns when the n x n Gram matrix would take most of
    the available memory. It holds one n x n float64 matrix, factored and inverted in place
    (and, while it is converted, a float32 kernel's own n x n block): what the guard counts.

    Parameters
    ----------
    Xp : object
        Data prepared by ``kernel``.
    kernel : Kernel
        The kernel.
    lam : float
        The ridge parameter λ > 0.

    Returns
    -------
    ndarray of float64, shape (n,)
        ``l_i = (K (K + λI)⁻¹)_ii``.
    """
    n = kernel.n_samples(Xp)
    check_allocation(
        dense_gram_bytes(n, getattr(getattr(Xp, "dtype", None), "itemsize", 8)),
        f"exact RLS ('rls') of {n} samples",
        "use 'dac-rls' or 'recursive-rls', which never form the n x n Gram matrix",
    )
    with progress(2, f"exact RLS, n={n} (Gram, Cholesky)", unit="step") as bar:
        with numba_limit(1):
            K = _gram64(kernel, Xp)
        bar.update()
        if n < THREADED_FACTOR_MIN_ROWS:
            with blas_limit(1):
                scores = rls_from_gram(K, lam, overwrite=True)
        else:
            scores = rls_from_gram(K, lam, overwrite=True)
        bar.update()
    return scores


def dac_rls(
    Xp: Any, kernel: Kernel, lam: float, blocks: Sequence[ArrayLike], n_jobs: int = 1
) -> np.ndarray:
    """DAC-RLS scores for an explicit partition ``blocks`` (a sequence of index arrays).

    Each sample gets the exact ridge leverage score of its own block with the global ``lam``.
    The blocks are independent: ``n_jobs`` threads each evaluate and factor whole blocks
    (:func:`sparsekit._runtime.pools.run_blocks`), so at most ``n_jobs`` blocks are alive.

    Parameters
    ----------
    Xp : object
        Data prepared by ``kernel``.
    kernel : Kernel
        The kernel.
    lam : float
        The ridge parameter λ > 0.
    blocks : sequence of array-like of int
        A partition of the samples (disjoint index arrays covering them).
    n_jobs : int, default 1
        Threads, each factoring whole blocks.

    Returns
    -------
    ndarray of float64, shape (n,)
        The score of each sample within its block.
    """
    out = np.empty(kernel.n_samples(Xp), dtype=np.float64)

    def work(idx):
        out[idx] = rls_from_gram(_gram64(kernel, kernel.take(Xp, idx)), lam, overwrite=True)

    work = tracked(work, len(blocks), "dac-rls blocks", unit="block")
    run_blocks(lambda i: work(blocks[i]), len(blocks), n_jobs=n_jobs, numba_regions=True)
    return out


def random_partition(n: int, block_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Cut a random permutation of ``range(n)`` into consecutive chunks of ``block_size``.

    Parameters
    ----------
    n : int
        Number of samples.
    block_size : int
        Size of every chunk but the last (which holds the remainder).
    rng : numpy.random.Generator
        The source of the permutation.

    Returns
    -------
    list of ndarray of int
        The chunks.
    """
    perm = rng.permutation(n)
    return [perm[i : i + block_size] for i in range(0, n, block_size)]


def _score_dtype(Xp):
    dtype = getattr(Xp, "dtype", np.dtype(np.float64))
    return dtype if dtype in (np.float32, np.float64) else np.dtype(np.float64)


class ExactRLSSampler(ScoreSampler):
    """Landmarks ∝ exact ridge leverage scores (Alaoui & Mahoney 2015).

    Forms the n×n Gram matrix (Θ(n²) memory, Θ(n³) time): for small data sets and as the
    reference of the approximate samplers.

    Parameters
    ----------
    lam : float > 0 or "inverse-mean-norm", default 1.0
        Ridge parameter λ of the leverage scores, or the rule λ = (mean_i ‖x_i‖₂)⁻¹ (vectors
        only).
    mode : {"fixed", "bernoulli"}, default "fixed"
        Draw exactly ``n_landmarks`` points ∝ the scores, or keep each point independently
        (Algorithm 3, Cherfaoui 2022, PhD thesis, §3.2).
    rho : float in (0, 1), default 0.1
        Failure probability ρ of the Bernoulli rule (``mode="bernoulli"``).
    """

    name = "rls"

    def __init__(self, lam: float | str = 1.0, mode: str = "fixed", rho: float = 0.1):
        self.lam: float | str = lam
        self.mode: str = mode
        self.rho: float = rho
        self._check_common()

    def _scores(self, Xp, kernel, lam, rng, n_landmarks=None):
        return exact_rls(Xp, kernel, lam).astype(_score_dtype(Xp), copy=False)

    def effective_dimension(self, X: Any, kernel: Any, lam: float | str | None = None) -> float:
        """Compute the effective dimension d_eff = Σ_i l_i = tr(K (K + λI)⁻¹) (2.4).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of graphs
            The samples.
        kernel : Kernel
            The kernel.
        lam : float or str, optional
            Overrides the sampler's ``lam``.

        Returns
        -------
        float
            ``d_eff``.
        """
        return float(np.sum(self.scores(X, kernel, lam), dtype=np.float64))


class TwoPassRLSSampler(ScoreSampler):
    """Landmarks ∝ Alaoui & Mahoney's two-pass ("uniform") RLS approximation.

    Parameters
    ----------
    lam : float > 0 or "inverse-mean-norm", default 1.0
        Ridge parameter λ of the leverage scores, or the rule λ = (mean_i ‖x_i‖₂)⁻¹ (vectors
        only).
    n_first : int, optional
        Size m of the uniform first pass; default ⌈√n⌉ (the block size of DAC-RLS, so both cost
        Θ(n m²)). Capped at n.
    n_jobs : int, optional
        Threads streaming the row blocks; default: the library-wide setting
        (:func:`sparsekit.thread_limit`, else every usable CPU).
    mode : {"fixed"}, default "fixed"
        The Bernoulli rule is refused: these scores are under-estimates (l̂_i ≤ l_i), and
        Algorithm 3 (Cherfaoui 2022, PhD thesis, §3.2) needs over-estimates.
    rho : float in (0, 1), default 0.1
        Failure probability ρ of the Bernoulli rule (``mode="bernoulli"``).

    Notes
    -----
    Two streamed passes over K_{X,S₀} in row blocks (one for BᵀB, one for the scores), so the
    memory is O(m² + block · m); nothing of size n × m is kept.

    A kernel that is not positive semi-definite is refused (``NotPositiveDefiniteError``, a
    ``ValueError``) when K_{S₀} + λI is not positive definite, as exact RLS refuses K + λI and
    DAC-RLS the K + λI of a block; the pseudo-inverse K_{S₀}⁺ alone would drop the negative
    eigenvalues without a word.
    """

    name = "two-pass-rls"
    overestimates = False

    def __init__(
        self,
        lam: float | str = 1.0,
        n_first: int | None = None,
        n_jobs: int | None = None,
        mode: str = "fixed",
        rho: float = 0.1,
    ):
        self.lam: float | str = lam
        self.n_first: int | None = n_first
        self.n_jobs: int | None = n_jobs
        self.mode: str = mode
        self.rho: float = rho
        self._check_common()
        self._check_n_first()

    def _check_n_first(self):
        if self.n_first is not None:
            check_scalar(self.n_first, "n_first", kind=numbers.Integral, low=1, low_inclusive=True)
        if self.n_jobs is not None:
            check_scalar(self.n_jobs, "n_jobs", kind=numbers.Integral, low=1, low_inclusive=True)

    def _scores(self, Xp, kernel, lam, rng, n_landmarks=None):
        self._check_n_first()
        n = kernel.n_samples(Xp)
        m = min(n, math.isqrt(n - 1) + 1 if self.n_first is None else int(self.n_first))
        first = np.sort(rng.choice(n, m, replace=False))
        S0 = kernel.take(Xp, first)
        # K_{S0}^{+1/2} = M Mᵀ; refused, as the other RLS samplers refuse, when K_{S0} + λI is
        # not positive definite
        M = nystrom_factor(_gram64(kernel, S0), lam=lam)
        r = M.shape[1]
        out = np.zeros(n, dtype=np.float64)
        if r == 0:
            return out.astype(_score_dtype(Xp))
        step = _stream_step(n, m)
        starts = range(0, n, step)
        n_jobs = effective_n_jobs(self.n_jobs)

        def features(r0):  # B rows r0..: K_{rows,S0} M
            rows = np.arange(r0, min(n, r0 + step))
            return rows, _gram64(kernel, kernel.take(Xp, rows), S0) @ M

        partial = {}

        def gram_part(r0):  # pass 1: G = BᵀB, one partial sum per row block
            _, B = features(r0)
            partial[r0] = B.T @ B

        with numba_limit(1), blas_limit(1):
            run_blocks(
                lambda i: gram_part(starts[i]), len(starts), n_jobs=n_jobs, numba_regions=True
            )
            G = np.add.reduce([partial.pop(r0) for r0 in starts])
            G.flat[:: r + 1] += lam
            Uinv = inverse_upper(cholesky_upper(G, "B^T B + lam*I"))

        def score_part(r0):  # pass 2: l_i = B_i (BᵀB + λI)⁻¹ B_iᵀ
            rows, B = features(r0)
            out[rows] = quadratic_rows(B, Uinv)

        run_blocks(lambda i: score_part(starts[i]), len(starts), n_jobs=n_jobs, numba_regions=True)
        np.clip(out, 0.0, 1.0, out=out)
        return out.astype(_score_dtype(Xp), copy=False)


class DACRLSSampler(ScoreSampler):
    """Landmarks ∝ divide-and-conquer ridge leverage scores (DAC-RLS, Cherfaoui et al. 2022).

    Parameters
    ----------
    lam : float > 0 or "inverse-mean-norm", default 1.0
        The global λ used inside every block.
    block_size : int, optional
        The block size m; default ⌈√n⌉ (the thesis's only tested value). The partition is a random
        permutation cut into consecutive chunks (the authors' code; Algorithm 2 of the thesis,
        §3.2, leaves the partition open); the last chunk holds the remainder.
    n_jobs : int, optional
        Worker threads factoring blocks; default: the library-wide setting
        (:func:`sparsekit.thread_limit`, else every usable CPU). Each block
        runs on one thread with single-threaded BLAS (threads of a pool and of BLAS would
        otherwise compete for the cores); ``1`` runs the blocks one after the other.
    mode : {"fixed", "bernoulli"}, default "fixed"
        Draw exactly ``n_landmarks`` points ∝ the scores, or keep each point independently
        (Algorithm 3, Cherfaoui 2022, PhD thesis, §3.2).
    rho : float in (0, 1), default 0.1
        Failure probability ρ of the Bernoulli rule (``mode="bernoulli"``).

    Notes
    -----
    Over-estimation (Corollary 1), monotonicity under refinement, and Σ l̂ ≤ n(1 − α⁻¹) + α⁻¹ d_eff
    (Corollary 2) make DAC scores valid inputs of the Bernoulli rule (Theorem 1:
    K − λI ⪯ K̂ ⪯ K with probability ≥ 1 − ρ).
    """

    name = "dac-rls"

    def __init__(
        self,
        lam: float | str = 1.0,
        block_size: int | None = None,
        n_jobs: int | None = None,
        mode: str = "fixed",
        rho: float = 0.1,
    ):
        self.lam: float | str = lam
        self.block_size: int | None = block_size
        self.n_jobs: int | None = n_jobs
        self.mode: str = mode
        self.rho: float = rho
        self._check_common()
        self._check_sizes()

    def _check_sizes(self):
        if self.block_size is not None:
            check_scalar(
                self.block_size, "block_size", kind=numbers.Integral, low=1, low_inclusive=True
            )
        if self.n_jobs is not None:
            check_scalar(self.n_jobs, "n_jobs", kind=numbers.Integral, low=1, low_inclusive=True)

    def _n_jobs(self) -> int:
        return effective_n_jobs(self.n_jobs)

    def _scores(self, Xp, kernel, lam, rng, n_landmarks=None):
        self._check_sizes()
        n = kernel.n_samples(Xp)
        m = math.isqrt(n - 1) + 1 if self.block_size is None else min(n, int(self.block_size))
        blocks = random_partition(n, m, rng)
        return dac_rls(Xp, kernel, lam, blocks, self._n_jobs()).astype(_score_dtype(Xp), copy=False)

    def scores_for_partition(
        self, X: Any, kernel: Any, blocks: Iterable[ArrayLike], lam: float | str | None = None
    ) -> np.ndarray:
        """Compute the DAC scores for a given partition of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of graphs
            The samples.
        kernel : Kernel
            The kernel.
        blocks : sequence of array-like of int
            Disjoint index arrays covering the samples.
        lam : float or str, optional
            Overrides the sampler's ``lam``.

        Returns
        -------
        ndarray of shape (n_samples,)
            The DAC score of each sample.
        """
        self._check_common(lam)
        Xp = self.prepare_input(X, kernel)
        n = kernel.n_samples(Xp)
        parts = [np.asarray(b, dtype=np.intp).ravel() for b in blocks]
        seen = np.zeros(n, dtype=np.int64)
        for b in parts:
            if b.size and (b.min() < 0 or b.max() >= n):
                raise ValueError(f"blocks hold indices outside [0, n_samples={n})")
            np.add.at(seen, b, 1)
        if not np.all(seen == 1):
            raise ValueError("blocks must be disjoint and cover every sample exactly once")
        lam_value = self._resolve_lam(Xp, kernel, lam)
        return dac_rls(Xp, kernel, lam_value, [b for b in parts if b.size], self._n_jobs()).astype(
            _score_dtype(Xp), copy=False
        )

    def sample_chunked(
        self, data: ChunkedData, kernel: Any, n_landmarks: int, random_state: RandomStateLike = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Draw landmarks of data held in row chunks (:mod:`sparsekit.samplers.chunked`).

        The DAC scores of each chunk are computed where it is (blocks inside chunks:
        ``dac_chunk_partition``), the landmarks drawn ∝ scores here as :meth:`sample` does.

        Parameters
        ----------
        data : ChunkedData
            The rows of X, in chunks held elsewhere.
        kernel : kernel object
            The kernel the landmarks are chosen for.
        n_landmarks : int
            The number of landmarks.
        random_state : None, int or numpy.random.Generator
            Seeds the draw.

        Returns
        -------
        indices : int64 ndarray of shape (n_landmarks,)
            The landmark positions.
        weights : float64 ndarray of shape (n_landmarks,)
            Their weights, as :meth:`sample` gives them.

        Raises
        ------
        ValueError
            ``mode="bernoulli"`` (the chunked path draws a fixed number of landmarks).
        TypeError
            ``lam`` given as a rule (it needs a pass over all the data: compute its value).
        """
        if self.mode != "fixed":
            raise ValueError(
                "the chunked DAC-RLS path draws a fixed number of landmarks; use mode='fixed'"
            )
        n_landmarks = check_n_landmarks(n_landmarks, data.n_samples)
        scores = chunked_dac_scores(data, kernel, self.lam, self.block_size, random_state)
        return _draw.fixed_size(scores, n_landmarks, check_random_state(random_state))


def dac_block_size(n: int, block_size: int | None) -> int:
    """m: ``block_size``, or ⌈√n⌉ when None."""
    if block_size is None:
        return math.isqrt(n - 1) + 1
    return int(
        check_scalar(block_size, "block_size", kind=numbers.Integral, low=1, low_inclusive=True)
    )


def _chunk_blocks(size: int, m: int, seed_seq) -> list:
    return random_partition(size, m, np.random.default_rng(seed_seq))


def dac_chunk_partition(
    chunk_sizes: Sequence[int], block_size: int | None = None, random_state: RandomStateLike = None
) -> list:
    """The DAC-RLS partition over row chunks of sizes ``chunk_sizes``, as global index arrays
    (module docstring)."""
    n = int(sum(chunk_sizes))
    m = dac_block_size(n, block_size)
    seeds = chunk_seeds(len(chunk_sizes), integer_seed(random_state))
    blocks, start = [], 0
    for size, seed_seq in zip(chunk_sizes, seeds):
        blocks += [start + b for b in _chunk_blocks(int(size), m, seed_seq)]
        start += int(size)
    return blocks


def dac_chunk_scores(
    chunk: np.ndarray, index: int, kernel: Any, lam: float, m: int, seeds: Sequence
) -> np.ndarray:
    """DAC-RLS scores (float64) of the rows of chunk ``index``, its blocks drawn with
    ``seeds[index]`` (a function of one chunk, run where the chunk is)."""
    if chunk.shape[0] == 0:  # an empty chunk has no rows to score (the sampler refuses them)
        return np.empty(0)
    blocks = _chunk_blocks(chunk.shape[0], m, seeds[index])
    scores = DACRLSSampler(lam=lam, n_jobs=1).scores_for_partition(chunk, kernel, blocks)
    return scores.astype(np.float64)


def chunked_dac_scores(
    data: ChunkedData, kernel: Any, lam: Any, block_size: int | None, random_state: RandomStateLike
) -> np.ndarray:
    """The DAC-RLS scores of every row of ``data``, computed chunk by chunk (module docstring);
    float64 of shape (n,)."""
    lam = check_numeric_lam(lam)
    m = dac_block_size(data.n_samples, block_size)
    seeds = chunk_seeds(len(data.chunk_sizes), integer_seed(random_state))
    return np.concatenate(data.map_chunks(dac_chunk_scores, kernel, lam, m, seeds))


__all__ = [
    "ExactRLSSampler",
    "TwoPassRLSSampler",
    "DACRLSSampler",
    "exact_rls",
    "dac_rls",
    "random_partition",
]
