"""Compute layer of Palm4MSA: one right-to-left sweep over the factors in compiled code.

Pure array functions. The factors live back to back in one flat buffer (factor ``q`` is
``buf[offs[q]:offs[q] + rows[q] * cols[q]]``, row-major), updated in place, so a sweep builds
no Python or scipy objects. A factor multiplies as a sparse operand by scanning its dense
storage for non-zeros (one row AXPY per non-zero: ``O(rows · cols)`` tests plus ``O(nnz · w)``
work for an operand of width ``w``), or through BLAS when it is dense.

Projection codes (``kinds``): ``CONSTANT`` (never updated), ``IDENTITY`` (unconstrained),
``TOPK`` (the union of the ``krow`` largest magnitudes per row and the ``kcol`` largest per
column, ``0`` meaning no selection on that side: ``splin``, ``spcol`` and ``splincol``), each
followed by unit-Frobenius normalization when ``normed``. The selections are those of
:mod:`sparsekit.projections`: the threshold is the exact ``k``-th largest magnitude and ties
go to the lowest index.
"""
import numpy as np
from numba import njit

CONSTANT, IDENTITY, TOPK = 0, 1, 2
#: factors at least this large and denser than DENSE_DENSITY multiply through BLAS
DENSE_MIN_SIZE = 128 * 128
DENSE_DENSITY = 0.25


@njit(cache=True, nogil=True)
def _view(buf, offs, rows, cols, q):
    o = offs[q]
    return buf[o:o + rows[q] * cols[q]].reshape((rows[q], cols[q]))


@njit(cache=True, nogil=True)
def _is_dense(S, nnz):
    return S.size >= DENSE_MIN_SIZE and nnz > DENSE_DENSITY * S.size


@njit(cache=True, nogil=True)
def _mul(S, dense, B, out):
    """``out = S @ B`` (``B`` and ``out`` C-contiguous)."""
    if dense:
        out[:, :] = np.dot(S, B)
        return out
    r, c = S.shape
    w = B.shape[1]
    for i in range(r):
        for t in range(w):
            out[i, t] = 0.0
        for j in range(c):
            v = S[i, j]
            if v != 0.0:
                for t in range(w):
                    out[i, t] += v * B[j, t]
    return out


@njit(cache=True, nogil=True)
def _mul_t(S, dense, B, out):
    """``out = Sᵀ @ B``."""
    if dense:
        out[:, :] = np.dot(S.T, B)
        return out
    r, c = S.shape
    w = B.shape[1]
    out[:, :] = 0.0
    for i in range(r):
        for j in range(c):
            v = S[i, j]
            if v != 0.0:
                for t in range(w):
                    out[j, t] += v * B[i, t]
    return out


@njit(cache=True, nogil=True)
def _nnz(S):
    n = 0
    for v in S.ravel():
        if v != 0.0:
            n += 1
    return n


# -- projections ------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _select(vals, k, keep):
    """``keep[j] |= vals[j]`` among the ``k`` largest (ties: lowest ``j``)."""
    n = vals.shape[0]
    if k >= n:
        keep[:] = True
        return
    t = np.partition(vals, n - k)[n - k]
    above = 0
    for j in range(n):
        if vals[j] > t:
            keep[j] = True
            above += 1
    need = k - above
    for j in range(n):
        if need <= 0:
            break
        if vals[j] == t:
            keep[j] = True
            need -= 1


@njit(cache=True, nogil=True)
def project(M, kind, krow, kcol, normed, out):
    """``out = P(M)`` for the projection codes of the module notes."""
    r, c = M.shape
    if kind == TOPK:
        A = np.abs(M)
        mask = np.zeros((r, c), dtype=np.bool_)
        if krow > 0:
            row = np.empty(c, dtype=M.dtype)
            keep = np.zeros(c, dtype=np.bool_)
            for i in range(r):
                row[:] = A[i]
                keep[:] = False
                _select(row, krow, keep)
                for j in range(c):
                    mask[i, j] |= keep[j]
        if kcol > 0:
            col = np.empty(r, dtype=M.dtype)
            keep = np.zeros(r, dtype=np.bool_)
            for j in range(c):
                col[:] = A[:, j]
                keep[:] = False
                _select(col, kcol, keep)
                for i in range(r):
                    mask[i, j] |= keep[i]
        for i in range(r):
            for j in range(c):
                out[i, j] = M[i, j] if mask[i, j] else 0.0
    else:
        out[:, :] = M
    if normed:
        s = 0.0
        for v in out.ravel():
            s += v * v
        norm = np.sqrt(s)
        if norm > 0:
            for i in range(r):
                for j in range(c):
                    out[i, j] = out[i, j] / norm
    return out


# -- spectral norms ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def sq_norm2(A, warm, has_warm, mix, tol, max_steps):
    """``‖A‖_2²`` by Lanczos on ``Aᵀ A`` (the algorithm of ``palm4msa._sq_norm2``), started from
    ``mix + warm`` (``warm`` when ``has_warm``); the Ritz vector is written to ``warm``."""
    r, n = A.shape
    steps = min(max_steps, n)
    V = np.empty((steps, n), dtype=A.dtype)
    v = mix.copy()
    if has_warm:
        v += warm
    V[0] = v / np.sqrt(np.sum(v * v))
    alpha = np.zeros(steps)
    betas = np.zeros(steps)
    Av = np.empty(r, dtype=A.dtype)
    w = np.empty(n, dtype=A.dtype)
    coef = np.empty(steps)
    theta = 0.0
    y = np.ones(1)
    j = 0
    for j in range(steps):
        for i in range(r):
            s = 0.0
            for t in range(n):
                s += A[i, t] * V[j, t]
            Av[i] = s
        w[:] = 0.0
        for i in range(r):
            a = Av[i]
            for t in range(n):
                w[t] += a * A[i, t]
        s = 0.0
        for t in range(n):
            s += w[t] * V[j, t]
        alpha[j] = s
        for _ in range(2):  # classical Gram-Schmidt twice
            for p in range(j + 1):
                s = 0.0
                for t in range(n):
                    s += V[p, t] * w[t]
                coef[p] = s
            for p in range(j + 1):
                cp = coef[p]
                for t in range(n):
                    w[t] -= cp * V[p, t]
        beta = np.sqrt(np.sum(w.astype(np.float64) ** 2))
        if j % 4 == 3 or j + 1 == steps or beta <= tol * alpha[j]:
            if j == 0:
                theta = alpha[0]
                y = np.ones(1)
            else:
                T = np.zeros((j + 1, j + 1))
                for p in range(j + 1):
                    T[p, p] = alpha[p]
                for p in range(j):
                    T[p, p + 1] = betas[p]
                    T[p + 1, p] = betas[p]
                evals, evecs = np.linalg.eigh(T)
                theta = evals[j]
                y = evecs[:, j].copy()
            if beta * abs(y[-1]) <= tol * theta or j + 1 == steps:
                break
        V[j + 1] = w / beta
        betas[j] = beta
    warm[:] = 0.0
    for p in range(j + 1):
        for t in range(n):
            warm[t] += y[p] * V[p, t]
    return max(theta, 0.0)


# -- one sweep --------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def sweep(U, buf, offs, rows, cols, kinds, krow, kcol, normed, lam, margin, warm_l, has_l,
          warm_r, has_r, mix_m, mix_n, norm_tol, norm_steps):
    """One right-to-left Palm4MSA sweep on the factors in ``buf`` (updated in place).

    ``L = S_1 ⋯ S_{q−1}`` holds the values at the sweep's start, ``R = S_{q+1} ⋯ S_Q`` the
    updated ones; ``S_q ← P_q(S_q − λ Lᵀ(λ L S_q R − U) Rᵀ / c)`` with
    ``c = margin · λ² ‖L‖_2² ‖R‖_2²``. Products with ``L`` go through the factors when they are
    sparse and few non-zeros (``8 Σ nnz ≤`` the prefix's size), else through the dense prefix;
    the same for ``R``. Returns the product ``S_1 ⋯ S_Q`` (``m × n``).
    """
    m, n = U.shape
    Q = rows.shape[0]
    nnz = np.empty(Q, dtype=np.int64)
    dense = np.zeros(Q, dtype=np.bool_)
    for q in range(Q):
        S = _view(buf, offs, rows, cols, q)
        nnz[q] = _nnz(S)
        dense[q] = _is_dense(S, nnz[q])
    # transposed prefixes PT[q] = (S_1 ⋯ S_{q-1})ᵀ, (cols[q-1] × m), back to back
    pt_off = np.zeros(Q + 1, dtype=np.int64)
    for q in range(1, Q):
        pt_off[q + 1] = pt_off[q] + rows[q] * m
    PT = np.empty(max(pt_off[Q], 1), dtype=U.dtype)
    for q in range(1, Q):
        P = PT[pt_off[q]:pt_off[q + 1]].reshape((rows[q], m))
        S = _view(buf, offs, rows, cols, q - 1)
        if q == 1:
            P[:, :] = S.T
        else:
            Pp = PT[pt_off[q - 1]:pt_off[q]].reshape((rows[q - 1], m))
            _mul_t(S, dense[q - 1], Pp, P)
    R = np.empty((0, n), dtype=U.dtype)  # empty: the identity
    for q in range(Q - 1, -1, -1):
        S = _view(buf, offs, rows, cols, q)
        a, b = rows[q], cols[q]
        if kinds[q] != CONSTANT:
            if q > 0:
                L_T = PT[pt_off[q]:pt_off[q + 1]].reshape((a, m))
                nL = sq_norm2(L_T, warm_l[q], has_l[q], mix_m, norm_tol, norm_steps)
                has_l[q] = True
            else:
                nL = 1.0
            if q < Q - 1:
                nR = sq_norm2(R, warm_r[q], has_r[q], mix_n, norm_tol, norm_steps)
                has_r[q] = True
            else:
                nR = 1.0
            c = margin * lam * lam * nL * nR
            if c > 0:
                SR = np.empty((a, n), dtype=U.dtype)
                if q < Q - 1:
                    _mul(S, dense[q], R, SR)
                else:
                    SR[:, :] = S
                left_chain = q > 0
                tot = 0
                for p in range(q):
                    left_chain = left_chain and not dense[p]
                    tot += nnz[p]
                left_chain = left_chain and 8 * tot <= a * m
                if q == 0:
                    E = SR
                elif left_chain:
                    E = SR
                    for p in range(q - 1, -1, -1):
                        E = _mul(_view(buf, offs, rows, cols, p), False, E,
                                 np.empty((rows[p], n), dtype=U.dtype))
                else:
                    L_T = PT[pt_off[q]:pt_off[q + 1]].reshape((a, m))
                    E = np.dot(L_T.T, SR)
                for i in range(m):
                    for t in range(n):
                        E[i, t] = lam * E[i, t] - U[i, t]
                if q == 0:
                    G = E
                elif left_chain:
                    G = E
                    for p in range(q):
                        G = _mul_t(_view(buf, offs, rows, cols, p), False, G,
                                   np.empty((cols[p], n), dtype=U.dtype))
                else:
                    G = np.dot(L_T, E)
                if q < Q - 1:
                    right_chain = True
                    tot = 0
                    for p in range(q + 1, Q):
                        right_chain = right_chain and not dense[p]
                        tot += nnz[p]
                    right_chain = right_chain and 8 * tot <= R.shape[0] * R.shape[0]
                    if right_chain:
                        H = np.ascontiguousarray(G.T)  # (n, a)
                        for p in range(Q - 1, q, -1):
                            H = _mul(_view(buf, offs, rows, cols, p), False, H,
                                     np.empty((rows[p], a), dtype=U.dtype))
                        G = np.ascontiguousarray(H.T)
                    else:
                        G = np.dot(G, R.T)
                step = np.empty((a, b), dtype=U.dtype)
                scal = lam / c
                for i in range(a):
                    for j in range(b):
                        step[i, j] = S[i, j] - scal * G[i, j]
                project(step, kinds[q], krow[q], kcol[q], normed[q], S)
                nnz[q] = _nnz(S)
                dense[q] = _is_dense(S, nnz[q])
        if q == Q - 1:
            R = S.copy()
        else:
            R = _mul(S, dense[q], R, np.empty((a, n), dtype=U.dtype))
    return R
