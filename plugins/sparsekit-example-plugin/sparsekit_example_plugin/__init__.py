"""The sparsekit plugin example: a kernel, a landmark sampler, a sparse solver, a projection
and a task (``sparsekit_example_plugin.tasks``, reached through its own entry point).

``docs/plugins.md`` of sparsekit walks through these files.
"""
from .kernels import RationalQuadraticKernel
from .projections import BandProjection
from .samplers import KMeansPPSampler
from .solvers import FISTASolver

__all__ = ["RationalQuadraticKernel", "KMeansPPSampler", "FISTASolver", "BandProjection"]
