"""Deprecated: moved to :mod:`sparsekit.experiments.quickmeans` (the theses' protocols are not part
of the engine). Importing this module gives that module, with a :class:`DeprecationWarning`."""

import sys
import warnings

from ..experiments import quickmeans as _moved

warnings.warn(
    "sparsekit.run.task_quickmeans is deprecated: import sparsekit.experiments.quickmeans",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
