"""Kernel k-means on Nyström features of a chunked array.

The same algorithm as :class:`sparsekit.KernelKMeans` with ``method="nystrom"`` (see its module
for the objective, the seeding and Lloyd's loop), scheduled as follows:

- landmarks: :func:`~sparsekit.dask.nystroem_fit` (chunk by chunk for a sampler with
  ``sample_chunked``, such as uniform; any other sampler, such as the ``"greedy-trace"`` of
  the kernel k-means poster, on one worker);
- features z_i = φ(x_i), ‖z_i‖² and k(x_i, x_i) chunk by chunk, the fitted map sent once; the
  features stay on the workers (``persist=True``) or are recomputed at every pass;
- seeding, Lloyd's loop and the empty-cluster repair are those of
  :mod:`sparsekit.cluster._lloyd`;
- k-means++ seeding: the squared distances of every point to the 2 + ⌊ln k⌋ candidates of a
  step come back to the client (8 (2 + ⌊ln k⌋) bytes per point), which draws as in memory;
- each Lloyd step is one pass over the chunks: with the centres C (k × s, sent once), a chunk
  returns its objective, its reassigned labels (kept on its worker), how many changed, and the
  per-cluster sums and counts of its new labels; the client adds these up into the next
  centres. An empty cluster (rare) brings the labels and own distances to the client once.
  The fitted centres are those of the last step, which ``labels_`` is the assignment to and
  ``inertia_`` is measured against (the rule of the in-memory fit, stated in its module).

For the same ``random_state`` the labels, inertia and centres equal those of
``KernelKMeans(method="nystrom", ...).fit(X)`` (sums over chunks round differently from one
sum over all rows: equal to about 1e-12 relative).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._runtime.small_blas import is_skinny, one_blas_thread
from .._validation import check_option, check_random_state
from ..cluster._lloyd import (
    best_of_inits,
    centres,
    cluster_sums,
    fix_empty,
    nearest,
    reassign,
    sq_dists,
)
from ..cluster.kernel_kmeans import INITS, KernelKMeans, warn_distinct
from ..components import resolve
from ._checks import _dask_array, check_block, check_chunked, frozen_kernel
from ._heap import chunk_task

if TYPE_CHECKING:
    import dask.array as da
    from numpy.typing import ArrayLike

    from .._typing import RandomStateLike
    from ..registry import Registry


@chunk_task
def _features_chunk(block, ny, d):
    """(z, ‖z‖², (Σ‖z‖², Σ k(x, x))) of one chunk, in float64 as the in-memory fit."""
    Xp = ny.kernel_.prepare(check_block(block, d))
    Z = np.asarray(ny.transform(Xp), dtype=np.float64)
    zsq = np.einsum("ij,ij->i", Z, Z)
    diag = float(np.sum(ny.kernel_.diag(Xp), dtype=np.float64))
    return Z, zsq, (float(zsq.sum()), diag)


@chunk_task
def _distances_chunk(Z, zsq, C):
    with one_blas_thread(is_skinny(len(C))):
        return sq_dists(Z, zsq, C)


@chunk_task
def _step_chunk(Z, zsq, labels, C, k):
    """One Lloyd pass over a chunk with centres C.

    ``labels=None`` assigns the closest centre (the seeds' step). Returns the new labels, their
    squared distances, and (objective of ``labels``, number changed, objective of the new labels,
    per-cluster sums and counts of the new labels).
    """
    with one_blas_thread(is_skinny(k)):
        D = sq_dists(Z, zsq, C)
    rows = np.arange(D.shape[0])
    if labels is None:
        new, obj, changed = np.argmin(D, axis=1), float("nan"), 0
    else:
        new = reassign(D, labels)
        obj, changed = float(D[rows, labels].sum()), int(np.count_nonzero(new != labels))
    own = D[rows, new]
    sums, counts = cluster_sums(Z, new, k)
    return new, own, (obj, changed, float(own.sum()), sums, counts)


@chunk_task
def _nearest_chunk(Z, zsq, C):
    """The closest centres of a chunk as the in-memory fit labels its points
    (:func:`sparsekit.cluster._lloyd.nearest`), with their objective and counts."""
    with one_blas_thread(is_skinny(len(C))):
        D = sq_dists(Z, zsq, C)
    labels = nearest(D, zsq, np.einsum("ij,ij->i", C, C))
    own = D[np.arange(D.shape[0]), labels]
    return labels, (float(own.sum()), np.bincount(labels, minlength=len(C)))


@chunk_task
def _sums_chunk(Z, labels, k):
    return cluster_sums(Z, labels, k)


def _node(value):
    """One graph node holding ``value`` (sent once to each worker that needs it)."""
    import dask

    return dask.delayed(value, pure=True, traverse=False)


class _ChunkedLloyd:
    """Lloyd's steps over chunks of features (the protocol of
    :func:`sparsekit.cluster._lloyd.lloyd`). Labels are lists of per-chunk delayed objects held
    by the workers; ``sums``/``counts`` are those of the latest labels, ``last_centres`` the
    centres of the latest step (those the latest labels were assigned to)."""

    def __init__(self, Z, zsq, sizes, C0, k):
        self.Z, self.zsq, self.sizes, self.k = Z, zsq, sizes, k
        self.last_centres = C0
        self._pass(C0, [None] * len(Z))

    def _pass(self, C, labels):
        import dask

        C = _node(C)
        res = dask.persist(
            *[
                _delayed(_step_chunk)(z, q, lab, C, self.k)
                for z, q, lab in zip(self.Z, self.zsq, labels)
            ]
        )
        stats = dask.compute(*[r[2] for r in res])
        self.labels = [r[0] for r in res]
        self.own = [r[1] for r in res]
        self.sums = sum(s[3] for s in stats)
        self.counts = sum(s[4] for s in stats)
        return (sum(s[0] for s in stats), sum(s[1] for s in stats), sum(s[2] for s in stats))

    def start(self):
        return self.labels

    def fix_empty(self, labels):
        import dask

        if np.all(self.counts > 0):
            return labels
        flat = np.concatenate(dask.compute(*labels))
        own = np.concatenate(dask.compute(*self.own))
        flat, _ = fix_empty(flat, own, self.k)
        cuts = np.cumsum(self.sizes)[:-1]
        self.labels = list(dask.persist(*[_node(part) for part in np.split(flat, cuts)]))
        sums = dask.compute(
            *[_delayed(_sums_chunk)(z, lab, self.k) for z, lab in zip(self.Z, self.labels)]
        )
        self.sums = sum(s[0] for s in sums)
        self.counts = sum(s[1] for s in sums)
        return self.labels

    def step(self, labels):
        self.last_centres = centres(self.sums, self.counts)
        obj, changed, obj_new = self._pass(self.last_centres, labels)
        return obj, self.labels, changed == 0, obj_new


def _delayed(f):
    import dask

    return dask.delayed(f, pure=True)


def _rows(parts, sizes, idx):
    """Rows ``idx`` (global indices) of the row-chunked pieces ``parts``, in the order of idx."""
    import dask

    starts = np.concatenate([[0], np.cumsum(sizes)])
    which = np.searchsorted(starts, idx, side="right") - 1
    chunks = sorted(set(which.tolist()))
    got = dask.compute(
        *[_delayed(np.take)(parts[c], idx[which == c] - starts[c], axis=0) for c in chunks]
    )
    out = np.empty((len(idx),) + got[0].shape[1:], dtype=got[0].dtype)
    for c, rows in zip(chunks, got):
        out[which == c] = rows
    return out


def kernel_kmeans_fit(
    Xd: da.Array,
    n_clusters: int = 8,
    *,
    kernel: str | object = "rbf",
    sampler: str | object = "uniform",
    n_landmarks: int | None = None,
    n_init: int = 3,
    init: str | ArrayLike = "k-means++",
    max_iter: int = 300,
    tol: float = 1e-6,
    kernel_params: dict[str, Any] | None = None,
    sampler_params: dict[str, Any] | None = None,
    random_state: RandomStateLike = None,
    persist: bool = True,
    registry: Registry | None = None,
) -> KernelKMeans:
    """Fit a :class:`sparsekit.KernelKMeans` (Nyström method) on a chunked array.

    The method is ``"nystrom"``: the exact method needs the n × n Gram matrix.

    Parameters
    ----------
    Xd : dask array of shape (n, d)
        The data, chunked by rows.
    n_clusters : int, default 8
        As for :class:`~sparsekit.cluster.kernel_kmeans.KernelKMeans`.
    kernel : str or kernel object, default "rbf"
        As for ``KernelKMeans`` (data-dependent bandwidths resolved beforehand).
    sampler : str or sampler object, default "uniform"
        As for ``KernelKMeans``.
    n_landmarks : int, optional
        As for ``KernelKMeans``.
    n_init : int, default 3
        As for ``KernelKMeans``.
    init : {"k-means++", "random"} or array of k sample indices, default "k-means++"
        As for ``KernelKMeans``.
    max_iter : int, default 300
        As for ``KernelKMeans``.
    tol : float >= 0, default 1e-6
        As for ``KernelKMeans``.
    kernel_params, sampler_params : dict, optional
        Parameters of the named kernel / sampler.
    random_state : None, int or numpy.random.Generator
        As for ``KernelKMeans``.
    persist : bool, default True
        Keep the features (n × ``n_landmarks`` float64) in the workers' memory between Lloyd
        steps, or recompute them from ``Xd`` at every step when they do not fit.
    registry : Registry, optional
        Where kernel and sampler names are resolved (default: the process-wide registry).

    Returns
    -------
    KernelKMeans
        Fitted as in memory (``nystroem_``, ``cluster_centers_``, ``inertia_``,
        ``residual_trace_``, ``n_iter_``; ``predict``/``transform`` work on NumPy input), with
        ``labels_`` a lazy dask array chunked as the rows of ``Xd``.
    """
    import dask

    from .nystrom import nystroem_fit

    da = _dask_array()
    est = KernelKMeans(
        n_clusters,
        kernel=kernel,
        sampler=sampler,
        n_landmarks=n_landmarks,
        n_init=n_init,
        method="nystrom",
        init=init,
        max_iter=max_iter,
        tol=tol,
        kernel_params=kernel_params,
        sampler_params=sampler_params,
        random_state=random_state,
        registry=registry,
    )
    k = est._validate_params()
    Xd = check_chunked(Xd, "X")
    n, d = Xd.shape
    if n < k:
        raise ValueError(f"n_samples={n} should be >= n_clusters={k}; ask for at most {n} clusters")
    kernel_obj = frozen_kernel(resolve("kernel", kernel, kernel_params, registry=registry), d)
    given = est._init_indices(n, k)
    rng = check_random_state(random_state)
    ny = nystroem_fit(
        Xd,
        kernel_obj,
        resolve("sampler", sampler, sampler_params, registry=registry),
        est._landmark_count(n),
        random_state=rng,
        registry=registry,
    )

    sizes = [int(c) for c in Xd.chunks[0] if c > 0]
    blocks = [b for b, c in zip(Xd.to_delayed().ravel(), Xd.chunks[0]) if c > 0]
    shared = _node(ny)
    feats = [_delayed(_features_chunk)(b, shared, d) for b in blocks]
    if persist:
        feats = list(dask.persist(*feats))
    Z, zsq = [f[0] for f in feats], [f[1] for f in feats]
    totals = dask.compute(*[f[2] for f in feats])
    zsq_total = sum(t[0] for t in totals)
    diag_total = sum(t[1] for t in totals)

    def sqdist_to(idx):
        C = _node(_rows(Z, sizes, np.asarray(idx)))
        return np.concatenate(
            dask.compute(*[_delayed(_distances_chunk)(z, q, C) for z, q in zip(Z, zsq)])
        )

    init_rule = init if given is not None else check_option(init, "init", INITS)
    # one BLAS thread for the chunks' skinny products, also where they run on this process's
    # threads (each chunk task takes the same limit for workers in other processes)
    with one_blas_thread(is_skinny(k)):
        _, _, n_iter, steps = best_of_inits(
            n,
            k,
            init_rule,
            given,
            int(n_init),
            rng,
            sqdist_to,
            lambda seeds: _ChunkedLloyd(Z, zsq, sizes, _rows(Z, sizes, np.asarray(seeds)), k),
            int(max_iter),
            float(tol),
        )
        # the closest centres, ties up to rounding to the lowest index, as in memory
        C = _node(steps.last_centres)
        res = dask.persist(*[_delayed(_nearest_chunk)(z, q, C) for z, q in zip(Z, zsq)])
        stats = dask.compute(*[r[1] for r in res])
    labels = [r[0] for r in res]
    obj = sum(s[0] for s in stats)
    warn_distinct(sum(s[1] for s in stats))

    est.kernel_ = ny.kernel_
    est.method_ = "nystrom"
    est.nystroem_ = ny
    est.n_features_in_ = d
    est.residual_trace_ = max(diag_total - zsq_total, 0.0)
    est.labels_ = da.concatenate(
        [da.from_delayed(lab, (size,), np.int64) for lab, size in zip(labels, sizes)]
    )
    est.n_iter_ = n_iter
    est.cluster_centers_ = steps.last_centres
    est.inertia_ = obj + est.residual_trace_
    return est


__all__ = ["kernel_kmeans_fit"]
