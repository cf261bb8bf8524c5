"""Deprecated: moved to :mod:`sparsekit.factorizers.hierarchical` (factorizers are a registry
family of their own). Importing this module gives that module, with a
:class:`DeprecationWarning`."""

import sys
import warnings

from ..factorizers import hierarchical as _moved

warnings.warn(
    "sparsekit.solvers.hierarchical is deprecated: import sparsekit.factorizers.hierarchical",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
