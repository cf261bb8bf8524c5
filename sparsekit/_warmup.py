"""``sparsekit warmup``: compile every Numba kernel of the library into Numba's on-disk cache.

A first call of a kernel, sampler, feature map or solver compiles its Numba code (about 0.1–1 s
per entry point and dtype); the compiled code is cached on disk (``cache=True``), so later
processes only load it. :func:`warm_up` runs every public entry point once on tiny data, for
float64 and float32, which fills the cache with exactly the specializations real calls use.
Where the cache lives: ``NUMBA_CACHE_DIR`` when set, else ``__pycache__`` folders next to the
modules (or Numba's per-user cache when those are not writable).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

#: family -> entry points, each ``(label, fn(dtype))`` running one tiny call
FAMILIES = ("kernels", "graphs", "samplers", "features", "solvers", "applications")


def _data(dtype):
    rng = np.random.default_rng(0)
    X = rng.random((40, 5)).astype(dtype)
    D = rng.standard_normal((12, 30)).astype(dtype)
    D /= np.linalg.norm(D, axis=0)
    Y = (D[:, :3] @ rng.random((3, 6))).astype(dtype)
    return X, D, Y


def _kernels():
    from .components import get_kernel
    from .kernels import _cpu

    def gram(name, **params):
        return lambda dt: get_kernel(name, **params)(_data(dt)[0])

    def copy_rows(dt):
        A = np.ones((3, 4), dtype=dt)
        _cpu.copy_rows(A, np.empty_like(A))

    return [(f"kernel {n}", gram(n)) for n in ("rbf", "laplacian", "chi2", "additive-chi2")] + [
        ("kernel copy_rows", copy_rows)
    ]


def _graphs():
    from .components import get_kernel

    def run(weighted):
        def fn(dt):
            A = np.array([[0, 1, 0], [1, 0, 2.5], [0, 2.5, 0]])
            graphs = [(A, np.array([0, 1, 0])), (A[:2, :2], np.array([1, 1]))]
            get_kernel("shortest-path", weighted=weighted)(graphs)

        return fn

    # graph distances are int32 / float64 whatever the data: one dtype compiles everything
    return [("shortest-path (hops)", run(False)), ("shortest-path (weighted)", run(True))]


def _samplers():
    from .components import get_kernel, get_sampler

    def greedy(approximate):
        return lambda dt: get_sampler("greedy-trace", approximate=approximate).sample(
            _data(dt)[0], get_kernel("rbf"), 5, 0
        )

    return [
        ("sampler greedy-trace", greedy(False)),
        ("sampler greedy-trace (approximate)", greedy(True)),
    ]


def _features():
    from .features.fastfood import Fastfood
    from .features.rff import RandomFourierFeatures

    return [
        (
            "RandomFourierFeatures",
            lambda dt: RandomFourierFeatures(n_components=8, random_state=0).fit_transform(
                _data(dt)[0]
            ),
        ),
        (
            "Fastfood",
            lambda dt: Fastfood(n_components=8, random_state=0).fit_transform(_data(dt)[0]),
        ),
    ]


def _solvers():
    from .components import get_solver

    def solve(name, signals=slice(None), **params):
        def fn(dt):
            _, D, Y = _data(dt)
            get_solver(name, **params).solve(D, Y[:, signals])

        return fn

    return [
        ("solver mp (Gram)", solve("mp", max_iter=3, precompute=True)),
        ("solver mp (residual)", solve("mp", max_iter=3, precompute=False)),
        ("solver omp (Gram)", solve("omp", n_nonzero_coefs=3, precompute=True)),
        ("solver omp (residual)", solve("omp", n_nonzero_coefs=3, precompute=False)),
        ("solver nn-omp", solve("nn-omp", n_nonzero_coefs=3)),
        ("solver frank-wolfe", solve("frank-wolfe", beta=5.0, max_iter=3)),
    ]


def _applications():
    import scipy.sparse as sp

    from .components import get_kernel
    from .linalg._spmm import csr_matmat  # noqa: F401  (compiled through SparseFactors)
    from .manifold import Isomap

    def isomap(dt):
        X = _data(dt)[0]
        Isomap(2, n_neighbors=6).fit(X).transform(X[:3])

    def sparse_gram(dt):
        X = sp.random(20, 8, density=0.3, format="csr", random_state=0, dtype=dt)
        get_kernel("laplacian")(X)
        get_kernel("rbf", gamma=0.5)(X)

    def quickmeans(dt):
        from .cluster.quickmeans import QuicKMeans
        from .linalg import _spmm, sparse_factors

        X = np.random.default_rng(0).random((40, 8)).astype(dt)
        qk = QuicKMeans(n_clusters=4, sparsity=2, max_iter=2, palm_iter=3, random_state=0).fit(X)
        wide = np.zeros((8, 2 * sparse_factors.COLUMN_BLOCK), dtype=dt)
        qk.cluster_centers_ @ wide  # the column-block chain of wide operands (predict)
        _spmm.dense_to_csr_pair(np.eye(2, dtype=dt))  # Palm4MSA's factors of 128 x 128 and more

    def kernel_kmeans(dt):
        from .cluster.kernel_kmeans import KernelKMeans

        X = _data(dt)[0]
        KernelKMeans(2, method="nystrom", n_landmarks=8, n_init=1, max_iter=2, random_state=0).fit(
            X
        )  # the cluster sums' scatter-add

    def mmd_support(dt):
        from .stats._data import support

        X = _data(dt)[0]
        support(get_kernel("rbf"), np.concatenate([X, X[:3]]))

    return [
        ("Isomap (Dijkstra, extension)", isomap),
        ("sparse-input kernels", sparse_gram),
        ("QuicK-means (sparse factors)", quickmeans),
        ("kernel k-means (cluster sums)", kernel_kmeans),
        ("MMD support identities (repeated points)", mmd_support),
    ]


def entry_points(families=FAMILIES):
    """``[(label, fn(dtype))]`` of the chosen families (see :data:`FAMILIES`)."""
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        raise ValueError(f"unknown warm-up families {unknown}; choose from {list(FAMILIES)}")
    makers = {
        "kernels": _kernels,
        "graphs": _graphs,
        "samplers": _samplers,
        "features": _features,
        "solvers": _solvers,
        "applications": _applications,
    }
    out = []
    for family in FAMILIES:
        if family in families:
            out += makers[family]()
    return out


def cache_location() -> str:
    """Where Numba writes this library's compiled code."""
    from numba import config

    if config.CACHE_DIR:
        return os.path.abspath(config.CACHE_DIR)
    from .solvers import _cpu

    return (
        os.path.dirname(os.path.dirname(_cpu.omp_gram._cache._cache_path))
        + " (the __pycache__ folder of each module)"
    )


def warm_up(families=FAMILIES, dtypes=("float64", "float32"), stream=None) -> float:
    """Compile (or load from the cache) every kernel of ``families`` for ``dtypes``.

    Progress goes to ``stream`` (default stderr): a progress bar on a terminal, else one line per
    entry point. Returns the elapsed seconds.
    """
    import warnings

    from ._runtime.progress import Progress, _is_terminal

    stream = sys.stderr if stream is None else stream
    jobs = [(label, fn, dt) for label, fn in entry_points(families) for dt in dtypes]
    terminal = _is_terminal(stream)
    t0 = time.perf_counter()
    with (
        warnings.catch_warnings(),
        Progress(len(jobs), "compiling", unit="kernel", verbose=terminal, stream=stream) as bar,
    ):
        warnings.simplefilter("ignore")  # tiny data: early stops and clipping warnings
        for n, (label, fn, dt) in enumerate(jobs, 1):
            t = time.perf_counter()
            fn(np.dtype(dt).type)
            bar.describe(f"{label} {dt}")
            bar.update()
            if not terminal:
                print(
                    f"[{n}/{len(jobs)}] {label} {dt}: {time.perf_counter() - t:.2f} s",
                    file=stream,
                    flush=True,
                )
    return time.perf_counter() - t0
