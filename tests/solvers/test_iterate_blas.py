"""The residual strategy's per-iteration products: skinny ones on one BLAS thread, while the
step (the library's own threads) runs outside the limit."""

import numpy as np
import pytest

from sparsekit._runtime.threads import blas_limit, blas_threads, effective_n_jobs, thread_limit
from sparsekit.solvers._driver import run_correlation_steps


@pytest.mark.parametrize(
    "n_active,n_atoms,expected", [(1, 100, 1), (30, 100, 1), (200, 40, 1), (200, 100, 2)]
)
def test_skinny_correlations_run_on_one_blas_thread(monkeypatch, n_active, n_atoms, expected):
    with blas_limit(2), thread_limit(2):
        if blas_threads() < 2:
            pytest.skip("BLAS runs on one thread here")
        rng = np.random.default_rng(0)
        R = rng.standard_normal((300, 16))
        D = rng.standard_normal((16, n_atoms))
        active = np.zeros(300, dtype=bool)
        active[:n_active] = True
        seen = []
        real_matmul = np.ndarray.__matmul__

        class Spy(np.ndarray):  # records the BLAS limit at the product
            def __matmul__(self, other):
                seen.append(blas_threads())
                return real_matmul(np.asarray(self), np.asarray(other))

        def step(k, rows, C):
            np.testing.assert_allclose(C, R[rows] @ D, rtol=1e-12, atol=1e-12)
            assert effective_n_jobs() == 2  # the step runs the library's threads, unlimited
            active[rows[::2]] = False

        run_correlation_steps(R.view(Spy), D.view(Spy), active, 1, step)
        assert seen == [expected]
        assert blas_threads() == 2
