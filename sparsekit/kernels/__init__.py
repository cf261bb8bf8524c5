"""Kernels: vector kernels (linear, polynomial, RBF, Laplacian, chi2) and graph kernels."""

from .base import Kernel, VectorKernel
from .chi2 import AdditiveChi2Kernel, Chi2Kernel
from .graph import ShortestPathKernel
from .linear import LinearKernel, PolynomialKernel
from .rbf import LaplacianKernel, RBFKernel

__all__ = [
    "Kernel",
    "VectorKernel",
    "LinearKernel",
    "PolynomialKernel",
    "RBFKernel",
    "LaplacianKernel",
    "AdditiveChi2Kernel",
    "Chi2Kernel",
    "ShortestPathKernel",
]
