"""Collection of the doctests of ``sparsekit/`` (``--doctest-modules`` in setup.cfg).

Importing a module for its doctests must not need a GPU: the CUDA modules import under Numba's
simulator, which is set here, before Numba is first imported, as ``tests/conftest.py`` does for
the tests. Every module of the package imports this way.

The deprecated modules that stand in for a moved one (``sys.modules[__name__]`` is the new
module, e.g. ``sparsekit.run.demo`` -> ``sparsekit.experiments.demo``) are left out: their
doctests are collected where the code lives, and collecting the alias trips pytest's check that
a module's ``__file__`` is the file collected.
"""

import os
from pathlib import Path

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

_ROOT = Path(__file__).resolve().parent
collect_ignore = [
    str(path.relative_to(_ROOT))
    for path in sorted((_ROOT / "sparsekit").rglob("*.py"))
    if "sys.modules[__name__] = _moved" in path.read_text(encoding="utf-8")
]
