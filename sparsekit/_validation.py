"""Input checks shared by every component (run once, at the component boundary)."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
from numpy.typing import DTypeLike

from ._names import did_you_mean, normalize_name
from ._typing import DataLike, RandomStateLike

if TYPE_CHECKING:
    from scipy.sparse import spmatrix

FLOAT_DTYPES = (np.float64, np.float32)


class ComplexDataError(TypeError, ValueError):
    """Complex input where real values are needed (a ``TypeError``, and a ``ValueError`` as
    scikit-learn raises for it)."""


@overload
def check_array(
    X: DataLike,
    name: str = "X",
    *,
    ndim: int = 2,
    dtype: DTypeLike | None = None,
    allow_empty: bool = False,
    nonnegative: bool = False,
    finite: bool = True,
    copy: bool = False,
    accept_sparse: Literal[False] = False,
) -> np.ndarray: ...


@overload
def check_array(
    X: DataLike,
    name: str = "X",
    *,
    ndim: int = 2,
    dtype: DTypeLike | None = None,
    allow_empty: bool = False,
    nonnegative: bool = False,
    finite: bool = True,
    copy: bool = False,
    accept_sparse: bool,
) -> np.ndarray | spmatrix: ...


def check_array(
    X: DataLike,
    name: str = "X",
    *,
    ndim: int = 2,
    dtype: DTypeLike | None = None,
    allow_empty: bool = False,
    nonnegative: bool = False,
    finite: bool = True,
    copy: bool = False,
    accept_sparse: bool = False,
) -> np.ndarray | spmatrix:
    """Validate a numeric array and return it C-contiguous in float32 or float64.

    Float32 and float64 are kept; booleans and integers become float64. Object, complex and
    string dtypes, the wrong number of dimensions, empty arrays, NaN/inf and (when asked)
    negative values raise a ``TypeError`` / ``ValueError`` naming ``name``. A pandas
    ``DataFrame`` is read as its values.

    Parameters
    ----------
    X : array-like
        The input (a pandas ``DataFrame`` is read as its values).
    name : str, default "X"
        The argument's name, for the error messages.
    ndim : int, default 2
        The number of dimensions required.
    dtype : numpy dtype, optional
        Force this float dtype instead of keeping the input's.
    allow_empty : bool, default False
        Accept an array with no entry.
    nonnegative : bool, default False
        Require every value to be >= 0.
    finite : bool, default True
        Require every value to be finite.
    copy : bool, default False
        Return a copy even when the input has the right dtype and layout.
    accept_sparse : bool, default False
        Accept a ``scipy.sparse`` matrix or array, returned in CSR format (same class family:
        ``csr_matrix`` or ``csr_array``) with the same dtype rules, its stored values checked.

    Returns
    -------
    ndarray or scipy.sparse CSR matrix
        The validated array (a copy only when needed, or when ``copy`` is true).

    Raises
    ------
    TypeError
        A non-numeric or complex dtype, or sparse input without ``accept_sparse``.
    ValueError
        The wrong number of dimensions, an empty array, NaN/inf, or a negative value.
    """
    if is_sparse(X):
        if not accept_sparse:
            raise TypeError(
                f"{name} is a scipy.sparse matrix, which this component does not accept; pass "
                f"a dense array ({name}.toarray())"
            )
        return _check_sparse(
            X,
            name,
            ndim=ndim,
            dtype=dtype,
            allow_empty=allow_empty,
            nonnegative=nonnegative,
            finite=finite,
            copy=copy,
        )
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} could not be read as an array: {exc}") from None
    kind = arr.dtype.kind
    if kind == "O":  # numbers stored as objects are read as numbers, as in scikit-learn
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"{name} has dtype object with non-numeric entries ({exc}); pass a numeric "
                "array (float32 or float64)"
            ) from None
        kind = "f"
    if kind == "c":
        raise ComplexDataError(
            f"Complex data not supported: {name} has complex dtype {arr.dtype}; pass real values"
        )
    if kind not in "biuf":
        raise TypeError(f"{name} has dtype {arr.dtype}; pass a numeric array (float32 or float64)")
    if arr.ndim != ndim:
        shape_hint = "(n_samples, n_features)" if ndim == 2 else f"{ndim}-D"
        extra = (
            (
                f"; Reshape your data with {name}.reshape(-1, 1) for a single feature or "
                f"{name}.reshape(1, -1) for a single sample"
            )
            if ndim == 2 and arr.ndim == 1
            else ""
        )
        raise ValueError(f"{name} must be {ndim}-D {shape_hint}, got shape {arr.shape}{extra}")
    if not allow_empty and arr.size == 0:
        raise ValueError(_empty_message(name, arr.shape))
    arr = np.ascontiguousarray(arr, dtype=_target_dtype(dtype, arr.dtype))
    if copy and arr is X:
        arr = arr.copy()
    _check_values(arr, name, finite=finite, nonnegative=nonnegative)
    return arr


def _target_dtype(dtype, current) -> np.dtype:
    """``dtype`` when given, else ``current`` when float32/float64, else float64."""
    if dtype is not None:
        return np.dtype(dtype)
    return current if current in FLOAT_DTYPES else np.dtype(np.float64)


def _check_values(values, name, *, finite, nonnegative) -> None:
    """The value checks of :func:`check_array` (``values``: a dense array or sparse ``.data``)."""
    if finite and values.size and not np.isfinite(values).all():
        bad = "NaN" if np.isnan(values).any() else "inf"
        raise ValueError(f"{name} contains {bad}; remove or impute non-finite values first")
    if nonnegative and values.size and values.min() < 0:
        raise ValueError(
            f"{name} contains negative values (min {values.min():g}); this kernel needs X >= 0"
        )


def _empty_message(name, shape) -> str:
    what = "sample(s)" if shape[0] == 0 else "feature(s)"
    return (
        f"{name} is empty: 0 {what} (shape={tuple(shape)}) while a minimum of 1 is "
        "required; at least one sample and one feature are needed"
    )


def is_sparse(X) -> bool:
    """True for a ``scipy.sparse`` matrix or array (without importing SciPy for dense input)."""
    return hasattr(X, "tocsr") and hasattr(X, "nnz")


def looks_like_graphs(X) -> bool:
    """Whether ``X`` is a sequence of graphs rather than a 2-D array of vectors.

    Parameters
    ----------
    X : object
        Data given to an estimator or a kernel.

    Returns
    -------
    bool
        True for a non-empty list or tuple whose first item is a graph (a networkx-like
        graph, an ``(adjacency, labels)`` pair, a sparse matrix or a 2-D array), and for
        prepared shortest-path features; False for arrays, DataFrames, sparse matrices and
        sequences of numbers (rows of vectors).
    """
    if isinstance(X, np.ndarray) or hasattr(X, "iloc") or hasattr(X, "tocsr"):
        return False
    if not isinstance(X, (list, tuple)) or len(X) == 0:
        return type(X).__name__ == "ShortestPathFeatures"
    first = X[0]
    if hasattr(first, "nodes") and hasattr(first, "edges"):
        return True
    if isinstance(first, tuple):
        return True
    if hasattr(first, "tocsr"):
        return True
    try:
        return np.ndim(first) >= 2
    except Exception:
        return True


def _check_sparse(X, name, *, ndim, dtype, allow_empty, nonnegative, finite, copy):
    if ndim != 2 or X.ndim != 2:
        raise ValueError(f"{name} must be {ndim}-D, got a sparse matrix of shape {X.shape}")
    kind = X.dtype.kind
    if kind not in "biuf":
        raise TypeError(f"{name} has dtype {X.dtype}; pass a numeric array (float32 or float64)")
    if not allow_empty and (X.shape[0] == 0 or X.shape[1] == 0):
        raise ValueError(_empty_message(name, X.shape))
    target = _target_dtype(dtype, X.dtype)
    out = X.tocsr(copy=copy)
    if out.dtype != target:
        out = out.astype(target)
    if not out.has_canonical_format:  # sorted indices, no duplicates (on a copy, never on X)
        if out is X:
            out = out.copy()
        out.sum_duplicates()
    _check_values(out.data, name, finite=finite, nonnegative=nonnegative)
    return out


def check_pair(
    X: DataLike,
    Y: DataLike | None = None,
    *,
    names: Sequence[str] = ("X", "Y"),
    nonnegative: bool = False,
    accept_sparse: bool = False,
) -> tuple[np.ndarray | spmatrix, np.ndarray | spmatrix]:
    """Validate ``X`` and an optional ``Y`` with the same feature count and a common dtype.

    When one is float32 and the other float64 both become float64. Returns ``(X, Y)`` with
    ``Y is X`` when ``Y`` was ``None``. With ``accept_sparse``, when one of them is sparse both
    are returned in CSR format (the dense one converted, never the other way round).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        The first input.
    Y : array-like or sparse matrix of shape (m, d), optional
        The second input.
    names : (str, str), default ("X", "Y")
        The arguments' names, for the error messages.
    nonnegative : bool, default False
        Require every value to be >= 0.
    accept_sparse : bool, default False
        Accept ``scipy.sparse`` input.

    Returns
    -------
    X : ndarray or CSR matrix
        The validated first input.
    Y : ndarray, CSR matrix or None
        The validated second input (None when it was not given).

    Raises
    ------
    ValueError
        The feature counts differ, or an input fails :func:`check_array`.
    """
    X = check_array(X, names[0], nonnegative=nonnegative, accept_sparse=accept_sparse)
    if Y is None:
        return X, X
    Y = check_array(Y, names[1], nonnegative=nonnegative, accept_sparse=accept_sparse)
    if is_sparse(X) != is_sparse(Y):
        import scipy.sparse as sp

        X, Y = (sp.csr_matrix(A) if not is_sparse(A) else A for A in (X, Y))
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"{names[0]} has {X.shape[1]} features but {names[1]} has {Y.shape[1]}; "
            "both must have the same number of columns"
        )
    if X.dtype != Y.dtype:
        X = X.astype(np.float64)
        Y = Y.astype(np.float64)
    return X, Y


def check_scalar(
    value: Any,
    name: str,
    *,
    kind: type = numbers.Real,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = False,
    high_inclusive: bool = True,
) -> Any:
    """Check a scalar's type and range.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        The argument's name, for the error messages.
    kind : type, default numbers.Real
        ``numbers.Real`` or ``numbers.Integral`` (booleans are refused either way).
    low, high : float, optional
        Bounds of the range (None: unbounded).
    low_inclusive : bool, default False
        Whether ``low`` itself is allowed.
    high_inclusive : bool, default True
        Whether ``high`` itself is allowed.

    Returns
    -------
    float or int
        The value, as float (Real) or int (Integral).

    Raises
    ------
    TypeError
        ``value`` is not of ``kind``.
    ValueError
        ``value`` is not finite or is outside the range.
    """
    is_kind = isinstance(value, kind)  # a flag, so that ``value`` keeps its type for the checks
    if isinstance(value, bool) or not is_kind or (isinstance(value, np.ndarray) and value.ndim):
        want = "an integer" if kind is numbers.Integral else "a real number"
        raise TypeError(f"{name} must be {want}, got {value!r} ({type(value).__name__})")
    if kind is numbers.Real and not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise ValueError(f"{name} must be {op} {low}, got {value!r}")
    if high is not None and (value > high or (value == high and not high_inclusive)):
        op = "<=" if high_inclusive else "<"
        raise ValueError(f"{name} must be {op} {high}, got {value!r}")
    return int(value) if kind is numbers.Integral else float(value)


def check_positive(value: Any, name: str) -> float:
    """Check that ``value`` is a finite real number > 0.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        The argument's name, for the error messages.

    Returns
    -------
    float
        The value.

    Raises
    ------
    TypeError
        ``value`` is not a real number.
    ValueError
        ``value`` is not finite or not > 0.
    """
    return check_scalar(value, name, low=0.0, low_inclusive=False)


def check_option(value: Any, name: str, options: Iterable[str]) -> str:
    """Check that ``value`` is among ``options`` (case- and ``-``/``_``-insensitive).

    Parameters
    ----------
    value : str
        The value to check.
    name : str
        The argument's name, for the error messages.
    options : sequence of str
        The accepted values.

    Returns
    -------
    str
        The option, spelt as in ``options``.

    Raises
    ------
    TypeError
        ``value`` is not a string.
    ValueError
        ``value`` is not among ``options`` (the closest one is suggested).
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {list(options)}, got {value!r}")
    key = normalize_name(value)
    for opt in options:
        if key == normalize_name(opt):
            return opt
    raise ValueError(
        f"unknown {name} {value!r}.{did_you_mean(key, options, cutoff=0.6)} "
        f"Choose one of {list(options)}."
    )


def check_random_state(seed: RandomStateLike) -> np.random.Generator:
    """Turn ``seed`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    seed : None, int, numpy.random.Generator or numpy.random.RandomState
        The seed: a Generator is returned as is, a RandomState seeds a new Generator.

    Returns
    -------
    numpy.random.Generator
        The generator.

    Raises
    ------
    TypeError
        ``seed`` is none of these.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(0, 2**31 - 1))
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        return np.random.default_rng(int(seed))
    raise TypeError(f"random_state must be None, an int or a numpy Generator, got {seed!r}")
