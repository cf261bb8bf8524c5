"""Ensembles: random forests pruned by sparse solvers (OMP forests).

Needs scikit-learn (``pip install 'sparsekit[forest]'``); the rest of sparsekit does not.
"""

from .omp_forest import OMPForestClassifier, OMPForestRegressor

__all__ = ["OMPForestRegressor", "OMPForestClassifier"]
