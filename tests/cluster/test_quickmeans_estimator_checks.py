"""QuicKMeans passes scikit-learn's estimator checks."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from sparsekit import QuicKMeans

REASON = "complex and object dtypes are a TypeError naming the dtype (library convention)"


@parametrize_with_checks(
    [QuicKMeans(n_clusters=3, max_iter=5, palm_iter=10, random_state=0)],
    expected_failed_checks=lambda est: {"check_complex_data": REASON,
                                        "check_dtype_object": REASON},
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
