"""Parameter handling shared by components and estimators (scikit-learn compatible)."""

from __future__ import annotations

import inspect
import sys
import warnings
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from .exceptions import not_fitted_error

_P = TypeVar("_P", bound="ParamsMixin")
_T = TypeVar("_T", bound="TransformerMixin")


class ParamsMixin:
    """``get_params`` / ``set_params`` read from the ``__init__`` signature, as in scikit-learn.

    Subclasses store every constructor argument unchanged under the same attribute name.
    """

    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(
            p.name
            for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        )

    def get_params(self, deep: bool = True) -> dict:
        """Get the constructor's parameters, as scikit-learn's ``get_params``.

        Parameters
        ----------
        deep : bool, default True
            Also return the parameters of parameters that are estimators or components
            (``<name>__<parameter>``).

        Returns
        -------
        dict
            Parameter name to value.
        """
        out: dict[str, Any] = {}
        for key in self._param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{key}__{k}", v) for k, v in value.get_params().items())
            out[key] = value
        return out

    def set_params(self: _P, **params: Any) -> _P:
        """Set parameters, as scikit-learn's ``set_params``; they are validated at once.

        Parameters
        ----------
        **params
            New values, by parameter name (``<name>__<parameter>`` for a nested one).

        Returns
        -------
        self
            The object, with its fitted state cleared.

        Raises
        ------
        ValueError
            An unknown parameter name, or a value the object refuses.
        """
        valid = self._param_names()
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            key, _, sub = key.partition("__")
            if key not in valid:
                raise ValueError(
                    f"invalid parameter {key!r} for {type(self).__name__}; valid: {valid}"
                )
            if sub:
                nested.setdefault(key, {})[sub] = value
            else:
                setattr(self, key, value)
        for key, sub_params in nested.items():
            getattr(self, key).set_params(**sub_params)
        # new parameters are validated now, as in __init__, and invalidate what was fitted
        if hasattr(self, "_check_params"):
            self._check_params()
        if hasattr(self, "_reset_fitted"):
            self._reset_fitted()
        return self

    def __repr__(self):
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._param_names())
        return f"{type(self).__name__}({args})"


def _input_feature_names(X):
    """Column names of a DataFrame whose columns are all strings, else ``None``."""
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "iloc"):
        return None
    names = np.asarray(columns, dtype=object)
    if names.size and all(isinstance(c, str) for c in names):
        return names
    return None


class TransformerMixin:
    """scikit-learn's transformer conventions, without a dependency on scikit-learn.

    Gives ``n_features_in_`` / ``feature_names_in_`` (set by :meth:`_validate_input` with
    ``reset=True`` in ``fit``, checked with scikit-learn's messages afterwards),
    ``get_feature_names_out`` (``<classname><i>``), ``set_output(transform="pandas"|"polars")``
    (also honouring ``sklearn.set_config(transform_output=...)`` when scikit-learn is loaded) and
    ``__sklearn_tags__``. Subclasses set ``_fitted_attribute``, ``_accepts_sparse`` and
    ``_n_features_out``, and pass their dense outputs through :meth:`_wrap_output`.
    """

    #: defined by the estimator
    fit: Any
    transform: Any
    #: an attribute that exists once fitted
    _fitted_attribute = "n_features_in_"
    #: scipy.sparse input is accepted
    _accepts_sparse = False
    #: ``fit`` is needed before ``transform``
    _requires_fit = True

    @property
    def _n_features_out(self) -> int:
        """Number of output features (each subclass defines it)."""
        raise NotImplementedError(f"{type(self).__name__} does not define _n_features_out")

    # -- input -----------------------------------------------------------------------------
    def _validate_input(self, X, *, reset: bool, accept_sparse=None):
        """Validate ``X`` (as :func:`check_array`); record or check its width and names."""
        from ._validation import check_array

        names = _input_feature_names(X)
        if reset:
            if names is not None:
                self.feature_names_in_ = names
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        else:
            self._check_feature_names(names)
        sparse = self._accepts_sparse if accept_sparse is None else accept_sparse
        arr = check_array(X, "X", accept_sparse=sparse)
        if reset:
            self.n_features_in_ = arr.shape[1]
        elif arr.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {arr.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input; transform data with the columns "
                "of the training data"
            )
        return arr

    def _check_feature_names(self, names):
        fitted = getattr(self, "feature_names_in_", None)
        cls = type(self).__name__
        if fitted is None and names is None:
            return
        if fitted is None:
            warnings.warn(
                f"X has feature names, but {cls} was fitted without feature names",
                UserWarning,
                stacklevel=4,
            )
            return
        if names is None:
            warnings.warn(
                f"X does not have valid feature names, but {cls} was fitted with feature names",
                UserWarning,
                stacklevel=4,
            )
            return
        if len(fitted) == len(names) and np.all(fitted == names):
            return
        message = "The feature names should match those that were passed during fit.\n"
        unseen = [n for n in names if n not in set(fitted)]
        missing = [n for n in fitted if n not in set(names)]
        if not unseen and not missing:
            message += "Feature names must be in the same order as they were in fit.\n"
        if unseen:
            message += (
                "Feature names unseen at fit time:\n"
                + "".join(f"- {n}\n" for n in unseen[:5])
                + ("- ...\n" if len(unseen) > 5 else "")
            )
        if missing:
            message += (
                "Feature names seen at fit time, yet now missing:\n"
                + "".join(f"- {n}\n" for n in missing[:5])
                + ("- ...\n" if len(missing) > 5 else "")
            )
        raise ValueError(message)

    def _check_is_fitted(self):
        if getattr(self, self._fitted_attribute, None) is None:
            raise not_fitted_error(
                f"this {type(self).__name__} is not fitted yet: call fit(X) (or fit_transform) "
                "before transform"
            )

    def __sklearn_is_fitted__(self):
        return getattr(self, self._fitted_attribute, None) is not None

    # -- output ----------------------------------------------------------------------------
    def get_feature_names_out(self, input_features: ArrayLike | None = None) -> np.ndarray:
        """Return the output feature names ``<classname>0, <classname>1, ...``.

        Parameters
        ----------
        input_features : array-like of str, optional
            Must match ``feature_names_in_`` (or have ``n_features_in_`` entries); they do not
            enter the output names.

        Returns
        -------
        ndarray of object
            ``<classname>0, <classname>1, ...``.
        """
        self._check_is_fitted()
        if input_features is not None:
            input_features = np.asarray(input_features, dtype=object)
            fitted = getattr(self, "feature_names_in_", None)
            if fitted is not None and (
                len(fitted) != len(input_features) or np.any(fitted != input_features)
            ):
                raise ValueError("input_features is not equal to feature_names_in_")
            if len(input_features) != self.n_features_in_:
                raise ValueError(
                    "input_features should have length equal to number of features "
                    f"({self.n_features_in_}), got {len(input_features)}"
                )
        prefix = type(self).__name__.lower()
        return np.asarray([f"{prefix}{i}" for i in range(self._n_features_out)], dtype=object)

    def set_output(self: _T, *, transform: str | None = None) -> _T:
        """Set the output container of ``transform`` and ``fit_transform``.

        Parameters
        ----------
        transform : {"default", "pandas", "polars"} or None, optional
            ``"default"`` (NumPy), ``"pandas"`` or ``"polars"`` (columns from
            :meth:`get_feature_names_out`, the index of a DataFrame input kept); ``None`` leaves it
            unchanged.

        Returns
        -------
        self
            The estimator.
        """
        if transform is None:
            return self
        if transform not in ("default", "pandas", "polars"):
            raise ValueError(
                f"transform must be 'default', 'pandas', 'polars' or None, got {transform!r}"
            )
        self._sklearn_output_config = {"transform": transform}
        return self

    def _output_container(self) -> str:
        config = getattr(self, "_sklearn_output_config", {}).get("transform", "default")
        if config == "default" and "sklearn" in sys.modules:
            from sklearn import get_config

            config = get_config().get("transform_output", "default")
        return config

    def _wrap_output(self, out, X):
        """``out`` in the container chosen by :meth:`set_output`."""
        container = self._output_container()
        if container == "default":
            return out
        columns = self.get_feature_names_out()
        if container == "pandas":
            import pandas as pd

            index = X.index if isinstance(X, pd.DataFrame) else None
            return pd.DataFrame(out, index=index, columns=columns, copy=False)
        import polars as pl

        return pl.DataFrame(out, schema=list(columns), orient="row")

    def fit_transform(self, X: Any, y: object = None) -> Any:
        """Fit on ``X`` and return it transformed.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        ndarray of shape (n_samples, n_features_out)
            ``fit(X).transform(X)``.
        """
        return self.fit(X, y).transform(X)

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(
            estimator_type=None,
            target_tags=TargetTags(required=False),
            transformer_tags=TransformerTags(preserves_dtype=["float64", "float32"]),
            input_tags=InputTags(sparse=self._accepts_sparse),
            requires_fit=self._requires_fit,
        )


class ClusterMixin:
    """``fit_predict`` and scikit-learn's ``"clusterer"`` estimator type; ``fit`` sets ``labels_``.

    Listed before :class:`TransformerMixin` among the bases, whose tags it completes.
    """

    #: defined by the estimator
    fit: Any

    def fit_predict(self, X: Any, y: object = None) -> np.ndarray:
        """Cluster ``X`` and return its labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        ndarray of int, shape (n_samples,)
            ``fit(X).labels_``.
        """
        return self.fit(X).labels_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        tags.estimator_type = "clusterer"
        return tags
