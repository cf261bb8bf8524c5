"""Projections onto the constraint sets of sparse factors (a registered component family).

Look them up by name: ``sparsekit.get_projection("splincol", shape=(64, 64), k=2)``; see
:mod:`sparsekit.projections.base` for the definitions.
"""

from .base import (
    ColumnTopK,
    Constant,
    GlobalTopK,
    Identity,
    Projection,
    RowColumnTopK,
    RowTopK,
    SupportMask,
)

__all__ = [
    "Projection",
    "GlobalTopK",
    "RowTopK",
    "ColumnTopK",
    "RowColumnTopK",
    "SupportMask",
    "Constant",
    "Identity",
]
