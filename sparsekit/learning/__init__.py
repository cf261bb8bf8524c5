"""Kernel models learned on Nyström landmarks, for data too large for an n × n Gram matrix.

:class:`NystromRidge` (kernel ridge regression), :class:`NystromRidgeClassifier` and
:class:`NystromLogisticRegression`, solved by FALKON's preconditioned conjugate gradient (Rudi,
Carratino & Rosasco, NeurIPS 2017; Meanti et al., NeurIPS 2020) with landmarks from any
registered sampler.
"""

from .logistic import NystromLogisticRegression
from .ridge import NystromRidge, NystromRidgeClassifier

__all__ = ["NystromLogisticRegression", "NystromRidge", "NystromRidgeClassifier"]
