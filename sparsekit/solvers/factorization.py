"""Deprecated: moved to :mod:`sparsekit.factorizers.base` (factorizers are a registry
family of their own). Importing this module gives that module, with a
:class:`DeprecationWarning`."""

import sys
import warnings

from ..factorizers import base as _moved

warnings.warn(
    "sparsekit.solvers.factorization is deprecated: import sparsekit.factorizers.base",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
