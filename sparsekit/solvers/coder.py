"""``SparseCoder``: scikit-learn's ``SparseCoder`` contract around a registered sparse solver.

Layout, as scikit-learn's ``SparseCoder``: the ``dictionary`` given to the constructor has shape
``(n_components, n_features)`` (one atom per row), ``transform(X)`` takes samples as rows and
returns codes of shape ``(n_samples, n_components)`` with ``X ≈ codes @ dictionary``.

The solvers keep the signal-processing layout of :mod:`sparsekit.solvers.base` (and of
scikit-learn's ``orthogonal_mp``): ``solve(D, Y)`` with atoms as the columns of ``D`` and
signals as the columns of ``Y``. The coder passes ``D = dictionary.T`` and ``Y = X.T`` (a
transposed view of C-contiguous rows, no copy) and returns ``coef.T``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base import ParamsMixin, TransformerMixin
from .._runtime.memory import check_allocation
from .._runtime.threads import with_n_jobs
from .._typing import DataLike
from .._validation import check_array
from ..components import check_result, resolve
from ..registry import Registry
from .base import (
    GRAM_AUTO_MAX_BYTES,
    SparseResult,
    check_dictionary,
    check_precompute,
    solved_as_given,
)


class SparseCoder(TransformerMixin, ParamsMixin):
    """Sparse codes of samples over a fixed dictionary, with the solver chosen by name.

    Parameters
    ----------
    dictionary : array of shape (n_components, n_features)
        The atoms, one per row (scikit-learn's layout). Atoms are not normalised here; the
        solvers' selection rules divide by the atom norms where they need to.
    solver : str or solver object, default "omp"
        A name in the ``"solver"`` registry (``"omp"``, ``"mp"``, ``"nn-omp"``,
        ``"frank-wolfe"``, or a plugin's) or an object with ``solve(D, Y)`` (copied: the
        caller's object is never changed).
    solver_params : dict, optional
        Keyword parameters of the named solver (e.g. ``{"n_nonzero_coefs": 8}`` or
        ``{"beta": 10.0}``).
    precompute_gram : {"auto", True, False}
        Compute the Gram matrix of the atoms once in :meth:`fit` and reuse it in every
        :meth:`transform` (solvers that accept a Gram matrix only). ``"auto"``: when it fits
        512 MiB. Not for atoms whose largest entry is beyond about ``1e77`` or below
        ``1e-77`` (``4e9``, ``2e-10`` in float32): the solver rescales those and builds the
        Gram matrix of the rescaled atoms. True with a Gram matrix beyond the available
        memory raises ``InsufficientMemoryError`` (pass False).
    n_jobs : int, optional
        Threads (Numba, BLAS and the library's pools) of each call, as
        :func:`sparsekit.thread_limit` (-1: every usable CPU); default: the setting in force.
    registry : Registry, optional
        Where to resolve ``solver`` (default: the process-wide registry).

    Attributes
    ----------
    solver_ : the solver object
    gram_ : ndarray (n_components, n_components) or None
    n_components_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input with string column names only)

    Notes
    -----
    As in scikit-learn, ``fit`` learns nothing from ``X``: it validates ``X`` against the
    dictionary, resolves the solver and precomputes the Gram matrix. ``transform`` also works
    without ``fit`` (it then resolves the solver for that call).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> dictionary = rng.normal(size=(40, 16))           # 40 atoms as rows
    >>> X = rng.normal(size=(5, 16))
    >>> coder = SparseCoder(dictionary, solver="omp",
    ...                     solver_params={"n_nonzero_coefs": 5})
    >>> codes = coder.fit_transform(X)
    >>> codes.shape                                      # (n_samples, n_components)
    (5, 40)
    >>> X_hat = coder.inverse_transform(codes)
    """

    _fitted_attribute = "solver_"
    _requires_fit = False

    def __init__(
        self,
        dictionary: ArrayLike,
        *,
        solver: str | object = "omp",
        solver_params: dict[str, Any] | None = None,
        precompute_gram: bool | str = "auto",
        n_jobs: int | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.dictionary = dictionary
        self.solver = solver
        self.solver_params = solver_params
        self.precompute_gram = precompute_gram
        self.n_jobs = n_jobs
        self.registry = registry

    @property
    def _n_features_out(self):
        return self._atoms().shape[0]

    def _atoms(self):
        """The validated dictionary, shape (n_components, n_features)."""
        D, _ = check_dictionary(np.asarray(self.dictionary).T)
        return D.T

    def _check_width(self, X, atoms):
        if X.shape[1] != atoms.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features but the dictionary has {atoms.shape[1]} "
                f"(dictionary shape {atoms.shape}: one atom per row); X needs one column per "
                "dictionary column"
            )

    @with_n_jobs
    def fit(self, X: DataLike, y: object = None) -> SparseCoder:
        """Validate ``X`` against the dictionary, resolve the solver and precompute the Gram matrix.

        Nothing is learned from ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The signals, one per row.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        self
            The estimator.
        """
        precompute = check_precompute(self.precompute_gram, "precompute_gram")
        X = self._validate_input(X, reset=True)
        atoms = self._atoms()
        self._check_width(X, atoms)
        solver = resolve("solver", self.solver, self.solver_params, registry=self.registry)
        k = atoms.shape[0]
        # atoms near the ends of the float range: the solver rescales them and builds the Gram
        use_gram = (
            getattr(solver, "accepts_gram", False)
            and solved_as_given(atoms)
            and (
                precompute is True
                or (precompute == "auto" and k * k * atoms.dtype.itemsize <= GRAM_AUTO_MAX_BYTES)
            )
        )
        if use_gram and k * k * atoms.dtype.itemsize > GRAM_AUTO_MAX_BYTES:
            check_allocation(
                k * k * atoms.dtype.itemsize,
                "SparseCoder(precompute_gram=True)",
                "pass precompute_gram=False or 'auto' (the solver then chooses its own form)",
                matrices=f"the {k} x {k} Gram matrix of the atoms",
            )
        self.solver_ = solver
        self.n_components_ = k
        self.gram_ = np.ascontiguousarray(atoms @ atoms.T) if use_gram else None
        return self

    @with_n_jobs
    def solve(self, X: DataLike) -> SparseResult:
        """Run the solver on the rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The signals, one per row.

        Returns
        -------
        SparseResult
            The solver's :class:`~sparsekit.solvers.base.SparseResult`, in the solver layout:
            ``coef`` has shape (n_components, n_samples).
        """
        fitted = self.__sklearn_is_fitted__()
        X = self._validate_input(X, reset=False) if fitted else check_array(X, "X")
        atoms = self._atoms()
        self._check_width(X, atoms)
        solver = (
            self.solver_
            if fitted
            else resolve("solver", self.solver, self.solver_params, registry=self.registry)
        )
        gram = self.gram_ if fitted else None
        if atoms.dtype != X.dtype:  # outputs keep the dtype of X
            atoms = atoms.astype(X.dtype)
            # a float64 Gram rounds exactly enough to float32; a float32 one is too coarse for
            # float64 signals, so the solver then computes its own
            gram = gram.astype(X.dtype) if gram is not None and X.dtype == np.float32 else None
        result = (
            solver.solve(atoms.T, X.T, gram=gram)
            if gram is not None
            else solver.solve(atoms.T, X.T)
        )
        return check_result("solver", solver, result, registry=self.registry)

    @with_n_jobs
    def transform(self, X: DataLike, y: object = None) -> Any:
        """Compute the sparse codes of the rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The signals, one per row.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            The sparse codes (in the container ``set_output`` chose).
        """
        codes = np.ascontiguousarray(self.solve(X).coef.T)
        return self._wrap_output(codes, X)

    def inverse_transform(self, codes: ArrayLike) -> np.ndarray:
        """Compute the approximations ``codes @ dictionary``.

        Parameters
        ----------
        codes : array-like of shape (n_samples, n_components)
            Sparse codes, one column per atom.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
            The approximations ``codes @ dictionary``.

        Raises
        ------
        ValueError
            ``codes`` does not have one column per atom.
        """
        atoms = self._atoms()
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != atoms.shape[0]:
            raise ValueError(
                f"codes must have shape (n_samples, {atoms.shape[0]}) (one column per atom), "
                f"got shape {codes.shape}"
            )
        return codes @ atoms.astype(np.result_type(codes.dtype, atoms.dtype), copy=False)


__all__ = ["SparseCoder"]
