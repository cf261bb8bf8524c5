"""Scripted experiments shared by the examples and ``sparsekit demo`` (top layer)."""
