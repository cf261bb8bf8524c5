"""Deprecated: moved to :mod:`sparsekit.dask.nystrom` (one spelling of Nyström in module names;
the class and function names keep theirs). Importing this module gives that module, with a
:class:`DeprecationWarning`."""

import sys
import warnings

from . import nystrom as _moved

warnings.warn(
    "sparsekit.dask.nystroem is deprecated: import sparsekit.dask.nystrom",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
