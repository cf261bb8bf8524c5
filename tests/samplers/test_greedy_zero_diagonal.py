"""greedy-trace on a kernel whose diagonal is zero everywhere: one clear error at the sampler."""

import numpy as np
import pytest

import sparsekit
from sparsekit.samplers.greedy import GreedyTraceSampler


@pytest.mark.parametrize(
    "kernel_name, X",
    [
        ("linear", np.zeros((20, 3))),  # k(x, x) = 0 for zero data
        ("additive-chi2", np.random.default_rng(0).random((20, 3))),  # k(x, x) = 0 always
    ],
)
def test_zero_kernel_diagonal_is_one_clear_error_at_the_sampler(kernel_name, X):
    kernel = sparsekit.get_kernel(kernel_name)
    for cache_gram in (False, True):
        with pytest.raises(
            ValueError,
            match=r"greedy-trace cannot select landmarks: the kernel "
            rf"diagonal .* \(kernel '{kernel_name}'",
        ):
            GreedyTraceSampler(cache_gram=cache_gram).sample(X, kernel, 5, random_state=0)
    with pytest.raises(ValueError, match="greedy-trace cannot select landmarks"):
        sparsekit.Nystroem(kernel_name, sampler="greedy-trace", n_components=5).fit(X)
