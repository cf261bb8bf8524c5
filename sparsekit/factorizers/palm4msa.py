"""Palm4MSA: approximate a matrix by a scaled product of constrained (sparse) factors.

Solves min over λ and S_1..S_Q of ``‖U − λ S_1 ⋯ S_Q‖_F²`` with each ``S_q`` in a set ``E_q``
(given by a projection), by PALM block-coordinate projected gradient steps (Le Magoarou &
Gribonval 2016; Giffon 2020, PhD thesis, §3.2.3, Algorithm 1). One iteration:

- sweeps the factors from right to left (``q = Q, …, 1``; thesis Algorithm 1), with
  ``L = S_1 ⋯ S_{q−1}`` (current values) and ``R = S_{q+1} ⋯ S_Q`` (already updated);
- steps ``S_q ← P_q(S_q − ∇/c)`` with ``∇ = λ Lᵀ(λ L S_q R − U) Rᵀ`` and
  ``c = 1.001 · λ² ‖L‖_2² ‖R‖_2²`` (the Lipschitz constant of the block gradient times 1.001);
  the spectral norms come from Lanczos iterations warm-started from the previous iteration
  (accurate to ``1e-6``: see :func:`_sq_norm2`), which multiply through the sparse factors of
  ``L`` and ``R`` rather than their dense products when that is cheaper
  (:func:`_product_sq_norm2`);
- sets ``λ = ⟨U, Û⟩_F / ‖Û‖_F²`` for ``Û = S_1 ⋯ S_Q`` (closed form) and records
  ``f = ‖U − λ Û‖_F²``.

It stops after ``n_iter`` iterations or, when ``tol > 0``, as soon as ``f_i = 0`` (an exact
fit: ``stop_reason="exact"``) or ``|f_i − f_{i−1}| / f_{i−1} < tol`` (``stop_reason="tol"``).
``tol = 0`` runs all ``n_iter`` iterations, as pyfaust's ``StoppingCriterion(num_its=…)`` does.
An objective of exactly 0 stops only when ``tol > 0`` because whether an exact fit rounds to
0.0 or to ``1e-32`` depends on the BLAS build and the CPU: with ``tol = 0`` the iteration count
is the same on every machine.

A stop by ``tol`` means the iterates stopped improving, not that the fit is good: from the
default start on a structured target, flat Palm4MSA can sit on a plateau of this non-convex
problem from its first sweeps (Hadamard 32 with 5 ``splincol`` factors, ``k=2``: relative
error 0.968 after 3 iterations, and still 0.968 after 200 with ``tol=0``; the hierarchical
variant reaches 1e-14). :meth:`Palm4MSA.factorize` warns (:class:`PlateauWarning`) when a
default-start fit stops by ``tol`` within :data:`PLATEAU_ITERS` iterations with a relative
error above :data:`PLATEAU_ERROR`.

Decisions:

- Initialization (thesis §3.3.5.1): every factor is the rectangular identity except the first
  factor to be updated (the right-most free one), which is zero; ``λ = 1``. Constant factors
  (``Constant`` projection) hold their matrix and are never updated.
- Unit-Frobenius normalization of each projected factor is part of the constraint sets (the
  projections' ``normalized`` flag), as in the reference implementation; λ carries the scale.
- Safeguard (``safeguard=True``, off by default): PALM with inexact projections (``splincol``
  is a relaxation) is not monotone. When an iteration increases ``f`` above the previous
  value (or above the warm start's objective for the first iteration), it is undone and
  retried with ``c`` doubled, up to 4 times; then the solver stops
  (``stop_reason="safeguard"``). The recorded objective is therefore non-increasing, up to
  the rounding floor ``(n u ‖U‖_F)²`` (``u`` the unit roundoff, ``n = Q · max(m, n)``): a
  computed product of inner dimension ``n`` is only accurate to ``γ_n |A| |B|`` (Higham 2002,
  *Accuracy and Stability of Numerical Algorithms*, §3.5), so the objective of an exact fit is
  rounding noise of that size whose rises are not refused (else an exact warm start would stop
  after 0 iterations or not, depending on the CPU's rounding). This is
  not in the thesis; it is the safeguard its §3.3.4 (Proposition 1) needs for QuicK-means'
  monotonicity.
- ``keep_best=True`` (off by default) returns the iterate with the lowest objective, the
  starting point included, and keeps the last iterate in ``extra["last"]``: the iterations
  are those of Algorithm 1, only the returned point changes. Without sufficient decrease
  (``splincol`` takes the union of the row and column selections, not a nearest point of a
  fixed set, so even small steps can increase ``f``), this is what a warm-started caller
  needs to never lose ground (QuicK-means, Proposition 1), where the ``safeguard`` stops at
  the first increase.
- ``update_way="left-to-right"`` runs the same algorithm on ``Uᵀ`` with transposed factors.
- Products with factors of density below ``SPARSE_DENSITY`` use the CSR kernels of
  :mod:`sparsekit.linalg`; denser ones (and the prefix/suffix products) use BLAS. When every
  factor is sparse, the gradient is computed in whichever of two product orders multiplies
  fewer non-zeros by columns: the residual ``λ L S_q R − U`` first, or ``λ Rᵀ (S_qᵀ Lᵀ) − Uᵀ``
  first (the products then act on the target's rows; for a wide target such as QuicK-means'
  centroids, ``K × D`` with ``D > K``, about half the work). The two differ by rounding only.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from math import isfinite
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg.lapack import dstev as stev, dsyevr

from .._runtime.threads import effective_n_jobs, thread_limit
from .._validation import check_option, check_scalar
from ..linalg._spmm import csr_matmat, dense_to_csr_pair, stack_csr
from ._cpu import lanczos_csr_steps, lanczos_steps
from .base import FactorizationResult, Factorizer, check_constraints, check_target

#: factors sparser than this (and with at least SPARSE_MIN_SIZE entries) are multiplied through
#: their CSR form; small factors are faster as dense BLAS operands
SPARSE_DENSITY = 0.25
SPARSE_MIN_SIZE = 128 * 128
#: safety factor on the Lipschitz constant (reference implementation: 1.001)
LIPSCHITZ_MARGIN = 1.001
#: step-size halvings tried by the safeguard before it stops
SAFEGUARD_RETRIES = 4
UPDATE_WAYS = ("right-to-left", "left-to-right")
#: a default-start fit stopped by ``tol`` within this many iterations ...
PLATEAU_ITERS = 10
#: ... with a relative error ``‖M − λ S_1 ⋯ S_Q‖_F / ‖M‖_F`` above this warns
PLATEAU_ERROR = 0.5
#: weight of a fixed random vector added to the (unit) warm start of the spectral-norm Lanczos:
#: a warm start confined to an invariant subspace of a structured factor (block-diagonal
#: butterflies) would otherwise never see the top singular vector
WARM_START_MIX = 0.1
#: matrices with at most this many rows or columns get ``‖A‖_2²`` exactly, as the top
#: eigenvalue of their smaller Gram matrix (LAPACK): no dearer there than the compiled Lanczos
#: steps, and exact. At 64 × 64 the ``O(n³)`` Gram matrix and tridiagonalization cost more than
#: the few warm-started Lanczos steps of a Palm4MSA iteration: the norms took 53 % of a 64²
#: run exactly, 33 % by Lanczos (`benchmarks/profile_palm.py`)
EXACT_NORM_DIM = 32
#: the spectral norm of a product of sparse factors runs its Lanczos steps through the factors
#: when their non-zeros are at most this fraction of the product's entries: a scattered
#: multiply-add costs several times a dense one, and the two break even near 1/16 (products of
#: ``splincol(3)`` factors, ``benchmarks/profile_quickmeans.py --norms``: QuicK-means' 256 × 784
#: products 0.3–0.4 ms per norm against 0.6–1.5 ms from the dense product; 256 × 256 even at
#: 0.062 non-zeros per entry)
NORM_CHAIN_RATIO = 16
#: problems whose target and factors have at most this many rows and columns run on one thread
#: (see :func:`palm_threads`)
SERIAL_MAX_DIM = 128


def palm_threads(n_jobs, shapes):
    """Threads for a Palm4MSA run on matrices of these shapes: ``effective_n_jobs(n_jobs)``, or
    1 when no side exceeds ``SERIAL_MAX_DIM``.

    At that size every product is below OpenBLAS' threading threshold or barely above it (a
    128³ GEMM: 2·10⁶ multiply-adds), the sparse products run on the calling thread, and the
    norms and the projections are serial compiled loops: a second thread has nothing to do but
    the hand-over at every BLAS call, and when another process holds a core a descheduled BLAS
    thread stalls each product (128 × 128 GEMM: 0.26 ms on one thread, 1.7 ms on two under a
    load average of 15 on 2 cores).
    """
    n_jobs = effective_n_jobs(n_jobs)
    return 1 if max(max(shape) for shape in shapes) <= SERIAL_MAX_DIM else n_jobs


class PlateauWarning(UserWarning):
    """Warn that Palm4MSA stopped by ``tol`` after a few iterations far from the target.

    The objective stopped moving (a plateau of the non-convex problem), not a good fit.
    """


class _Factor:
    """A dense factor with the CSR arrays (``indptr, indices, data``) of ``S`` and ``Sᵀ`` when
    sparse enough."""

    __slots__ = ("dense", "csr", "csr_t", "nnz")

    def __init__(self, dense):
        self.dense = dense
        self.nnz = nnz = np.count_nonzero(dense)
        if dense.size >= SPARSE_MIN_SIZE and nnz <= SPARSE_DENSITY * dense.size:
            arrays = dense_to_csr_pair(dense)
            self.csr, self.csr_t = arrays[:3], arrays[3:]
        else:
            self.csr = self.csr_t = None

    def times(self, B):
        """``S @ B`` (``B`` None means the identity)."""
        if B is None:
            return self.dense.copy()
        if self.csr is not None:
            return _csr_times(self.csr, self.dense.shape[0], B)
        return self.dense @ B

    def t_times(self, B):
        """``Sᵀ @ B`` (``B`` None means the identity)."""
        if B is None:
            return np.ascontiguousarray(self.dense.T)
        if self.csr_t is not None:
            return _csr_times(self.csr_t, self.dense.shape[1], B)
        return self.dense.T @ B


def _csr_times(csr, n_rows, B):
    indptr, indices, data = csr
    B = np.ascontiguousarray(B, dtype=data.dtype)
    return csr_matmat(indptr, indices, data, B, np.empty((n_rows, B.shape[1]), dtype=data.dtype))


class _Transposed:
    """The projection ``X ↦ P(Xᵀ)ᵀ`` (left-to-right sweeps run on the transposed problem)."""

    def __init__(self, proj):
        self.proj = proj
        self.shape = proj.shape[::-1]
        self.is_constant = proj.is_constant

    def project_unchecked(self, X):
        return np.ascontiguousarray(self.proj.project_unchecked(np.ascontiguousarray(X.T)).T)


def _chain_pays(chain, dense_size):
    """Multiply through the CSR factors of ``chain`` rather than one dense GEMM with their
    product: all are sparse, and their non-zeros are below 1/8 of the product's entries (the
    GEMM runs several times faster per operation than the sparse kernel)."""
    return all(f.csr is not None for f in chain) and 8 * sum(f.nnz for f in chain) <= dense_size


def _narrow_pays(F, q, shape):
    """Whether :func:`_gradient_narrow` multiplies fewer non-zeros by columns than the
    residual-first order (``E`` on the target's ``n`` columns): every factor sparse, and
    ``nnz_q m + 2 Σ_{i>q} nnz_i m + Σ_{i<q} nnz_i c ≤ 2 (nnz_q + Σ_{i<q} nnz_i) n +
    Σ_{i>q} nnz_i r`` for ``S_q`` of shape ``r × c`` and a target ``m × n``."""
    if not all(f.csr is not None for f in F):
        return False
    m, n = shape
    r, c = F[q].dense.shape
    left = sum(f.nnz for f in F[:q])
    right = sum(f.nnz for f in F[q + 1 :])
    here = F[q].nnz
    return here * m + 2 * right * m + left * c <= 2 * (here + left) * n + right * r


def _gradient_narrow(F, q, L_T, UT, lam):
    """``G = Lᵀ (λ L S_q R − U) Rᵀ`` with the products ordered so that they act on the
    target's ``m`` rows as columns: ``Xᵀ = S_qᵀ Lᵀ``, ``Eᵀ = λ Rᵀ Xᵀ − Uᵀ``, ``Y = R Eᵀ``,
    ``G = Lᵀ Yᵀ`` (``L = S_1 ⋯ S_{q−1}`` at the sweep's start, ``L_T`` its dense transpose, or
    None for the identity; ``R = S_{q+1} ⋯ S_Q``). The same gradient as the residual-first order
    (``E = λ L S_q R − U`` on the target's ``n`` columns, then ``Lᵀ E Rᵀ``), up to rounding; for
    the wide target of a ``K × A, A × A, …, A × D`` factorization with ``D > A`` it multiplies
    the left chain by ``A`` columns instead of ``D``, twice fewer non-zeros by columns overall."""
    XT = F[q].t_times(L_T)
    ET = _apply_chain_t(F[q + 1 :], XT)
    ET = ET * ET.dtype.type(lam)  # a new array: XT may be a view of a factor
    ET -= UT
    Y = _apply_chain(F[q + 1 :], ET)
    return _apply_chain_t(F[:q], np.ascontiguousarray(Y.T))


def _apply_chain(chain, B):
    """``S_a ⋯ S_b @ B`` for the factors of ``chain``, the right-most applied first."""
    for f in chain[::-1]:
        B = f.times(B)
    return B


def _apply_chain_t(chain, B):
    """``(S_a ⋯ S_b)ᵀ @ B``: ``S_aᵀ`` applied first."""
    for f in chain:
        B = f.t_times(B)
    return B


def _sq_norm2(A, key, vectors, tol=1e-6, max_steps=40):
    """``‖A‖_2²``: the largest eigenvalue of ``Aᵀ A`` by Lanczos, warm-started from
    ``vectors[key]``; exactly (the top eigenvalue of the smaller of ``Aᵀ A`` and ``A Aᵀ`` by
    LAPACK's ``dsyevr``) when ``A`` has at most ``EXACT_NORM_DIM`` rows or columns. ``A`` is a
    dense array, or a :class:`_ChainGram` (the norm of a product of sparse factors, from its
    factors: always by Lanczos).

    Lanczos with full reorthogonalization (Golub & Van Loan, Matrix Computations, §10.1;
    classical Gram-Schmidt applied twice; the compiled steps of :func:`._cpu.lanczos_steps`
    or :func:`._cpu.lanczos_csr_steps`)
    stops when the residual bound ``β_j |y_j|`` of the largest Ritz pair is below ``tol`` times
    its Ritz value (tested every 4th step, or when an invariant subspace is reached), or after
    ``max_steps`` steps. The start is the previous call's Ritz vector plus ``WARM_START_MIX``
    times a fixed random unit vector; the Ritz vector is kept in ``vectors[key]`` for the next
    call. A NaN entry (a diverged iterate) gives NaN.

    Why not power iteration stopped on the relative change of its estimate (the reference
    implementation's ``norm2_threshold``): the top singular values of near-orthogonal factors
    (butterflies of the Hadamard transform) are clustered, so the estimate creeps up by less
    than the threshold per step while still ~1e-4 below the norm. ``c`` then falls below
    ``1.001 L`` and the iterates differ from the reference's (hierarchical Hadamard 256: 1.45×
    its error after the same iterations). Why the random part: a warm start confined to an
    invariant subspace of a block-structured ``Aᵀ A`` never sees the top singular vector.
    """
    if A is None:
        return 1.0
    chain = isinstance(A, _ChainGram)
    if not chain and min(A.shape) <= EXACT_NORM_DIM:
        G = A.T @ A if A.shape[1] <= A.shape[0] else A @ A.T
        if not np.isfinite(G).all():  # LAPACK would return finite garbage for a NaN entry
            return float("nan")
        k = G.shape[0]  # only the top eigenvalue (MRRR): cheaper than all of them
        top = dsyevr(G.astype(np.float64, copy=False), compute_v=0, range="I", il=k, iu=k)[0][0]
        return max(float(top), 0.0)
    n = A.dim if chain else A.shape[1]
    steps = min(int(max_steps), n)
    tol = max(tol, 50 * float(np.finfo(A.dtype).eps))
    if not chain:
        A = np.ascontiguousarray(A)
    v = _mix_vector(n)
    warm = vectors.get(key)
    if warm is not None and warm.shape[0] == n:
        v = v + warm
    V = np.empty((steps, n), dtype=A.dtype)
    V[0] = v / np.sqrt(v @ v)
    ab = np.zeros((2, steps))  # the tridiagonal: alpha, then beta
    w = np.empty(n, dtype=A.dtype)
    j = 0
    while True:
        if chain:
            j, beta = lanczos_csr_steps(*A.packed, V, ab, tol, j, w, A.buf)
        else:
            j, beta = lanczos_steps(A, V, ab, tol, j, w)
        if not (isfinite(beta) and isfinite(ab[0, j])):  # a NaN or inf entry
            return float("nan")
        # the tridiagonal eigenproblem by LAPACK's stev (no threaded BLAS: a threaded
        # dense eigh of this tiny matrix costs milliseconds next to Numba/BLAS workers)
        if j == 0:
            theta, y = float(ab[0, 0]), np.ones(1)
        else:
            evals, evecs, _ = stev(ab[0, : j + 1], ab[1, :j], compute_v=1)
            theta, y = float(evals[-1]), evecs[:, -1]
        if beta * abs(y[-1]) <= tol * theta or j + 1 == steps:
            break
        V[j + 1] = w / beta
        ab[1, j] = beta
        j += 1
    vectors[key] = y @ V[: j + 1]
    return max(theta, 0.0)


class _ChainGram:
    """``C Cᵀ`` (or ``Cᵀ C``, whichever is smaller) of a product ``C = S_a ⋯ S_b`` of sparse
    factors (``_Factor`` with CSR arrays), as :func:`._cpu.lanczos_csr_steps` takes it:
    ``‖C‖_2²`` without forming ``C``."""

    __slots__ = ("dim", "dtype", "packed", "buf")

    def __init__(self, chain):
        rows, cols = chain[0].dense.shape[0], chain[-1].dense.shape[1]
        # each product M is applied by scattering the rows of Mᵀ: Sᵀ through the CSR of S
        if rows <= cols:  # C Cᵀ: Cᵀ (S_aᵀ first), then C (S_b first)
            mats = [(f.csr, f.dense.shape[::-1]) for f in chain]
            mats += [(f.csr_t, f.dense.shape) for f in chain[::-1]]
        else:  # Cᵀ C
            mats = [(f.csr_t, f.dense.shape) for f in chain[::-1]]
            mats += [(f.csr, f.dense.shape[::-1]) for f in chain]
        shapes = np.array([shape for _, shape in mats], dtype=np.int64)
        arrays = stack_csr([csr for csr, _ in mats], shapes[:, 1])
        data = arrays[-1]
        self.dim = min(rows, cols)
        self.dtype = data.dtype
        self.packed = (shapes, *arrays)
        self.buf = np.empty((2, int(shapes.max())), dtype=data.dtype)


def _product_sq_norm2(chain, dense, key, vectors):
    """``‖dense‖_2²`` for ``dense`` the product of ``chain`` (None: the identity): through the
    factors (:class:`_ChainGram`) when they are all sparse with at most
    ``1 / NORM_CHAIN_RATIO`` of the product's entries in all, else from ``dense``."""
    if (
        dense is not None
        and min(dense.shape) > EXACT_NORM_DIM
        and all(f.csr is not None for f in chain)
        and NORM_CHAIN_RATIO * sum(f.nnz for f in chain) <= dense.size
    ):
        return _sq_norm2(_ChainGram(chain), key, vectors)
    return _sq_norm2(dense, key, vectors)


_MIX = {}


def _mix_vector(n):
    """The fixed random part of the Lanczos start: ``WARM_START_MIX`` times a unit vector."""
    v = _MIX.get(n)
    if v is None:
        v = np.random.default_rng(n).standard_normal(n)
        v *= WARM_START_MIX / np.linalg.norm(v)
        _MIX[n] = v
    return v


def default_factors(projs, dtype, update_way="right-to-left"):
    """Identities, with zeros for the first factor to be updated (thesis §3.3.5.1)."""
    factors = [p.initial(dtype) for p in projs]
    order = range(len(projs) - 1, -1, -1) if update_way == "right-to-left" else range(len(projs))
    for q in order:
        if not projs[q].is_constant:
            factors[q] = np.zeros(projs[q].shape, dtype=dtype)
            break
    return factors


def _sqnorm(A):
    """``‖A‖_F²`` without BLAS (a level-1 BLAS call on a small array pays a thread hand-over)."""
    return float(np.einsum("ij,ij->", A, A))


def _objective(U, prod, lam):
    D = U - lam * prod
    return _sqnorm(D)


def palm4msa_dense(
    U, projs, factors, lam, *, n_iter, tol, safeguard=True, vectors=None, keep_best=False, last=None
):
    """Palm4MSA on dense arrays, right-to-left sweeps (the compute core of :class:`Palm4MSA`).

    Parameters
    ----------
    U : (m, n) float array
    projs : list of projections (``shape``, ``is_constant``, ``project_unchecked``)
    factors : list of dense arrays (the starting point, in the sets), modified in place
    lam : float
        Starting scale.
    keep_best : bool
        Return the iterate with the lowest objective seen, the starting point included
        (the history still records every iteration).
    last : dict, optional
        With ``keep_best``, receives the last iterate as ``last["factors"]``, ``last["scale"]``
        when it is not the one returned.

    Returns
    -------
    factors, lam, objective (list), n_iter, stop_reason
    """
    Q = len(projs)
    dtype = U.dtype
    UT = np.ascontiguousarray(U.T)
    vectors = {} if vectors is None else vectors
    F = [_Factor(np.ascontiguousarray(f, dtype=dtype)) for f in factors]
    history = []
    if safeguard or keep_best:
        prod = None
        for f in F[::-1]:
            prod = f.times(prod)
        f_start = _objective(U, prod, lam)
        floor = (Q * max(U.shape) * np.finfo(dtype).eps / 2) ** 2 * _sqnorm(U)
    else:
        f_start = None
    f_prev = f_start if safeguard else None
    best = (f_start, list(F), lam, 0) if keep_best else None
    margin = LIPSCHITZ_MARGIN
    retries = 0
    stop = "max_iter"
    it = 0
    while it < n_iter:
        saved = (list(F), lam) if safeguard else None
        # transposed prefixes: PT[q] = (S_1 ⋯ S_{q-1})ᵀ with the values at the sweep's start
        PT = [None] * Q
        for q in range(1, Q):
            PT[q] = F[q - 1].t_times(PT[q - 1])
        R = None
        for q in range(Q - 1, -1, -1):
            if not projs[q].is_constant:
                L_T = PT[q]
                nL = _product_sq_norm2(F[:q], L_T, ("L", q), vectors)
                nR = _product_sq_norm2(F[q + 1 :], R, ("R", q), vectors)
                c = margin * lam * lam * nL * nR
                if c > 0 and _narrow_pays(F, q, U.shape):
                    G = _gradient_narrow(F, q, L_T, UT, lam)
                    step = F[q].dense - (dtype.type(lam / c)) * G
                    projected = projs[q].project_unchecked(step)
                    F[q] = _Factor(np.ascontiguousarray(projected, dtype=dtype))
                elif c > 0:
                    left_chain = q > 0 and _chain_pays(F[:q], L_T.size)
                    SR = F[q].times(R)
                    if L_T is None:
                        E = SR
                    elif left_chain:
                        E = _apply_chain(F[:q], SR)
                    else:
                        E = L_T.T @ SR
                    E *= dtype.type(lam)
                    E -= U
                    if L_T is None:
                        G = E
                    elif left_chain:
                        G = _apply_chain_t(F[:q], E)
                    else:
                        G = L_T @ E
                    if R is not None:
                        if _chain_pays(F[q + 1 :], R.shape[0] * R.shape[0]):
                            G = _apply_chain(F[q + 1 :], np.ascontiguousarray(G.T)).T
                        else:
                            G = G @ R.T
                    step = F[q].dense - (dtype.type(lam / c)) * G
                    projected = projs[q].project_unchecked(step)
                    F[q] = _Factor(np.ascontiguousarray(projected, dtype=dtype))
            R = F[q].times(R)
        prod = R
        nrm2 = _sqnorm(prod)
        new_lam = float(np.einsum("ij,ij->", U, prod)) / nrm2 if nrm2 > 0 else lam
        f = _objective(U, prod, new_lam)
        if safeguard and f > f_prev * (1 + 1e-10) + floor:
            F, lam = saved
            retries += 1
            margin *= 2.0
            if retries > SAFEGUARD_RETRIES:
                stop = "safeguard"
                break
            continue
        lam = new_lam
        retries = 0
        margin = LIPSCHITZ_MARGIN
        it += 1
        history.append(f)
        if keep_best and f < best[0]:
            best = (f, list(F), lam, it)
        if tol > 0 and f == 0:
            stop = "exact"
            break
        if tol > 0 and f_prev is not None and abs(f_prev - f) < tol * f_prev:
            stop = "tol"
            break
        f_prev = f
    if keep_best and best[3] != it:
        if last is not None:
            last["factors"], last["scale"] = [fac.dense for fac in F], lam
        F, lam = best[1], best[2]
        history.append(best[0])  # the last entry is the objective of the returned factors
    return [fac.dense for fac in F], lam, history, it, stop


def run_palm(
    U,
    projs,
    factors,
    lam,
    *,
    n_iter,
    tol,
    safeguard,
    update_way,
    vectors=None,
    keep_best=False,
    last=None,
):
    """:func:`palm4msa_dense` in either sweep direction."""
    options = dict(
        n_iter=n_iter, tol=tol, safeguard=safeguard, vectors=vectors, keep_best=keep_best, last=last
    )
    if update_way == "right-to-left":
        return palm4msa_dense(U, projs, factors, lam, **options)
    tprojs = [_Transposed(p) for p in projs[::-1]]
    tfactors = [np.ascontiguousarray(f.T) for f in factors[::-1]]
    out, lam, hist, it, stop = palm4msa_dense(
        np.ascontiguousarray(U.T), tprojs, tfactors, lam, **options
    )
    if last:
        last["factors"] = [np.ascontiguousarray(f.T) for f in last["factors"][::-1]]
    return [np.ascontiguousarray(f.T) for f in out[::-1]], lam, hist, it, stop


def _warn_plateau(result, n_iter, tol):
    """:class:`PlateauWarning` when ``result`` is far from its target (see the module notes)."""
    err = result.relative_error
    if not err > PLATEAU_ERROR:
        return
    import warnings

    warnings.warn(
        f"Palm4MSA stopped by tol={tol:g} after {result.n_iter} of n_iter={n_iter} iterations "
        f"with relative error {err:.3g}: the objective changed by less than tol between two "
        "iterations because the iterates stopped improving (a plateau of this non-convex "
        "problem), not because the fit is good. Try 'hierarchical-palm4msa' (factors peeled "
        "off one at a time), init_factors, or looser constraints; tol=0 runs all n_iter "
        "iterations.",
        PlateauWarning,
        stacklevel=3,
    )


def check_init(init_factors, projs, dtype):
    """Validate warm-start factors against the constraint shapes."""
    if len(init_factors) != len(projs):
        raise ValueError(
            f"init_factors has {len(init_factors)} factors but constraints has {len(projs)}"
        )
    import scipy.sparse as sp

    out = []
    for q, (f, p) in enumerate(zip(init_factors, projs)):
        arr = f.toarray() if sp.issparse(f) else np.asarray(f)
        if arr.shape != p.shape:
            raise ValueError(
                f"init_factors[{q}] has shape {arr.shape}, its constraint has shape {p.shape}"
            )
        if not np.isfinite(arr).all():
            raise ValueError(f"init_factors[{q}] contains NaN or inf")
        out.append(np.array(arr, dtype=dtype))
    return out


def to_sparse_factors(factors, lam, dtype):
    import scipy.sparse as sp

    from ..linalg.sparse_factors import SparseFactors

    return SparseFactors([sp.csr_matrix(f) for f in factors], lam, dtype=dtype)


class Palm4MSA(Factorizer):
    """Palm4MSA factorizer (registered as ``"palm4msa"``).

    Parameters
    ----------
    n_iter : int, default 300
        Maximum number of iterations (sweeps over all factors).
    tol : float, default 1e-6
        Stop when the relative change of the objective between two iterations is below
        ``tol`` (``stop_reason="tol"``), or when the objective is exactly 0
        (``stop_reason="exact"``). ``tol=0`` disables both: all ``n_iter`` iterations run
        (see the module notes). From the default start, a stop by ``tol``
        within ``PLATEAU_ITERS`` (10) iterations with a relative error above
        ``PLATEAU_ERROR`` (0.5) warns (:class:`PlateauWarning`): see the module notes.
    update_way : {"right-to-left", "left-to-right"}
        Order of the factor updates within a sweep.
    safeguard : bool, default False
        Undo iterations that increase the objective (see the module notes); off by default,
        as in the thesis' Algorithm 1.
    keep_best : bool, default False
        Return the iterate with the lowest objective seen (the warm start included; the
        earliest of equal ones) instead of the last one; the iterations themselves are those
        of Algorithm 1. When that is an earlier iterate, the last one is in the result's
        ``extra["last"]`` (a ``SparseFactors``) and the objective history ends with the
        returned iterate's value.
    n_jobs : int, optional
        Threads (Numba, BLAS and the library's pools) of the call, as
        :func:`sparsekit.thread_limit`; default: the setting in force. Problems whose target
        and factors have at most ``SERIAL_MAX_DIM`` (128) rows and columns run on one thread,
        which is faster there (see ``palm_threads``).

    Examples
    --------
    >>> import numpy as np, sparsekit
    >>> M = np.random.default_rng(0).standard_normal((32, 32))
    >>> cons = [sparsekit.get_projection("splincol", shape=(32, 32), k=4) for _ in range(3)]
    >>> res = sparsekit.get_factorizer("palm4msa", n_iter=50).factorize(M, cons)
    >>> res.factors.shape
    (32, 32)
    """

    name = "palm4msa"

    def __init__(
        self,
        n_iter: int = 300,
        tol: float = 1e-6,
        update_way: str = "right-to-left",
        safeguard: bool = False,
        keep_best: bool = False,
        n_jobs: int | None = None,
    ) -> None:
        self.n_iter = n_iter
        self.tol = tol
        self.update_way = update_way
        self.safeguard = safeguard
        self.keep_best = keep_best
        self.n_jobs = n_jobs

    def _checked(self):
        n_iter = check_scalar(
            self.n_iter, "n_iter", kind=numbers.Integral, low=1, low_inclusive=True
        )
        tol = check_scalar(self.tol, "tol", low=0.0, low_inclusive=True)
        way = check_option(self.update_way, "update_way", UPDATE_WAYS)
        return n_iter, tol, way

    def factorize(
        self,
        M: ArrayLike,
        constraints: Sequence[Any],
        *,
        init_factors: Sequence[ArrayLike] | None = None,
        init_scale: float = 1.0,
    ) -> FactorizationResult:
        """Approximate ``M`` by ``λ S_1 ⋯ S_Q`` with ``S_q`` in ``constraints[q]``.

        Parameters
        ----------
        M : array-like of shape (m, n)
            The target (float32 stays float32).
        constraints : list of projections
            One per factor, shapes chaining from ``m`` to ``n``.
        init_factors : list of arrays, optional
            Warm start (default: identities and a zero first-updated factor).
        init_scale : float, default 1.0
            Starting ``λ``.

        Returns
        -------
        FactorizationResult
            The factors, the objective history and the stop reason.
        """
        n_iter, tol, way = self._checked()
        U = check_target(M)
        projs = check_constraints(U.shape, constraints)
        lam = check_scalar(init_scale, "init_scale")
        if init_factors is None:
            factors = default_factors(projs, U.dtype, way)
        else:
            factors = check_init(init_factors, projs, U.dtype)
        last = {}
        with thread_limit(palm_threads(self.n_jobs, [U.shape] + [p.shape for p in projs])):
            factors, lam, hist, it, stop = run_palm(
                U,
                projs,
                factors,
                lam,
                n_iter=n_iter,
                tol=tol,
                safeguard=bool(self.safeguard),
                update_way=way,
                keep_best=bool(self.keep_best),
                last=last,
            )
        extra = {"last": to_sparse_factors(last["factors"], last["scale"], U.dtype)} if last else {}
        result = FactorizationResult(
            factors=to_sparse_factors(factors, lam, U.dtype),
            objective=np.asarray(hist),
            n_iter=it,
            stop_reason=stop,
            target_norm=float(np.linalg.norm(U)),
            extra=extra,
        )
        if init_factors is None and stop == "tol" and it <= PLATEAU_ITERS:
            _warn_plateau(result, n_iter, tol)
        return result


__all__ = ["Palm4MSA", "PlateauWarning", "PLATEAU_ITERS", "PLATEAU_ERROR"]
