"""One ``NotFittedError`` for the whole library: every estimator raises it before ``fit``; it is
scikit-learn's ``NotFittedError`` (a subclass), a ``ValueError`` and an ``AttributeError``."""

import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest
import sklearn.exceptions

import sparsekit
import sparsekit.exceptions
from sparsekit.exceptions import NotFittedError
from sparsekit.manifold import IsomapGeodesicKernel, LLEKernel, SpectralNormalizedKernel
from sparsekit.stats import NystromMMD

#: the methods that need a fitted estimator
USES = (
    "transform",
    "predict",
    "predict_proba",
    "decision_function",
    "score",
    "staged_predict",
    "staged_decision_function",
    "get_feature_names_out",
    "mmd2",
    "mmd",
    "sq_norm_v",
)


def public_estimators():
    found = {}
    for name in sorted(sparsekit._LAZY):
        obj = getattr(sparsekit, name)
        if (
            isinstance(obj, type) and hasattr(obj, "fit") and getattr(obj, "_requires_fit", True)
        ):  # SparseCoder needs no fit
            found[name] = obj
    found["NystromMMD"] = NystromMMD
    return found


ESTIMATORS = public_estimators()


def assert_is_the_not_fitted_error(exc):
    assert type(exc) is NotFittedError
    assert isinstance(exc, sklearn.exceptions.NotFittedError)
    assert isinstance(exc, ValueError) and isinstance(exc, AttributeError)


def test_every_public_estimator_is_listed():
    assert {
        "Nystroem",
        "RandomFourierFeatures",
        "Fastfood",
        "QuicKMeans",
        "KernelKMeans",
        "OMPForestRegressor",
        "OMPForestClassifier",
        "KernelPCA",
        "MDS",
        "Isomap",
        "LocallyLinearEmbedding",
        "SpectralEmbedding",
        "LaplacianEigenmaps",
        "SpectralClustering",
        "NystromMMD",
    } <= set(ESTIMATORS)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_using_an_unfitted_estimator_raises_the_not_fitted_error(name):
    estimator = ESTIMATORS[name]()
    X = np.random.default_rng(0).normal(size=(6, 3))
    uses = [m for m in USES if callable(getattr(estimator, m, None))]
    assert uses
    for method in uses:
        args = {
            "score": (X, np.zeros(6)),
            "mmd2": (),
            "mmd": (),
            "sq_norm_v": (0, 1),
            "get_feature_names_out": (),
        }.get(method, (X,))
        with pytest.raises(NotFittedError) as info:
            out = getattr(estimator, method)(*args)
            if method.startswith("staged_"):
                next(iter(out))
        assert_is_the_not_fitted_error(info.value)


def test_nystrom_mmd_features_before_fit():
    with pytest.raises(NotFittedError) as info:
        _ = NystromMMD().features_
    assert_is_the_not_fitted_error(info.value)
    assert not hasattr(NystromMMD(), "features_")


@pytest.mark.parametrize(
    "kernel",
    [IsomapGeodesicKernel(), LLEKernel(), SpectralNormalizedKernel()],
    ids=lambda k: type(k).__name__,
)
def test_unfitted_data_dependent_kernels_raise_it_too(kernel):
    with pytest.raises(NotFittedError) as info:
        kernel(np.zeros((2, 3)))
    assert_is_the_not_fitted_error(info.value)


def test_one_class_object():
    assert sparsekit.NotFittedError is NotFittedError is sparsekit.exceptions.NotFittedError
    assert NotFittedError.__module__ == "sparsekit.exceptions"
    err = pickle.loads(pickle.dumps(NotFittedError("x")))
    assert type(err) is NotFittedError and err.args == ("x",)
    package = pathlib.Path(sparsekit.__file__).parent
    defining = sorted(
        str(p.relative_to(package))
        for p in package.rglob("*.py")
        if "class NotFittedError" in p.read_text(encoding="utf-8")
    )
    assert defining == ["exceptions.py"]


def test_the_one_class_is_sklearns_and_a_value_and_attribute_error():
    import sparsekit.exceptions as exceptions

    assert exceptions.NotFittedError is NotFittedError is sparsekit.NotFittedError
    assert issubclass(NotFittedError, sklearn.exceptions.NotFittedError)
    assert issubclass(NotFittedError, ValueError) and issubclass(NotFittedError, AttributeError)
    with pytest.raises(AttributeError, match="has no attribute 'NotFittedErrors'"):
        getattr(exceptions, "NotFittedErrors")  # noqa: B009


def _run(code):
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()


def test_estimator_modules_do_not_import_sklearn_until_an_error_is_raised():
    out = _run(
        "import sys\n"
        "import sparsekit.cluster.quickmeans, sparsekit.cluster.kernel_kmeans\n"
        "import sparsekit.manifold.embedding, sparsekit.features.nystrom\n"
        "print('sklearn' in sys.modules)\n"
        "from sparsekit import Nystroem, NotFittedError\n"
        "import sklearn.exceptions\n"
        "try:\n"
        "    Nystroem().transform([[0.0]])\n"
        "except sklearn.exceptions.NotFittedError as e:\n"
        "    print(type(e) is NotFittedError)\n"
    )
    assert out == ["False", "True"]


def test_without_sklearn_it_is_a_value_and_attribute_error():
    out = _run(
        "import sys\n"
        "sys.modules['sklearn'] = None     # scikit-learn not installed\n"
        "from sparsekit import Nystroem\n"
        "from sparsekit.exceptions import NotFittedError\n"
        "try:\n"
        "    Nystroem().transform([[0.0]])\n"
        "except NotFittedError as e:\n"
        "    print(isinstance(e, ValueError), isinstance(e, AttributeError),\n"
        "          [c.__name__ for c in NotFittedError.__mro__[1:3]])\n"
    )
    assert out == ["True", "True", "['ValueError',", "'AttributeError']"]
