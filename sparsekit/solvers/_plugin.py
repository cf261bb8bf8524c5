"""Built-in solvers, registered through the same hook as third-party plugins."""

from ..hookspecs import Registration, hookimpl
from .fw import FrankWolfe
from .mp import MatchingPursuit
from .nnomp import NonNegativeOMP
from .omp import OMP


@hookimpl
def sparsekit_solvers():
    yield Registration(
        "mp",
        MatchingPursuit,
        aliases=("matching-pursuit",),
        summary="Matching Pursuit (greedy, one atom per step)",
    )
    yield Registration(
        "omp",
        OMP,
        aliases=("orthogonal-matching-pursuit",),
        summary="Orthogonal MP, Cholesky-updated, batched; by count or tolerance",
    )
    yield Registration(
        "nn-omp",
        NonNegativeOMP,
        aliases=("nnomp", "non-negative-omp"),
        summary="non-negative OMP (NNLS on the support, stops by itself)",
    )
    yield Registration(
        "frank-wolfe",
        FrankWolfe,
        aliases=("fw",),
        summary="Frank-Wolfe on the l1 ball, 2/(k+2) or line-search steps",
    )
