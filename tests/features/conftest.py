"""Fixtures of the feature-map tests."""

import numpy as np
import pytest


@pytest.fixture
def X150():
    """150 standard normal points in three dimensions."""
    return np.random.default_rng(0).normal(size=(150, 3))
