"""Collection of the doctests of ``sparsekit/`` (``--doctest-modules`` in setup.cfg).

Importing a module for its doctests must not need a GPU: the CUDA modules import under Numba's
simulator, which is set here, before Numba is first imported, as ``tests/conftest.py`` does for
the tests. Every module of the package imports this way, so none is left out of collection.
"""
import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
