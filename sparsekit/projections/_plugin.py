"""Built-in projections, registered through the same hook as third-party plugins."""

from ..hookspecs import Registration, hookimpl
from .base import ColumnTopK, Constant, GlobalTopK, Identity, RowColumnTopK, RowTopK, SupportMask


@hookimpl
def sparsekit_projections():
    # accepts: read from the classes (Projection.accepts = "any")
    # canonical name distinct from the shortest-path kernel's alias "sp" (same word in `list`)
    yield Registration(
        "global-top-k",
        GlobalTopK,
        aliases=("sp", "top-k"),
        summary="k largest |entries| of the matrix, unit Frobenius norm",
    )
    yield Registration(
        "splin",
        RowTopK,
        aliases=("row-top-k",),
        summary="k largest |entries| per row, unit Frobenius norm",
    )
    yield Registration(
        "spcol",
        ColumnTopK,
        aliases=("column-top-k",),
        summary="k largest |entries| per column, unit Frobenius norm",
    )
    yield Registration(
        "splincol",
        RowColumnTopK,
        aliases=("row-column-top-k",),
        summary="union of per-row and per-column top-k (Annex 3.A), unit norm",
    )
    yield Registration(
        "support",
        SupportMask,
        aliases=("supp", "support-mask"),
        summary="entries on a fixed support mask, unit Frobenius norm",
    )
    yield Registration(
        "constant",
        Constant,
        aliases=("const",),
        summary="a fixed matrix: the factor is never updated",
    )
    yield Registration(
        "identity",
        Identity,
        aliases=("id", "proj-id", "unconstrained"),
        summary="no constraint (the matrix itself)",
    )
