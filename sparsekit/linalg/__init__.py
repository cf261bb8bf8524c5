"""Shared linear algebra: the sparse-factor operator :class:`SparseFactors`."""

_LAZY = {"SparseFactors": "sparsekit.linalg.sparse_factors"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sparsekit.linalg' has no attribute {name!r}")


__all__ = list(_LAZY)
