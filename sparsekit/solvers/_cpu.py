"""CPU compute for the greedy and Frank–Wolfe sparse solvers (Numba, arrays in and out).

Layout: signals are rows here (``Yt`` is ``Y.T``, ``C`` holds one correlation vector per row),
so that every signal's data is contiguous. Every batch kernel is serial and takes a row range
``lo, hi`` first; :func:`sparsekit._runtime.pools.run_row_ranges` calls it on ranges of signals from
several threads (the kernels release the GIL). One compiled function per kernel and dtype, no
``parallel=True``, and no allocation or slice assignment inside the kernels (work arrays come
from the caller, one set per row range): this keeps the first call's compile short. The component
layer (``mp.py``, ``omp.py``, ``nnomp.py``, ``fw.py``) transposes back to the public layout.

Two kinds of kernels:

- ``*_gram`` run a whole solve for every signal from the correlations ``C0 = Y.T D`` and the
  Gram matrix ``G = D.T D`` (Batch-OMP of Rubinstein, Zibulevsky & Elad 2008): the residual is
  never formed, the correlations are updated as ``c = c0 - G[:, S] x``.
- ``*_step`` do one iteration for the still-active signals from correlations ``C = R D`` that the
  caller computed with one BLAS GEMM; the residuals ``R`` are updated here explicitly.

A ``status`` entry per signal records why it stopped (see the ``STOP_*`` constants).
"""

import numpy as np
from numba import njit

#: stop reasons written in ``status``
STOP_RUNNING = 0
STOP_MAX_ITER = 1
STOP_TOL = 2
STOP_NO_CORRELATION = 3  # every correlation is zero (MP/OMP) or none is positive (NN-OMP)
STOP_DEPENDENT = 4  # the selected atom is linearly dependent on the support (OMP)
STOP_RESELECTED = 5  # the best atom is already in the support (OMP, only from rounding)
STOP_ZERO_STEP = 6  # Frank–Wolfe step gamma == 0
STOP_GAP = 7  # Frank–Wolfe duality gap <= gap_tol

#: fewest signals for which the per-iteration ``*_step`` kernels use threads: a step costs
#: O(n_features + n_atoms) per signal, less than a thread hand-off for a handful of signals
STEP_PARALLEL_MIN_ROWS = 64


# ---------------------------------------------------------------------------------------------
# small dense helpers (inlined into the kernels)
# ---------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _argmax_abs(c):
    best = 0
    val = -1.0
    for i in range(c.shape[0]):
        a = abs(c[i])
        if a > val:
            val = a
            best = i
    return best


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _argmax_abs_scaled(c, inv_norms):
    best = 0
    val = -1.0
    for i in range(c.shape[0]):
        a = abs(c[i]) * inv_norms[i]
        if a > val:
            val = a
            best = i
    return best


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _chol_append(L, k, g, g_diag, eps):
    """Grow the Cholesky factor ``L[:k, :k]`` of a Gram matrix by one row.

    ``g`` holds the new atom's inner products with the ``k`` selected ones, ``g_diag`` its squared
    norm. Returns False (and leaves ``L`` unchanged on the diagonal) when the new diagonal entry
    ``g_diag - ||w||^2`` is ``<= eps``: the atom is linearly dependent on the selected ones.
    """
    if k == 0:
        if g_diag <= eps:
            return False
        L[0, 0] = np.sqrt(g_diag)
        return True
    ss = 0.0
    for r in range(k):  # forward substitution L w = g, written into row k of L
        acc = g[r]
        for s in range(r):
            acc -= L[r, s] * L[k, s]
        w = acc / L[r, r]
        L[k, r] = w
        ss += w * w
    d = g_diag - ss
    if d <= eps:
        return False
    L[k, k] = np.sqrt(d)
    return True


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _chol_solve(L, k, b, x):
    """Solve ``L L^T x = b`` for the leading ``k x k`` block (forward then back substitution)."""
    for r in range(k):
        acc = b[r]
        for s in range(r):
            acc -= L[r, s] * x[s]
        x[r] = acc / L[r, r]
    for r in range(k - 1, -1, -1):
        acc = x[r]
        for s in range(r + 1, k):
            acc -= L[s, r] * x[s]
        x[r] = acc / L[r, r]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _copy(src, dst):
    """dst[:] = src as a loop (a slice assignment compiles Numba's shape-error formatting)."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _dot(a, b):
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i] * b[i]
    return acc


# ---------------------------------------------------------------------------------------------
# Matching Pursuit
# ---------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def mp_gram(
    lo,
    hi,
    G,
    C0,
    y_sq,
    norms_sq,
    inv_norms,
    n_iter_max,
    tol,
    corr_floor,
    coef,
    support,
    res,
    n_iter,
    status,
    c,
):
    """Matching Pursuit on correlations for the signals ``lo <= j < hi`` (Mallat & Zhang 1993;
    Cherfaoui 2022, PhD thesis, §2.2, Alg. 1 with the MP update).

    Per step: ``i = argmax |c_i| / ||d_i||``, ``a = c_i / ||d_i||^2``, ``x_i += a``,
    ``c -= a G[i, :]``, ``||r||^2 -= c_i^2 / ||d_i||^2``. ``inv_norms = 1 / sqrt(norms_sq)``;
    ``c`` is a work array of n_atoms entries.
    """
    n_atoms = C0.shape[1]
    for j in range(lo, hi):
        _copy(C0[j], c)
        r2 = y_sq[j]
        res[j, 0] = np.sqrt(r2)
        k = 0
        st = STOP_MAX_ITER
        while k < n_iter_max:
            if tol >= 0.0 and r2 <= tol:
                st = STOP_TOL
                break
            i = _argmax_abs_scaled(c, inv_norms)
            ci = c[i]
            if abs(ci) * inv_norms[i] <= corr_floor[j]:
                st = STOP_NO_CORRELATION
                break
            a = ci / norms_sq[i]
            coef[j, i] += a
            Gi = G[i]
            for t in range(n_atoms):
                c[t] -= a * Gi[t]
            r2 -= ci * a
            if r2 < 0.0:
                r2 = 0.0
            support[j, k] = i
            k += 1
            res[j, k] = np.sqrt(r2)
        if k == n_iter_max and st == STOP_MAX_ITER and tol >= 0.0 and r2 <= tol:
            st = STOP_TOL
        n_iter[j] = k
        status[j] = st


@njit(cache=True, nogil=True, error_model="numpy")
def mp_step(
    lo,
    hi,
    k,
    rows,
    C,
    Dt,
    R,
    norms_sq,
    inv_norms,
    n_iter_max,
    tol,
    corr_floor,
    coef,
    support,
    res,
    n_iter,
    status,
    active,
):
    """One Matching Pursuit step for the signals ``rows[lo:hi]`` given their correlations ``C``."""
    d = Dt.shape[1]
    for t in range(lo, hi):
        j = rows[t]
        c = C[t]
        i = _argmax_abs_scaled(c, inv_norms)
        ci = c[i]
        if abs(ci) * inv_norms[i] <= corr_floor[j]:
            status[j] = STOP_NO_CORRELATION
            active[j] = False
            continue
        a = ci / norms_sq[i]
        coef[j, i] += a
        r = R[j]
        di = Dt[i]
        r2 = 0.0
        for s in range(d):
            r[s] -= a * di[s]
            r2 += r[s] * r[s]
        support[j, k] = i
        n_iter[j] = k + 1
        res[j, k + 1] = np.sqrt(r2)
        if tol >= 0.0 and r2 <= tol:
            status[j] = STOP_TOL
            active[j] = False
        elif k + 1 >= n_iter_max:
            status[j] = STOP_MAX_ITER
            active[j] = False


# ---------------------------------------------------------------------------------------------
# Orthogonal Matching Pursuit
# ---------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def omp_gram(
    lo,
    hi,
    G,
    C0,
    y_sq,
    n_max,
    tol,
    corr_floor,
    chol_eps,
    idx,
    vals,
    res,
    n_iter,
    status,
    path,
    want_path,
    L,
    V,
    in_support,
    c,
):
    """Batch-OMP (Cholesky-updated) on the Gram matrix for the signals ``lo <= j < hi``
    (Rubinstein, Zibulevsky & Elad 2008, Alg. 2).

    Per step: ``i = argmax |c_i|``; the Cholesky factor ``L`` of ``G[S, S]`` grows by one row
    (:func:`_chol_append`); ``x_S = (L L^T)^{-1} c0_S``; ``c = c0 - G[:, S] x_S``;
    ``||r||^2 = ||y||^2 - x_S . c0_S`` (normal equations).

    Work arrays: ``L`` (n_max, n_max), ``V`` (3, n_max), ``in_support`` (n_atoms,) all False,
    ``c`` (n_atoms,).
    """
    n_atoms = C0.shape[1]
    cs = V[0]
    x = V[1]
    g = V[2]
    for j in range(lo, hi):
        c0 = C0[j]
        _copy(c0, c)
        r2 = y_sq[j]
        res[j, 0] = np.sqrt(r2)
        k = 0
        st = STOP_MAX_ITER
        while k < n_max:
            if tol >= 0.0 and r2 <= tol:
                st = STOP_TOL
                break
            i = _argmax_abs(c)
            if abs(c[i]) <= corr_floor[j]:
                st = STOP_NO_CORRELATION
                break
            if in_support[i]:
                st = STOP_RESELECTED
                break
            for s in range(k):
                g[s] = G[idx[j, s], i]
            if not _chol_append(L, k, g, G[i, i], chol_eps):
                st = STOP_DEPENDENT
                break
            idx[j, k] = i
            in_support[i] = True
            cs[k] = c0[i]
            k += 1
            _chol_solve(L, k, cs, x)
            if want_path:
                for s in range(k):
                    path[j, k - 1, s] = x[s]
            _copy(c0, c)
            proj = 0.0
            for s in range(k):
                xs = x[s]
                Gs = G[idx[j, s]]
                for t in range(n_atoms):
                    c[t] -= xs * Gs[t]
                proj += xs * cs[s]
            r2 = y_sq[j] - proj
            if r2 < 0.0:
                r2 = 0.0
            res[j, k] = np.sqrt(r2)
        if st == STOP_MAX_ITER and tol >= 0.0 and r2 <= tol:
            st = STOP_TOL
        for s in range(k):
            vals[j, s] = x[s]
            in_support[idx[j, s]] = False
        n_iter[j] = k
        status[j] = st


@njit(cache=True, nogil=True, error_model="numpy")
def omp_step(
    lo,
    hi,
    k,
    rows,
    C,
    Dt,
    Yt,
    R,
    norms_sq,
    n_max,
    tol,
    corr_floor,
    chol_eps,
    L,
    cs,
    idx,
    vals,
    res,
    n_iter,
    status,
    active,
    path,
    want_path,
    g,
):
    """One OMP step for the signals ``rows[lo:hi]`` given their correlations ``C = R D``.

    The Cholesky row needs ``<d_s, d_i>`` for the selected atoms (``k`` dot products of length
    n_features); the residual ``y - D_S x_S`` is recomputed explicitly (as scikit-learn's
    ``orthogonal_mp`` without Gram does), so its norm is accurate down to rounding of ``R``.
    ``g`` is a work array of n_max entries.
    """
    d = Dt.shape[1]
    for t in range(lo, hi):
        j = rows[t]
        c = C[t]
        i = _argmax_abs(c)
        if abs(c[i]) <= corr_floor[j]:
            status[j] = STOP_NO_CORRELATION
            active[j] = False
            continue
        seen = False
        for s in range(k):
            if idx[j, s] == i:
                seen = True
        if seen:
            status[j] = STOP_RESELECTED
            active[j] = False
            continue
        di = Dt[i]
        for s in range(k):
            g[s] = _dot(Dt[idx[j, s]], di)
        Lj = L[j]
        if not _chol_append(Lj, k, g, norms_sq[i], chol_eps):
            status[j] = STOP_DEPENDENT
            active[j] = False
            continue
        idx[j, k] = i
        cs[j, k] = _dot(di, Yt[j])
        x = vals[j]
        _chol_solve(Lj, k + 1, cs[j], x)
        if want_path:
            for s in range(k + 1):
                path[j, k, s] = x[s]
        r = R[j]
        _copy(Yt[j], r)
        for s in range(k + 1):
            xs = x[s]
            ds = Dt[idx[j, s]]
            for u in range(d):
                r[u] -= xs * ds[u]
        r2 = _dot(r, r)
        n_iter[j] = k + 1
        res[j, k + 1] = np.sqrt(r2)
        if tol >= 0.0 and r2 <= tol:
            status[j] = STOP_TOL
            active[j] = False
        elif k + 1 >= n_max:
            status[j] = STOP_MAX_ITER
            active[j] = False


# ---------------------------------------------------------------------------------------------
# Non-negative OMP
# ---------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def nnomp_gram(
    lo,
    hi,
    G,
    C0,
    y_sq,
    n_max,
    tol,
    corr_floor,
    chol_eps,
    grad_eps,
    nnls_max_iter,
    idx,
    vals,
    res,
    n_iter,
    status,
    Gs,
    L,
    W,
    passive,
    in_support,
    c,
):
    """Non-negative OMP for the signals ``lo <= j < hi`` (Bruckstein, Elad & Zibulevsky 2008;
    Cherfaoui 2022, PhD thesis, Ch. 6, Alg. 7).

    Per step: ``i = argmax_{i not in S} c_i`` (signed); stop when ``c_i <= 0``; NNLS on the
    support, warm-started from the previous solution; ``c = c0 - G[:, S] x_S``;
    ``||r||^2 = ||y||^2 - 2 x.c0_S + x^T G_SS x``.

    The NNLS is the Lawson–Hanson active-set method on the normal equations (Lawson & Hanson
    1974, Ch. 23): minimise ``1/2 x^T G_SS x - c0_S^T x`` subject to ``x >= 0`` (the minimiser
    of ``||y - D_S x||`` with ``x >= 0``). An atom enters the passive set ``P`` when its
    gradient entry ``c0_s - (G_SS x)_s`` is the largest above ``grad_eps max|c0_S|`` (the
    gradient is a correlation ``<d_s, y - D_S x>``, so its rounding is relative to the
    correlations ``c0_S``, whatever the norms of the atoms);
    ``z = argmin`` on ``P`` (Cholesky of ``G_PP``, factored afresh); while some ``z_s <= 0`` on
    ``P``, ``x`` moves towards ``z`` as far as feasible and the atoms that reach 0 (the
    blocking one set to exactly 0) leave ``P``.
    A Cholesky pivot ``<= chol_eps`` stops the signal (``STOP_DEPENDENT``).

    One function without calls, so that its first call compiles it alone: the Cholesky rows
    are grown over the passive coordinates in place (no gathered copy), the right-hand side
    ``c0_S`` is the extra column ``n_max`` of ``Gs`` and its forward substitution the extra
    row ``k`` of ``L``.

    Work arrays: ``Gs`` and ``L`` (n_max + 1, n_max + 1), ``W`` (2, n_max + 1), ``passive``
    (n_max + 1,) bool, ``in_support`` (n_atoms,) all False, ``c`` (n_atoms,).
    """
    n_atoms = C0.shape[1]
    z = W[0]
    x = W[1]
    rhs = n_max  # the column of Gs that holds c0_S
    for j in range(lo, hi):
        c0 = C0[j]
        for t in range(n_atoms):
            c[t] = c0[t]
        r2 = y_sq[j]
        res[j, 0] = np.sqrt(r2)
        scale = 0.0  # max|c0_S| (> 0 from the first atom on: c0_i > corr_floor)
        k = 0
        st = STOP_MAX_ITER
        while k < n_max:
            if tol >= 0.0 and r2 <= tol:
                st = STOP_TOL
                break
            i = -1
            best = 0.0
            for t in range(n_atoms):
                if not in_support[t] and c[t] > best:
                    best = c[t]
                    i = t
            if i < 0 or best <= corr_floor[j]:
                st = STOP_NO_CORRELATION
                break
            for s in range(k):
                gv = G[idx[j, s], i]
                Gs[s, k] = gv
                Gs[k, s] = gv
            Gs[k, k] = G[i, i]
            Gs[k, rhs] = c0[i]
            x[k] = 0.0
            passive[k] = False
            idx[j, k] = i
            in_support[i] = True
            ci = abs(c0[i])
            if ci > scale:
                scale = ci
            k += 1
            # Lawson-Hanson NNLS on the k atoms, from the previous solution (new atom at 0)
            ok = True
            wtol = grad_eps * scale
            for _ in range(nnls_max_iter):
                enter = -1
                wbest = wtol
                for s in range(k):
                    if not passive[s]:
                        w = Gs[s, rhs]
                        for q in range(k):
                            w -= Gs[s, q] * x[q]
                        if w > wbest:
                            wbest = w
                            enter = s
                if enter < 0:
                    break
                passive[enter] = True
                passive[k] = True  # row k of L: the forward substitution of c0_S
                for _inner in range(k + 1):
                    # z = argmin on the passive set: Cholesky rows, forward, back substitution
                    for a in range(k + 1):
                        z[a] = 0.0
                        if not passive[a]:
                            continue
                        col = a if a < k else rhs
                        ss = 0.0
                        for r in range(a):
                            if passive[r]:
                                acc = Gs[r, col]
                                for q in range(r):
                                    if passive[q]:
                                        acc -= L[r, q] * L[a, q]
                                lar = acc / L[r, r]
                                L[a, r] = lar
                                ss += lar * lar
                        if a < k:
                            dd = Gs[a, a] - ss
                            if dd <= chol_eps:
                                ok = False
                                break
                            L[a, a] = np.sqrt(dd)
                    if not ok:
                        break
                    for r in range(k - 1, -1, -1):
                        if passive[r]:
                            acc = L[k, r]
                            for q in range(r + 1, k):
                                if passive[q]:
                                    acc -= L[q, r] * z[q]
                            z[r] = acc / L[r, r]
                    feasible = True
                    step = 1.0
                    block = -1
                    for s in range(k):
                        if passive[s] and z[s] <= 0.0:
                            feasible = False
                            ratio = x[s] / (x[s] - z[s])
                            if ratio < step:
                                step = ratio
                                block = s
                    if feasible:
                        x, z = z, x  # x = z: swap the two work rows instead of copying
                        break
                    for s in range(k):
                        x[s] += step * (z[s] - x[s])
                        # the blocking atom reaches 0 exactly (rounding could leave it at
                        # 1e-300 in the passive set, and the inner loop would stall there)
                        if s == block or (passive[s] and x[s] <= 0.0):
                            x[s] = 0.0
                            passive[s] = False
                if not ok:
                    break
            if not ok:
                st = STOP_DEPENDENT
                break
            for t in range(n_atoms):
                c[t] = c0[t]
            quad = 0.0
            lin = 0.0
            for s in range(k):
                xs = x[s]
                if xs != 0.0:
                    G_row = G[idx[j, s]]
                    for t in range(n_atoms):
                        c[t] -= xs * G_row[t]
                lin += xs * Gs[s, rhs]
                for q in range(k):
                    quad += xs * Gs[s, q] * x[q]
            r2 = y_sq[j] - 2.0 * lin + quad
            if r2 < 0.0:
                r2 = 0.0
            res[j, k] = np.sqrt(r2)
        if st == STOP_MAX_ITER and tol >= 0.0 and r2 <= tol:
            st = STOP_TOL
        for s in range(k):
            vals[j, s] = x[s]
            in_support[idx[j, s]] = False
        n_iter[j] = k
        status[j] = st


# ---------------------------------------------------------------------------------------------
# Frank–Wolfe on the l1 ball
# ---------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def fw_step(
    lo,
    hi,
    k,
    rows,
    C,
    Dt,
    R,
    Yk,
    beta,
    line_search,
    max_iter,
    tol,
    gap_tol,
    res_floor,
    gap_floor,
    coef,
    support,
    res,
    steps,
    gaps,
    n_iter,
    status,
    active,
    u,
):
    """One Frank–Wolfe iteration on ``{||x||_1 <= beta}`` for the signals ``rows[lo:hi]``
    (Cherfaoui 2022, PhD thesis, Ch. 5, Alg. 5).

    With ``u = D(s - x) = sign(c_i) beta d_i - D x`` (``Yk`` holds ``D x``):
    gap ``g = <u, r>``; step ``2/(k+2)`` or ``clip(g / ||u||^2, 0, 1)``;
    ``x <- (1 - gamma) x + gamma s``, ``D x <- D x + gamma u``, ``r <- r - gamma u``.
    Round-off stops: ``g <= gap_floor[j] ||u||`` (status ``STOP_GAP``) and
    ``||r||^2 <= res_floor[j]`` (status ``STOP_TOL``). ``u`` is a work array of n_features
    entries.
    """
    d = Dt.shape[1]
    for t in range(lo, hi):
        j = rows[t]
        c = C[t]
        i = _argmax_abs(c)
        sb = beta[j] if c[i] >= 0.0 else -beta[j]
        di = Dt[i]
        yk = Yk[j]
        r = R[j]
        gap = 0.0
        uu = 0.0
        for s in range(d):
            us = sb * di[s] - yk[s]
            u[s] = us
            gap += us * r[s]
            uu += us * us
        gaps[j, k] = gap
        if (gap_tol >= 0.0 and gap <= gap_tol) or gap <= gap_floor[j] * np.sqrt(uu):
            status[j] = STOP_GAP
            active[j] = False
            continue
        if line_search:
            gamma = gap / uu if uu > 0.0 else 0.0
            if gamma < 0.0:
                gamma = 0.0
            elif gamma > 1.0:
                gamma = 1.0
        else:
            gamma = 2.0 / (k + 2.0)
        steps[j, k] = gamma
        if gamma == 0.0:
            status[j] = STOP_ZERO_STEP
            active[j] = False
            continue
        cj = coef[j]
        keep = 1.0 - gamma
        for q in range(cj.shape[0]):
            cj[q] *= keep
        cj[i] += gamma * sb
        r2 = 0.0
        for s in range(d):
            gu = gamma * u[s]
            yk[s] += gu
            r[s] -= gu
            r2 += r[s] * r[s]
        support[j, k] = i
        n_iter[j] = k + 1
        res[j, k + 1] = np.sqrt(r2)
        if (tol >= 0.0 and r2 <= tol) or r2 <= res_floor[j]:
            status[j] = STOP_TOL
            active[j] = False
        elif k + 1 >= max_iter:
            status[j] = STOP_MAX_ITER
            active[j] = False
