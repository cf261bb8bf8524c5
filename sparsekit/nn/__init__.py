"""Keras 3 layers built on sparsekit (the optional extra ``nn``: ``pip install sparsekit[nn]``).

- :class:`SparseFactorsDense`, :class:`SparseFactorsConv2D`: layers whose weight is a product of
  sparse factors with frozen supports (Giffon 2021, §3.4), and :func:`compress`, which replaces
  the dense and convolutional layers of a trained model by them (:mod:`sparsekit.nn.compression`).

Names are imported on first use, so that ``import sparsekit`` (and ``import sparsekit.nn``)
does not import Keras. Keras reads its backend from ``KERAS_BACKEND`` when it is first imported.
"""

_LAZY = {
    "SparseFactorsDense": "sparsekit.nn.sparse_factors",
    "SparseFactorsConv2D": "sparsekit.nn.sparse_factors",
    "compress": "sparsekit.nn.compression",
    "LayerCompression": "sparsekit.nn.compression",
    "count_parameters": "sparsekit.nn.compression",
    "palminize": "sparsekit.nn.palminize",
    "PalminizedWeight": "sparsekit.nn.palminize",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sparsekit.nn' has no attribute {name!r}")


__all__ = list(_LAZY)
