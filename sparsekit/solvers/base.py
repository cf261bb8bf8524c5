"""Solver protocol, the result record, and the input checks shared by the sparse solvers.

Conventions (as scikit-learn's ``orthogonal_mp``): the dictionary ``D`` has shape
``(n_features, n_atoms)`` with one atom per column; the signals are the columns of ``Y``,
shape ``(n_features, n_signals)``; a 1-D ``y`` is one signal. Coefficients have shape
``(n_atoms, n_signals)`` (``(n_atoms,)`` for a 1-D ``y``). float32 and float64 are kept; when
``D`` and ``Y`` differ, both become float64.

Every ``tol`` of the solvers is a bound on the **squared** residual norm ``||y - D x||_2^2``, as
in scikit-learn (the Frank–Wolfe rule ``||r_k||_2 <= tol`` of Cherfaoui 2022, PhD thesis, §5.4,
is ``tol**2`` here).
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from .._base import ParamsMixin
from .._validation import check_array, check_scalar
from . import _cpu

#: bytes a solver may spend on the Gram matrix D^T D when ``precompute="auto"``
GRAM_AUTO_MAX_BYTES = 512 * 2**20

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
    """OMP stopped before its number of atoms although the residual is not zero: the next atom is
    linearly dependent on the support, or every atom left is orthogonal to the residual
    (duplicate or dependent columns)."""


@dataclass
class SparseResult:
    """The result of a sparse solver.

    Attributes
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
        """OMP path as dense coefficients, shape (n_atoms, n_signals, n_steps) ((n_atoms, n_steps)
        for a 1-D ``y``): ``[:, j, k]`` is the ``(k+1)``-atom solution of signal ``j``.

        This is the layout of scikit-learn's ``orthogonal_mp(..., return_path=True)``. After a
        signal stopped its last solution is repeated (scikit-learn instead truncates every
        signal's path to the shortest one).
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
                    out[idx[:kk + 1], j, k] = path[kk, :kk + 1, j]
        return out[:, 0, :] if one else out


class Solver(ParamsMixin, ABC):
    """Base class of the sparse solvers: ``solve(D, Y) -> SparseResult``."""

    name = "solver"
    #: the solver can use a precomputed Gram matrix ``D.T @ D`` (``solve(..., gram=G)``)
    accepts_gram = False

    @abstractmethod
    def solve(self, D, Y, *, gram=None) -> SparseResult:
        """Sparse codes of the columns of ``Y`` over the atoms (columns) of ``D``."""


# ---------------------------------------------------------------------------------------------
# validation shared by the solvers
# ---------------------------------------------------------------------------------------------
def check_dictionary(D):
    """Validate ``D`` (n_features, n_atoms); returns ``(D, squared column norms)``.

    A zero column raises a ``ValueError`` naming its index: it can never be selected usefully
    and breaks the normalised selection rules.
    """
    D = check_array(D, "D")
    norms_sq = np.einsum("ij,ij->j", D, D)
    zero = np.flatnonzero(norms_sq == 0)
    if zero.size:
        shown = ", ".join(str(int(i)) for i in zero[:10]) + (" ..." if zero.size > 10 else "")
        raise ValueError(
            f"D has {zero.size} zero column(s) (atom index {shown}); every atom needs a "
            "non-zero norm: drop those columns, e.g. D[:, np.linalg.norm(D, axis=0) > 0]"
        )
    return D, norms_sq


def check_signals(Y, D):
    """Validate ``Y`` against ``D``; returns ``(D, Yt, one_d)`` with ``Yt = Y.T`` C-contiguous.

    ``D`` is returned converted to float64 when the two dtypes differ.
    """
    ndim = np.ndim(Y)
    if ndim not in (1, 2):
        raise ValueError(
            f"Y must be 1-D (one signal) or 2-D (n_features, n_signals), got {ndim}-D"
        )
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
    Yt = np.ascontiguousarray(Y[:, None].T if one_d else Y.T)
    return D, Yt, one_d


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
        raise ValueError(
            f"gram must be D.T @ D of shape ({n_atoms}, {n_atoms}), got {G.shape}"
        )
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


def check_n_nonzero(value, n_atoms, name="n_nonzero_coefs"):
    """A positive int ``<= n_atoms`` (``None`` gives 10% of the atoms, at least 1).

    More non-zero coefficients than atoms is a ``ValueError``, as in scikit-learn's
    ``orthogonal_mp``: no signal can use more atoms than the dictionary has, so such a value is
    a mistake (often a transposed dictionary), not a request to clip.
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


def check_tol(tol, name="tol"):
    """``None`` (not used, returned as -1.0 for the compute layer) or a real number >= 0."""
    if tol is None:
        return -1.0
    return check_scalar(tol, name, low=0.0, low_inclusive=True)


def correlation_floor(Yt, norms_sq):
    """Per-signal threshold below which a (normalised) correlation counts as zero.

    ``|<d_i, r>| / ||d_i|| <= 16 eps ||y||``: at that level the residual is orthogonal to every
    atom up to rounding, and another step cannot improve the fit.
    """
    eps = np.finfo(Yt.dtype).eps
    return (16.0 * eps) * np.sqrt(np.einsum("ij,ij->i", Yt, Yt, dtype=np.float64))


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


def check_precompute(value):
    if value is True or value is False:
        return value
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    raise ValueError(f"precompute must be True, False or 'auto', got {value!r}")


def stop_reasons(status, one_d):
    names = np.array([STOP_REASONS[int(s)] for s in status], dtype=object)
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
