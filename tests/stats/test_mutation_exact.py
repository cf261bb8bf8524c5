"""Value tests of the exact MMD² that pin its row blocks, float64 sums and kernel registry.

Oracles: the Gram matrices written out with NumPy (sums of exact products of powers of two),
and the block sizes the ``max_memory`` rule fixes (rows = bytes // (8 × columns), at least 1).
"""

import numpy as np
import pytest

from sparsekit.exceptions import UnknownComponentError
from sparsekit.registry import Registry
from sparsekit.stats import mmd2_biased, mmd2_unbiased


def direct(A, B, k, unbiased):
    KA, KB, KAB = k(A, A), k(B, B), k(A, B)
    n, m = len(A), len(B)
    if unbiased:
        return (
            (KA.sum() - np.trace(KA)) / (n * (n - 1))
            + (KB.sum() - np.trace(KB)) / (m * (m - 1))
            - 2.0 * KAB.sum() / (n * m)
        )
    return KA.sum() / n**2 + KB.sum() / m**2 - 2.0 * KAB.sum() / (n * m)


def linear64(a, b):
    return np.asarray(a, dtype=np.float64) @ np.asarray(b, dtype=np.float64).T


def recorder():
    """The linear kernel as a function, and the list of the Gram shapes it is asked for."""
    calls = []

    def k(a, b):
        calls.append((len(a), len(b)))
        return linear64(a, b)

    return k, calls


@pytest.mark.parametrize("unbiased", [False, True])
def test_row_blocks_follow_max_memory(rng, unbiased):
    A, B = rng.normal(size=(10, 1)), rng.normal(size=(7, 1))
    k, calls = recorder()
    f = mmd2_unbiased if unbiased else mmd2_biased
    got = f(A, B, k, max_memory=240)
    # 240 bytes: 240 // (8·10) = 3 rows of A against the rest of A, 240 // (8·7) = 4 rows of B,
    # 4 rows of A against the 7 columns of B
    assert calls[:9] == [(3, 10), (3, 7), (3, 4), (1, 1), (4, 7), (3, 3), (4, 7), (4, 7), (2, 7)]
    assert got == pytest.approx(direct(A, B, linear64, unbiased), rel=1e-12, abs=1e-12)


def test_default_block_is_32_mib(rng):
    # 32 MiB hold 2**22 float64: 2**22 // 4096 = 1024 rows against 4096 columns (the pool is
    # the 4096 points of A and 5 of B), so A is summed in 4 blocks, B in one
    A, B = rng.normal(size=(4096, 1)), rng.normal(size=(5, 1))
    k, calls = recorder()
    got = mmd2_biased(A, B, k)
    assert calls[:4] == [(1024, 4096), (1024, 3072), (1024, 2048), (1024, 1024)]
    assert calls[4] == (5, 5)
    assert got == pytest.approx(direct(A, B, linear64, False), rel=1e-9)


@pytest.mark.parametrize("unbiased", [False, True])
def test_a_budget_below_one_row_still_takes_one_row_per_block(rng, unbiased):
    A, B = rng.normal(size=(5, 2)), rng.normal(size=(4, 2))
    k, calls = recorder()
    f = mmd2_unbiased if unbiased else mmd2_biased
    got = f(A, B, k, max_memory=1)
    assert calls[:5] == [(1, 5), (1, 4), (1, 3), (1, 2), (1, 1)]
    assert got == pytest.approx(direct(A, B, linear64, unbiased), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("unbiased", [False, True])
@pytest.mark.parametrize("max_memory", [8, None])
def test_float32_grams_are_summed_in_float64(unbiased, max_memory):
    # the linear kernel on float32 data gives float32 Grams; products of powers of two are
    # exact in float32, but sums such as 2**26 + 16389 or 2**24 + 1 are not: a float32
    # accumulation is off by at least 1
    A = np.array([[4096.0], [4096.0], [1.0], [2.0**-12]])
    B = np.array([[4096.0], [2.0**-12], [1.0]])
    f = mmd2_unbiased if unbiased else mmd2_biased
    got = f(A.astype(np.float32), B.astype(np.float32), "linear", max_memory=max_memory)
    assert got == pytest.approx(direct(A, B, linear64, unbiased), rel=1e-13)


@pytest.mark.parametrize("f", [mmd2_biased, mmd2_unbiased])
def test_kernel_name_is_resolved_in_the_given_registry(rng, f):
    A, B = rng.normal(size=(5, 2)), rng.normal(size=(4, 2))
    with pytest.raises(UnknownComponentError):
        f(A, B, "rbf", registry=Registry(builtins=False, entry_points=False))
    reg = Registry(entry_points=False)
    assert f(A, B, "linear", registry=reg) == pytest.approx(
        direct(A, B, linear64, f is mmd2_unbiased), rel=1e-12, abs=1e-12
    )


def test_unbiased_accepts_two_points_per_sample(rng):
    A, B = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    assert mmd2_unbiased(A, B, linear64) == pytest.approx(direct(A, B, linear64, True), rel=1e-12)
    with pytest.raises(ValueError, match="at least two points per sample"):
        mmd2_unbiased(A[:1], B, linear64)
