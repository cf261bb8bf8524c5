"""Factorizers: a matrix as a scaled product of constrained (sparse) factors.

A registry family of its own (hook ``sparsekit_factorizers``): look them up by name,
``sparsekit.get_factorizer("palm4msa", n_iter=100)`` or ``"hierarchical-palm4msa"``, and call
``factorize(M, constraints) -> FactorizationResult`` (:mod:`sparsekit.factorizers.base`). The
constraints are projections (:mod:`sparsekit.projections`); QuicK-means
(:class:`sparsekit.QuicKMeans`, parameter ``factorizer``) and the ``palm4msa`` task of
``sparsekit run`` resolve their factorizer in this family.
"""

from .base import FactorizationResult, Factorizer
from .hierarchical import HierarchicalPalm4MSA, hierarchical_constraints
from .palm4msa import Palm4MSA, PlateauWarning

__all__ = [
    "Factorizer",
    "FactorizationResult",
    "Palm4MSA",
    "HierarchicalPalm4MSA",
    "hierarchical_constraints",
    "PlateauWarning",
]
