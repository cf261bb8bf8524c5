"""scikit-learn's estimator checks on every sparsekit estimator.

``SparseCoder`` is built per check with a dictionary as wide as that check's data (as
scikit-learn builds its own ``SparseCoder`` for its checks): the dictionary fixes the number of
features.
"""

import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import estimator_checks_generator, parametrize_with_checks

from sparsekit import (
    Fastfood,
    Nystroem,
    NystromLogisticRegression,
    NystromRidge,
    NystromRidgeClassifier,
    RandomFourierFeatures,
    SparseCoder,
)

#: features of the data of the checks that do not use 3
_CHECK_WIDTH = {
    "check_estimators_dtypes": 5,
    "check_dtype_object": 10,
    "check_transformers_unfitted_stateless": 5,
    "check_fit_idempotent": 2,
    "check_set_output_transform": 5,
    "check_global_output_transform_pandas": 5,
    "check_set_output_transform_pandas": 5,
    "check_set_output_transform_polars": 5,
    "check_global_set_output_transform_polars": 5,
    "check_dataframe_column_names_consistency": 8,
    "check_estimators_overwrite_params": 2,
    "check_estimators_fit_returns_self": 2,
    "check_readonly_memmap_input": 2,
    "check_n_features_in_after_fitting": 4,
    "check_fit_check_is_fitted": 2,
    "check_n_features_in": 2,
    "check_positive_only_tag_during_fit": 4,
    "check_fit2d_1sample": 10,
    "check_fit2d_1feature": 1,
}


def _sparse_coder(width):
    dictionary = np.random.default_rng(width).standard_normal((5, width))
    return SparseCoder(dictionary, solver_params={"n_nonzero_coefs": 2})


def _check_name(check):
    return getattr(getattr(check, "func", check), "__name__", str(check))


def _sparse_coder_checks():
    with warnings.catch_warnings():  # sparsekit does not depend on scikit-learn's BaseEstimator
        warnings.filterwarnings("ignore", message=".*does not inherit from")
        checks = list(estimator_checks_generator(_sparse_coder(3), legacy=True))
    for _, check in checks:
        name = _check_name(check)
        yield pytest.param(
            _sparse_coder(_CHECK_WIDTH.get(name, 3)), check, id=f"SparseCoder-{name}"
        )


with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message=".*does not inherit from")
    _ESTIMATOR_CHECKS = parametrize_with_checks(
        [
            Nystroem(n_components=10, random_state=0),
            Nystroem(kernel="linear", n_components=5, random_state=0),
            RandomFourierFeatures(n_components=11, random_state=0),
            Fastfood(n_components=10, random_state=0),
            NystromRidge(n_components=20, alpha=1e-3, random_state=0),
            NystromRidgeClassifier(n_components=20, alpha=1e-3, random_state=0),
            NystromLogisticRegression(n_components=20, alpha=1e-3, random_state=0),
        ]
    )


@_ESTIMATOR_CHECKS
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator,check", list(_sparse_coder_checks()))
def test_sklearn_compatible_sparse_coder(estimator, check):
    check(estimator)
