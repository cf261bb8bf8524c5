"""Type aliases of the public signatures (for type checkers and readers; no runtime checks)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Union

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from scipy.sparse import sparray, spmatrix

#: Data of ``fit``/``transform``: an array-like (NumPy array, nested lists, pandas DataFrame, Dask
#: array), a SciPy sparse matrix or array, or a sequence of samples such as graphs.
DataLike = Union[ArrayLike, "spmatrix", "sparray", Sequence[Any]]

#: What :func:`sparsekit._validation.check_random_state` accepts.
RandomStateLike = int | np.integer | np.random.Generator | np.random.RandomState | None
