"""Projections: constraint satisfied, idempotent, deterministic ties, equal to pyfaust.proj."""

import numpy as np
import pytest

import sparsekit
from sparsekit.exceptions import UnknownComponentError

SHAPES = [(6, 5), (8, 12), (30, 30)]


def project(name, shape, **kw):
    return sparsekit.get_projection(name, shape=shape, **kw)


def _rows_ok(P, k):
    return (np.count_nonzero(P, axis=1) == k).all()


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("nonneg", [False, True])
def test_constraints_hold_and_idempotent(shape, nonneg):
    rng = np.random.default_rng(0)
    M = rng.standard_normal(shape)
    r, c = shape
    cases = {
        "sp": (dict(k=7), lambda P: np.count_nonzero(P) <= 7),
        "splin": (dict(k=2), lambda P: (np.count_nonzero(P, axis=1) <= 2).all()),
        "spcol": (dict(k=3), lambda P: (np.count_nonzero(P, axis=0) <= 3).all()),
        "splincol": (dict(k=2), lambda P: np.count_nonzero(P) <= 2 * (r + c)),
    }
    for name, (kw, ok) in cases.items():
        P = project(name, shape, nonnegative=nonneg, **kw)(M)
        assert P.shape == shape and ok(P), name
        assert np.linalg.norm(P) == pytest.approx(1.0)
        # values are those of M (rescaled) on the support
        supp = P != 0
        ratio = P[supp] / np.maximum(M, 0)[supp] if nonneg else P[supp] / M[supp]
        np.testing.assert_allclose(ratio, ratio[0])
        if nonneg:
            assert (P >= 0).all()
        again = project(name, shape, nonnegative=nonneg, **kw)(P)
        np.testing.assert_allclose(again, P, atol=1e-15)
    if not nonneg:
        # the kept entries are the largest per row / column / overall
        A = np.abs(M)
        P = project("splin", shape, k=2)(M)
        assert _rows_ok(P, 2)
        assert (A[P != 0].reshape(r, 2).min(axis=1) >= np.where(P == 0, A, 0).max(axis=1)).all()
        P = project("splincol", shape, k=2)(M)
        row = project("splin", shape, k=2)(M) != 0
        col = project("spcol", shape, k=2)(M) != 0
        np.testing.assert_array_equal(P != 0, row | col)  # union of supports (Annex 3.A)
        assert (np.count_nonzero(P, axis=1) >= 2).all() and (np.count_nonzero(P, axis=0) >= 2).all()


def test_ties_go_to_the_lowest_index():
    M = np.array([[1.0, -1.0, 1.0, 0.5], [2.0, 2.0, 2.0, 2.0]])
    np.testing.assert_array_equal(
        project("splin", (2, 4), k=2, normalized=False)(M), [[1.0, -1.0, 0, 0], [2.0, 2.0, 0, 0]]
    )
    np.testing.assert_array_equal(
        project("sp", (2, 4), k=3, normalized=False)(M), [[0, 0, 0, 0], [2.0, 2.0, 2.0, 0]]
    )
    np.testing.assert_array_equal(
        project("spcol", (4, 2), k=1, normalized=False)(M.T), [[1.0, 2.0], [0, 0], [0, 0], [0, 0]]
    )


def test_constant_identity_support():
    rng = np.random.default_rng(1)
    M = rng.standard_normal((4, 5))
    C = rng.standard_normal((4, 5))
    const = sparsekit.get_projection("constant", matrix=C)
    assert const.is_constant
    np.testing.assert_array_equal(const(M), C)
    np.testing.assert_array_equal(sparsekit.get_projection("identity", shape=(4, 5))(M), M)
    mask = rng.random((4, 5)) < 0.5
    P = sparsekit.get_projection("support", mask=mask)(M)
    assert ((P != 0) == mask).all() and np.linalg.norm(P) == pytest.approx(1)


def test_float32_kept():
    M = np.random.default_rng(2).standard_normal((8, 8)).astype(np.float32)
    assert project("splincol", (8, 8), k=2)(M).dtype == np.float32


def test_bad_input():
    with pytest.raises(ValueError, match="k must be >= 1"):
        project("splin", (4, 4), k=0)
    with pytest.raises(ValueError, match="k=5 is larger than the number of columns"):
        project("splin", (4, 4), k=5)
    with pytest.raises(ValueError, match="k=17 is larger than the number of entries"):
        project("sp", (4, 4), k=17)
    with pytest.raises(ValueError, match="for shape"):
        project("sp", (4, 4), k=2)(np.ones((3, 4)))
    with pytest.raises(ValueError, match="contains NaN"):
        project("sp", (2, 2), k=2)(np.array([[np.nan, 1], [1, 1]]))
    with pytest.raises(UnknownComponentError, match="Did you mean 'splincol'"):
        sparsekit.get_projection("splincl", shape=(2, 2), k=1)
    with pytest.raises(TypeError, match="unknown parameter"):
        sparsekit.get_projection("splin", shape=(2, 2), kk=1)


def test_listed_and_third_party_registration():
    from sparsekit import Registry
    from sparsekit.plugins import Registration, hookimpl
    from sparsekit.projections.base import Projection

    names = {i.name for i in sparsekit.list_components("projection")}
    assert {
        "global-top-k",
        "splin",
        "spcol",
        "splincol",
        "support",
        "constant",
        "identity",
    } <= names
    assert sparsekit.default_registry().lookup("projection", "sp").name == "global-top-k"

    class Diagonal(Projection):
        name = "diagonal"

        def _project(self, M):
            return np.diag(np.diag(M))

    class Plugin:
        @hookimpl
        def sparsekit_projections(self):
            yield Registration("diagonal", Diagonal)

    reg = Registry(entry_points=False, plugins=[Plugin()])
    P = reg.get("projection", "diagonal", shape=(3, 3))
    np.testing.assert_allclose(P(np.ones((3, 3))), np.eye(3) / np.sqrt(3))
