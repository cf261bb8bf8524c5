"""``SparseCoder``: a scikit-learn-style estimator around a registered sparse solver.

Layout follows the solvers (and scikit-learn's ``orthogonal_mp``), not scikit-learn's
``SparseCoder``: the dictionary ``D`` is ``(n_features, n_atoms)`` with atoms as columns and the
signals are the columns of ``Y``; ``transform(Y)`` returns codes ``(n_atoms, n_signals)``.
"""
from __future__ import annotations

import numpy as np

from .._base import ParamsMixin
from ..registry import default_registry
from .base import GRAM_AUTO_MAX_BYTES, check_dictionary, check_precompute


class SparseCoder(ParamsMixin):
    """Sparse codes of signals over a fixed dictionary, with the solver given by name.

    Parameters
    ----------
    solver : str or solver object
        A name in the ``"solver"`` registry (``"omp"``, ``"mp"``, ``"nn-omp"``,
        ``"frank-wolfe"``, or a plugin's) or an object with ``solve(D, Y)``.
    solver_params : dict, optional
        Keyword parameters of the named solver (e.g. ``{"n_nonzero_coefs": 8}`` or
        ``{"beta": 10.0}``).
    precompute_gram : {"auto", True, False}
        Compute ``D.T @ D`` once in :meth:`fit` and reuse it in every :meth:`transform` (solvers
        that accept a Gram matrix only). ``"auto"``: when it fits 512 MiB.
    registry : Registry, optional
        Where to resolve ``solver`` (default: the process-wide registry).

    Attributes
    ----------
    dictionary_ : ndarray (n_features, n_atoms)
    solver_ : the solver object
    gram_ : ndarray (n_atoms, n_atoms) or None
    n_features_in_, n_atoms_ : int

    Examples
    --------
    >>> coder = SparseCoder("omp", {"n_nonzero_coefs": 5}).fit(D)   # doctest: +SKIP
    >>> codes = coder.transform(Y)                                   # (n_atoms, n_signals)
    """

    def __init__(self, solver="omp", solver_params=None, precompute_gram="auto", registry=None):
        self.solver = solver
        self.solver_params = solver_params
        self.precompute_gram = precompute_gram
        self.registry = registry

    def fit(self, D, y=None):
        """Validate the dictionary, resolve the solver (once) and precompute the Gram matrix."""
        precompute = check_precompute(self.precompute_gram)
        params = dict(self.solver_params or {})
        registry = self.registry if self.registry is not None else default_registry()
        solver = registry.get("solver", self.solver, **params)
        if not callable(getattr(solver, "solve", None)):
            raise TypeError(
                f"solver must be a registered solver name or an object with solve(D, Y), got "
                f"{type(solver).__name__}"
            )
        D, _ = check_dictionary(D)
        self.solver_ = solver
        self.dictionary_ = D.copy()
        self.n_features_in_, self.n_atoms_ = D.shape
        use_gram = getattr(solver, "accepts_gram", False) and (
            precompute is True
            or (precompute == "auto" and D.shape[1] ** 2 * D.dtype.itemsize <= GRAM_AUTO_MAX_BYTES)
        )
        self.gram_ = np.ascontiguousarray(D.T @ D) if use_gram else None
        return self

    def _check_fitted(self):
        if not hasattr(self, "dictionary_"):
            raise ValueError("this SparseCoder is not fitted; call fit(D) first")

    def solve(self, Y):
        """The solver's full :class:`~sparsekit.solvers.base.SparseResult` for ``Y``."""
        self._check_fitted()
        if self.gram_ is not None:
            return self.solver_.solve(self.dictionary_, Y, gram=self.gram_)
        return self.solver_.solve(self.dictionary_, Y)

    def transform(self, Y):
        """Sparse codes of the columns of ``Y``: shape (n_atoms, n_signals), or (n_atoms,)."""
        return self.solve(Y).coef

    def fit_transform(self, D, Y):
        """``fit(D).transform(Y)``."""
        return self.fit(D).transform(Y)

    def inverse_transform(self, codes):
        """The approximations ``D @ codes``."""
        self._check_fitted()
        codes = np.asarray(codes)
        if codes.shape[0] != self.n_atoms_:
            raise ValueError(
                f"codes must have {self.n_atoms_} rows (one per atom), got shape {codes.shape}"
            )
        return self.dictionary_ @ codes
