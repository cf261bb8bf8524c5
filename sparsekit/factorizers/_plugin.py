"""Built-in factorizers, registered through the same hook as third-party plugins."""

from ..hookspecs import Registration, hookimpl
from .hierarchical import HierarchicalPalm4MSA
from .palm4msa import Palm4MSA


@hookimpl
def sparsekit_factorizers():
    yield Registration(
        "palm4msa",
        Palm4MSA,
        aliases=("palm",),
        summary="Palm4MSA: matrix as a scaled product of sparse factors",
    )
    yield Registration(
        "hierarchical-palm4msa",
        HierarchicalPalm4MSA,
        aliases=("hierarchical", "hierarchical-palm"),
        summary="hierarchical Palm4MSA: split and global fine-tune per level",
    )
