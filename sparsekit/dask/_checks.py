"""Input checks of the Dask backend: chunked 2-D arrays with whole rows, kernels whose parameters
do not depend on the chunk they see."""

from __future__ import annotations

import math

import numpy as np


def _dask_array():
    try:
        import dask.array as da
    except ModuleNotFoundError:  # pragma: no cover - exercised only without the extra
        raise ModuleNotFoundError(
            "sparsekit.dask needs Dask: pip install 'sparsekit[dask]'"
        ) from None
    return da


def _unknown(size):
    return size is None or (isinstance(size, float) and math.isnan(size))


def check_chunked(X, name="X", n_features=None, known_rows=True):
    """``X`` as a 2-D dask array whose chunks hold whole rows (one chunk along the features).

    ``known_rows=False`` accepts unknown row chunk sizes (NaN, as boolean filtering leaves
    them) where the caller needs no row count (a Gram matrix, a transform).

    Raises
    ------
    TypeError
        ``X`` is not a dask array.
    ValueError
        Not 2-D, unknown or mismatched feature counts, unknown row counts where they are
        needed, empty, non-numeric.
    """
    da = _dask_array()
    if not isinstance(X, da.Array):
        raise TypeError(
            f"{name} must be a dask.array.Array (e.g. dask.array.from_array(X, "
            f"chunks=(100_000, -1))), got {type(X).__name__}"
        )
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (samples as rows), got {X.ndim} dimension(s)")
    if not np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.complexfloating):
        raise TypeError(f"{name} must hold real numbers, got dtype {X.dtype}")
    d = X.shape[1]
    if _unknown(d) or any(_unknown(c) for c in X.chunks[1]):
        raise ValueError(
            f"{name} has an unknown number of features (chunk sizes NaN); call "
            f"{name}.compute_chunk_sizes() first, with every chunk of the same width"
        )
    if known_rows and any(_unknown(c) for c in X.chunks[0]):
        raise ValueError(
            f"{name} has an unknown number of rows (chunk sizes NaN, as after boolean "
            f"filtering); call {name}.compute_chunk_sizes() first"
        )
    if n_features is not None and d != n_features:
        raise ValueError(
            f"{name} has {d} features but {n_features} are expected (the data it is "
            "compared with, or the fitted model)"
        )
    if X.shape[0] == 0 or d == 0:
        raise ValueError(f"{name} is empty (shape {X.shape})")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return X


def check_block(block, n_features, name="X"):
    """A chunk at compute time: its width must be the declared feature count (chunks built from
    delayed pieces may lie about their shape)."""
    block = np.asarray(block)
    if block.ndim != 2 or block.shape[1] != n_features:
        raise ValueError(
            f"a chunk of {name} has shape {block.shape} but {name} declares "
            f"{n_features} features: every chunk must hold rows of the same width"
        )
    return block


def frozen_kernel(kernel, n_features):
    """``kernel`` (a resolved kernel object, changed in place: pass a copy, as
    :func:`sparsekit.components.resolve` returns) with parameters that do not depend on the
    data being processed.

    A fitted data-dependent bandwidth rule (``bandwidth="median"``, ...) is frozen to its value;
    an unfitted one is refused: per chunk it would give each block its own bandwidth. Static
    parameters that need the width (gamma = 1 / n_features) are set.

    Raises
    ------
    ValueError
        An unfitted data-dependent bandwidth rule.
    """
    rule = getattr(kernel, "bandwidth", None)
    if isinstance(rule, str) and getattr(kernel, "gamma_", None) is None:
        raise ValueError(
            f"kernel {getattr(kernel, 'name', '?')!r} has the data-dependent bandwidth rule "
            f"{rule!r}, which the Dask backend cannot apply chunk by chunk; fit the kernel first "
            "(kernel.fit(sample) on a sample of the data, or on the in-memory data) or give "
            "gamma/sigma"
        )
    if isinstance(rule, str):  # fitted: freeze the resolved value, so that no later fit redoes it
        # effective_gamma names the data's scale where the rule's gamma is no float64
        gamma = kernel.effective_gamma(n_features)
        kernel.set_params(bandwidth=None, gamma=gamma)
        rule = None
    if rule is None and hasattr(kernel, "fit") and n_features is not None:
        # static parameters (e.g. gamma = 1 / n_features) need only the width
        kernel.fit(np.zeros((1, n_features)))
    return kernel
