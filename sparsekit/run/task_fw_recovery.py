"""Deprecated: moved to :mod:`sparsekit.experiments.fw_recovery` (the theses' protocols are not part
of the engine). Importing this module gives that module, with a :class:`DeprecationWarning`."""

import sys
import warnings

from ..experiments import fw_recovery as _moved

warnings.warn(
    "sparsekit.run.task_fw_recovery is deprecated: import sparsekit.experiments.fw_recovery",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
