"""QuicKMeans refuses data whose K-means sums would overflow (instead of inf or NaN results)."""

import numpy as np
import pytest

from sparsekit import QuicKMeans


def _blobs(rng):
    X = rng.normal(size=(200, 8))
    X[:70] += 5
    X[70:140] -= 5
    return X


@pytest.mark.parametrize("scale", [2.0**505, 1e300])
def test_fit_on_data_beyond_the_range_is_refused_naming_the_scale(scale, rng):
    # at 2^505 the sums overflowed inside the iterations (the labels changed); at 1e300
    # inertia_ was inf and transform gave inf distances
    X = _blobs(rng) * scale
    with pytest.raises(
        ValueError,
        match=r"X is too large for float64 arithmetic \(largest "
        r"\|x\| = .*divide X by a constant",
    ):
        QuicKMeans(n_clusters=3, random_state=0).fit(X)


def test_transform_and_score_of_data_beyond_the_range_are_refused(rng):
    X = _blobs(rng)
    q = QuicKMeans(n_clusters=3, random_state=0).fit(X)
    for method in (q.transform, q.score, q.predict):
        with pytest.raises(ValueError, match="too large for float64 arithmetic"):
            method(X * 1e300)
    # at the largest accepted scale the labels are those of the unscaled data
    s = 2.0**500
    assert np.array_equal(QuicKMeans(n_clusters=3, random_state=0).fit(X * s).labels_, q.labels_)
