"""Solver protocol, the result record, and the input checks shared by the sparse solvers.

Conventions (as scikit-learn's ``orthogonal_mp``): the dictionary ``D`` has shape
``(n_features, n_atoms)`` with one atom per column; the signals are the columns of ``Y``,
shape ``(n_features, n_signals)``; a 1-D ``y`` is one signal. Coefficients have shape
``(n_atoms, n_signals)`` (``(n_atoms,)`` for a 1-D ``y``). float32 and float64 are kept; when
``D`` and ``Y`` differ, both become float64.

Every ``tol`` of the solvers is a bound on the **squared** residual norm ``||y - D x||_2^2``, as
in scikit-learn (the Frank–Wolfe rule ``||r_k||_2 <= tol`` of Cherfaoui 2022, PhD thesis, §5.4,
is ``tol**2`` here).

:class:`Solver` owns the frame of every solve (template method): it checks the parameters,
validates ``D`` and ``Y`` into a ``Problem`` (signals as rows), chooses the Gram or the
residual form, calls the one its subclass supplies (``_solve_gram`` / ``_solve_residual``,
returning :class:`Codes`), warns about premature stops and returns the public
:class:`SparseResult`.

Scale: squared norms and inner products of data near the ends of the floating-point range
overflow or underflow (``||y||^2`` is ``inf`` for entries of ``1e155`` in float64, ``1e20`` in
float32, and loses its digits below ``1e-154``). A solver that states how its parameters scale
(``_scaled_params``) gets ``D / 2^a`` and ``Y / 2^b`` instead when the largest ``|D|`` or ``|Y|``
is outside ``[2^-q, 2^q]`` (``q`` a quarter of the dtype's exponent range: about ``1e77`` in
float64, ``4e9`` in float32), with ``2^a`` and ``2^b`` the powers of two just above the largest
``|D|`` and ``|Y|``; it solves for the codes ``x 2^(a-b)`` and the frame multiplies the result
back (powers of two: the scaling itself rounds nothing). Data in that range are solved as given.
"""

from __future__ import annotations

import copy
import numbers
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._base import ParamsMixin
from .._runtime.memory import check_allocation
from .._runtime.small_blas import one_blas_thread
from .._validation import check_array, check_scalar
from . import _cpu
from ._driver import run_correlation_steps

#: bytes a solver may spend on the Gram matrix D^T D when ``precompute="auto"``
GRAM_AUTO_MAX_BYTES = 512 * 2**20

#: a Gram matrix ``D.T @ D`` of at most this many multiply-adds (``n_features * n_atoms**2``,
#: about 15 ms on one core) is built on one BLAS thread: threaded OpenBLAS keeps its threads
#: spinning after a call, and they took the cores from the solver's pool that runs next
#: (OMP, 256 x 1024, 2,000 signals, 2 threads: 52 ms instead of 61 ms, best of 30)
GRAM_ONE_THREAD_MAX_MADDS = 2**28

STOP_REASONS = {
    _cpu.STOP_RUNNING: "running",
    _cpu.STOP_MAX_ITER: "max_iter",
    _cpu.STOP_TOL: "tol",
    _cpu.STOP_NO_CORRELATION: "no_correlation",
    _cpu.STOP_DEPENDENT: "linear_dependence",
    _cpu.STOP_RESELECTED: "reselected",
    _cpu.STOP_ZERO_STEP: "zero_step",
    _cpu.STOP_GAP: "gap",
}


class PrematureStopWarning(RuntimeWarning):
    """Warn that OMP stopped before its number of atoms although the residual is not zero.

    The next atom is linearly dependent on the support, or every atom left is orthogonal to the
    residual (duplicate or dependent columns).
    """


@dataclass
class SparseResult:
    """The result of a sparse solver.

    Parameters
    ----------
    coef : ndarray, shape (n_atoms, n_signals) or (n_atoms,)
        Coefficients ``x`` with ``Y ~ D x``, dtype of the inputs.
    support : ndarray of int64, shape (n_steps, n_signals) or (n_steps,)
        ``support[k, j]``: the atom selected at iteration ``k`` for signal ``j``, in order of
        selection, ``-1`` after the signal stopped. For OMP this is the support itself; MP and
        Frank–Wolfe may select an atom more than once.
    residual_norms : ndarray, shape (n_steps + 1, n_signals) or (n_steps + 1,)
        ``||y - D x_k||_2`` after ``k`` iterations (row 0 is ``||y||_2``), NaN after the signal
        stopped.
    n_iter : ndarray of int64, shape (n_signals,), or int
        Iterations (atoms added, for OMP) per signal.
    stop_reason : ndarray of str, shape (n_signals,), or str
        Why each signal stopped: ``"max_iter"``, ``"tol"``, ``"no_correlation"``,
        ``"linear_dependence"``, ``"reselected"``, ``"zero_step"`` or ``"gap"``.
    path : ndarray, optional
        OMP path mode only, shape (n_steps, n_steps, n_signals): ``path[k, s, j]`` is the
        coefficient of atom ``support[s, j]`` in the ``(k+1)``-atom solution (0 for ``s > k``).
        :meth:`dense_path` expands it to scikit-learn's ``return_path`` layout.
    steps, gaps : ndarray, optional
        Frank–Wolfe only, shape (n_steps, n_signals): the step ``gamma_k`` and the duality gap
        ``g_k`` of every iteration (NaN where not computed).
    extra : dict, optional
        Solver-specific details (Frank–Wolfe: ``extra["pruned"]``, the coefficients set to 0 as
        rounding).
    """

    coef: np.ndarray
    support: np.ndarray
    residual_norms: np.ndarray
    n_iter: object
    stop_reason: object = None
    path: np.ndarray | None = None
    steps: np.ndarray | None = None
    gaps: np.ndarray | None = None
    extra: dict = field(default_factory=dict)

    def dense_path(self) -> np.ndarray:
        """Expand the OMP path into dense coefficients.

        This is the layout of scikit-learn's ``orthogonal_mp(..., return_path=True)``. After a
        signal stopped its last solution is repeated (scikit-learn instead truncates every
        signal's path to the shortest one).

        Returns
        -------
        ndarray of shape (n_atoms, n_signals, n_steps), or (n_atoms, n_steps) for a 1-D ``y``
            ``[:, j, k]`` is the ``(k+1)``-atom solution of signal ``j``.

        Raises
        ------
        ValueError
            The result has no path (solve with ``return_path=True``).
        """
        if self.path is None:
            raise ValueError("this result has no path; solve with return_path=True")
        one = self.coef.ndim == 1
        path = self.path[..., None] if one else self.path
        support = self.support[:, None] if one else self.support
        n_iter = np.atleast_1d(self.n_iter)
        n_atoms = self.coef.shape[0]
        n_steps, _, n_sig = path.shape
        out = np.zeros((n_atoms, n_sig, n_steps), dtype=self.coef.dtype)
        for j in range(n_sig):
            kj = int(n_iter[j])
            idx = support[:kj, j]
            for k in range(n_steps):
                kk = min(k, kj - 1)
                if kk >= 0:
                    out[idx[: kk + 1], j, k] = path[kk, : kk + 1, j]
        return out[:, 0, :] if one else out


@dataclass
class Codes:
    """What a solver's mathematics returns: the codes in the compute layout (one row per signal).

    :meth:`Solver.solve` turns it into the public :class:`SparseResult` (signals as columns, the
    signal axis dropped for a 1-D ``y``). :meth:`empty` allocates the built-in solvers' arrays.

    Parameters
    ----------
    support : ndarray of int64, shape (n_signals, n_steps)
        ``support[j, k]``: the atom selected at step ``k`` for signal ``j``, ``-1`` after it
        stopped.
    residual_norms : ndarray, shape (n_signals, n_rows)
        ``||y_j - D x_k||_2`` after ``k`` steps (column 0 is ``||y_j||_2``), NaN after the signal
        stopped.
    n_iter : ndarray of int64, shape (n_signals,)
        Steps per signal.
    status : ndarray, shape (n_signals,)
        Why each signal stopped: the compute layer's integer codes (``_cpu.STOP_*``, named by
        ``STOP_REASONS``) or the reasons as strings.
    coef : ndarray, shape (n_signals, n_atoms), optional
        Dense coefficients; leave it None and give ``values`` when the coefficients are listed
        per selected atom.
    values : ndarray, shape (n_signals, n_steps), optional
        ``values[j, k]``: the coefficient of atom ``support[j, k]`` (OMP's layout), scattered
        into ``coef`` by ``scatter``.
    arrays : dict of ndarray
        Per-signal arrays with the signals on the first axis (OMP's ``path``, Frank–Wolfe's
        ``steps`` and ``gaps``), set as attributes of the result with the signals last.
    extra : dict
        Goes to ``SparseResult.extra``; an array of shape (n_signals,) becomes a scalar for a
        1-D ``y``.
    """

    support: np.ndarray
    residual_norms: np.ndarray
    n_iter: np.ndarray
    status: np.ndarray
    coef: np.ndarray | None = None
    values: np.ndarray | None = None
    arrays: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)

    @classmethod
    def empty(cls, problem: Problem, n_steps: int, *, by_support: bool = False) -> Codes:
        """Allocate the arrays for ``n_steps`` steps of every signal of ``problem``.

        Support ``-1``, residual norms NaN, ``n_iter`` and ``status`` 0, and zero coefficients
        (dense ``coef``, or ``values`` per selected atom when ``by_support``).

        Parameters
        ----------
        problem : Problem
            The checked problem (its signals, atoms and dtype).
        n_steps : int
            The most steps a signal may take.
        by_support : bool, default False
            Store the coefficients per selected atom (``values``) instead of dense ``coef``.

        Returns
        -------
        Codes
            The empty codes.
        """
        n_sig = problem.n_signals
        coef_shape = (n_sig, n_steps) if by_support else (n_sig, problem.n_atoms)
        coef = np.zeros(coef_shape, dtype=problem.dtype)
        return cls(
            support=np.full((n_sig, n_steps), -1, dtype=np.int64),
            residual_norms=nan_rows(n_sig, n_steps + 1, problem.dtype),
            n_iter=np.zeros(n_sig, dtype=np.int64),
            status=np.zeros(n_sig, dtype=np.int64),
            coef=None if by_support else coef,
            values=coef if by_support else None,
        )


@dataclass
class Problem:
    """A validated ``(D, Y)`` pair and the call's settings: ``params`` (what the solver's
    ``_check_params`` returned) and ``n_steps``.

    The signals are kept as given (``Y``, one per column); the compute layout (signals as
    C-contiguous rows, ``Yt``), the squared norms ``y_sq`` and the correlation floor are built
    the first time they are read, so a solver that works block by block (OMP's Gram form) never
    makes a transposing copy of all the signals.
    """

    D: np.ndarray  # (n_features, n_atoms), C-contiguous
    Y: np.ndarray  # (n_features, n_signals), C-contiguous
    norms_sq: np.ndarray  # (n_atoms,), dtype of D
    one_d: bool
    params: Any = None
    n_steps: int = 0
    #: ``D`` and ``Y`` here are the given ones divided by ``2**d_exp`` and ``2**y_exp``
    d_exp: int = 0
    y_exp: int = 0
    _Yt: np.ndarray | None = field(default=None, repr=False)
    _y_sq: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_features(self):
        return self.D.shape[0]

    @property
    def n_atoms(self):
        return self.D.shape[1]

    @property
    def n_signals(self):
        return self.Y.shape[1]

    @property
    def dtype(self):
        return self.D.dtype

    @property
    def Yt(self) -> np.ndarray:
        """The signals as C-contiguous rows, shape (n_signals, n_features) (built once)."""
        if self._Yt is None:
            self._Yt = np.ascontiguousarray(self.Y.T)
        return self._Yt

    @property
    def signal_rows(self) -> np.ndarray:
        """The signals as rows, shape (n_signals, n_features): ``Yt`` once built, else the
        transposed view ``Y.T`` (no copy)."""
        return self._Yt if self._Yt is not None else self.Y.T

    @property
    def y_sq(self) -> np.ndarray:
        """``||y_j||^2`` per signal, float64, shape (n_signals,) (:func:`row_sq_norms` of
        ``Yt``, computed once; a block solver may set it, from the same function on blocks of
        rows, which gives the same bits)."""
        if self._y_sq is None:
            self._y_sq = row_sq_norms(self.Yt)
        return self._y_sq

    @y_sq.setter
    def y_sq(self, value: np.ndarray) -> None:
        self._y_sq = value

    @property
    def corr_floor(self) -> np.ndarray:
        """The per-signal correlation floor (:func:`correlation_floor`), float64."""
        return floor_of(self.y_sq, self.dtype)

    @property
    def Dt(self):
        """The atoms as contiguous rows, shape (n_atoms, n_features) (built once)."""
        if not hasattr(self, "_Dt"):
            self._Dt = np.ascontiguousarray(self.D.T)
        return self._Dt

    def gram(self, gram=None):
        """``D.T @ D``: the validated user matrix, or computed with BLAS."""
        if gram is not None:
            return check_gram(gram, self.D, self.norms_sq)
        n_features, n_atoms = self.D.shape
        with one_blas_thread(n_features * n_atoms * n_atoms <= GRAM_ONE_THREAD_MAX_MADDS):
            G = self.D.T @ self.D
        return np.ascontiguousarray(G)

    def correlations(self):
        """``Y.T D`` (one row of correlations per signal), by BLAS."""
        return self.Yt @ self.D


def prepare(D, Y, *, rescale: bool = False) -> Problem:
    """Validate ``D`` and ``Y`` once (the component boundary); see :func:`check_dictionary`
    and :func:`check_signals` for the rules and errors. With ``rescale``, data outside the
    safe range of :func:`scale_exponents` are divided by powers of two (``Problem.d_exp``,
    ``Problem.y_exp``)."""
    D = check_array(D, "D")
    D, Y, one_d = _checked_signals(Y, D)
    d_exp, y_exp = scale_exponents(D, Y) if rescale else (0, 0)
    if d_exp:
        D = np.ldexp(D, -d_exp)
    if y_exp:
        Y = np.ldexp(Y, -y_exp)
    D, norms_sq = check_dictionary(D)
    return Problem(D=D, Y=Y, norms_sq=norms_sq, one_d=one_d, d_exp=d_exp, y_exp=y_exp)


def _max_exponent(A):
    """The exponent ``e`` of the largest ``|A|`` (``2^(e-1) <= max |A| < 2^e``; 0 for zeros)."""
    if A.size == 0:
        return 0
    return int(np.frexp(max(float(A.max()), -float(A.min())))[1])


def scale_exponents(D: np.ndarray, Y: np.ndarray) -> tuple[int, int]:
    """The powers of two to divide ``D`` and ``Y`` by before a solve, ``(0, 0)`` for none.

    ``(0, 0)`` when the largest ``|D|`` and ``|Y|`` are both within ``[2^-q, 2^q]``,
    ``q = maxexp // 4`` of the dtype (256 in float64, 32 in float32): there the squared norms
    and inner products the solvers form stay far from overflow and underflow. Otherwise the
    exponents of the largest ``|D|`` and ``|Y|``, so that both end up in ``[1/2, 1)``.

    Parameters
    ----------
    D : ndarray of shape (n_features, n_atoms)
        The validated dictionary.
    Y : ndarray of shape (n_features, n_signals)
        The validated signals, dtype of ``D``.

    Returns
    -------
    tuple of int
        ``(d_exp, y_exp)``.
    """
    d_exp, y_exp = _max_exponent(D), _max_exponent(Y)
    # an all-zero Y (exponent 0) is in range; the codes are 0 at any scale
    if _in_range(d_exp, D.dtype) and _in_range(y_exp, D.dtype):
        return 0, 0
    return d_exp, y_exp


def _in_range(exp, dtype):
    return abs(exp) <= np.finfo(dtype).maxexp // 4


def solved_as_given(A: np.ndarray) -> bool:
    """Whether the largest ``|A|`` is in the range where :func:`scale_exponents` rescales
    nothing (the Gram matrix of such atoms is accurate)."""
    return _in_range(_max_exponent(A), A.dtype)


def ldexp_param(value: float | np.ndarray | None, exp: int):
    """``value * 2**exp`` for a parameter of a rescaled solve (None stays None; overflow
    saturates at the largest float64, underflow gives 0)."""
    if value is None:
        return None
    with np.errstate(over="ignore", under="ignore"):
        out = np.minimum(
            np.ldexp(np.asarray(value, dtype=np.float64), exp), np.finfo(np.float64).max
        )
    return float(out) if out.ndim == 0 else out


def unscale_result(result: SparseResult, d_exp: int, y_exp: int, dtype) -> SparseResult:
    """Multiply a result solved on ``D / 2^d_exp`` and ``Y / 2^y_exp`` back (in place).

    ``coef`` and ``path`` by ``2^(y_exp - d_exp)``, ``residual_norms`` by ``2^y_exp`` and
    ``gaps`` (Frank–Wolfe's duality gaps, squared norms) by ``2^(2 y_exp)``; ``steps`` and
    ``extra`` are scale-free. Codes that overflow the dtype are a ``ValueError``.
    """
    code_exp = y_exp - d_exp
    with np.errstate(over="ignore", under="ignore"):
        coef = np.ldexp(result.coef, code_exp)
        if not np.isfinite(coef).all():
            raise ValueError(
                f"the codes overflow {np.dtype(dtype).name}: the largest |Y| is about 2^{y_exp} "
                f"and the largest |D| about 2^{d_exp}, so codes reach about 2^{code_exp}; "
                "rescale D or Y (e.g. divide Y by its largest entry and multiply the codes "
                "back in a wider type)"
            )
        result.coef = coef
        result.residual_norms = np.ldexp(result.residual_norms, y_exp)
        if result.path is not None:
            result.path = np.ldexp(result.path, code_exp)
        if result.gaps is not None:
            result.gaps = np.ldexp(result.gaps, 2 * y_exp)
    return result


class Solver(ParamsMixin):
    """Base class of the sparse solvers: ``solve(D, Y) -> SparseResult``.

    :meth:`solve` is the frame shared by every solver; a subclass supplies its mathematics:

    - ``_solve_gram(problem, gram) -> Codes``: the solve on the Gram matrix ``gram = D.T @ D``
      (validated, or built once), and/or
    - ``_solve_residual(problem) -> Codes``: the solve on explicit residuals
      (:meth:`_iterate_residual` runs the usual loop: one BLAS product ``R D`` per step);

    and optionally ``_check_params()`` (validates the parameters, at construction, in
    ``set_params`` and at every solve; what it returns is ``problem.params``), ``_n_steps``
    (the most steps a signal may take) and ``premature_stops`` (the stop codes that warn).
    A solver with both forms chooses with its ``precompute`` parameter (``"auto"``: the Gram
    matrix when it pays, ``gram_pays``); ``accepts_gram`` is True when it has
    ``_solve_gram``. A subclass may also override :meth:`solve` itself (the protocol is only
    ``solve(D, Y, *, gram=None) -> SparseResult``).
    """

    name = "solver"
    #: the solver can use a precomputed Gram matrix ``D.T @ D`` (``solve(..., gram=G)``); by
    #: default, whether the class supplies ``_solve_gram``
    accepts_gram = False
    #: stop codes (``_cpu.STOP_*``) after which a signal short of its steps with a residual
    #: that is not zero warns with :class:`~sparsekit.solvers.base.PrematureStopWarning`
    premature_stops: tuple = ()

    #: which of ``_solve_gram`` and ``_solve_residual`` the class supplies (set per subclass)
    _forms = (False, False)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._forms = (
            cls._solve_gram is not Solver._solve_gram,
            cls._solve_residual is not Solver._solve_residual,
        )
        if "accepts_gram" not in vars(cls):
            cls.accepts_gram = cls._forms[0] or cls.accepts_gram

    def solve(self, D: ArrayLike, Y: ArrayLike, *, gram: ArrayLike | None = None) -> SparseResult:
        """Compute the sparse codes of the columns of ``Y`` over the atoms (columns) of ``D``.

        Parameters
        ----------
        D : array of shape (n_features, n_atoms)
            The dictionary, one atom per column (no zero column).
        Y : array of shape (n_features, n_signals) or (n_features,)
            The signals, one per column (a 1-D ``y`` is one signal).
        gram : array of shape (n_atoms, n_atoms), optional
            Precomputed ``D.T @ D`` (its diagonal is checked against ``D``), for the solvers
            with ``accepts_gram``. For data the solver rescales (see the module notes) the
            Gram matrix of the rescaled atoms is built instead.

        Returns
        -------
        SparseResult
            In the dtype of the inputs (float64 when ``D`` and ``Y`` differ).

        Raises
        ------
        ValueError
            Bad parameters, a ``D`` or ``Y`` of the wrong shape or with non-finite values, a
            zero atom, a ``gram`` that does not match ``D`` or that the solver does not use.
        TypeError
            A parameter of the wrong type, or a subclass that supplies neither ``_solve_gram``
            nor ``_solve_residual``.
        """
        if gram is not None and not self.accepts_gram:
            raise ValueError(f"{self.name} does not use a Gram matrix; call solve(D, Y)")
        use_gram, use_residual = self._forms
        if not (use_gram or use_residual):
            raise TypeError(
                f"{type(self).__name__} supplies neither _solve_gram(problem, gram) nor "
                "_solve_residual(problem): a Solver subclass implements one of them (or "
                "overrides solve)"
            )
        params = self._check_params()
        rescale = type(self)._scaled_params is not Solver._scaled_params
        problem = prepare(D, Y, rescale=rescale)
        solver = self
        if problem.d_exp or problem.y_exp:
            # the same solver for the data divided by powers of two (see the module notes)
            solver = copy.copy(self)
            solver.set_params(**self._scaled_params(problem.d_exp, problem.y_exp))
            params = solver._check_params()
            # a Gram matrix of such atoms has overflowed or lost its digits: the Gram form
            # rebuilds it from the rescaled atoms
            gram_given, gram = gram is not None, None
        else:
            gram_given = gram is not None
        problem.params = params
        problem.n_steps = solver._n_steps(problem)
        if use_gram and use_residual:
            use_gram = gram_given or gram_pays(
                problem.n_atoms,
                problem.n_signals,
                problem.n_steps,
                problem.dtype.itemsize,
                check_precompute(getattr(solver, "precompute", "auto")),
            )
        if use_gram and gram is None:
            check_gram_memory(problem, self.name, use_residual)
        codes = (
            solver._solve_gram(problem, problem.gram(gram))
            if use_gram
            else solver._solve_residual(problem)
        )
        if self.premature_stops:
            warn_premature(
                problem,
                codes.status,
                codes.n_iter,
                codes.residual_norms,
                self.name.upper(),
                reasons=self.premature_stops,
            )
        result = result_of(codes, problem)
        if problem.d_exp or problem.y_exp:
            unscale_result(result, problem.d_exp, problem.y_exp, problem.dtype)
        return result

    def _scaled_params(self, d_exp: int, y_exp: int) -> dict:
        """The parameters (``set_params`` keywords) that solve ``D / 2^d_exp`` and
        ``Y / 2^y_exp`` as this solver solves ``D`` and ``Y``, whose codes are those of ``D``
        and ``Y`` times ``2^(d_exp - y_exp)``.

        A solver that overrides it is solved on such rescaled data when ``D`` or ``Y`` is near
        the ends of the floating-point range (:func:`scale_exponents`), and its result is
        multiplied back (:func:`unscale_result`); by default the data are solved as given.
        Scale with :func:`ldexp_param`: a ``tol`` on ``||y - D x||^2`` becomes
        ``tol * 2^(-2 y_exp)``.
        """
        raise NotImplementedError

    def _check_params(self):
        """Validate the parameters the sparse solvers share, for those the solver has:
        ``n_nonzero_coefs`` and ``max_iter`` (None or an int > 0), ``tol`` (None or a real
        number >= 0) and ``precompute`` (``"auto"``, True or False).

        Returns ``tol`` for the compute layer (-1.0 for None); what ``_check_params`` returns
        is ``problem.params``. A solver with other parameters extends it
        (``super()._check_params()``) or replaces it.
        """
        for name in ("n_nonzero_coefs", "max_iter"):
            value = getattr(self, name, None)
            if value is not None:
                check_scalar(value, name, kind=numbers.Integral, low=0)
        if hasattr(self, "precompute"):
            check_precompute(self.precompute)
        return check_tol(getattr(self, "tol", None))

    def _n_steps(self, problem: Problem) -> int:
        """The most steps a signal may take: for a solver with ``n_nonzero_coefs``,
        :func:`n_steps_for`; else ``max_iter`` (when not None); else 10% of the atoms, at
        least 1."""
        if hasattr(self, "n_nonzero_coefs"):
            return n_steps_for(problem, self.n_nonzero_coefs, getattr(self, "tol", None))
        max_iter = getattr(self, "max_iter", None)
        return int(max_iter) if max_iter is not None else max(int(0.1 * problem.n_atoms), 1)

    def _solve_gram(self, problem: Problem, gram: np.ndarray) -> Codes:
        """The solve on the Gram matrix ``gram = D.T @ D``."""
        raise NotImplementedError

    def _solve_residual(self, problem: Problem) -> Codes:
        """The solve on explicit residuals ``R = Y - D X``."""
        raise NotImplementedError

    @staticmethod
    def _iterate_residual(
        problem: Problem,
        codes: Codes,
        tol: float,
        step: Callable,
        *,
        rows: slice | None = None,
        done=None,
    ) -> None:
        """The residual form's loop for the signals ``rows`` (a slice; None: all).

        Starts from ``R = Y`` (a copy, signals as rows), ``residual_norms[:, 0] = ||y||``,
        status ``"max_iter"``; a signal with ``||y||^2 <= tol`` (``tol >= 0``) or with ``done``
        set stops before the first step with status ``"tol"``. Then, while a signal is active
        and ``k < problem.n_steps``, ``step(k, active_rows, C, R, active)`` advances the
        signals ``active_rows`` (indices into ``rows``) given their correlations
        ``C = R[active_rows] @ D`` (one BLAS product); it updates ``R`` and clears ``active``
        for the signals that stop.
        """
        Yt, y_sq, status, res = problem.Yt, problem.y_sq, codes.status, codes.residual_norms
        if rows is not None:
            Yt, y_sq, status, res = Yt[rows], y_sq[rows], status[rows], res[rows]
        R = Yt.copy()
        active = np.ones(R.shape[0], dtype=np.bool_)
        status[:] = _cpu.STOP_MAX_ITER
        res[:, 0] = np.sqrt(y_sq)
        if tol >= 0:
            stop = y_sq <= tol
            status[stop] = _cpu.STOP_TOL
            active[stop] = False
        if done is not None:
            status[done] = _cpu.STOP_TOL
            active[done] = False
        run_correlation_steps(
            R, problem.D, active, problem.n_steps, lambda k, act, C: step(k, act, C, R, active)
        )


# ---------------------------------------------------------------------------------------------
# validation shared by the solvers
# ---------------------------------------------------------------------------------------------
def check_dictionary(D: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validate the dictionary ``D`` (n_features, n_atoms) and compute its column norms.

    Parameters
    ----------
    D : array-like of shape (n_features, n_atoms)
        The dictionary.

    Returns
    -------
    D : ndarray of shape (n_features, n_atoms)
        The validated dictionary.
    norms_sq : ndarray of shape (n_atoms,)
        The squared column norms.

    Raises
    ------
    ValueError
        A zero column (named by its index): it can never be selected usefully and breaks the
        normalised selection rules. A column is zero when its squared norm is 0 once ``D`` is
        divided by the power of two of its largest entry: tiny data are not zero, a column
        below about ``1e-162`` times the largest entry (``1e-23`` in float32) is.

    Notes
    -----
    ``norms_sq`` are the squared norms of ``D`` as given: for data near the ends of the
    floating-point range they overflow or underflow (``Solver.solve`` rescales such data).
    """
    D = check_array(D, "D")
    norms_sq = np.einsum("ij,ij->j", D, D)
    zero = norms_sq == 0
    if zero.any():  # an underflow of tiny data, or a zero column next to the largest entry
        scaled = np.ldexp(D, -_max_exponent(D))
        zero = np.einsum("ij,ij->j", scaled, scaled) == 0
    zero = np.flatnonzero(zero)
    if zero.size:
        shown = ", ".join(str(int(i)) for i in zero[:10]) + (" ..." if zero.size > 10 else "")
        raise ValueError(
            f"D has {zero.size} zero column(s) (atom index {shown}); every atom needs a "
            "non-zero norm: drop those columns, e.g. D[:, np.linalg.norm(D, axis=0) > 0]"
        )
    return D, norms_sq


def check_signals(Y: ArrayLike, D: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """Validate the signals ``Y`` against the dictionary ``D``.

    Parameters
    ----------
    Y : array-like of shape (n_features, n_signals) or (n_features,)
        The signals.
    D : ndarray of shape (n_features, n_atoms)
        The validated dictionary.

    Returns
    -------
    D : ndarray
        The dictionary, converted to float64 when the two dtypes differ.
    Yt : ndarray of shape (n_signals, n_features)
        ``Y.T``, C-contiguous.
    one_d : bool
        Whether ``Y`` was 1-D.
    """
    D, Y, one_d = _checked_signals(Y, D)
    return D, np.ascontiguousarray(np.asarray(Y).T), one_d


def _checked_signals(Y, D):
    """:func:`check_signals` without the transposing copy: ``Y`` as ``(n_features,
    n_signals)``, C-contiguous (a 1-D ``y`` as one column)."""
    ndim = np.ndim(Y)
    if ndim not in (1, 2):
        raise ValueError(f"Y must be 1-D (one signal) or 2-D (n_features, n_signals), got {ndim}-D")
    Y = check_array(Y, "Y", ndim=ndim)
    one_d = ndim == 1
    n_rows = Y.shape[0]
    if n_rows != D.shape[0]:
        raise ValueError(
            f"D has {D.shape[0]} rows (features) but Y has {n_rows}; signals are the columns "
            f"of Y, so Y must have shape ({D.shape[0]}, n_signals) (transpose it if your "
            "signals are rows)"
        )
    if Y.dtype != D.dtype:
        Y = Y.astype(np.float64)
        D = D.astype(np.float64)
    return D, (Y[:, None] if one_d else Y), one_d


def check_gram(gram, D, norms_sq):
    """Validate a precomputed Gram matrix ``D.T @ D`` (shape, finiteness, diagonal).

    A float32 Gram given for a float64 problem (a float32 ``D`` whose signals ``Y`` are
    float64, so that both were promoted) is checked at float32 precision, then recomputed from
    ``D`` in float64, so that the solve keeps float64 accuracy.
    """
    n_atoms = D.shape[1]
    given = check_array(gram, "gram")
    G = given.astype(D.dtype, copy=False)
    if G.shape != (n_atoms, n_atoms):
        raise ValueError(f"gram must be D.T @ D of shape ({n_atoms}, {n_atoms}), got {G.shape}")
    diag = np.diagonal(G)
    low_precision = given.dtype == np.float32 or D.dtype == np.float32
    tol = 1e-4 if low_precision else 1e-8
    if not np.allclose(diag, norms_sq, rtol=tol, atol=0):
        bad = int(np.argmax(np.abs(diag - norms_sq)))
        raise ValueError(
            f"gram does not match D: gram[{bad}, {bad}] = {diag[bad]:g} but the squared norm "
            f"of atom {bad} is {norms_sq[bad]:g}; pass gram = D.T @ D for this D"
        )
    if given.dtype != D.dtype:
        G = np.ascontiguousarray(D.T @ D)
    return G


def check_n_nonzero(value: int | None, n_atoms: int, name: str = "n_nonzero_coefs") -> int:
    """Check a number of non-zero coefficients: a positive int ``<= n_atoms``.

    More non-zero coefficients than atoms is a ``ValueError``, as in scikit-learn's
    ``orthogonal_mp``: no signal can use more atoms than the dictionary has, so such a value is
    a mistake (often a transposed dictionary), not a request to clip.

    Parameters
    ----------
    value : int or None
        The requested number of non-zero coefficients (``None``: 10% of the atoms, at least 1).
    n_atoms : int
        The number of atoms.
    name : str, default "n_nonzero_coefs"
        The argument's name, for the error messages.

    Returns
    -------
    int
        The number of non-zero coefficients.

    Raises
    ------
    ValueError
        More than ``n_atoms``, as in scikit-learn's ``orthogonal_mp``.
    """
    if value is None:
        return max(int(0.1 * n_atoms), 1)
    value = check_scalar(value, name, kind=numbers.Integral, low=0)
    if value > n_atoms:
        raise ValueError(
            f"{name}={value} is larger than the number of atoms ({n_atoms}, the columns of D); "
            f"pass {name} <= {n_atoms}, or check that D is (n_features, n_atoms)"
        )
    return value


def n_steps_for(problem, n_nonzero_coefs, tol):
    """The most atoms a signal may get: ``n_nonzero_coefs`` (checked), or the rank cap with tol."""
    if tol is not None and n_nonzero_coefs is None:
        return min(problem.n_atoms, problem.n_features)
    return check_n_nonzero(n_nonzero_coefs, problem.n_atoms)


def check_tol(tol: float | None, name: str = "tol") -> float:
    """Check a tolerance: ``None`` or a real number >= 0.

    Parameters
    ----------
    tol : float or None
        A tolerance.
    name : str, default "tol"
        The argument's name, for the error messages.

    Returns
    -------
    float
        ``tol``, or -1.0 for ``None`` (not used, as the compute layer reads it).
    """
    if tol is None:
        return -1.0
    return check_scalar(tol, name, low=0.0, low_inclusive=True)


def correlation_floor(Yt, norms_sq):
    """Per-signal threshold below which a (normalised) correlation counts as zero.

    ``|<d_i, r>| / ||d_i|| <= 16 eps ||y||``: at that level the residual is orthogonal to every
    atom up to rounding, and another step cannot improve the fit.
    """
    return floor_of(row_sq_norms(Yt), Yt.dtype)


def row_sq_norms(Yt):
    """``||y_j||^2`` of the rows of ``Yt`` in float64 (the same bits for a block of rows as for
    the whole array when the rows are C-contiguous)."""
    return np.einsum("ij,ij->i", Yt, Yt, dtype=np.float64)


def floor_of(y_sq, dtype):
    """:func:`correlation_floor` from the squared signal norms ``y_sq``: ``16 eps sqrt(y_sq)``."""
    return (16.0 * np.finfo(dtype).eps) * np.sqrt(y_sq)


def check_gram_memory(problem, name, has_residual_form):
    """Refuse (:class:`~sparsekit._runtime.memory.InsufficientMemoryError`, naming what to pass
    instead) or warn before building a Gram matrix ``D.T @ D`` larger than
    ``GRAM_AUTO_MAX_BYTES`` that would not fit the available memory."""
    n = problem.n_atoms
    nbytes = n * n * problem.dtype.itemsize
    if nbytes <= GRAM_AUTO_MAX_BYTES:
        return
    instead = (
        "pass precompute=False (the residual form needs no Gram matrix) or precompute='auto'"
        if has_residual_form
        else f"{name} always works on the Gram matrix: use fewer atoms (columns of D)"
    )
    check_allocation(
        nbytes, f"{name} with the Gram matrix D.T @ D", instead, matrices=f"{n} x {n} entries"
    )


def gram_pays(n_atoms, n_signals, n_steps, itemsize, precompute):
    """Whether to build ``D.T @ D`` for this call.

    Building it costs ``n_features n_atoms^2``; the residual form costs
    ``n_features n_atoms`` per signal and step, so the Gram pays when
    ``n_atoms < n_signals * n_steps`` (and fits ``GRAM_AUTO_MAX_BYTES``).
    """
    if precompute is True:
        return True
    if precompute is False:
        return False
    return n_atoms * n_atoms * itemsize <= GRAM_AUTO_MAX_BYTES and n_atoms < n_signals * n_steps


def check_precompute(value, name="precompute"):
    """``value`` as True, False or ``"auto"`` (NumPy booleans too); anything else, a Gram
    matrix included, is a ``ValueError`` that says where a precomputed Gram matrix goes."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    if np.ndim(value) == 2:
        where = (
            "pass it as solve(D, Y, gram=G)"
            if name == "precompute"
            else f"{name}=True computes it once in fit"
        )
        raise ValueError(
            f"{name} must be True, False or 'auto', got an array of shape {np.shape(value)}; "
            f"for a precomputed Gram matrix D.T @ D, {where}"
        )
    raise ValueError(f"{name} must be True, False or 'auto', got {value!r}")


_REASON_NAMES = np.array(
    [STOP_REASONS.get(code, "") for code in range(max(STOP_REASONS) + 1)], dtype=object
)


def stop_reasons(status, one_d):
    """The stop reasons as strings (``_cpu.STOP_*`` codes are named by ``STOP_REASONS``)."""
    status = np.asarray(status)
    if status.dtype.kind in "iu":
        bad = (status < 0) | (status >= _REASON_NAMES.size)
        if bad.any():
            raise KeyError(int(status[bad][0]))
        names = _REASON_NAMES[status]
    else:
        names = status.astype(object)
    return names[0] if one_d else names


def finish(coef_rows, support_rows, res_rows, n_iter, status, one_d, **extra_arrays):
    """Turn the signal-major compute arrays into a :class:`SparseResult` (public layout)."""
    coef = coef_rows.T
    support = support_rows.T
    res = res_rows.T
    if one_d:
        out = SparseResult(
            coef=np.ascontiguousarray(coef[:, 0]),
            support=np.ascontiguousarray(support[:, 0]),
            residual_norms=np.ascontiguousarray(res[:, 0]),
            n_iter=int(n_iter[0]),
            stop_reason=stop_reasons(status, True),
        )
    else:
        out = SparseResult(
            coef=np.ascontiguousarray(coef),
            support=np.ascontiguousarray(support),
            residual_norms=np.ascontiguousarray(res),
            n_iter=n_iter.astype(np.int64),
            stop_reason=stop_reasons(status, False),
        )
    for key, value in extra_arrays.items():
        if value is None:
            continue
        value = np.moveaxis(value, 0, -1)  # signals last
        setattr(out, key, np.ascontiguousarray(value[..., 0] if one_d else value))
    return out


def nan_rows(n_sig, n_cols, dtype):
    out = np.empty((n_sig, n_cols), dtype=dtype)
    out.fill(np.nan)
    return out


def result_of(codes: Codes, problem: Problem) -> SparseResult:
    """The public :class:`SparseResult` of a solver's :class:`Codes` (see :func:`finish`)."""
    coef = (
        codes.coef
        if codes.coef is not None
        else scatter(codes.support, codes.values, problem.n_atoms)
    )
    out = finish(
        coef,
        codes.support,
        codes.residual_norms,
        codes.n_iter,
        codes.status,
        problem.one_d,
        **codes.arrays,
    )
    for key, value in codes.extra.items():
        if problem.one_d and isinstance(value, np.ndarray) and value.shape == (1,):
            value = value[0].item()
        out.extra[key] = value
    return out


def scatter(idx, vals, n_atoms):
    """Dense coefficient rows (n_signals, n_atoms) from (index, value) lists padded with -1.

    The rows are the transpose of a C-contiguous (n_atoms, n_signals) array, the public layout
    of ``SparseResult.coef``: the values are scattered straight into it, and :func:`finish`
    returns it without a transposing copy.
    """
    coef = np.zeros((n_atoms, idx.shape[0]), dtype=vals.dtype)
    scatter_into(coef, idx, vals)
    return coef.T


def scatter_into(coef, idx, vals, first=0):
    """``coef[idx[j, s], first + j] = vals[j, s]`` wherever ``idx[j, s] >= 0``.

    ``coef`` is C-contiguous, shape (n_atoms, n_signals) (the public layout); ``idx`` and
    ``vals`` list the atoms and values of the signals ``first, first + 1, ...`` (one row each),
    so a block of signals is scattered by the thread that solved it.
    """
    n_sig = coef.shape[1]
    # flat positions into coef: one np.put (half the time of a 2-D fancy assignment)
    flat = idx * n_sig + np.arange(first, first + idx.shape[0])[:, None]
    used = idx >= 0
    if used.all():
        coef.put(flat, vals)
    else:
        coef.put(flat[used], vals[used])


#: a squared residual at most this many ``eps ||y||^2`` counts as zero (an exact fit)
ZERO_RESIDUAL_EPS = 16.0


def warn_premature(
    problem,
    status,
    n_iter,
    res,
    solver,
    reasons=(_cpu.STOP_DEPENDENT, _cpu.STOP_RESELECTED, _cpu.STOP_NO_CORRELATION),
):
    """Warn (:class:`PrematureStopWarning`) when a signal stopped for one of ``reasons`` before
    its number of atoms with a residual that is not zero.

    ``res`` holds the residual norms in the compute layout (one row per signal). The warning
    points at the caller of :meth:`Solver.solve`.
    """
    last = res[np.arange(res.shape[0]), n_iter].astype(np.float64)
    zero = last**2 <= ZERO_RESIDUAL_EPS * np.finfo(problem.dtype).eps * problem.y_sq
    # a broadcast comparison: np.isin's set machinery costs more than a small solve
    stopped = (np.asarray(status)[:, None] == np.asarray(reasons)).any(axis=1)
    bad = int(np.count_nonzero(stopped & ~zero))
    if bad:
        warnings.warn(
            f"{solver} ended prematurely for {bad} signal(s) with a non-zero residual: the next "
            "atom is linearly dependent on the selected ones or every atom left is orthogonal "
            "to the residual (duplicate or dependent columns of D), so the requested number of "
            "atoms or precision is not reached; see result.stop_reason",
            PrematureStopWarning,
            stacklevel=3,
        )


__all__ = ["Solver", "SparseResult", "PrematureStopWarning"]
