"""Input checks for components, public so that plugins use the same rules and messages.

Every check raises a ``TypeError`` / ``ValueError`` that names the argument and the fix, and
returns the validated value (arrays C-contiguous in float32 or float64).

Arrays and scalars
    :func:`check_array`, :func:`check_pair`, :func:`check_scalar`, :func:`check_positive`,
    :func:`check_option`, :func:`check_random_state`
Samplers
    :func:`check_n_landmarks`
Solvers (dictionary atoms are columns, signals are the columns of ``Y``)
    :func:`check_dictionary`, :func:`check_signals`, :func:`check_tol`, :func:`check_n_nonzero`
"""

from ._validation import (
    check_array,
    check_option,
    check_pair,
    check_positive,
    check_random_state,
    check_scalar,
)
from .samplers.base import check_n_landmarks
from .solvers.base import check_dictionary, check_n_nonzero, check_signals, check_tol

__all__ = [
    "check_array",
    "check_pair",
    "check_scalar",
    "check_positive",
    "check_option",
    "check_random_state",
    "check_n_landmarks",
    "check_dictionary",
    "check_signals",
    "check_tol",
    "check_n_nonzero",
]
