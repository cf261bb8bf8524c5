"""Parameter handling shared by components and estimators (scikit-learn compatible)."""
from __future__ import annotations

import inspect


class ParamsMixin:
    """``get_params`` / ``set_params`` read from the ``__init__`` signature, as in scikit-learn.

    Subclasses store every constructor argument unchanged under the same attribute name.
    """

    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(
            p.name for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        )

    def get_params(self, deep: bool = True) -> dict:
        out = {}
        for key in self._param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{key}__{k}", v) for k, v in value.get_params().items())
            out[key] = value
        return out

    def set_params(self, **params):
        valid = self._param_names()
        nested = {}
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
