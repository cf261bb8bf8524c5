"""Built-in solvers, registered through the same hook as third-party plugins."""
from ..hookspecs import hookimpl
from ..registry import Registration
from .fw import FrankWolfe
from .hierarchical import HierarchicalPalm4MSA
from .mp import MatchingPursuit
from .nnomp import NonNegativeOMP
from .omp import OMP
from .palm4msa import Palm4MSA


@hookimpl
def sparsekit_solvers():
    yield Registration("mp", MatchingPursuit, aliases=("matching-pursuit",),
                       summary="Matching Pursuit (greedy, one atom per step)")
    yield Registration("omp", OMP, aliases=("orthogonal-matching-pursuit",),
                       summary="Orthogonal MP, Cholesky-updated, batched; by count or tolerance")
    yield Registration("nn-omp", NonNegativeOMP, aliases=("nnomp", "non-negative-omp"),
                       summary="non-negative OMP (NNLS on the support, stops by itself)")
    yield Registration("frank-wolfe", FrankWolfe, aliases=("fw",),
                       summary="Frank-Wolfe on the l1 ball, 2/(k+2) or line-search steps")
    yield Registration("palm4msa", Palm4MSA, aliases=("palm",),
                       summary="Palm4MSA: matrix as a scaled product of sparse factors")
    yield Registration("hierarchical-palm4msa", HierarchicalPalm4MSA,
                       aliases=("hierarchical", "hierarchical-palm"),
                       summary="hierarchical Palm4MSA: split and global fine-tune per level")
