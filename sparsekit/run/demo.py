"""Deprecated: moved to :mod:`sparsekit.experiments.demo` (the theses' protocols are not part
of the engine). Importing this module gives that module, with a :class:`DeprecationWarning`."""

import sys
import warnings

from ..experiments import demo as _moved

warnings.warn(
    "sparsekit.run.demo is deprecated: import sparsekit.experiments.demo",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
