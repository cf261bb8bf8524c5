"""Lloyd's k-means, shared by kernel k-means (in memory and on Dask) and QuicK-means.

One module for the steps every k-means of the package takes; the compiled loops it calls are
in :mod:`sparsekit.cluster._cpu`.

- **Seeding** (:func:`kmeans_plusplus`): k-means++ (Arthur & Vassilvitskii, "k-means++: the
  advantages of careful seeding", SODA 2007). The first centre is a uniform sample; each next
  one is drawn with probability D(x)² / Σ_y D(y)², D(x) the distance of x to its closest
  centre so far ("D² sampling"). As in the greedy variant that the paper's authors describe and
  scikit-learn implements, each step draws ``2 + ⌊ln k⌋`` candidates by D² sampling and keeps
  the one that lowers the potential Σ_x D(x)² most. Points at distance 0 (the centres, their
  duplicates) have probability 0 and are never drawn; when every point coincides with a
  centre, the next one is a uniform draw among the indices not chosen yet, so the k seeds are
  always k distinct samples.
- **Lloyd's steps** (:func:`lloyd` on a backend such as :class:`DenseLloyd`): assign every
  point to its closest centre, move the centres to the means of their clusters, until no label
  changes, the objective decreases by at most ``tol`` times its value, or after ``max_iter``
  centre updates (scikit-learn's count). A tie keeps the current label (:func:`reassign`), so
  the loop cannot cycle on ties.
- **What the fit reports** (scikit-learn's rule for ``KMeans``): the loop ends with an
  assignment step against the last centres, so that the labels are the nearest-centre
  partition of the centres reported and the objective is that of these labels against these
  centres (``inertia_ == -score(X_train)``). The backend keeps the labels whose means are
  these centres (``centre_labels``): they equal the final labels once Lloyd has converged, and
  differ when ``tol`` or ``max_iter`` stops it first.
- **Empty clusters** (:func:`fix_empty`): the points farthest from their centre move into the
  empty clusters, never emptying another one; QuicK-means' rule, which re-seeds from the
  largest cluster (:func:`reseed_from_largest`), is the reference implementation's.
- **Restarts** (:func:`best_of_inits`): Lloyd from ``n_init`` seedings, keeping the lowest
  objective.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ._cpu import cluster_sums as _cluster_sums_loop

__all__ = [
    "kmeans_plusplus",
    "fix_empty",
    "reseed_from_largest",
    "reassign",
    "nearest",
    "DenseLloyd",
    "lloyd",
    "best_of_inits",
    "cluster_sums",
    "centres",
    "means",
    "sq_dists",
]


# -- seeding ---------------------------------------------------------------------------------
def kmeans_plusplus(
    n: int,
    k: int,
    sqdist_to: Callable[[np.ndarray], np.ndarray],
    rng: np.random.Generator,
    n_trials: int | None = None,
) -> np.ndarray:
    """Greedy k-means++ seeding (Arthur & Vassilvitskii 2007): indices of k distinct samples.

    Parameters
    ----------
    n, k : int
        Number of samples and of seeds (``1 <= k <= n``).
    sqdist_to : callable
        ``sqdist_to(idx)`` -> (n, len(idx)) squared distances of every sample to the samples
        ``idx`` (negative values from rounding are read as 0).
    rng : numpy.random.Generator
    n_trials : int, optional
        Candidates drawn per seed; default ``2 + ⌊ln k⌋`` (scikit-learn's); 1 is the plain
        k-means++ of the paper.

    Returns
    -------
    ndarray of int64, shape (k,)
        The first index is uniform; each next one is the candidate, drawn with probability
        ``D(x)² / Σ D²`` (D: distance to the closest seed so far), that minimises
        ``Σ_x min(D(x)², ‖x − candidate‖²)``.
    """
    if n_trials is None:
        n_trials = 2 + int(math.log(k))
    seeds = [int(rng.integers(n))]
    closest = _rows(sqdist_to(np.array(seeds)))[0]
    total = closest.sum()  # the potential Σ_x D(x)²
    for _ in range(1, k):
        if total <= 0:  # every point coincides with a seed: any index not chosen yet will do
            rest = np.setdiff1d(np.arange(n), seeds)
            seeds.append(int(rng.choice(rest)))
            continue
        # D² sampling by inversion of the cumulative sum (Generator.choice(p=...) without its
        # O(n) checks of p): with side="right" a point of weight 0 is never returned; a
        # uniform times the total can round up to the total only when it is subnormal, and
        # then it goes to the last point of positive weight instead of past the end
        cdf = np.cumsum(closest)
        cand = np.searchsorted(cdf, rng.random(n_trials) * cdf[-1], side="right")
        if cand.max() >= n:
            cand = np.minimum(cand, np.flatnonzero(closest)[-1])
        D = _rows(sqdist_to(cand))
        D = np.minimum(closest[None, :], D, out=D)  # each candidate's D² after adding it
        pots = D.sum(axis=1)
        best = int(np.argmin(pots))
        seeds.append(int(cand[best]))
        closest, total = D[best], pots[best]
    return np.asarray(seeds, dtype=np.int64)


def _rows(D):
    """The (n, t) distances ``D`` as a C-contiguous (t, n) float64 array, clipped at 0: one row
    per candidate, so that the potentials sum along contiguous rows (for a transposed view, as
    :func:`sq_dists` returns, the transpose costs no copy)."""
    return np.maximum(np.ascontiguousarray(np.asarray(D).T, dtype=np.float64), 0.0)


# -- empty clusters and ties ------------------------------------------------------------------
def fix_empty(labels: np.ndarray, own: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """Move the points farthest from their centre into the empty clusters.

    ``own[i]`` is the squared distance of point i to the centre of its cluster ``labels[i]``.
    A point moves only out of a cluster that keeps at least one point. Returns the new labels
    (a copy when any moved; ``labels`` is not changed) and the number of points moved.
    """
    counts = np.bincount(labels, minlength=k)
    empty = np.flatnonzero(counts == 0)
    if empty.size == 0:
        return labels, 0
    labels = labels.copy()
    far = np.argsort(-own, kind="stable")
    moved = 0
    for j in empty:
        for i in far:
            if counts[labels[i]] > 1:
                counts[labels[i]] -= 1
                labels[i] = j
                counts[j] = 1
                moved += 1
                far = far[far != i]
                break
    return labels, moved


def reseed_from_largest(
    X: np.ndarray, labels: np.ndarray, counts: np.ndarray, V: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Give each empty cluster c the point of the largest cluster farthest from ``V[c]``.

    QuicK-means' repair (the reference implementation of Giffon et al.; the thesis is silent).
    Returns new ``(labels, counts)``; the inputs are not changed.
    """
    labels = labels.copy()
    counts = counts.copy()
    for c in np.flatnonzero(counts == 0):
        big = int(np.argmax(counts))
        members = np.flatnonzero(labels == big)
        far = members[int(np.argmax(np.sum((X[members] - V[c]) ** 2, axis=1)))]
        labels[far] = c
        counts[big] -= 1
        counts[c] = 1
    return labels, counts


def reassign(D: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The closest centre of every row of D (n, k), keeping ``labels[i]`` where it ties with
    the minimum, so that Lloyd's loop cannot cycle on ties."""
    rows = np.arange(D.shape[0])
    new = np.argmin(D, axis=1)
    return np.where(D[rows, labels] <= D[rows, new], labels, new)


def nearest(
    D: np.ndarray, row_sq: np.ndarray, col_sq: np.ndarray, rtol: float = 1e-9
) -> np.ndarray:
    """The closest centre of every row of D (n, k); of centres whose distances tie up to
    rounding, the lowest index.

    The labels a fit reports and the centres ``predict`` picks for new points, so that both
    agree although they compute the distances in different orders: centres that tie up to
    rounding (duplicate points split over several clusters) give the lowest index, as the
    first minimum of scikit-learn's ``KMeans`` does for exact ties.

    Parameters
    ----------
    D : ndarray of shape (n, k)
        Squared distances ``‖x_i − c_j‖²``, computed as ``‖x_i‖² − 2⟨x_i, c_j⟩ + ‖c_j‖²``.
    row_sq, col_sq : ndarray of shape (n,) and (k,)
        The squared norms ``‖x_i‖²`` and ``‖c_j‖²`` (upper bounds will do).
    rtol : float, default 1e-9
        Width of a tie relative to these norms.

    Returns
    -------
    ndarray of int, shape (n,)

    Notes
    -----
    Centre j ties with the closest centre m of row i when
    ``D[i, j] − D[i, m] <= rtol (‖x_i‖² + ‖c_j‖² + ‖c_m‖²)``. The rounding error of a distance
    so computed grows with the norms, not with the distance: a sum of m terms is off by up to
    about ``(m − 1) u Σ|terms|`` (Higham, *Accuracy and Stability of Numerical Algorithms*,
    2nd ed., 2002, §4.2), and a centre is a sum over its cluster; ``rtol = 1e-9`` covers
    clusters of a few million points. A tie measured relative to the row's largest distance,
    as before, grew with the farthest centre: a cluster 1e6 away made distances 900 and 0.1
    a tie.
    """
    D = np.asarray(D)
    m = np.argmin(D, axis=1)
    rows = np.arange(D.shape[0])
    scale = (row_sq + col_sq[m])[:, None] + col_sq[None, :]
    near = D <= D[rows, m][:, None] + rtol * scale
    return np.argmax(near, axis=1)


# -- cluster statistics -----------------------------------------------------------------------
def cluster_sums(
    Z: np.ndarray, labels: np.ndarray, k: int, dtype=None
) -> tuple[np.ndarray, np.ndarray]:
    """Sums (k, s) and counts (k,) of the rows of Z per cluster, in ``dtype`` (default: Z's).

    Sums over row blocks add up to the sums of the whole (the chunked Lloyd step). A compiled
    scatter-add by label (no BLAS, no one-hot matrix): the product of an (n, k) one-hot matrix
    with Z is a skinny GEMM, which multi-threaded BLAS runs 100x slower than idle while another
    process holds a core (its threads wait for each other at every step). With
    ``dtype=np.float64`` a float32 Z is summed in float64 without a float64 copy of Z.
    """
    Z = np.ascontiguousarray(Z)
    dtype = Z.dtype if dtype is None else np.dtype(dtype)
    labels = np.ascontiguousarray(labels, dtype=np.intp)
    counts = np.bincount(labels, minlength=k).astype(dtype)
    return _cluster_sums_loop(Z, labels, np.empty((k, Z.shape[1]), dtype=dtype)), counts


def centres(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Cluster means from per-cluster sums and counts (an empty cluster's mean is 0)."""
    return sums / np.maximum(counts, 1.0)[:, None]


def means(Z: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """Cluster means (k, s) of the rows of Z."""
    return centres(*cluster_sums(Z, labels, k))


def sq_dists(Z: np.ndarray, zsq: np.ndarray, C: np.ndarray) -> np.ndarray:
    """‖z_i − c_j‖² (n, k) from the rows of Z, their squared norms ``zsq`` and centres C,
    clipped at 0."""
    # (C Zᵀ)ᵀ: BLAS streams the tall Z once with the small C as the left operand (about 2x
    # faster than Z Cᵀ for k << s on OpenBLAS)
    D = (C @ Z.T).T
    D *= -2.0
    D += zsq[:, None]
    D += np.einsum("ij,ij->i", C, C)[None, :]
    return np.maximum(D, 0.0)


# -- Lloyd's loop -----------------------------------------------------------------------------
class DenseLloyd:
    """Lloyd's steps on distances held in memory.

    ``D0`` (n, k): squared distances to the seeds; ``distances(labels)`` -> (n, k) squared
    distances to the centres of the clusters ``labels``. After :func:`lloyd`,
    ``centre_labels`` are the labels whose centres the final labels were assigned to.
    """

    def __init__(self, D0: np.ndarray, distances: Callable[[np.ndarray], np.ndarray], k: int):
        self.D, self.distances, self.k = D0, distances, k
        self.centre_labels: np.ndarray | None = None

    def start(self) -> np.ndarray:
        return np.argmin(self.D, axis=1)

    def fix_empty(self, labels: np.ndarray) -> np.ndarray:
        return fix_empty(labels, self.D[np.arange(len(labels)), labels], self.k)[0]

    def step(self, labels: np.ndarray) -> tuple[float, np.ndarray, bool, float]:
        self.D = D = self.distances(labels)
        self.centre_labels = labels
        rows = np.arange(len(labels))
        new = reassign(D, labels)
        return (
            float(D[rows, labels].sum()),
            new,
            bool(np.array_equal(new, labels)),
            float(D[rows, new].sum()),
        )


def lloyd(steps, max_iter: int, tol: float) -> tuple[np.ndarray, float, int]:
    """Lloyd's iterations on a backend; returns ``(labels, objective, n_iter)``.

    ``steps`` (:class:`DenseLloyd`, or the chunked one of :mod:`sparsekit.dask.cluster`)
    provides ``start()`` (the labels of the seeds), ``fix_empty(labels)`` and ``step(labels)``
    -> (objective of ``labels`` against the centres they define, reassigned labels, whether
    none changed, objective of the reassigned labels against the same centres).

    Iteration t moves the centres to the means of the labels and reassigns every point, so
    ``max_iter`` bounds the centre updates, as in scikit-learn's ``KMeans`` (whose iteration
    is the same pair of steps starting from the assignment to the seeds). The returned labels
    are those of the last assignment and the objective is theirs against the centres they were
    assigned to (module docstring): the backend keeps these centres for the fitted model.
    ``n_iter`` counts the iterations as scikit-learn does: the centre updates made, plus one
    when Lloyd converged before ``max_iter`` (scikit-learn's last iteration reassigns the
    points, finds no label changed, and moves no centre).
    """
    labels = steps.start()
    prev = np.inf
    for n_iter in range(1, max_iter + 1):
        labels = steps.fix_empty(labels)
        obj, new, unchanged, obj_new = steps.step(labels)
        if unchanged:
            return new, obj_new, min(n_iter + 1, max_iter)
        if np.isfinite(prev) and prev - obj <= tol * abs(prev):
            break
        labels, prev = new, obj
    return new, obj_new, n_iter


def best_of_inits(
    n, k, init, given, n_init, rng, sqdist_to, lloyd_from_seeds, max_iter, tol, n_trials=None
):
    """Lloyd from ``n_init`` seedings; ``(objective, labels, n_iter, steps)`` of the best.

    ``init`` is ``"k-means++"`` (:func:`kmeans_plusplus` with ``n_trials`` candidates per
    seed) or ``"random"`` (k distinct samples); ``given`` (k sample indices or None) overrides
    it, and then one run is made. ``lloyd_from_seeds(seeds)`` builds the backend of one run.
    """
    best = None
    for _ in range(n_init):
        if given is not None:
            seeds = given
        elif init == "random":
            seeds = rng.choice(n, k, replace=False)
        else:
            seeds = kmeans_plusplus(n, k, sqdist_to, rng, n_trials)
        steps = lloyd_from_seeds(seeds)
        labels, obj, n_iter = lloyd(steps, max_iter, tol)
        if best is None or obj < best[0]:
            best = (obj, labels, n_iter, steps)
        if given is not None:
            break
    return best
