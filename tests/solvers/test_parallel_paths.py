"""The parallel kernels (many signals) and their serial twins (few signals) agree."""
import numpy as np
import pytest

from sparsekit.solvers import _cpu
from sparsekit.solvers.fw import FrankWolfe
from sparsekit.solvers.mp import MatchingPursuit
from sparsekit.solvers.nnomp import NonNegativeOMP
from sparsekit.solvers.omp import OMP

from ._problems import unit_gaussian

N_SIG = _cpu.STEP_PARALLEL_MIN_ROWS + 6


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(9)
    return unit_gaussian(rng, 12, 20), rng.standard_normal((12, N_SIG))


@pytest.mark.parametrize("make", [
    lambda: OMP(n_nonzero_coefs=4, precompute=False, return_path=True),
    lambda: OMP(n_nonzero_coefs=4, precompute=True, return_path=True),
    lambda: MatchingPursuit(max_iter=6, precompute=False),
    lambda: MatchingPursuit(max_iter=6, precompute=True),
    lambda: NonNegativeOMP(n_nonzero_coefs=4),
    lambda: FrankWolfe(beta=5.0, max_iter=8),
])
def test_parallel_batch_equals_serial_single(problem, make):
    D, Y = problem
    batch = make().solve(D, Y)
    for j in (0, 1, N_SIG - 1):
        one = make().solve(D, Y[:, j])
        np.testing.assert_allclose(batch.coef[:, j], one.coef, rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(batch.support[:, j], one.support)
        np.testing.assert_allclose(batch.residual_norms[:, j], one.residual_norms, rtol=1e-10,
                                   atol=1e-14)
        if batch.path is not None:
            np.testing.assert_allclose(batch.path[..., j], one.path, rtol=1e-12, atol=1e-14)


def test_kernel_for_picks_the_twin():
    assert _cpu.kernel_for("omp_gram", 1) is _cpu.omp_gram_serial
    assert _cpu.kernel_for("omp_gram", 2) is _cpu.omp_gram
    assert _cpu.kernel_for("fw_step", 3, _cpu.STEP_PARALLEL_MIN_ROWS) is _cpu.fw_step_serial
