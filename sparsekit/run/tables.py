"""Plain-text (Markdown) tables for `sparsekit demo`, `sparsekit list` and the examples."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def format_table(
    header: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None
) -> str:
    """Format ``rows`` under ``header`` as an aligned Markdown table.

    Parameters
    ----------
    header : sequence of str
        The column names.
    rows : sequence of sequence
        The cells of every row.
    title : str, optional
        A heading printed above the table.

    Returns
    -------
    str
        The table.
    """
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    if title:
        lines.append(title)
    for k, row in enumerate(cells):
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
        if k == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


__all__ = ["format_table"]
