"""Checks shared by the feature-map estimators (fitted state, feature counts, output width)."""
from __future__ import annotations

import numbers

from .._validation import check_scalar

#: Target bytes of one intermediate row block in ``transform`` (large enough that the GEMM of a
#: block with the normalization runs at full BLAS speed; small next to the output).
BLOCK_BYTES = 64 * 2**20


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit``."""


def check_fitted(estimator, attribute: str) -> None:
    """Raise :class:`NotFittedError` unless ``estimator`` has the fitted ``attribute``."""
    if getattr(estimator, attribute, None) is None:
        raise NotFittedError(
            f"this {type(estimator).__name__} is not fitted yet: call fit(X) (or fit_transform) "
            "before transform"
        )


def check_n_features(estimator, X) -> None:
    """``X`` must have the number of columns seen in ``fit``."""
    expected = estimator.n_features_in_
    if X.shape[1] != expected:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} was fitted with "
            f"{expected} features; transform data with the same columns as the training data"
        )


def check_even_components(n_components) -> int:
    """Output width of a [cos, sin] map: an even integer >= 2 (two features per frequency)."""
    n = check_scalar(n_components, "n_components", kind=numbers.Integral, low=2,
                     low_inclusive=True)
    if n % 2:
        raise ValueError(
            f"n_components must be even (a cos and a sin feature per random frequency), got {n}; "
            f"use {n + 1} or {n - 1}"
        )
    return n


def block_rows(n_rows: int, n_cols: int, itemsize: int) -> int:
    """Rows per block so that an (rows, n_cols) block holds about ``BLOCK_BYTES``."""
    return int(max(1, min(n_rows, BLOCK_BYTES // max(1, n_cols * itemsize))))
