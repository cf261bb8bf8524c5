"""One thread setting: explicit n_jobs, Numba's thread count and threadpoolctl's BLAS limit."""
import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import sparsekit
from sparsekit import _threads
from sparsekit.kernels import _cpu
from sparsekit.samplers._parallel import run_blocks
from sparsekit.samplers._rls_cpu import _invert_upper_inplace, rls_from_gram


@pytest.fixture
def four_cpus(monkeypatch):
    """Pretend the process may use 4 CPUs (so the threaded paths run on any CI runner)."""
    limit = {"blas": 4}
    monkeypatch.setattr(_threads, "usable_cpus", lambda: 4)
    monkeypatch.setattr(numba, "get_num_threads", lambda: 4)
    monkeypatch.setattr(_threads, "blas_threads", lambda: limit["blas"])
    return limit


def test_effective_n_jobs_follows_each_setting():
    assert _threads.effective_n_jobs(3) == 3
    assert _threads.effective_n_jobs(-1) == _threads.usable_cpus()
    with threadpool_limits(limits=1, user_api="blas"):
        assert _threads.effective_n_jobs() == 1
        assert _threads.effective_n_jobs(2) == 2  # an explicit n_jobs wins
    with _threads.numba_limit(1):
        assert _threads.effective_n_jobs() == 1
    with sparsekit.thread_limit(1) as n:
        assert n == 1 and _threads.blas_threads() == 1 and numba.get_num_threads() == 1
    with pytest.raises(ValueError, match="n_jobs"):
        _threads.effective_n_jobs(0)


def test_exp_inplace_threaded_branch_is_exact(four_cpus, monkeypatch):
    calls = []
    pool = _cpu._exp_pool()
    monkeypatch.setattr(_cpu, "_exp_pool", lambda: calls.append(1) or pool)
    A = np.random.default_rng(0).standard_normal((700, 400))  # 2.1 x 2^17 entries
    np.testing.assert_array_equal(_cpu.exp_inplace(A.copy()), np.exp(A))
    assert calls  # the split branch ran
    calls.clear()
    four_cpus["blas"] = 1  # as under threadpool_limits(1): inline, no pool
    np.testing.assert_array_equal(_cpu.exp_inplace(A.copy()), np.exp(A))
    assert not calls
    np.testing.assert_array_equal(_cpu.exp_inplace(A[:300].copy()), np.exp(A[:300]))
    assert not calls  # small arrays run inline


def test_block_workers_run_single_threaded():
    seen = []

    def work(i):
        seen.append((i, _threads.effective_n_jobs(), numba.get_num_threads()))

    run_blocks(work, range(12), n_jobs=3)
    assert sorted(s[0] for s in seen) == list(range(12))
    assert {s[1:] for s in seen} == {(1, 1)}


@pytest.mark.parametrize("m", [3, 160, 357])
def test_recursive_triangular_inverse(m):
    rng = np.random.default_rng(m)
    U = np.triu(rng.uniform(-1.0, 1.0, (m, m))) / m + np.diag(1.0 + rng.random(m))
    W = np.asfortranarray(U.copy())
    assert _invert_upper_inplace(W)
    np.testing.assert_allclose(np.triu(W), np.linalg.inv(U), rtol=0, atol=1e-12)
    U[m // 2 + 1, m // 2 + 1] = 0.0
    assert not _invert_upper_inplace(np.asfortranarray(U))


def test_rls_from_gram_against_dense_inverse():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((325, 4))
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    lam = 0.3
    expected = np.diag(K @ np.linalg.inv(K + lam * np.eye(len(K))))
    np.testing.assert_allclose(rls_from_gram(K, lam), expected, rtol=0, atol=1e-12)
