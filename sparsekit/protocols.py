"""One :class:`typing.Protocol` per registry family: what a plugin's component must provide.

A plugin registers a factory per component (:class:`sparsekit.plugins.Registration`, yielded
from the family's hook); the object the factory returns must satisfy its family's protocol below.
Subclassing the family's base class (:mod:`sparsekit.plugins`: ``Kernel``, ``Sampler``,
``Solver``, ``Factorizer``, ``Projection``, ``ManifoldKernel``) is the easy way to do so, not a
requirement. Every protocol is ``runtime_checkable``: ``isinstance(obj, SamplerProtocol)``
checks that the methods exist (not their signatures).

- kernel: :class:`KernelProtocol`, Gram blocks (ndarray)
- sampler: :class:`SamplerProtocol`, :class:`Landmarks`
- solver: :class:`SolverProtocol`, :class:`SparseResult`
- factorizer: :class:`FactorizerProtocol`, :class:`FactorizationResult`
- projection: :class:`ProjectionProtocol`, the projected matrix (ndarray)
- manifold-kernel: :class:`ManifoldKernelProtocol`, the training Gram and out-of-sample rows
- task: :class:`TaskProtocol`, a dict of metrics (or a list of them)

What input a component takes is its ``accepts`` attribute, in one vocabulary for every family
(:mod:`sparsekit._accepts`): ``"vectors"``, ``"graphs"``, ``"any"`` or a tuple of kinds; a
component without one takes vectors. A registration reads it from its factory.

The result types are imported from here on first use (``sparsekit.protocols.Landmarks``), so
that importing this module costs nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ._families import FAMILIES

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .factorizers.base import FactorizationResult
    from .samplers.base import Landmarks
    from .solvers.base import SparseResult

__all__ = [
    "KernelProtocol",
    "SamplerProtocol",
    "SolverProtocol",
    "FactorizerProtocol",
    "ProjectionProtocol",
    "ManifoldKernelProtocol",
    "TaskProtocol",
    "PROTOCOLS",
    "Landmarks",
    "SparseResult",
    "FactorizationResult",
]

#: The result types of the families (their ``result``), imported on first use: name -> module.
RESULT_TYPES = {f.result[1]: f.result[0] for f in FAMILIES if f.result}


@runtime_checkable
class KernelProtocol(Protocol):
    """A kernel ``k(x, y)`` (family ``"kernel"``, hook ``sparsekit_kernels``).

    ``accepts``: ``"vectors"`` (arrays, scipy.sparse rows) or ``"graphs"``. Base class:
    ``sparsekit.plugins.VectorKernel`` (implement ``_fill``/``_diag``) or ``Kernel``.

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol describes objects, it is not instantiated.
    """

    def __call__(self, X: Any, Y: Any = None) -> np.ndarray:
        """Return the Gram block ``K[i, j] = k(X_i, Y_j)``.

        Parameters
        ----------
        X, Y : array-like, sparse matrix or sequence of graphs
            The two sets of samples (``Y=None``: ``X``).

        Returns
        -------
        ndarray of shape (n_X, n_Y)
            The Gram block, in the dtype of the inputs.
        """

    def diag(self, X: Any) -> np.ndarray:
        """Return the diagonal ``k(X_i, X_i)``.

        Parameters
        ----------
        X : array-like, sparse matrix or sequence of graphs
            The samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            The kernel of each sample with itself.
        """

    def fit(self, X: Any) -> Any:
        """Set data-dependent parameters (bandwidth rules) from ``X``.

        Parameters
        ----------
        X : array-like, sparse matrix or sequence of graphs
            The data the parameters are computed on.

        Returns
        -------
        object
            The kernel itself.
        """

    def prepare(self, X: Any) -> Any:
        """Validate ``X`` once, in the form the kernel evaluates (what samplers index).

        Parameters
        ----------
        X : array-like, sparse matrix or sequence of graphs
            The samples.

        Returns
        -------
        object
            The prepared samples.
        """

    def take(self, X: Any, indices: Any) -> Any:
        """Select the samples ``indices`` of prepared ``X``.

        Parameters
        ----------
        X : object
            Prepared samples (:meth:`prepare`).
        indices : array of int
            The samples to keep.

        Returns
        -------
        object
            The selected samples, prepared.
        """

    def n_samples(self, X: Any) -> int:
        """Count the samples of prepared ``X``.

        Parameters
        ----------
        X : object
            Prepared samples (:meth:`prepare`).

        Returns
        -------
        int
            The number of samples.
        """


@runtime_checkable
class SamplerProtocol(Protocol):
    """A Nyström landmark sampler (family ``"sampler"``, hook ``sparsekit_samplers``).

    ``accepts``: a tuple of input kinds (default ``("vectors", "graphs")`` on the base class
    ``sparsekit.plugins.Sampler``, whose ``prepare_input``/``make_landmarks`` do the checks).

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol describes objects, it is not instantiated.
    """

    def sample(
        self, X: Any, kernel: KernelProtocol, n_landmarks: int, random_state: Any = None
    ) -> Landmarks:
        """Choose ``n_landmarks`` samples of ``X`` for ``kernel``.

        Parameters
        ----------
        X : array-like, sparse matrix or sequence of graphs
            The samples.
        kernel : KernelProtocol
            The kernel the landmarks are chosen for.
        n_landmarks : int
            The number of landmarks.
        random_state : None, int or numpy.random.Generator
            Seeds the draw.

        Returns
        -------
        Landmarks
            The indices, points and weights of the landmarks.
        """


@runtime_checkable
class SolverProtocol(Protocol):
    """A sparse coding solver (family ``"solver"``, hook ``sparsekit_solvers``).

    Dictionary atoms are the columns of ``D`` ``(n_features, n_atoms)``; the signals are the
    columns of ``Y`` ``(n_features, n_signals)`` or a 1-D ``y``. Base class
    ``sparsekit.plugins.Solver``; ``accepts_gram = True`` when ``gram=D.T @ D`` is used.

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol describes objects, it is not instantiated.
    """

    def solve(self, D: Any, Y: Any, *, gram: Any = None) -> SparseResult:
        """Compute sparse codes of the columns of ``Y`` over the atoms of ``D``.

        Parameters
        ----------
        D : array of shape (n_features, n_atoms)
            The dictionary, atoms as columns.
        Y : array of shape (n_features, n_signals) or (n_features,)
            The signals, as columns.
        gram : array of shape (n_atoms, n_atoms), optional
            ``D.T @ D``, precomputed (used when ``accepts_gram``).

        Returns
        -------
        SparseResult
            The codes and the solver's diagnostics.
        """


@runtime_checkable
class FactorizerProtocol(Protocol):
    """A factorizer (family ``"factorizer"``, hook ``sparsekit_factorizers``).

    It writes ``M`` as ``λ S_1 ⋯ S_Q`` with ``S_q`` in the set of projection ``constraints[q]``.

    QuicK-means calls ``factorize(M, constraints, init_factors=..., init_scale=...)`` (a warm
    start) and sets ``keep_best=True`` when the factorizer has that parameter. Base class
    ``sparsekit.plugins.Factorizer``; ``takes_sparsity_level = True`` when ``constraints`` may
    be an integer sparsity level with ``n_factors=`` (the schedule built by the factorizer).

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol describes objects, it is not instantiated.
    """

    def factorize(self, M: Any, constraints: Sequence[Any], **kwargs: Any) -> FactorizationResult:
        """Factorize ``M`` under ``constraints`` (one projection per factor, left to right).

        Parameters
        ----------
        M : array of shape (m, n)
            The target matrix.
        constraints : sequence of projections
            One per factor, shapes chaining from ``m`` to ``n``.
        **kwargs
            Warm start (``init_factors``, ``init_scale``) and factorizer-specific options.

        Returns
        -------
        FactorizationResult
            The factors, the scale, the objective history and the stop reason.
        """


@runtime_checkable
class ProjectionProtocol(Protocol):
    """A projection onto the constraint set of one factor (family ``"projection"``).

    Hook ``sparsekit_projections``. Base class ``sparsekit.plugins.Projection`` (implement
    ``_project``).

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol describes objects, it is not instantiated.
    """

    shape: tuple
    is_constant: bool

    def __call__(self, M: Any) -> np.ndarray:
        """Project ``M``, checked first (shape, finiteness).

        Parameters
        ----------
        M : array-like of shape ``shape``
            The matrix to project.

        Returns
        -------
        ndarray of shape ``shape``
            The projection.
        """

    def project_unchecked(self, M: np.ndarray) -> np.ndarray:
        """Project an array already checked (the factorizers' inner loop).

        Parameters
        ----------
        M : ndarray of shape ``shape``
            The matrix to project.

        Returns
        -------
        ndarray of shape ``shape``
            The projection.
        """

    def initial(self, dtype: Any = ...) -> np.ndarray:
        """Return a starting factor in the set (Palm4MSA's default start).

        Parameters
        ----------
        dtype : numpy dtype, optional
            The dtype of the factor.

        Returns
        -------
        ndarray of shape ``shape``
            The starting factor.
        """


@runtime_checkable
class ManifoldKernelProtocol(Protocol):
    """A data-dependent kernel of the spectral embeddings (family ``"manifold-kernel"``).

    Hook ``sparsekit_manifold_kernels``. It is evaluated only against the points it was fitted
    on, so it is not a :class:`KernelProtocol` (vector-kernel entry points refuse it). Base class
    ``sparsekit.plugins.ManifoldKernel``; sets ``data_dependent = True``.

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol describes objects, it is not instantiated.
    """

    data_dependent: bool

    def fit(self, X: Any) -> Any:
        """Store the training statistics of ``X``.

        Parameters
        ----------
        X : array-like of shape (n, d)
            The training points.

        Returns
        -------
        object
            The kernel itself.
        """

    def gram(self) -> np.ndarray:
        """The ``n x n`` Gram matrix of the training points."""

    def __call__(self, X: Any) -> np.ndarray:
        """Evaluate ``k_D(x, x_i)`` of the rows of ``X`` against the training points.

        Parameters
        ----------
        X : array-like of shape (m, d)
            New points.

        Returns
        -------
        ndarray of shape (m, n)
            The kernel rows.
        """


@runtime_checkable
class TaskProtocol(Protocol):
    """A task of ``sparsekit run`` (family ``"task"``, hook ``sparsekit_tasks``).

    Build it as ``sparsekit.plugins.Task(name, run, params, components, ...)`` and yield
    ``task.registration()``.

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol describes objects, it is not instantiated.
    """

    name: str
    run: Callable[..., Any]
    params: dict
    components: tuple


#: family -> its protocol.
PROTOCOLS = {f.name: globals()[f.protocol] for f in FAMILIES}


def __getattr__(name):
    if name in RESULT_TYPES:
        return getattr(importlib.import_module(RESULT_TYPES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(RESULT_TYPES))
