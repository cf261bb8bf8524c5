"""Load numba-cuda's NumPy overloads on NumPy versions that removed ``numpy.row_stack``.

numba-cuda (0.30.4 and earlier) registers its array overloads in the module
``numba.cuda.np.arrayobj``, which runs ``overload(np.row_stack)`` at import time for every
NumPy >= 2.0. NumPy 2.5 removed ``row_stack`` (an alias of ``vstack`` since NumPy 2.0), so that
import raises ``AttributeError`` the first time the CUDA target compiles a kernel, and no kernel
compiles at all.

:func:`load_cuda_array_overloads` imports that module itself, before any kernel of sparsekit
is compiled, with ``numpy.row_stack`` defined as ``numpy.vstack`` for the duration of the
import only. Nothing changes when NumPy still has ``row_stack``, when the module was already
imported, or when the installed Numba has no such module (Numba's own CUDA target and its
simulator). The alias is removed again afterwards, so other code keeps seeing the NumPy it
installed.
"""

import importlib
import importlib.util
import sys
import threading

import numpy as np

#: the numba-cuda module that references ``numpy.row_stack`` at import
ARRAY_OVERLOADS = "numba.cuda.np.arrayobj"

_lock = threading.Lock()


def _module_exists(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package is missing or not a package
        return False


def import_with_row_stack(name):
    """Import the module ``name`` with ``numpy.row_stack`` aliased to ``numpy.vstack`` while
    it loads, if this NumPy lacks ``row_stack``; returns the module (None if it does not
    exist)."""
    if name in sys.modules:
        return sys.modules[name]
    if not _module_exists(name):
        return None
    if hasattr(np, "row_stack"):
        return importlib.import_module(name)
    with _lock:
        if name in sys.modules:
            return sys.modules[name]
        # the alias is visible to other threads only while this import runs
        np.row_stack = np.vstack
        try:
            return importlib.import_module(name)
        finally:
            del np.row_stack


def load_cuda_array_overloads():
    """Make numba-cuda's array overloads importable on this NumPy (see the module docstring).

    Call after ``from numba import cuda`` and before the first kernel compiles.
    """
    return import_with_row_stack(ARRAY_OVERLOADS)
