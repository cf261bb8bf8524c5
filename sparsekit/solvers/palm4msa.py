"""Deprecated: moved to :mod:`sparsekit.factorizers.palm4msa` (factorizers are a registry
family of their own). Importing this module gives that module, with a
:class:`DeprecationWarning`."""

import sys
import warnings

from ..factorizers import palm4msa as _moved

warnings.warn(
    "sparsekit.solvers.palm4msa is deprecated: import sparsekit.factorizers.palm4msa",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
