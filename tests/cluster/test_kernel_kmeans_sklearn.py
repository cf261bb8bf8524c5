"""KernelKMeans passes scikit-learn's estimator checks (exact and Nyström methods)."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from sparsekit import KernelKMeans


@parametrize_with_checks(
    [
        KernelKMeans(n_clusters=3, random_state=0),
        KernelKMeans(n_clusters=3, method="nystrom", n_landmarks=10, random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
