"""Fixtures and helpers of the manifold tests."""

import numpy as np
import pytest


@pytest.fixture
def curve():
    t = np.linspace(0.0, 3.0, 40)
    return np.column_stack([np.cos(t), np.sin(t), 0.1 * t])


def assert_equal_up_to_sign(a, b, rtol):
    """Equal columns up to the sign of each (an eigenvector's sign is arbitrary)."""
    signs = np.sign((a * b).sum(axis=0))
    np.testing.assert_allclose(a, b * signs, rtol=0, atol=rtol * np.abs(b).max())
