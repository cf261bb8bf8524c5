"""MMD statistics with a data-dependent bandwidth at the edges of the floating range."""

import numpy as np
import pytest

from sparsekit.stats import (
    mmd2_biased,
    mmd2_block,
    mmd2_linear,
    mmd2_nystrom,
    mmd2_rff,
    mmd2_unbiased,
)

ESTIMATORS = [mmd2_biased, mmd2_unbiased, mmd2_linear, mmd2_block, mmd2_rff, mmd2_nystrom]
MEDIAN = {"bandwidth": "median"}


def _kw(f):
    return {"random_state": 0} if f in (mmd2_rff, mmd2_nystrom) else {}


# (the random-feature MMD never forms squared distances: it had no trouble at these scales)
@pytest.mark.parametrize("f", [f for f in ESTIMATORS if f is not mmd2_rff])
@pytest.mark.parametrize("dtype,scale", [(np.float32, 1e-38), (np.float32, 1e-25)])
def test_median_bandwidth_mmd_does_not_depend_on_the_scale(f, dtype, scale, rng):
    # the median rule is scale-equivariant: the statistic of X * 2^k is that of X. Below 1e-19
    # in float32 the squared distances underflow, and below 1e-19 gamma is no float32
    X = rng.normal(size=(30, 4))
    Y = rng.normal(size=(25, 4)) + 0.5
    p = int(np.round(np.log2(scale)))
    Xs, Ys = np.ldexp(X, p).astype(dtype), np.ldexp(Y, p).astype(dtype)
    # the same points at order one, exactly (subnormal data keep only a few digits of X)
    want = f(np.ldexp(Xs, -p), np.ldexp(Ys, -p), kernel_params=MEDIAN, **_kw(f))
    got = f(Xs, Ys, kernel_params=MEDIAN, **_kw(f))
    assert np.isfinite(got)
    assert got == pytest.approx(want, rel=1e-4 if dtype == np.float32 else 1e-9, abs=1e-7)


@pytest.mark.parametrize("f", ESTIMATORS)
@pytest.mark.parametrize("scale,gamma", [(1e300, r"1e-60\d"), (1e-300, r"1e\+59\d")])
def test_median_bandwidth_out_of_the_float64_range_names_the_data_scale(f, scale, gamma, rng):
    X = rng.normal(size=(30, 4)) * scale
    Y = rng.normal(size=(25, 4)) * scale
    exponent = "+300" if scale > 1 else "-300"
    with pytest.raises(
        ValueError,
        match=(
            rf"bandwidth='median' gives gamma ~ {gamma} for data at scale 1e\{exponent} "
            r"\(largest \|x\|\), outside the float64 range.*rescale the data"
        ),
    ):
        f(X, Y, kernel_params=MEDIAN, **_kw(f))


def test_random_features_beyond_the_float32_range_are_refused_naming_the_scale(rng):
    # float32 data at 2^-140 (subnormal): frequencies ~ 1e42 are no float32, the features NaN
    X = np.ldexp(rng.normal(size=(30, 4)), -140).astype(np.float32)
    Y = np.ldexp(rng.normal(size=(25, 4)) + 0.5, -140).astype(np.float32)
    with pytest.raises(
        ValueError,
        match=r"random Fourier features of float32 data at scale "
        r"\S+ \(largest \|x\|\) are not finite.*float64",
    ):
        mmd2_rff(X, Y, kernel_params=MEDIAN, random_state=0)
    # the same points in float64 are fine
    assert np.isfinite(
        mmd2_rff(X.astype(np.float64), Y.astype(np.float64), kernel_params=MEDIAN, random_state=0)
    )
