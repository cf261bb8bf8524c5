"""Fixtures of the manifold tests."""

import numpy as np
import pytest


@pytest.fixture
def curve():
    t = np.linspace(0.0, 3.0, 40)
    return np.column_stack([np.cos(t), np.sin(t), 0.1 * t])
