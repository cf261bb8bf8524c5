"""Landmark samplers for Nyström approximations, registered by name.

========================  ===================================================  ===============
name                      method                                               takes graphs
========================  ===================================================  ===============
``uniform``               uniform, with or without replacement                 yes
``diagonal``              ∝ k(x_i, x_i) (Drineas & Mahoney 2005)               yes
``rls``                   exact ridge leverage scores (Cholesky)               yes [1]_
``two-pass-rls``          Alaoui & Mahoney's uniform-RLS (Woodbury)            yes [1]_
``dac-rls``               divide-and-conquer RLS (Cherfaoui et al. 2022)       yes [1]_
``recursive-rls``         recursive RLS (Musco & Musco 2017)                   yes [1]_
``bless``                 BLESS bottom-up RLS (Rudi et al. 2018)               yes [1]_
``greedy-trace``          greedy residual-trace minimization                   exact form only
========================  ===================================================  ===============

.. [1] unless ``lam="inverse-mean-norm"``, which reads the raw vectors.

Every sampler has ``sample(X, kernel, n_landmarks, random_state=None) -> Landmarks`` and an
``accepts`` attribute; score-based samplers also ``scores(X, kernel, lam=None)`` and the drawing
modes ``"fixed"`` and ``"bernoulli"`` (see :mod:`sparsekit.samplers.base`).
"""

from .base import Landmarks, Sampler, ScoreSampler
from .bless import BLESSSampler
from .greedy import GreedyTraceSampler
from .recursive import RecursiveRLSSampler
from .rls import DACRLSSampler, ExactRLSSampler, TwoPassRLSSampler
from .uniform import DiagonalSampler, UniformSampler

__all__ = [
    "Landmarks",
    "Sampler",
    "ScoreSampler",
    "UniformSampler",
    "DiagonalSampler",
    "ExactRLSSampler",
    "TwoPassRLSSampler",
    "DACRLSSampler",
    "RecursiveRLSSampler",
    "BLESSSampler",
    "GreedyTraceSampler",
]
