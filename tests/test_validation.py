"""The input checks (``sparsekit._validation``, public as ``sparsekit.validation``): what they
accept, keep, convert and refuse, against scikit-learn's own checks (``check_array``,
``check_pairwise_arrays``, ``check_non_negative``, the ``Interval`` of its parameter
validation) as the oracle, and against the caller's arrays for copies."""

import numbers
import re

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import check_pairwise_arrays
from sklearn.utils import check_array as sk_check_array
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_non_negative

from sparsekit import validation
from sparsekit._validation import (
    check_array,
    check_option,
    check_pair,
    check_random_state,
    check_scalar,
)


def _as(X, sparse):
    return sp.csr_matrix(X) if sparse else X


def _buffer(A):
    return A.data if sp.issparse(A) else A


# -- values ------------------------------------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(("bad", "word"), [(np.nan, "NaN"), (np.inf, "inf"), (-np.inf, "inf")])
def test_nan_and_inf_are_refused_naming_the_argument_and_the_value(bad, word, sparse):
    """Oracle: scikit-learn's check_array refuses NaN and infinity, dense and sparse, and
    says which of the two it found."""
    X = np.array([[1.0, 0.0], [0.0, 2.0]])
    X[1, 1] = bad
    A = _as(X, sparse)
    with pytest.raises(ValueError, match=word):
        sk_check_array(A, accept_sparse="csr")
    with pytest.raises(ValueError, match=f"^Y contains {word};"):
        check_array(A, "Y", accept_sparse=True)
    assert np.isnan(_buffer(check_array(A, finite=False, accept_sparse=True))).any() == (
        word == "NaN"
    )


@pytest.mark.parametrize("sparse", [False, True])
def test_nonnegative_accepts_zeros_and_refuses_negative_values(sparse):
    """Oracle: scikit-learn's check_non_negative (zeros pass, any negative value fails)."""
    X = _as(np.array([[0.0, 1.0], [2.0, 0.0]]), sparse)
    check_non_negative(X, "oracle")
    check_array(X, accept_sparse=True, nonnegative=True)
    Y = _as(np.array([[0.0, -1e-300], [2.0, 0.0]]), sparse)
    with pytest.raises(ValueError):
        check_non_negative(Y, "oracle")
    with pytest.raises(ValueError, match="X contains negative values"):
        check_array(Y, accept_sparse=True, nonnegative=True)


# -- dtypes ------------------------------------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int8, np.bool_])
def test_float32_and_float64_are_kept_and_the_rest_becomes_float64(dtype, sparse):
    """Oracle: scikit-learn's check_array with dtype=[float64, float32]: a float dtype is kept,
    any other becomes float64; a dtype given explicitly is the output's."""
    A = _as(np.array([[1, 0], [0, 3]], dtype=dtype), sparse)
    ref = sk_check_array(A, accept_sparse="csr", dtype=[np.float64, np.float32])
    assert check_array(A, accept_sparse=True).dtype == ref.dtype
    for forced in (np.float32, np.float64):
        out = check_array(A, accept_sparse=True, dtype=forced)
        assert out.dtype == sk_check_array(A, accept_sparse="csr", dtype=forced).dtype == forced


def test_pandas_frames_and_numbers_stored_as_objects_are_read_as_numbers():
    """Oracle: scikit-learn's check_array on the same inputs (a frame of int, float and bool
    columns is an object array to NumPy); objects that are not numbers are refused."""
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1, 2, 3], "b": [0.5, 1.5, 2.5], "c": [True, False, True]})
    assert np.asarray(df).dtype == object
    for X in (df, np.array([[1, 2.5], [3, 4]], dtype=object)):
        out = check_array(X)
        ref = sk_check_array(X)
        assert out.dtype == ref.dtype == np.float64
        np.testing.assert_array_equal(out, ref)
    with pytest.raises(TypeError, match="Y has dtype object"):
        check_array(np.array([["a", 1]], dtype=object), "Y")


# -- shapes ------------------------------------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(("shape", "what"), [((0, 3), "0 sample"), ((3, 0), "0 feature")])
def test_empty_data_is_refused_saying_what_is_missing(shape, what, sparse):
    """Oracle: scikit-learn's check_array refuses 0 samples and 0 features, dense and sparse,
    with the same words."""
    A = _as(np.zeros(shape), sparse)
    with pytest.raises(ValueError, match=what):
        sk_check_array(A, accept_sparse="csr")
    with pytest.raises(ValueError, match=f"^Y is empty: {what}"):
        check_array(A, "Y", accept_sparse=True)
    assert check_array(A, accept_sparse=True, allow_empty=True).shape == shape


def test_the_wrong_number_of_dimensions_is_refused_naming_the_argument():
    """Oracle: scikit-learn's check_array refuses 1-D and 3-D input where 2-D is expected,
    with the reshape hint for 1-D; ndim=1 asks for 1-D."""
    with pytest.raises(ValueError, match=re.escape("reshape(-1, 1)")):
        sk_check_array(np.arange(3.0))
    with pytest.raises(ValueError, match=r"^Y must be 2-D .*Y\.reshape\(-1, 1\)"):
        check_array(np.arange(3.0), "Y")
    with pytest.raises(ValueError, match="Found array with dim 3"):
        sk_check_array(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match=r"^Y must be 2-D .*got shape \(2, 2, 2\)$"):
        check_array(np.zeros((2, 2, 2)), "Y")
    with pytest.raises(ValueError, match=r"^w must be 1-D"):
        check_array(np.zeros((2, 2)), "w", ndim=1)
    assert check_array(np.arange(3.0), ndim=1).shape == (3,)


def test_sparse_input_is_refused_unless_accepted_and_then_given_in_csr():
    """Oracle: scikit-learn's check_array refuses sparse input without accept_sparse and
    returns CSR for accept_sparse="csr"."""
    A = sp.coo_matrix(np.eye(3))
    with pytest.raises(TypeError):
        sk_check_array(A)
    with pytest.raises(TypeError, match=re.escape("Y.toarray()")):
        check_array(A, "Y")
    out = check_array(A, accept_sparse=True)
    assert out.format == sk_check_array(A, accept_sparse="csr").format == "csr"
    np.testing.assert_array_equal(out.toarray(), np.eye(3))


# -- copies ------------------------------------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True])
def test_a_copy_is_made_when_asked_and_only_then(sparse):
    """Oracle: scikit-learn's check_array: copy=True never shares memory with the input, and
    copy=False returns an input already C-contiguous float64 (CSR) without copying it."""
    A = _as(np.arange(6.0).reshape(3, 2), sparse)
    for copy in (True, False):
        ref = sk_check_array(A, accept_sparse="csr", copy=copy)
        out = check_array(A, accept_sparse=True, copy=copy)
        shares = np.shares_memory(_buffer(ref), _buffer(A))
        assert shares is (not copy)
        assert np.shares_memory(_buffer(out), _buffer(A)) is shares


def test_duplicates_of_a_sparse_input_are_summed_in_a_copy():
    """Oracle: the dense values of the input (scikit-learn's toarray sums duplicates) and the
    caller's matrix, left as it was."""
    A = sp.csr_matrix(
        (np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1]), np.array([0, 2, 3])), shape=(2, 2)
    )
    before = [a.copy() for a in (A.data, A.indices, A.indptr)]
    out = check_array(A, accept_sparse=True)
    assert out.has_canonical_format
    np.testing.assert_array_equal(out.toarray(), [[3.0, 0.0], [0.0, 3.0]])
    for old, now in zip(before, (A.data, A.indices, A.indptr)):
        np.testing.assert_array_equal(now, old)


# -- pairs -------------------------------------------------------------------------------------
def test_check_pair_compares_feature_counts_and_gives_a_common_dtype():
    """Oracle: scikit-learn's check_pairwise_arrays: X and Y with different sample counts and
    the same feature count pass, different feature counts are refused, float32 with float64
    gives float64 for both."""
    X = np.ones((5, 3), dtype=np.float32)
    Y = np.ones((2, 3))
    ref = check_pairwise_arrays(X, Y)
    out = check_pair(X, Y, names=("A", "B"))
    assert [a.dtype for a in out] == [a.dtype for a in ref] == [np.float64, np.float64]
    assert [a.shape for a in out] == [(5, 3), (2, 3)]
    with pytest.raises(ValueError, match="Incompatible dimension"):
        check_pairwise_arrays(X, np.ones((5, 2)))
    with pytest.raises(ValueError, match="^A has 3 features but B has 2"):
        check_pair(X, np.ones((5, 2)), names=("A", "B"))
    same, again = check_pair(X)
    assert again is same and same.dtype == np.float32


def test_check_pair_with_one_sparse_input_gives_both_in_csr():
    """Oracle: the dense values (scikit-learn's check_pairwise_arrays keeps them); the rule of
    the docstring: when one input is sparse both come back in CSR."""
    X = sp.csr_matrix(np.eye(3))
    Y = np.arange(6.0).reshape(2, 3)
    ref = check_pairwise_arrays(X, Y, accept_sparse="csr")
    out = check_pair(X, Y, accept_sparse=True)
    assert all(sp.issparse(a) and a.format == "csr" for a in out)
    for a, r in zip(out, ref):
        np.testing.assert_array_equal(a.toarray(), r.toarray() if sp.issparse(r) else r)


# -- scalars, options, generators --------------------------------------------------------------
@pytest.mark.parametrize(
    ("low_inclusive", "high_inclusive", "closed"),
    [
        (True, True, "both"),
        (True, False, "left"),
        (False, True, "right"),
        (False, False, "neither"),
    ],
)
def test_check_scalar_ranges_agree_with_sklearn_intervals(low_inclusive, high_inclusive, closed):
    """Oracle: scikit-learn's Interval (its parameter validation) for the same bounds: the same
    values pass and fail, NaN and infinities included."""
    oracle = Interval(numbers.Real, 0.0, 1.0, closed=closed)
    for value in (-np.inf, -0.5, 0.0, 0.5, 1.0, 1.5, np.inf, np.nan):
        ok = oracle.is_satisfied_by(value)
        if ok:
            assert (
                check_scalar(
                    value,
                    "t",
                    low=0.0,
                    high=1.0,
                    low_inclusive=low_inclusive,
                    high_inclusive=high_inclusive,
                )
                == value
            )
        else:
            with pytest.raises(ValueError, match="^t must be"):
                check_scalar(
                    value,
                    "t",
                    low=0.0,
                    high=1.0,
                    low_inclusive=low_inclusive,
                    high_inclusive=high_inclusive,
                )


def test_check_scalar_refuses_booleans_and_non_integers_naming_the_argument():
    """Rule of the docstring: booleans are refused for both kinds, where scikit-learn's
    Interval would take True for an integer."""
    for value, kind in ((True, numbers.Integral), (False, numbers.Real), (2.0, numbers.Integral)):
        with pytest.raises(TypeError, match="^k must be"):
            check_scalar(value, "k", kind=kind)
    assert check_scalar(np.int64(3), "k", kind=numbers.Integral) == 3


def test_check_option_ignores_case_dashes_and_underscores_and_suggests():
    """Rule of the docstring: the option spelt as in the list whatever the case and
    ``-``/``_``; an unknown value names the argument and the closest option."""
    options = ("k-means++", "random")
    for spelling in ("k-means++", "K-Means++", "k_means++", "K_MEANS++"):
        assert check_option(spelling, "init", options) == "k-means++"
    assert check_option("RANDOM", "init", options) == "random"
    with pytest.raises(ValueError, match="unknown init 'randon'.*random"):
        check_option("randon", "init", options)
    with pytest.raises(TypeError, match="^init must be one of"):
        check_option(3, "init", options)


def test_a_random_state_seeds_the_generator_reproducibly():
    """Oracle: reproducibility, as scikit-learn's check_random_state gives: the same seed or an
    equal RandomState gives the same draws, a Generator is used as it is."""
    a = check_random_state(np.random.RandomState(5)).random(4)
    b = check_random_state(np.random.RandomState(5)).random(4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, check_random_state(np.random.RandomState(6)).random(4))
    np.testing.assert_array_equal(
        check_random_state(7).random(3), np.random.default_rng(7).random(3)
    )
    g = np.random.default_rng(0)
    assert check_random_state(g) is g
    with pytest.raises(TypeError, match="random_state"):
        check_random_state(1.5)


def test_the_public_module_exports_every_check_it_lists():
    """Oracle: the module docstring's list of checks; ``from sparsekit.validation import *``
    gives each of them."""
    listed = set(re.findall(r":func:`(\w+)`", validation.__doc__))
    assert len(listed) == 11
    namespace = {}
    exec("from sparsekit.validation import *", namespace)
    assert listed <= set(namespace)
    assert listed == set(validation.__all__)
