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

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .factorizers.base import FactorizationResult
    from .samplers.base import Landmarks
    from .solvers.base import SparseResult

__all__ = ["KernelProtocol", "SamplerProtocol", "SolverProtocol", "FactorizerProtocol",
           "ProjectionProtocol", "ManifoldKernelProtocol", "TaskProtocol", "PROTOCOLS",
           "Landmarks", "SparseResult", "FactorizationResult"]

#: The result types of the families, imported on first use: name -> module.
RESULT_TYPES = {
    "Landmarks": "sparsekit.samplers.base",
    "SparseResult": "sparsekit.solvers.base",
    "FactorizationResult": "sparsekit.factorizers.base",
}


@runtime_checkable
class KernelProtocol(Protocol):
    """A kernel ``k(x, y)`` (family ``"kernel"``, hook ``sparsekit_kernels``).

    ``accepts``: ``"vectors"`` (arrays, scipy.sparse rows) or ``"graphs"``. Base class:
    ``sparsekit.plugins.VectorKernel`` (implement ``_fill``/``_diag``) or ``Kernel``.
    """

    def __call__(self, X: Any, Y: Any = None) -> np.ndarray:
        """The Gram block ``K[i, j] = k(X_i, Y_j)`` (``Y=None``: ``X``), dtype of the inputs."""

    def diag(self, X: Any) -> np.ndarray:
        """``k(X_i, X_i)``, shape ``(n_samples,)``."""

    def fit(self, X: Any) -> Any:
        """Set data-dependent parameters (bandwidth rules) from ``X``; returns self."""

    def prepare(self, X: Any) -> Any:
        """``X`` validated once in the form the kernel evaluates (what samplers index)."""

    def take(self, X: Any, indices: Any) -> Any:
        """The samples ``indices`` of prepared ``X``."""

    def n_samples(self, X: Any) -> int:
        """The number of samples of prepared ``X``."""


@runtime_checkable
class SamplerProtocol(Protocol):
    """A Nyström landmark sampler (family ``"sampler"``, hook ``sparsekit_samplers``).

    ``accepts``: a tuple of input kinds (default ``("vectors", "graphs")`` on the base class
    ``sparsekit.plugins.Sampler``, whose ``prepare_input``/``make_landmarks`` do the checks).
    """

    def sample(self, X: Any, kernel: KernelProtocol, n_landmarks: int,
               random_state: Any = None) -> Landmarks:
        """Choose ``n_landmarks`` samples of ``X`` for ``kernel``."""


@runtime_checkable
class SolverProtocol(Protocol):
    """A sparse coding solver (family ``"solver"``, hook ``sparsekit_solvers``).

    Dictionary atoms are the columns of ``D`` ``(n_features, n_atoms)``; the signals are the
    columns of ``Y`` ``(n_features, n_signals)`` or a 1-D ``y``. Base class
    ``sparsekit.plugins.Solver``; ``accepts_gram = True`` when ``gram=D.T @ D`` is used.
    """

    def solve(self, D: Any, Y: Any, *, gram: Any = None) -> SparseResult:
        """Sparse codes of the columns of ``Y`` over the atoms of ``D``."""


@runtime_checkable
class FactorizerProtocol(Protocol):
    """A factorizer (family ``"factorizer"``, hook ``sparsekit_factorizers``): ``M`` as
    ``λ S_1 ⋯ S_Q`` with ``S_q`` in the set of projection ``constraints[q]``.

    QuicK-means calls ``factorize(M, constraints, init_factors=..., init_scale=...)`` (a warm
    start) and sets ``keep_best=True`` when the factorizer has that parameter. Base class
    ``sparsekit.plugins.Factorizer``; ``takes_sparsity_level = True`` when ``constraints`` may
    be an integer sparsity level with ``n_factors=`` (the schedule built by the factorizer).
    """

    def factorize(self, M: Any, constraints: Sequence[Any], **kwargs: Any) -> FactorizationResult:
        """Factorize ``M`` under ``constraints`` (one projection per factor, left to right)."""


@runtime_checkable
class ProjectionProtocol(Protocol):
    """A projection onto the constraint set of one factor (family ``"projection"``, hook
    ``sparsekit_projections``). Base class ``sparsekit.plugins.Projection`` (implement
    ``_project``)."""

    shape: tuple
    is_constant: bool

    def __call__(self, M: Any) -> np.ndarray:
        """The projection of ``M`` (checked: shape, finiteness)."""

    def project_unchecked(self, M: np.ndarray) -> np.ndarray:
        """The projection of an array already checked (the factorizers' inner loop)."""

    def initial(self, dtype: Any = ...) -> np.ndarray:
        """A starting factor in the set (Palm4MSA's default start)."""


@runtime_checkable
class ManifoldKernelProtocol(Protocol):
    """A data-dependent kernel of the spectral embeddings (family ``"manifold-kernel"``, hook
    ``sparsekit_manifold_kernels``): evaluated only against the points it was fitted on, so it
    is not a :class:`KernelProtocol` (vector-kernel entry points refuse it). Base class
    ``sparsekit.plugins.ManifoldKernel``; sets ``data_dependent = True``."""

    data_dependent: bool

    def fit(self, X: Any) -> Any:
        """Store the training statistics of ``X``; returns self."""

    def gram(self) -> np.ndarray:
        """The ``n x n`` Gram matrix of the training points."""

    def __call__(self, X: Any) -> np.ndarray:
        """``k_D(x, x_i)`` of the rows of ``X`` against the training points."""


@runtime_checkable
class TaskProtocol(Protocol):
    """A task of ``sparsekit run`` (family ``"task"``, hook ``sparsekit_tasks``): build it as
    ``sparsekit.plugins.Task(name, run, params, components, ...)`` and yield
    ``task.registration()``."""

    name: str
    run: Callable[..., Any]
    params: dict
    components: tuple


#: family -> its protocol.
PROTOCOLS = {
    "kernel": KernelProtocol,
    "sampler": SamplerProtocol,
    "solver": SolverProtocol,
    "factorizer": FactorizerProtocol,
    "projection": ProjectionProtocol,
    "manifold-kernel": ManifoldKernelProtocol,
    "task": TaskProtocol,
}


def __getattr__(name):
    if name in RESULT_TYPES:
        return getattr(importlib.import_module(RESULT_TYPES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(RESULT_TYPES))
