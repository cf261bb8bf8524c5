"""Clustering estimators: QuicK-means, kernel k-means (imported on first use)."""

_LAZY = {
    "QuicKMeans": "sparsekit.cluster.quickmeans",
    "KernelKMeans": "sparsekit.cluster.kernel_kmeans",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sparsekit.cluster' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = list(_LAZY)
