"""Shared test configuration.

CUDA kernels are tested against the CPU ones on every run through Numba's simulator; on a
machine with a GPU, run the suite with NUMBA_ENABLE_CUDASIM=0 to test the real device.
The variable must be set before Numba is first imported, hence at the top of this file.
"""

import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture
def rng():
    return np.random.default_rng(0)
