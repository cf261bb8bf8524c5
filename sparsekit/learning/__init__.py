"""Kernel models learned on Nyström landmarks, for data too large for an n × n Gram matrix.

:class:`NystromRidge` (kernel ridge regression) and :class:`NystromRidgeClassifier`, solved
by FALKON's preconditioned conjugate gradient (Rudi, Carratino & Rosasco, NeurIPS 2017) with
landmarks from any registered sampler.
"""

from .ridge import NystromRidge, NystromRidgeClassifier

__all__ = ["NystromRidge", "NystromRidgeClassifier"]
