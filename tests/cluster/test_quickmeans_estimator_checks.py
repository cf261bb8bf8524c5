"""QuicKMeans passes scikit-learn's estimator checks."""

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from sparsekit import QuicKMeans

with warnings.catch_warnings():
    # the estimator implements the protocol itself (sparsekit's ParamsMixin), by design
    warnings.filterwarnings("ignore", message="Estimator QuicKMeans does not inherit")
    CHECKS = parametrize_with_checks(
        [QuicKMeans(n_clusters=3, max_iter=5, palm_iter=10, random_state=0)]
    )


@CHECKS
def test_sklearn_compatible(estimator, check):
    check(estimator)
