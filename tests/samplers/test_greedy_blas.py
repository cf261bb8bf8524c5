"""greedy-trace: a step's matrix-vector products run on one BLAS thread, while its row-range
updates keep the thread count resolved before the limit."""

import numpy as np
import pytest

import sparsekit
import sparsekit.samplers.greedy as greedy
from sparsekit._runtime.threads import blas_limit, blas_threads


@pytest.mark.parametrize("approximate,cache_gram", [(True, False), (False, False), (False, True)])
def test_greedy_steps_run_on_one_blas_thread(monkeypatch, approximate, cache_gram):
    with blas_limit(2):
        if blas_threads() < 2:
            pytest.skip("BLAS runs on one thread here")
        name = "sketch_step" if approximate else "exact_step"
        step = getattr(greedy, name)
        seen = []

        def spy(*args):
            seen.append((blas_threads(), args[-1]))
            return step(*args)

        monkeypatch.setattr(greedy, name, spy)
        X = np.random.default_rng(0).standard_normal((300, 4))
        kernel = sparsekit.get_kernel("rbf", gamma=0.5)
        params = (
            {"approximate": approximate, "n_features": 64}
            if approximate
            else {"cache_gram": cache_gram}
        )
        got = sparsekit.get_sampler("greedy-trace", **params).sample(X, kernel, 8, random_state=0)
        assert len(got.indices) == 8
        assert len(seen) == 8
        assert all(t == 1 for t, _ in seen), seen  # products inside a step: one BLAS thread
        assert all(n_jobs == 2 for _, n_jobs in seen), seen  # the step's own pool keeps 2
        assert blas_threads() == 2
