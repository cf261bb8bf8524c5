"""sparsekit: large-scale kernel methods and sparse approximation on Numba.

Components (kernels, landmark samplers, sparse solvers, factorizers, ...) are looked up by name
in a pluggy registry::

    import sparsekit
    k = sparsekit.get_kernel("rbf", gamma=0.5)
    K = k(X, Y)

Writing a plugin: :mod:`sparsekit.plugins` holds the plugin-author API.
"""

__version__ = "0.1.0"

import os as _os

# Numba's OpenMP workers spin after each parallel region and then compete for the cores with
# the BLAS/LAPACK threads that run next (measured: a 200 x 200 eigh right after a Numba region
# took 3x longer on 2 cores). Passive waiting removes that contention; it must be set before
# Numba first loads its OpenMP layer, and a user's own setting is kept.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from ._runtime.progress import show_progress
from .components import (
    get_factorizer,
    get_kernel,
    get_manifold_kernel,
    get_projection,
    get_sampler,
    get_solver,
)
from .exceptions import PluginWarning, UnknownComponentError
from .registry import Registry, default_registry, list_components

# Estimators and transforms are imported on first use, so that ``import sparsekit`` stays light.
_LAZY = {
    "Nystroem": "sparsekit.features.nystrom",
    "RandomFourierFeatures": "sparsekit.features.rff",
    "Fastfood": "sparsekit.features.fastfood",
    "SparseCoder": "sparsekit.solvers.coder",
    "thread_limit": "sparsekit._runtime.threads",
    "SparseFactors": "sparsekit.linalg.sparse_factors",
    "QuicKMeans": "sparsekit.cluster.quickmeans",
    "KernelKMeans": "sparsekit.cluster.kernel_kmeans",
    "OMPForestRegressor": "sparsekit.ensemble.omp_forest",
    "KernelPCA": "sparsekit.manifold.embedding",
    "MDS": "sparsekit.manifold.embedding",
    "Isomap": "sparsekit.manifold.embedding",
    "LocallyLinearEmbedding": "sparsekit.manifold.embedding",
    "SpectralEmbedding": "sparsekit.manifold.embedding",
    "LaplacianEigenmaps": "sparsekit.manifold.embedding",
    "SpectralClustering": "sparsekit.manifold.embedding",
    "OMPForestClassifier": "sparsekit.ensemble.omp_forest",
    "NotFittedError": "sparsekit.exceptions",
    "NystromLogisticRegression": "sparsekit.learning.logistic",
    "NystromRidge": "sparsekit.learning.ridge",
    "NystromRidgeClassifier": "sparsekit.learning.ridge",
}


def __getattr__(name):
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sparsekit' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = list(_LAZY) + [
    "__version__",
    "Registry",
    "UnknownComponentError",
    "PluginWarning",
    "default_registry",
    "get_kernel",
    "get_sampler",
    "get_solver",
    "get_factorizer",
    "get_projection",
    "get_manifold_kernel",
    "list_components",
    "show_progress",
]
