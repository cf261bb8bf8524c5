"""The sparsekit plugin example: a kernel, a landmark sampler and a sparse solver.

``docs/plugins.md`` of sparsekit walks through these files.
"""
from .kernels import RationalQuadraticKernel
from .samplers import KMeansPPSampler
from .solvers import FISTASolver

__all__ = ["RationalQuadraticKernel", "KMeansPPSampler", "FISTASolver"]
