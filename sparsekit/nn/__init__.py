"""Keras 3 layers built on sparsekit's kernels and samplers (the optional ``nn`` extra:
``pip install "sparsekit[nn]"``, which installs Keras and JAX).

- :class:`NystromLayer`: the adaptive Nyström layer (Giffon 2020, PhD thesis, Ch. 2; Giffon et
  al., IJCNN 2019).
- :class:`SparseFactorsDense`, :class:`SparseFactorsConv2D`: layers whose weight is a product of
  sparse factors with frozen supports (Giffon 2020, §3.4), and :func:`compress`, which replaces
  the dense and convolutional layers of a trained model by them
  (:mod:`sparsekit.nn.compression`; the NumPy side in :mod:`sparsekit.nn.palminize`).

The layers use ``keras.ops`` only, so they run on the JAX, PyTorch and TensorFlow backends.
Keras reads its backend from ``KERAS_BACKEND`` (or ``~/.keras/keras.json``); where neither names
an installed backend, importing this package selects JAX (:mod:`sparsekit.nn._backend`).
``import sparsekit`` never imports Keras.
"""

from ._backend import choose_backend

choose_backend()

try:
    import keras  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"sparsekit.nn needs Keras 3 with an installed backend ({exc}); install the extra with "
        "pip install 'sparsekit[nn]' (Keras and JAX), or set KERAS_BACKEND to an installed "
        "backend (jax, torch, tensorflow)"
    ) from exc

from .compression import LayerCompression, compress, count_parameters  # noqa: E402
from .nystrom import NystromLayer  # noqa: E402
from .sparse_factors import SparseFactorsConv2D, SparseFactorsDense  # noqa: E402

__all__ = [
    "NystromLayer",
    "SparseFactorsDense",
    "SparseFactorsConv2D",
    "compress",
    "count_parameters",
    "LayerCompression",
]
