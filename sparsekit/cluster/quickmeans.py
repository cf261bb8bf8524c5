"""QuicK-means: K-means whose centroid matrix is a fast operator, a product of sparse factors.

Giffon, Emiya, Kadri & Ralaivola (Machine Learning, 2021); Giffon 2020, PhD thesis, §3.3,
Algorithm 2. The problem (thesis Eq. 3.16–3.18) is K-means with the ``K × D`` centroid matrix
constrained to ``V = λ S_1 ⋯ S_Q`` with sparse factors. Each iteration:

1. assigns every point through the operator: ``t_n = argmin_k ‖v_k‖² − 2 [V x_n]_k``
   (``O(nnz)`` per point instead of ``O(KD)``);
2. computes the exact means ``u_k`` of the clusters and their sizes ``n_k``;
3. refits the factors to the weighted target ``D_√n U`` by the factorization solver (Palm4MSA)
   warm-started at the previous factors, with the constant first factor ``D_√n``: for fixed
   assignments ``Σ_k Σ_{t_n=k} ‖x_n − v_k‖² = Σ_k Σ_{t_n=k} ‖x_n − u_k‖² + ‖D_√n (U − V)‖_F²``
   (thesis Eq. 3.21–3.23, with the squared norm), so this is the K-means objective.

Decisions:

- Safeguard (thesis §3.3.4, Proposition 1 and its caveat): the factor update keeps the previous
  factors when the refit has a larger weighted error ``‖D_√n (U − V)‖_F²`` than they have, so
  the objective ``g`` is non-increasing across iterations (``objective_history_``).
- The constant factor is ``diag(√(n_k / N))`` and the target ``diag(√(n_k / N)) U``: the same
  minimizer as ``D_√n``, with ``λ`` on the scale of the centroids (the reference
  implementation's normalization).
- Initialization: K-means++ centroids (or ``"random"`` samples, or an array), factorized once by
  hierarchical Palm4MSA (thesis §3.3.5.1) with the schedule of
  :func:`~sparsekit.factorizers.hierarchical.hierarchical_constraints`; with one factor, or with
  ``hierarchical_init=False``, by the factorization solver from its default start. Each split
  of the hierarchy runs ``palm_iter`` Palm4MSA iterations and each global refinement of the
  factors found so far ``refit_iter`` (the thesis: ``palm_iter`` for both, which
  ``refit_iter=None`` restores). The initial centroids are samples that the first Lloyd steps
  move away from, and the global refinements, with up to ``Q`` factors each, were ~75 % of
  the initialization's time (``K = 256``, ``D = 784``: 24.2 s of CPU time at 300 iterations,
  6.7 s at 10, the fit 49.5 s against 31.9 s for a final objective 0.07 % lower on the
  benchmarks' 10⁵-point mixture; ``benchmarks/README.md``).
- Factors (thesis §3.3.5.1): ``Q`` (default ``⌊log2 max(K, D)⌋``, at least 2) factors of shapes
  ``K × A``, ``A × A``, …, ``A × D`` with ``A = min(K, D)``, each with ``sparsity`` non-zeros per
  row and column at least (``splincol``); ``projection="identity"`` leaves them unconstrained
  (then QuicK-means with exact factor fits is Lloyd's K-means).
- Empty clusters (reference implementation; the thesis is silent): an empty cluster gets the
  point of the largest cluster farthest from its centroid. Re-seeding is outside Proposition 1
  (the moved point may be far from every centroid), so it is kept only when the iteration's
  objective does not exceed the previous one; otherwise the empty cluster keeps weight 0 in the
  refit (its row of ``D_√n`` is zero) and the objective stays non-increasing.
- Centring (``center=True``, the preprocessing of the reference implementation of Giffon et
  al., Machine Learning 2021): the factors approximate the centroids of the centred data, and
  the centroids are ``mean_ + v_k``. The K-means objective does not change under a translation,
  but the centroids of raw data share the dense component ``mean_`` that sparse factors
  represent poorly (breast cancer, K = 64, sparsity 3, one seed: +7.8 % over K-means
  uncentred, +3.7 % centred, other things equal). Inference costs the same: ``mean_`` only
  enters the centroid norms and a term constant over the clusters.
- Each refit returns the best Palm4MSA iterate (the warm start included; ``keep_best`` of
  :class:`~sparsekit.factorizers.palm4msa.Palm4MSA`): with the relaxed ``splincol`` projection,
  Palm4MSA is not monotone even with small steps, and its last iterate can be worse than an
  earlier one. Stopping Palm4MSA at the first increase (its ``safeguard``) instead freezes the
  factors early, which is why that safeguard is not used here.
- A refit that does not improve on the previous factors is rejected (safeguard above), but
  unless Palm4MSA reached its tolerance, the next refit starts from its last iterate rather
  than from the rejected warm start, and the iterations go on: otherwise the assignment, the
  target and the refit would repeat identically and the iterations stop early (Proposition 1
  only asks the accepted factors not to increase ``g``).
- Refit schedule (``refit_iter``): the thesis runs Palm4MSA for its full count (300) at every
  refit (§3.3.5.2; Palm4MSA's stopping rule, §3.2). Each refit is warm-started at factors
  that already fit the previous centroids, so while the assignment still moves, a few
  iterations follow the moving target and the full count mostly refines factors of a target
  about to change. A refit gets ``refit_iter`` iterations while more than
  ``SETTLED_FRACTION`` of the labels changed since the previous assignment, and
  ``palm_iter`` once the assignment has settled and at the last allowed iteration
  (``max_iter``); every refit still stops early on ``palm_tol`` and returns its best iterate.
  ``refit_iter=None`` gives every refit ``palm_iter`` iterations (the thesis' schedule).
- Stop after ``max_iter`` iterations or when the relative change of ``g`` is below ``tol``
  (not after a rejected refit that still has a last iterate to go on from).
- ``labels_``/``inertia_`` are the assignment to, and the K-means objective of, the final
  operator (one last assignment step after the loop).
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from .._base import ClusterMixin, ParamsMixin, TransformerMixin
from .._runtime.small_blas import one_blas_thread
from .._runtime.threads import n_jobs_limit
from .._typing import DataLike, RandomStateLike
from .._validation import check_array, check_option, check_random_state, check_scalar
from ..components import resolve
from ..factorizers.hierarchical import hierarchical_constraints, hierarchical_dense
from ..factorizers.palm4msa import default_factors, run_palm
from ..projections.base import Constant, Identity
from . import _lloyd
from ._cpu import nearest_from_scores, within_cluster_sum

if TYPE_CHECKING:
    from ..registry import Registry

#: the assignment has settled when at most this fraction of the labels changed since the
#: previous iteration; refits then get ``palm_iter`` iterations instead of ``refit_iter``
SETTLED_FRACTION = 0.02


def kmeans_plusplus(
    X: np.ndarray, n_clusters: int, rng: np.random.Generator, sq_norms: np.ndarray | None = None
) -> np.ndarray:
    """Seed K-means by k-means++ on squared Euclidean distances (Arthur & Vassilvitskii 2007).

    With ``2 + ⌊ln K⌋`` greedy trials per centroid (the greedy variant used by scikit-learn),
    through the shared seeding of the k-means module (``sparsekit.cluster._lloyd``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Validated data.
    n_clusters : int
        ``K``, at most ``n_samples``.
    rng : numpy.random.Generator
        The source of the draws.
    sq_norms : ndarray of shape (n_samples,), optional
        The squared norms of the rows of ``X``, when already computed.

    Returns
    -------
    ndarray of int64, shape (n_clusters,)
        Indices of ``K`` distinct rows of ``X``.
    """
    if sq_norms is None:
        sq_norms = np.einsum("ij,ij->i", X, X)

    def sqdist_to(idx):  # (n, t) as the transpose of (t, n): the few trials on the left
        return (sq_norms[idx][:, None] + sq_norms[None, :] - 2 * (X[idx] @ X.T)).T

    with one_blas_thread():  # every product has the few trials as one side
        return _lloyd.kmeans_plusplus(X.shape[0], n_clusters, sqdist_to, rng)


def _assign(V, X, x_sq=None, mean=None, with_dist=True):
    """Labels and squared distances of the rows of ``X`` to the centroids ``mean + v_k`` (the
    rows of the operator ``V`` shifted by ``mean``; no shift when ``mean`` is None).

    ``‖x − μ − v_k‖² = ‖x − μ‖² + (‖v_k‖² + 2 v_kᵀμ) − 2 [V x]_k``: the shift changes the
    centroid norms and a term constant over ``k``, so the products stay ``V x`` (no shifted
    copy of ``X``). The products come in blocks of rows, each reduced to its labels while it
    is in cache (:meth:`~sparsekit.linalg.SparseFactors.row_block_products`). ``x_sq``
    (``‖x − μ‖²``) is computed block by block when not given; with ``with_dist=False`` the
    distances are left without that term (enough for the labels)."""
    Vd = V.toarray()
    norms = np.einsum("ij,ij->i", Vd, Vd).astype(np.float64)
    if mean is not None:
        norms += 2.0 * (Vd @ mean)
    n = X.shape[0]
    labels = np.empty(n, dtype=np.int64)
    dist = np.empty(n, dtype=np.float64)
    norms_low = None

    def reduce(r0, r1, scores):
        nonlocal norms_low
        b = r1 - r0
        if scores.dtype == np.float64:
            nearest_from_scores(scores, norms, labels[r0:r1], dist[r0:r1])
        else:
            if norms_low is None:
                norms_low = norms.astype(scores.dtype)
            nearest_from_scores(scores, norms_low, labels[r0:r1], np.empty(b, scores.dtype))
            if with_dist:
                lab = labels[r0:r1]
                dist[r0:r1] = norms[lab] - 2.0 * scores[lab, np.arange(b)]
        if x_sq is None and with_dist:
            Xc = X[r0:r1] if mean is None else X[r0:r1] - mean
            dist[r0:r1] += np.einsum("ij,ij->i", Xc, Xc)

    V.row_block_products(X, reduce)
    if x_sq is not None:
        dist += x_sq
    np.maximum(dist, 0, out=dist)
    return labels, dist.astype(X.dtype, copy=False)


class QuicKMeans(ClusterMixin, TransformerMixin, ParamsMixin):
    """QuicK-means clustering with a sparse-factor centroid operator.

    Parameters
    ----------
    n_clusters : int, default 8
        ``K``.
    n_factors : int, optional
        ``Q``; default ``max(2, ⌊log2 max(K, D)⌋)``.
    sparsity : int, default 3
        Non-zeros per row and column of each factor (at least), capped at ``min(K, D)``.
    projection : {"splincol", "identity"}, default "splincol"
        Constraint of the factors (``"identity"``: unconstrained factors).
    init : {"k-means++", "random"} or array of shape (K, D), default "k-means++"
        The initial centroids: k-means++ seeding, K random samples, or given centroids.
    max_iter : int, default 50
        The most iterations.
    tol : float, default 1e-6
        Relative change of the objective that stops the iterations.
    factorizer : str, default "palm4msa"
        Name of the registered factorizer (family ``"factorizer"``) refitting the factors
        (looked up in ``registry``).
    palm_iter : int, default 300
        Palm4MSA iterations of each split of the initial factorization and of each refit once
        the assignment has settled (the thesis' count).
    refit_iter : int or None, default 10
        Palm4MSA iterations of each refit while the assignment still moves, and of each
        global refinement of the initial factorization (see Notes); ``None``: ``palm_iter``
        everywhere (the thesis' schedule).
    palm_tol : float, default 1e-6
        Relative change of the Palm4MSA objective that stops the initial factorization and
        each refit.
    hierarchical_init : bool, default True
        Factorize the initial centroids by hierarchical Palm4MSA.
    center : bool, default True
        Factorize the centroids of the centred data (centroids ``mean_ + v_k``).
    random_state : None, int or Generator
        Seeds the initial centroids.
    n_jobs : int, optional
        Threads (Numba and BLAS).
    registry : Registry, optional
        Where ``factorizer`` is looked up (default: the process-wide registry); resolved once,
        in ``fit``, by :func:`sparsekit.components.resolve`.

    Attributes
    ----------
    cluster_centers_ : SparseFactors
        The centroid operator ``V`` (``K × D``): the centroids are the rows of
        ``mean_ + cluster_centers_.toarray()``.
    mean_ : ndarray of shape (n_features,)
        The mean of the training data (zeros with ``center=False``).
    labels_ : ndarray of int, shape (n_samples,)
    inertia_ : float
        Sum of squared distances of the samples to their assigned centroid of ``V``.
    objective_history_ : ndarray
        ``g`` after each iteration (non-increasing).
    n_iter_ : int
    n_features_in_ : int

    Raises
    ------
    ValueError
        From ``fit``, ``predict``, ``transform`` and ``score``, for data whose squared distances
        summed over the samples could exceed the floating range (largest ``|x|`` above
        sqrt(max float / (16 n d)), about 1e151 for 200 points in 8 dimensions in float64):
        the iterations would compute with inf and NaN. K-means is scale-equivariant, so
        dividing the data by a constant gives the same labels.

    Notes
    -----
    Refit schedule: the thesis (Giffon 2020, §3.3.5.2) gives every refit Palm4MSA's full
    count (300 iterations, or a relative change below 1e-6). Each refit is warm-started at
    factors that fit the previous centroids, so while the assignment moves (more than
    ``sparsekit.cluster.quickmeans.SETTLED_FRACTION``, 2 %, of the labels changed since the
    previous iteration) a refit runs ``refit_iter`` iterations; once it has settled, and at
    the ``max_iter``-th iteration, ``palm_iter``. The global refinements of the hierarchical
    initialization also run ``refit_iter`` iterations, its splits ``palm_iter``. Measured
    (``benchmarks/README.md``, "QuicK-means refit schedule"): the final objective stays
    within 1 % of the thesis schedule's on digits and the 10⁵-point mixture; refits of
    ``refit_iter`` iterations throughout do not (the tests' blob mixtures), nor does a 0.2 %
    threshold (5 % above on one of them). ``refit_iter=None`` restores the thesis' schedule.
    """

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        n_factors: int | None = None,
        sparsity: int = 3,
        projection: str = "splincol",
        init: str | ArrayLike = "k-means++",
        max_iter: int = 50,
        tol: float = 1e-6,
        factorizer: str = "palm4msa",
        palm_iter: int = 300,
        refit_iter: int | None = 10,
        palm_tol: float = 1e-6,
        hierarchical_init: bool = True,
        center: bool = True,
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.n_factors = n_factors
        self.sparsity = sparsity
        self.projection = projection
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.factorizer = factorizer
        self.palm_iter = palm_iter
        self.refit_iter = refit_iter
        self.palm_tol = palm_tol
        self.hierarchical_init = hierarchical_init
        self.center = center
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.registry = registry

    # -- scikit-learn protocol -------------------------------------------------------------
    #: TransformerMixin: fitted once cluster_centers_ exists; scipy.sparse X is densified
    _fitted_attribute = "cluster_centers_"
    _accepts_sparse = True

    @property
    def _n_features_out(self):
        return self.cluster_centers_.shape[0]

    def _validate_X(self, X, fitting):
        if not fitting:
            self._check_is_fitted()
        # width and feature names recorded in fit and checked afterwards (TransformerMixin)
        X = self._validate_input(X, reset=fitting)
        if sp.issparse(X):
            X = X.toarray()
        _check_scale(X, type(self).__name__)
        return X

    def _params(self, n, d):
        K = check_scalar(
            self.n_clusters, "n_clusters", kind=numbers.Integral, low=1, low_inclusive=True
        )
        if K > n:
            raise ValueError(
                f"n_clusters={K} > n_samples={n}: need at least as many samples as "
                "clusters; lower n_clusters or pass more data"
            )
        proj = check_option(self.projection, "projection", ("splincol", "identity"))
        s = check_scalar(
            self.sparsity, "sparsity", kind=numbers.Integral, low=1, low_inclusive=True
        )
        if self.n_factors is None:
            Q = max(2, int(np.log2(max(K, d))))
        else:
            Q = check_scalar(
                self.n_factors, "n_factors", kind=numbers.Integral, low=1, low_inclusive=True
            )
        if proj == "splincol" and Q < 2:
            raise ValueError(
                "n_factors must be >= 2 with projection='splincol' (use "
                "projection='identity' for one unconstrained factor)"
            )
        max_iter = check_scalar(
            self.max_iter, "max_iter", kind=numbers.Integral, low=1, low_inclusive=True
        )
        palm_iter = check_scalar(
            self.palm_iter, "palm_iter", kind=numbers.Integral, low=1, low_inclusive=True
        )
        refit_iter = palm_iter
        if self.refit_iter is not None:
            refit_iter = check_scalar(
                self.refit_iter, "refit_iter", kind=numbers.Integral, low=1, low_inclusive=True
            )
        tol = check_scalar(self.tol, "tol", low=0.0, low_inclusive=True)
        palm_tol = check_scalar(self.palm_tol, "palm_tol", low=0.0, low_inclusive=True)
        return K, proj, min(s, min(K, d)), Q, max_iter, (palm_iter, refit_iter), tol, palm_tol

    def _constraints(self, K, d, Q, s, proj):
        """Factor constraints ``S_1 … S_Q`` and the hierarchical schedule (or None)."""
        A = min(K, d)
        shapes = [(K, A)] + [(A, A)] * (Q - 2) + [(A, d)] if Q >= 2 else [(K, d)]
        if proj == "identity":
            facts = [Identity(s_) for s_ in shapes]
            return facts, (facts[:-1], [Identity((A, d))] * (Q - 1)) if Q >= 2 else None
        hf, hr = hierarchical_constraints((K, d), Q, s)
        return hf + [hr[-1]], (hf, hr)

    def _initial_centroids(self, X, K, rng):
        init = self.init
        if isinstance(init, str):
            init = check_option(init, "init", ("k-means++", "random"))
            if init == "k-means++":
                return X[kmeans_plusplus(X, K, rng)].copy()
            return X[rng.choice(X.shape[0], K, replace=False)].copy()
        C = check_array(init, "init", dtype=X.dtype)
        if C.shape != (K, X.shape[1]):
            raise ValueError(
                f"init has shape {C.shape}; expected (n_clusters, n_features) = ({K}, {X.shape[1]})"
            )
        return C.copy()

    # -- fit ---------------------------------------------------------------------------------
    def fit(self, X: DataLike, y: object = None) -> QuicKMeans:
        """Cluster ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        self
            The fitted estimator.
        """
        X = self._validate_X(X, True)
        n, d = X.shape
        K, proj, s, Q, max_iter, (palm_iter, refit_iter), tol, palm_tol = self._params(n, d)
        factorizer = resolve(
            "factorizer",
            self.factorizer,
            {"n_iter": palm_iter, "tol": palm_tol},
            registry=self.registry,
        )
        if not hasattr(factorizer, "factorize"):
            raise TypeError(f"factorizer {self.factorizer!r} has no factorize method")
        if "keep_best" in factorizer.get_params():
            factorizer.set_params(keep_best=True)
        rng = check_random_state(self.random_state)
        dtype = X.dtype
        facts, schedule = self._constraints(K, d, Q, s, proj)
        with n_jobs_limit(self.n_jobs):
            U0 = self._initial_centroids(X, K, rng)
            mean = np.zeros(d, dtype=dtype)
            if self.center:
                mean = X.mean(axis=0, dtype=np.float64).astype(dtype)
                X = X - mean
                U0 = U0 - mean
            x_sq = np.einsum("ij,ij->i", X, X, dtype=np.float64)
            x_sq_total = float(x_sq.sum())
            if schedule is not None and self.hierarchical_init:
                factors, lam, *_ = hierarchical_dense(
                    U0,
                    *schedule,
                    n_iter=palm_iter,
                    n_iter_global=refit_iter,
                    tol=palm_tol,
                    safeguard=False,
                    update_way="right-to-left",
                )
            else:
                factors, lam, *_ = run_palm(
                    U0,
                    facts,
                    default_factors(facts, dtype),
                    1.0,
                    n_iter=palm_iter,
                    tol=palm_tol,
                    safeguard=False,
                    update_way="right-to-left",
                )
            V = self._operator(factors, lam, dtype)
            history = []
            g_prev = None
            it = 0
            state = (factors, lam, V)
            explore = None  # the refit's own last iterate, after a rejected refit
            previous = None
            for it in range(1, max_iter + 1):  # noqa: B007 (it counts the iterations after the loop)
                labels, _ = _assign(V, X, x_sq)
                settled = it == max_iter or (
                    previous is not None
                    and np.count_nonzero(labels != previous) <= SETTLED_FRACTION * n
                )
                previous = labels
                factorizer.set_params(n_iter=palm_iter if settled else refit_iter)
                counts = np.bincount(labels, minlength=K)
                step = None
                if (counts == 0).any():
                    # re-seeding can move a point far from its centroid; it is kept only when
                    # the objective still decreases (else the empty cluster gets weight 0)
                    step = self._update(
                        X,
                        x_sq_total,
                        *_lloyd.reseed_from_largest(X, labels, counts, V.toarray()),
                        state,
                        explore,
                        facts,
                        factorizer,
                    )
                    if g_prev is not None and step[1] > g_prev:
                        step = None
                if step is None:
                    step = self._update(
                        X, x_sq_total, labels, counts, state, explore, facts, factorizer
                    )
                state, g, explore = step
                V = state[2]
                history.append(g)
                # a rejected refit with a last iterate to go on from is not convergence
                if (
                    explore is None
                    and g_prev is not None
                    and (g_prev == 0 or abs(g_prev - g) <= tol * g_prev)
                ):
                    break
                g_prev = g
            labels, dist = _assign(V, X, x_sq)
        self.cluster_centers_ = V
        self.mean_ = mean
        self.labels_ = labels
        self.inertia_ = float(dist.sum(dtype=np.float64))
        self.objective_history_ = np.asarray(history)
        self.n_iter_ = it
        return self

    def _update(self, X, x_sq_total, labels, counts, state, explore, facts, factorizer):
        """Exact means, then the factor refit on ``D_√n U`` warm-started at ``explore`` (when
        given) or at the accepted ``state``, with the safeguard.

        Returns ``((factors, λ, V), g, explore)``: the accepted factors (the previous ones when
        the refit's weighted error ``‖D_√n (U − V)‖_F²`` is larger), the objective ``g``, and
        after a rejected refit that did not converge, its last iterate ``(factors, λ)`` for the
        next refit to start from (else None)."""
        factors, lam, V = state
        n, d = X.shape
        K = counts.size
        dtype = X.dtype
        sums = _lloyd.cluster_sums(X, labels, K, np.float64)[0]
        U = sums / np.maximum(counts, 1)[:, None]
        within = _within(X, x_sq_total, sums, counts, U, labels)
        U = U.astype(dtype)
        w = np.sqrt(counts / n).astype(dtype)
        target = w[:, None] * U
        e_prev = _weighted_error(target, w, V.toarray())
        cons = [Constant(np.diag(w))] + facts
        start, start_lam = explore if explore is not None else (factors, lam)
        res = factorizer.factorize(
            target, cons, init_factors=[np.diag(w)] + start, init_scale=start_lam
        )
        new = [S.toarray() for S in res.factors.factors[1:]]
        V_new = self._operator(new, res.factors.scale, dtype)
        e_new = _weighted_error(target, w, V_new.toarray())
        if e_new < e_prev:
            return (new, res.factors.scale, V_new), within + n * e_new, None
        # safeguard (Proposition 1): keep the previous factors; a refit stopped before its
        # tolerance goes on from its last iterate at the next iteration
        last = getattr(res, "extra", {}).get("last")
        if res.stop_reason == "tol":
            explore = None
        elif last is not None:
            explore = ([S.toarray() for S in last.factors[1:]], last.scale)
        else:
            explore = (new, res.factors.scale)
        return state, within + n * e_prev, explore

    @staticmethod
    def _operator(factors, lam, dtype):
        from ..linalg.sparse_factors import SparseFactors

        return SparseFactors([sp.csr_matrix(f) for f in factors], lam, dtype=dtype)

    # -- inference -------------------------------------------------------------------------
    def predict(self, X: DataLike) -> np.ndarray:
        """Assign each row of ``X`` to the nearest centroid of ``V``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        ndarray of int, shape (n_samples,)
            The index of the nearest centroid of ``V`` for each row.
        """
        X = self._validate_X(X, False)
        with n_jobs_limit(self.n_jobs):
            return _assign(self.cluster_centers_, X, mean=self.mean_, with_dist=False)[0]

    def transform(self, X: DataLike) -> np.ndarray:
        """Compute the Euclidean distances of the rows of ``X`` to the ``K`` centroids.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        ndarray of shape (n_samples, K)
            The Euclidean distances of the rows to the ``K`` centroids.
        """
        X = self._validate_X(X, False)
        V = self.cluster_centers_
        Vd = V.toarray()
        norms = np.einsum("ij,ij->i", Vd, Vd) + 2 * (Vd @ self.mean_)
        Xc = X - self.mean_
        with n_jobs_limit(self.n_jobs):
            D2 = (V @ X.T).T
        D2 *= -2
        D2 += norms[None, :].astype(D2.dtype)
        D2 += np.einsum("ij,ij->i", Xc, Xc)[:, None]
        return self._wrap_output(np.sqrt(np.maximum(D2, 0)).astype(X.dtype, copy=False), X)

    def score(self, X: DataLike, y: object = None) -> float:
        """Score ``X``: the opposite of its K-means objective with the fitted centroids.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        float
            The opposite of the K-means objective of ``X`` with the fitted centroids.
        """
        X = self._validate_X(X, False)
        with n_jobs_limit(self.n_jobs):
            _, dist = _assign(self.cluster_centers_, X, mean=self.mean_)
        return -float(dist.sum(dtype=np.float64))


#: the within-cluster sum comes from the identity below when it is at least this fraction of
#: ``Σ_n ‖x_n‖²`` (at most six digits cancel); below, from a pass over ``X``
WITHIN_IDENTITY_MIN = 1e-6


def _within(X, x_sq_total, sums, counts, U, labels):
    """``Σ_n ‖x_n − u_{t_n}‖²`` in float64, with ``u_k = s_k / n_k`` the mean of cluster ``k``.

    ``Σ_n ‖x_n − u_{t_n}‖² = Σ_n ‖x_n‖² − Σ_k ‖s_k‖² / n_k`` (the cross terms of each cluster
    sum to ``−2 n_k ‖u_k‖²``), from ``x_sq_total = Σ_n ‖x_n‖²`` and the cluster sums ``s_k``:
    no pass over ``X``. The subtraction cancels about ``log10(Σ_n ‖x_n‖² / within)`` digits;
    when that ratio exceeds ``1 / WITHIN_IDENTITY_MIN`` (tight clusters far from the origin)
    the sum is taken exactly, one compiled pass over ``X``."""
    full = counts > 0
    between = float(np.einsum("ij,ij->i", sums[full], sums[full]) @ (1.0 / counts[full]))
    within = x_sq_total - between
    if within >= WITHIN_IDENTITY_MIN * x_sq_total:
        return within
    return float(
        within_cluster_sum(
            X,
            np.ascontiguousarray(U, dtype=np.float64),
            np.ascontiguousarray(labels, dtype=np.int64),
        )
    )


def _weighted_error(target, w, V):
    D = target - w[:, None] * V
    return float(np.vdot(D, D))


def _check_scale(X, name):
    """Refuse data whose K-means sums could overflow: the objective adds n squared distances
    of up to d (2 max|x|)^2 each (after centring), and a margin of 4 covers the other sums."""
    n, d = X.shape
    amax = max(float(X.max()), -float(X.min())) if X.size else 0.0  # no |X| temporary
    limit = float(np.sqrt(np.finfo(X.dtype).max / (16.0 * max(n, 1) * d)))
    if amax > limit:
        raise ValueError(
            f"{name}: X is too large for {X.dtype} arithmetic (largest |x| = {amax:.3g}; its "
            f"squared distances summed over {n} samples need largest |x| <= {limit:.3g}), so "
            "the K-means sums would overflow to inf; divide X by a constant (e.g. its largest "
            "absolute value): K-means is scale-equivariant, the labels stay the same"
        )


__all__ = ["QuicKMeans", "kmeans_plusplus"]
