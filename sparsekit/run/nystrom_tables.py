"""Deprecated: moved to :mod:`sparsekit.experiments.nystrom_tables` (the theses' protocols are not
part of the engine). Importing this module gives that module, with a :class:`DeprecationWarning`."""

import sys
import warnings

from ..experiments import nystrom_tables as _moved

warnings.warn(
    "sparsekit.run.nystrom_tables is deprecated: import sparsekit.experiments.nystrom_tables",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
