"""Samples for the MMD estimators: input checks, pooling, support identities.

Every estimator takes samples (2-D arrays of vectors, or sequences of graphs for a graph kernel)
and a kernel by name, object or function (resolved by :func:`sparsekit.components.resolve`).
The samples are validated and prepared once, as one pooled set
(so a graph kernel aligns all their features together), and addressed by index ranges.
"""

from __future__ import annotations

import copy
import math
import numbers

import numpy as np

from .._validation import looks_like_graphs as _looks_like_graphs
from ..samplers.base import check_n_landmarks


def default_n_landmarks(n: int) -> int:
    """s = max(1, round(ln n)): the approximation budget of the three-sample experiments.

    Cherfaoui's thesis (Ch. 4, §4.6) sets s = log(n) for the block, Nyström and random-feature
    estimators so that all cost Θ(n log n); it states neither the base nor the rounding. We take
    the natural log, rounded to the nearest integer and at least 1, with n the size of the
    largest compared sample (the thesis's per-sample n).
    """
    return max(1, int(round(math.log(max(int(n), 1)))))


def kernel_name(kernel) -> str:
    return getattr(kernel, "name", type(kernel).__name__)


def _check_kind(kernel, X, name):
    kind = getattr(kernel, "accepts", "vectors")
    if kind == "vectors" and _looks_like_graphs(X):
        raise TypeError(
            f"kernel {kernel_name(kernel)!r} takes vectors (a 2-D array) but {name} is a "
            "sequence of graphs; use a graph kernel such as 'shortest-path'"
        )
    if kind == "graphs" and (isinstance(X, np.ndarray) and X.ndim == 2 or hasattr(X, "iloc")):
        raise TypeError(
            f"kernel {kernel_name(kernel)!r} takes graphs (a sequence of adjacency matrices, "
            f"(adjacency, labels) pairs or networkx graphs) but {name} is a 2-D array of "
            "vectors; use a vector kernel such as 'rbf'"
        )
    return kind


class Pooled:
    """Several samples validated, prepared by one kernel and pooled.

    Attributes
    ----------
    kernel : the kernel object (a data-dependent bandwidth resolved on the pool and frozen)
    data : the pooled prepared data (an array for vector kernels)
    sizes : tuple of int
    offsets : int64 array, sample i occupies rows offsets[i]:offsets[i + 1]
    """

    def __init__(self, samples, kernel, names=None):
        if getattr(kernel, "name", None) == "precomputed":
            raise ValueError(
                "kernel='precomputed' cannot compare samples: the MMD estimators evaluate the "
                "kernel between the pooled samples; give a kernel name, object or function"
            )
        if names is None:
            names = [f"sample {i}" for i in range(len(samples))]
        kind = None
        for X, name in zip(samples, names):
            kind = _check_kind(kernel, X, name)
        if kind == "graphs":
            parts = []
            for X, name in zip(samples, names):
                graphs = list(X) if not type(X).__name__ == "ShortestPathFeatures" else X
                if isinstance(graphs, list) and len(graphs) == 0:
                    raise ValueError(f"{name} is empty; each sample needs at least one graph")
                parts.append(graphs)
            if any(not isinstance(p, list) for p in parts):
                raise TypeError("give graph samples as sequences of graphs, not prepared sets")
            sizes = [len(p) for p in parts]
            data = kernel.prepare([g for p in parts for g in p])
        else:
            arrays = [_prepare_vectors(kernel, X, name) for X, name in zip(samples, names)]
            d = arrays[0].shape[1]
            for A, name in zip(arrays[1:], names[1:]):
                if A.shape[1] != d:
                    raise ValueError(
                        f"{names[0]} has {d} features but {name} has {A.shape[1]}; the samples "
                        "must have the same number of columns"
                    )
            dtype = np.result_type(*[A.dtype for A in arrays])
            sizes = [A.shape[0] for A in arrays]
            data = (
                arrays[0] if len(arrays) == 1 else np.concatenate(arrays).astype(dtype, copy=False)
            )
        self.kind = kind
        self.sizes = tuple(int(s) for s in sizes)
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.int64)
        self.data = data
        self.kernel = freeze_bandwidth(kernel, data)

    @classmethod
    def from_prepared(cls, kernel, data, sizes, kind="vectors"):
        """A pool of data already prepared by ``kernel`` (samples of ``sizes`` in order)."""
        pool = cls.__new__(cls)
        pool.kernel, pool.data, pool.kind = kernel, data, kind
        pool.sizes = tuple(int(s) for s in sizes)
        pool.offsets = np.concatenate([[0], np.cumsum(pool.sizes)]).astype(np.int64)
        return pool

    @property
    def n(self) -> int:
        return int(self.offsets[-1])

    def rows(self, r0: int, r1: int):
        """Prepared rows r0:r1 of the pool."""
        return take_rows(self.kernel, self.data, r0, r1)

    def part(self, i: int):
        """Prepared sample i."""
        return self.rows(int(self.offsets[i]), int(self.offsets[i + 1]))


def _as_named(X, name, kernel):
    """Run the kernel's array check with the sample's name in its messages."""
    from .._validation import check_array

    return check_array(X, name, nonnegative=getattr(kernel, "nonnegative", False))


def _prepare_vectors(kernel, X, name):
    """Sample ``X`` checked (errors name it) and prepared by the vector ``kernel``.

    The check is the one :meth:`VectorKernel.prepare <sparsekit.kernels.base.VectorKernel.prepare>`
    runs, so a kernel that keeps that method gets the checked array as is (one pass over the
    data); a kernel with its own ``prepare`` still gets to prepare it.
    """
    from ..kernels.base import VectorKernel

    A = _as_named(X, name, kernel)
    if type(kernel).prepare is VectorKernel.prepare:
        return A
    return kernel.prepare(A)


def take_rows(kernel, data, r0, r1):
    """Rows ``r0:r1`` of prepared data (arrays and sparse matrices slice, graphs are taken)."""
    if isinstance(data, np.ndarray) or hasattr(data, "tocsr"):
        return data[r0:r1]
    return kernel.take(data, np.arange(r0, r1))


def freeze_bandwidth(kernel, data):
    """Resolve a data-dependent bandwidth on ``data`` and return a kernel with it fixed.

    Every estimator that compares the same samples then uses the same kernel, even when one of
    them (the Nyström map) fits its kernel again on other data. The bandwidth is fixed as one
    float gamma, so data at a scale where the rule's gamma is no float64 (beyond about 1e±154)
    is refused with a message naming that scale.
    """
    if getattr(kernel, "bandwidth", None) is not None and hasattr(kernel, "gamma_"):
        kernel.fit(data)
        if hasattr(kernel, "effective_gamma"):  # says why when gamma is out of range
            gamma = float(kernel.effective_gamma(data.shape[1]))
        else:
            gamma = float(kernel.gamma_)
        kernel = copy.deepcopy(kernel)
        kernel.set_params(bandwidth=None, gamma=gamma)
    else:
        kernel.fit(data)
    return kernel


def pooled_n_landmarks(n_landmarks, n_max: int, n_pool: int) -> int:
    """``n_landmarks`` (default ``default_n_landmarks(n_max)``) as an int in [1, n_pool]."""
    if n_landmarks is None:
        return min(default_n_landmarks(n_max), n_pool)
    if (
        isinstance(n_landmarks, numbers.Integral)
        and not isinstance(n_landmarks, bool)
        and n_landmarks > n_pool
    ):
        raise ValueError(
            f"n_landmarks={n_landmarks} is larger than the pooled samples ({n_pool} points); "
            f"choose n_landmarks <= {n_pool}"
        )
    return check_n_landmarks(n_landmarks, n_pool)


# -- identities of the points (the common support of the discrete distributions) -----------
def support_ids(kernel, data) -> np.ndarray:
    """Integer id of every pooled point; equal points share an id (the first row's index).

    Points are identified by their prepared representation: equal rows for vectors (one pass
    over the rows, :func:`sparsekit.stats._support_cpu.first_equal_rows`); equal feature
    counts for a graph kernel with an explicit feature map (graphs it cannot tell apart, whose
    kernel rows are equal). For other kernels every sample is its own point.
    """
    return support(kernel, data)[0]


def support(kernel, data):
    """``(support_ids(kernel, data), whether every point is distinct)``."""
    if isinstance(data, np.ndarray):
        from ._support_cpu import first_equal_rows

        n = data.shape[0]
        # float32 rows are compared as their exact float64 values (one compiled loop)
        rows = np.ascontiguousarray(data, dtype=np.float64).reshape(n, -1)
        table = np.full(1 << max(1, 2 * n - 1).bit_length(), -1, dtype=np.int64)
        ids = np.empty(n, dtype=np.int64)
        repeats = first_equal_rows(rows.view(np.uint64), table, np.empty(n, np.uint64), ids)
        return ids, repeats == 0
    counts = getattr(data, "counts", None)
    n = kernel.n_samples(data)
    if counts is None:
        return np.arange(n, dtype=np.int64), True
    counts = counts.tocsr()
    counts.sort_indices()
    seen = {}
    ids = np.empty(n, dtype=np.int64)
    for i in range(n):
        lo, hi = counts.indptr[i], counts.indptr[i + 1]
        key = (counts.indices[lo:hi].tobytes(), counts.data[lo:hi].tobytes())
        ids[i] = seen.setdefault(key, i)
    return ids, len(seen) == n


def merged_sq_norm(ids: np.ndarray, weights: np.ndarray, n: int) -> float:
    """‖v‖² with v the signed weights summed over equal points (ids from :func:`support_ids`)."""
    v = np.bincount(ids, weights=weights, minlength=n)
    return float(v @ v)
