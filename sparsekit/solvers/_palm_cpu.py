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
def _to_csr(S, ptr, ind, dat):
    """Write the CSR form of ``S`` into ``ptr`` (rows + 1), ``ind``, ``dat``; returns nnz."""
    r, c = S.shape
    n = 0
    ptr[0] = 0
    for i in range(r):
        for j in range(c):
            v = S[i, j]
            if v != 0.0:
                ind[n] = j
                dat[n] = v
                n += 1
        ptr[i + 1] = n
    return n


@njit(cache=True, nogil=True)
def _csr_mul(ptr, ind, dat, B, out):
    """``out = S @ B`` for ``S`` in CSR form (one row AXPY per non-zero)."""
    w = B.shape[1]
    for i in range(ptr.shape[0] - 1):
        for t in range(w):
            out[i, t] = 0.0
        for p in range(ptr[i], ptr[i + 1]):
            v = dat[p]
            j = ind[p]
            for t in range(w):
                out[i, t] += v * B[j, t]
    return out


@njit(cache=True, nogil=True)
def _csr_mul_t(ptr, ind, dat, B, out):
    """``out = Sᵀ @ B`` for ``S`` in CSR form (scatter)."""
    w = B.shape[1]
    out[:, :] = 0.0
    for i in range(ptr.shape[0] - 1):
        for p in range(ptr[i], ptr[i + 1]):
            v = dat[p]
            j = ind[p]
            for t in range(w):
                out[j, t] += v * B[i, t]
    return out


@njit(cache=True, nogil=True)
def _csr_vec(ptr, ind, dat, x, out):
    """``out = S @ x`` for a vector ``x``."""
    for i in range(ptr.shape[0] - 1):
        s = 0.0
        for p in range(ptr[i], ptr[i + 1]):
            s += dat[p] * x[ind[p]]
        out[i] = s
    return out


@njit(cache=True, nogil=True)
def _csr_vec_t(ptr, ind, dat, x, out):
    """``out = Sᵀ @ x`` for a vector ``x``."""
    out[:] = 0.0
    for i in range(ptr.shape[0] - 1):
        xi = x[i]
        for p in range(ptr[i], ptr[i + 1]):
            out[ind[p]] += dat[p] * xi
    return out


# -- projections ------------------------------------------------------------------------------
#: up to this many per row or column, the threshold comes from one pass with a sorted buffer
SMALL_K = 32


@njit(cache=True, nogil=True)
def _kth_largest(vals, k, top):
    """The ``k``-th largest of ``vals`` (duplicates counted), ``top`` a buffer of ``k``."""
    n = vals.shape[0]
    if k > SMALL_K:
        return np.partition(vals, n - k)[n - k]
    cnt = 0
    for j in range(n):
        v = vals[j]
        if cnt < k:
            i = cnt
            cnt += 1
        elif v > top[k - 1]:
            i = k - 1
        else:
            continue
        while i > 0 and top[i - 1] < v:  # insertion into the descending buffer
            top[i] = top[i - 1]
            i -= 1
        top[i] = v
    return top[k - 1]


@njit(cache=True, nogil=True)
def _select(vals, k, keep, top):
    """``keep[j] = True`` for the ``k`` largest ``vals[j]`` (ties: lowest ``j``)."""
    n = vals.shape[0]
    if k >= n:
        keep[:] = True
        return
    t = _kth_largest(vals, k, top)
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
        top = np.empty(min(max(krow, kcol), SMALL_K), dtype=M.dtype)
        if krow > 0:
            row = np.empty(c, dtype=M.dtype)
            keep = np.zeros(c, dtype=np.bool_)
            for i in range(r):
                row[:] = A[i]
                keep[:] = False
                _select(row, krow, keep, top)
                for j in range(c):
                    mask[i, j] |= keep[j]
        if kcol > 0:
            col = np.empty(r, dtype=M.dtype)
            keep = np.zeros(r, dtype=np.bool_)
            for j in range(c):
                col[:] = A[:, j]
                keep[:] = False
                _select(col, kcol, keep, top)
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
#: Lanczos operand: a dense ``A``, or the chain ``P = S_lo ⋯ S_{hi−1}`` as ``A = Pᵀ`` (``L``) or ``A = P`` (``R``)
DENSE, CHAIN_L, CHAIN_R = 0, 1, 2


@njit(cache=True, nogil=True)
def _gram_vec(mode, A, x, out, tmp_a, tmp_b, ptr, ind, dat, poffs, doffs, rows, cols, lo, hi):
    """``out = Aᵀ A x`` for the operand of :func:`sq_norm2`."""
    if mode == DENSE:
        r, n = A.shape
        for i in range(r):
            s = 0.0
            for t in range(n):
                s += A[i, t] * x[t]
            tmp_a[i] = s
        out[:] = 0.0
        for i in range(r):
            a = tmp_a[i]
            for t in range(n):
                out[t] += a * A[i, t]
        return out
    cur = x
    use_a = True
    # P = S_lo ⋯ S_{hi-1}. CHAIN_R: Pᵀ P x, S_{hi-1} first, then the transposes from S_lo;
    # CHAIN_L: P Pᵀ x, S_loᵀ first, then the factors from S_{hi-1}
    for step in range(2):
        for k in range(hi - lo):
            p = hi - 1 - k if (mode == CHAIN_R) == (step == 0) else lo + k
            dst = tmp_a if use_a else tmp_b
            use_a = not use_a
            pp = ptr[poffs[p]:poffs[p] + rows[p] + 1]
            pi = ind[doffs[p]:]
            pd = dat[doffs[p]:]
            if (mode == CHAIN_R) == (step == 0):
                cur = _csr_vec(pp, pi, pd, cur, dst[:rows[p]])
            else:
                cur = _csr_vec_t(pp, pi, pd, cur, dst[:cols[p]])
    out[:] = cur
    return out


@njit(cache=True, nogil=True)
def sq_norm2(mode, A, n, warm, has_warm, mix, tol, max_steps, ptr, ind, dat, poffs, doffs,
             rows, cols, lo, hi, vbuf):
    """``‖A‖_2²`` by Lanczos on ``Aᵀ A`` (the algorithm of ``palm4msa._sq_norm2``) for a dense
    ``A`` (``mode=DENSE``) or a chain of CSR factors (``CHAIN_L``, ``CHAIN_R``), ``n`` columns;
    started from ``mix + warm`` (``warm`` when ``has_warm``); the Ritz vector goes to ``warm``.
    ``vbuf`` (at least ``min(max_steps, n) · n``) holds the Lanczos basis."""
    steps = min(max_steps, n)
    V = vbuf[:steps * n].reshape((steps, n))
    v = mix.copy()
    if has_warm:
        v += warm
    V[0] = v / np.sqrt(np.sum(v * v))
    alpha = np.zeros(steps)
    betas = np.zeros(steps)
    width = max(n, A.shape[0], rows.max(), cols.max())
    tmp_a = np.empty(width, dtype=dat.dtype)
    tmp_b = np.empty(width, dtype=dat.dtype)
    w = np.empty(n, dtype=dat.dtype)
    coef = np.empty(steps)
    theta = 0.0
    y = np.ones(1)
    j = 0
    for j in range(steps):
        _gram_vec(mode, A, V[j], w, tmp_a, tmp_b, ptr, ind, dat, poffs, doffs, rows, cols,
                  lo, hi)
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
        s = 0.0
        for t in range(n):
            s += w[t] * w[t]
        beta = np.sqrt(s)
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
        for t in range(n):
            V[j + 1, t] = w[t] / beta
        betas[j] = beta
    warm[:] = 0.0
    for p in range(j + 1):
        for t in range(n):
            warm[t] += y[p] * V[p, t]
    return max(theta, 0.0)


# -- one sweep --------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _fmul(q, S, dense, ptr, ind, dat, poffs, doffs, B, out):
    """``out = S_q @ B``: BLAS for a dense factor, else its CSR form."""
    if dense[q]:
        out[:, :] = np.dot(S, B)
        return out
    return _csr_mul(ptr[poffs[q]:poffs[q] + S.shape[0] + 1], ind[doffs[q]:], dat[doffs[q]:], B, out)


@njit(cache=True, nogil=True)
def _fmul_t(q, S, dense, ptr, ind, dat, poffs, doffs, B, out):
    """``out = S_qᵀ @ B``."""
    if dense[q]:
        out[:, :] = np.dot(S.T, B)
        return out
    return _csr_mul_t(ptr[poffs[q]:poffs[q] + S.shape[0] + 1], ind[doffs[q]:], dat[doffs[q]:], B,
                      out)


@njit(cache=True, nogil=True)
def sweep(U, buf, offs, rows, cols, kinds, krow, kcol, normed, lam, margin, warm_l, has_l,
          warm_r, has_r, mix_m, mix_n, norm_tol, norm_steps, ptr, ind, dat, poffs):
    """One right-to-left Palm4MSA sweep on the factors in ``buf`` (updated in place).

    ``L = S_1 ⋯ S_{q−1}`` holds the values at the sweep's start, ``R = S_{q+1} ⋯ S_Q`` the
    updated ones; ``S_q ← P_q(S_q − λ Lᵀ(λ L S_q R − U) Rᵀ / c)`` with
    ``c = margin · λ² ‖L‖_2² ‖R‖_2²``. Products with ``L`` go through the CSR factors when
    all are sparse and few non-zeros (``8 Σ nnz ≤`` the dense prefix's size, the rule of the
    Python sweep), else through the dense prefix; the same for ``R``. The Lanczos products
    for ``‖L‖_2`` and ``‖R‖_2`` go through the factors whenever they have fewer non-zeros
    than the prefix has entries.
    ``ptr, ind, dat`` hold the factors' CSR forms (factor ``q``: row pointers from
    ``poffs[q]``, entries from ``offs[q]``). Returns the product ``S_1 ⋯ S_Q`` (``m × n``).
    """
    m, n = U.shape
    Q = rows.shape[0]
    nnz = np.empty(Q, dtype=np.int64)
    dense = np.zeros(Q, dtype=np.bool_)
    for q in range(Q):
        S = _view(buf, offs, rows, cols, q)
        nnz[q] = _to_csr(S, ptr[poffs[q]:poffs[q] + rows[q] + 1], ind[offs[q]:], dat[offs[q]:])
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
            _fmul_t(q - 1, S, dense, ptr, ind, dat, poffs, offs, Pp, P)
    no_A = np.empty((0, 1), dtype=U.dtype)
    # scratch, allocated once per sweep: chains of products ping-pong between X[0] and X[1]
    # (and X[2], X[3] for the right chain), R between RB[0] and RB[1]
    width = max(m, n, rows.max(), cols.max())
    X = np.empty((4, width * width), dtype=U.dtype)
    RB = np.empty((2, width * n), dtype=U.dtype)
    vbuf = np.empty(min(norm_steps, width) * width, dtype=U.dtype)
    R = RB[0, :0].reshape((0, n))  # empty: the identity
    r_flip = 0
    for q in range(Q - 1, -1, -1):
        S = _view(buf, offs, rows, cols, q)
        a, b = rows[q], cols[q]
        if kinds[q] != CONSTANT:
            sparse_l = q > 0
            tot_l = 0
            for p in range(q):
                sparse_l = sparse_l and not dense[p]
                tot_l += nnz[p]
            left_chain = sparse_l and 8 * tot_l <= a * m
            sparse_r = q < Q - 1
            tot_r = 0
            for p in range(q + 1, Q):
                sparse_r = sparse_r and not dense[p]
                tot_r += nnz[p]
            right_chain = sparse_r and 8 * tot_r <= b * b
            L_T = PT[pt_off[q]:pt_off[q + 1]].reshape((a if q > 0 else 0, m))
            if q == 0:
                nL = 1.0
            elif sparse_l and tot_l <= a * m:
                nL = sq_norm2(CHAIN_L, no_A, m, warm_l[q], has_l[q], mix_m, norm_tol, norm_steps,
                              ptr, ind, dat, poffs, offs, rows, cols, 0, q, vbuf)
            else:
                nL = sq_norm2(DENSE, L_T, m, warm_l[q], has_l[q], mix_m, norm_tol, norm_steps,
                              ptr, ind, dat, poffs, offs, rows, cols, 0, q, vbuf)
            has_l[q] = q > 0
            if q == Q - 1:
                nR = 1.0
            elif sparse_r and tot_r <= b * n:
                nR = sq_norm2(CHAIN_R, no_A, n, warm_r[q], has_r[q], mix_n, norm_tol, norm_steps,
                              ptr, ind, dat, poffs, offs, rows, cols, q + 1, Q, vbuf)
            else:
                nR = sq_norm2(DENSE, R, n, warm_r[q], has_r[q], mix_n, norm_tol, norm_steps,
                              ptr, ind, dat, poffs, offs, rows, cols, q + 1, Q, vbuf)
            has_r[q] = q < Q - 1
            c = margin * lam * lam * nL * nR
            if c > 0:
                SR = X[0, :a * n].reshape((a, n))
                if q < Q - 1:
                    _fmul(q, S, dense, ptr, ind, dat, poffs, offs, R, SR)
                else:
                    SR[:, :] = S
                flip = 1
                if q == 0:
                    E = SR
                elif left_chain:
                    E = SR
                    for p in range(q - 1, -1, -1):
                        E = _fmul(p, _view(buf, offs, rows, cols, p), dense, ptr, ind, dat, poffs,
                                  offs, E, X[flip, :rows[p] * n].reshape((rows[p], n)))
                        flip = 1 - flip
                else:
                    E = np.dot(L_T.T, SR)
                for i in range(m):
                    for t in range(n):
                        E[i, t] = lam * E[i, t] - U[i, t]
                if q == 0:
                    G = E
                elif left_chain:
                    G = E
                    for p in range(q):
                        G = _fmul_t(p, _view(buf, offs, rows, cols, p), dense, ptr, ind, dat,
                                    poffs, offs, G, X[flip, :cols[p] * n].reshape((cols[p], n)))
                        flip = 1 - flip
                else:
                    G = np.dot(L_T, E)
                step = X[2, :a * b].reshape((a, b))
                scal = lam / c
                if q < Q - 1 and right_chain:
                    H = X[3, :n * a].reshape((n, a))  # Gᵀ, then R Gᵀ through the factors
                    for i in range(a):
                        for t in range(n):
                            H[t, i] = G[i, t]
                    hflip = 1 - flip
                    for p in range(Q - 1, q, -1):
                        H = _fmul(p, _view(buf, offs, rows, cols, p), dense, ptr, ind, dat,
                                  poffs, offs, H, X[hflip, :rows[p] * a].reshape((rows[p], a)))
                        hflip = 3 if hflip != 3 else 1 - flip
                    for i in range(a):
                        for j in range(b):
                            step[i, j] = S[i, j] - scal * H[j, i]
                else:
                    if q < Q - 1:
                        G = np.dot(G, R.T)
                    for i in range(a):
                        for j in range(b):
                            step[i, j] = S[i, j] - scal * G[i, j]
                project(step, kinds[q], krow[q], kcol[q], normed[q], S)
                nnz[q] = _to_csr(S, ptr[poffs[q]:poffs[q] + a + 1], ind[offs[q]:], dat[offs[q]:])
                dense[q] = _is_dense(S, nnz[q])
        out = RB[r_flip, :a * n].reshape((a, n))
        r_flip = 1 - r_flip
        if q == Q - 1:
            out[:, :] = S
        else:
            _fmul(q, S, dense, ptr, ind, dat, poffs, offs, R, out)
        R = out
    return R.copy()
