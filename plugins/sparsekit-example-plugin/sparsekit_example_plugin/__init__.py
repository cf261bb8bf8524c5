"""The sparsekit plugin example: a kernel, a landmark sampler, a sparse solver, a factorizer, a
projection and a task of ``sparsekit run``, each registered by a hook of
``sparsekit_example_plugin.plugin``.

``docs/plugins.md`` of sparsekit walks through these files.
"""

from .factorizers import AlternatingLeastSquares
from .kernels import RationalQuadraticKernel
from .projections import BandProjection
from .samplers import KMeansPPSampler
from .solvers import FISTASolver
from .tasks import KERNEL_ALIGNMENT

__all__ = [
    "RationalQuadraticKernel",
    "KMeansPPSampler",
    "FISTASolver",
    "AlternatingLeastSquares",
    "BandProjection",
    "KERNEL_ALIGNMENT",
]
