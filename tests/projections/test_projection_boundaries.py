"""Projections at their boundaries, against brute-force selections written independently.

k = n − 1 and k = n (the whole row, column or matrix), rectangular shapes in both orientations,
ties next to strictly larger entries, tiny and zero norms, the wrong shape, invalid shapes and
counts, the registry's records, and float32 values.
"""

import warnings

import numpy as np
import pytest

import sparsekit
from sparsekit.projections import (
    ColumnTopK,
    Constant,
    GlobalTopK,
    Identity,
    Projection,
    RowColumnTopK,
    RowTopK,
    SupportMask,
)


# -- brute-force oracles: sort (−|a|, index) and keep the first k ------------------------------
def brute_rows(A, k):
    mask = np.zeros(A.shape, dtype=bool)
    for i in range(A.shape[0]):
        order = sorted(range(A.shape[1]), key=lambda j: (-abs(A[i, j]), j))
        mask[i, order[:k]] = True
    return mask


def brute_cols(A, k):
    return brute_rows(A.T, k).T


def brute_global(A, k):
    flat = A.ravel()
    order = sorted(range(flat.size), key=lambda j: (-abs(flat[j]), j))
    mask = np.zeros(flat.size, dtype=bool)
    mask[order[:k]] = True
    return mask.reshape(A.shape)


def expected(M, mask, normalized=True):
    out = np.where(mask, M, 0.0)
    norm = np.sqrt((out**2).sum())
    return out / norm if normalized and norm > 0 else out


SHAPES = [(5, 8), (8, 5), (6, 6)]


@pytest.mark.parametrize("shape", SHAPES)
def test_k_at_n_minus_one_and_n(shape):
    r, c = shape
    M = np.random.default_rng(r * 10 + c).standard_normal(shape)
    for k in (c - 1, c):
        got = RowTopK(shape, k, normalized=False)(M)
        np.testing.assert_array_equal(got, expected(M, brute_rows(M, k), False))
        got = RowTopK(shape, k)(M)
        np.testing.assert_allclose(got, expected(M, brute_rows(M, k)), rtol=1e-14)
    for k in (r - 1, r):
        np.testing.assert_array_equal(
            ColumnTopK(shape, k, normalized=False)(M), expected(M, brute_cols(M, k), False)
        )
    for k in (r * c - 1, r * c):
        np.testing.assert_array_equal(
            GlobalTopK(shape, k, normalized=False)(M), expected(M, brute_global(M, k), False)
        )
    for k, k_col in [(c, r), (c - 1, r - 1), (c, 1), (1, r)]:
        mask = brute_rows(M, k) | brute_cols(M, k_col)
        np.testing.assert_allclose(RowColumnTopK(shape, k, k_col)(M), expected(M, mask), rtol=1e-14)
    if r == c:
        np.testing.assert_array_equal(RowColumnTopK(shape, c, normalized=False)(M), M)
    # the full selections keep every entry: the projection is the normalized matrix
    np.testing.assert_allclose(RowTopK(shape, c)(M), M / np.linalg.norm(M), rtol=1e-14)
    np.testing.assert_allclose(GlobalTopK(shape, r * c)(M), M / np.linalg.norm(M), rtol=1e-14)


def test_k_at_n_equals_pyfaust():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        P = pytest.importorskip("pyfaust.proj")
    for shape in SHAPES:
        r, c = shape
        M = np.random.default_rng(r + c).standard_normal(shape)
        for name, ks in [("splin", (c - 1, c)), ("spcol", (r - 1, r)), ("sp", (r * c - 1, r * c))]:
            for k in ks:
                ours = sparsekit.get_projection(name, shape=shape, k=k)(M)
                np.testing.assert_allclose(
                    ours, getattr(P, name)(shape, k)(M), rtol=1e-12, atol=1e-14
                )


def test_ties_after_strictly_larger_entries():
    # the threshold value is shared by more entries than the row (matrix) still needs
    M = np.array([[3.0, 2.0, -2.0, 2.0], [2.0, 2.0, 5.0, 2.0]])
    np.testing.assert_array_equal(
        RowTopK((2, 4), 2, normalized=False)(M), [[3.0, 2.0, 0, 0], [2.0, 0, 5.0, 0]]
    )
    np.testing.assert_array_equal(
        ColumnTopK((4, 2), 2, normalized=False)(M.T), [[3.0, 2.0], [2.0, 0], [0, 5.0], [0, 0]]
    )
    np.testing.assert_array_equal(
        GlobalTopK((2, 4), 3, normalized=False)(M), [[3.0, 2.0, 0, 0], [0, 0, 5.0, 0]]
    )
    rng = np.random.default_rng(0)
    for _ in range(20):  # random integer matrices: many ties everywhere
        A = rng.integers(-3, 4, size=(5, 7)).astype(float)
        for k in range(1, 8):
            np.testing.assert_array_equal(
                RowTopK((5, 7), k, normalized=False)(A) != 0, brute_rows(A, k) & (A != 0)
            )
        for k in range(1, 36):
            np.testing.assert_array_equal(
                GlobalTopK((5, 7), k, normalized=False)(A) != 0, brute_global(A, k) & (A != 0)
            )


def test_normalization_of_small_and_zero_results():
    M = np.random.default_rng(1).standard_normal((4, 6)) * 1e-3  # norm < 1: still rescaled
    for proj in (RowTopK((4, 6), 2), GlobalTopK((4, 6), 5), SupportMask(np.ones((4, 6)))):
        assert np.linalg.norm(proj(M)) == pytest.approx(1.0)
    Z = np.zeros((4, 6))
    for proj in (
        RowTopK((4, 6), 2),
        ColumnTopK((4, 6), 2),
        GlobalTopK((4, 6), 5),
        RowColumnTopK((4, 6), 2),
        Identity((4, 6), normalized=True),
    ):
        out = proj(Z)
        assert np.isfinite(out).all() and not out.any()
    neg = -np.abs(M)
    out = RowTopK((4, 6), 2, nonnegative=True)(neg)  # everything clipped: zeros, no NaN
    assert np.isfinite(out).all() and not out.any()


@pytest.mark.parametrize(
    "proj",
    [
        GlobalTopK((4, 5), 3),
        RowTopK((4, 5), 2),
        ColumnTopK((4, 5), 2),
        RowColumnTopK((4, 5), 2),
        SupportMask(np.ones((4, 5))),
        Constant(np.ones((4, 5))),
        Identity((4, 5)),
    ],
    ids=lambda p: p.name,
)
def test_wrong_shape_is_refused(proj):
    for bad in (np.ones((5, 4)), np.ones((4, 6)), np.ones(20)):
        with pytest.raises(ValueError, match=r"for shape \(4, 5\)|2-D|dimension"):
            proj(bad)


@pytest.mark.parametrize(
    "shape", [5, (3,), (3, 4, 5), (0, 3), (3, 0), (-1, 2), (2.5, 3), (True, 3), (3, "4"), None]
)
def test_invalid_shapes(shape):
    with pytest.raises(ValueError, match="shape must"):
        RowTopK(shape, 1)


def test_shapes_with_a_single_row_or_column():
    M = np.arange(1.0, 6.0).reshape(1, 5)
    np.testing.assert_array_equal(RowTopK((1, 5), 2, normalized=False)(M), [[0, 0, 0, 4.0, 5.0]])
    np.testing.assert_array_equal(
        ColumnTopK((5, 1), 1, normalized=False)(M.T), [[0], [0], [0], [0], [5.0]]
    )
    np.testing.assert_array_equal(ColumnTopK((5, 1), 5, normalized=False)(M.T), M.T)


@pytest.mark.parametrize("k", [2.0, 2.5, True, "2", None])
def test_non_integer_counts(k):
    with pytest.raises(TypeError, match="must be an integer"):
        RowTopK((3, 4), k)


def test_count_bounds_follow_each_side():
    # the largest valid count is accepted, one more is refused, on both orientations
    for r, c in [(3, 6), (6, 3)]:
        assert RowTopK((r, c), c).k == c
        assert ColumnTopK((r, c), r).k == r
        assert GlobalTopK((r, c), r * c).k == r * c
        assert RowColumnTopK((r, c), c, k_col=r).k_col == r
        with pytest.raises(ValueError, match=f"k={c + 1} is larger than the number of columns"):
            RowTopK((r, c), c + 1)
        with pytest.raises(ValueError, match=f"k={r + 1} is larger than the number of rows"):
            ColumnTopK((r, c), r + 1)
        with pytest.raises(ValueError, match="larger than the number of entries"):
            GlobalTopK((r, c), r * c + 1)
        with pytest.raises(ValueError, match=f"k_col={r + 1} is larger than the number of rows"):
            RowColumnTopK((r, c), 1, k_col=r + 1)
        with pytest.raises(ValueError, match="larger than the number of columns"):
            RowColumnTopK((r, c), c + 1, k_col=1)
    # without k_col, k is also the per-column count and must fit the rows
    with pytest.raises(ValueError, match="pass k_col <= 3"):
        RowColumnTopK((3, 6), 5)
    assert RowColumnTopK((3, 6), 3).k_col == 3
    assert RowColumnTopK((3, 6), 5, k_col=2).k_col == 2
    assert RowColumnTopK((6, 3), 3).k_col == 3


def test_support_and_identity_options():
    rng = np.random.default_rng(2)
    M = rng.standard_normal((4, 5))
    mask = rng.random((4, 5)) < 0.5
    np.testing.assert_array_equal(SupportMask(mask, normalized=False)(M), np.where(mask, M, 0))
    np.testing.assert_array_equal(
        SupportMask(mask, nonnegative=True, normalized=False)(M),
        np.where(mask, np.maximum(M, 0), 0),
    )
    with pytest.raises(ValueError, match="mask must be a 2-D array"):
        SupportMask(np.ones(5))
    np.testing.assert_array_equal(Identity((4, 5), nonnegative=True)(M), np.maximum(M, 0))
    np.testing.assert_allclose(Identity((4, 5), normalized=True)(M), M / np.linalg.norm(M))


def test_constant_returns_a_fresh_copy_and_its_initial_value():
    C = np.random.default_rng(3).standard_normal((3, 4))
    proj = Constant(C)
    out = proj(np.zeros((3, 4)))
    out[:] = 0.0  # a caller updating the returned factor in place
    np.testing.assert_array_equal(proj(np.ones((3, 4))), C)
    np.testing.assert_array_equal(proj.initial(), C)
    assert proj.initial(np.float32).dtype == np.float32
    np.testing.assert_allclose(Constant(C, normalized=True).initial(), C / np.linalg.norm(C))
    assert proj.is_constant and not proj.nonnegative
    for p in (GlobalTopK((3, 4), 2), RowTopK((3, 4), 1), Identity((3, 4)), SupportMask(C)):
        assert p.is_constant is False


def test_initial_is_the_rectangular_identity_in_the_dtype_asked():
    for shape in [(3, 5), (5, 3)]:
        for dtype in (np.float32, np.float64):
            init = RowTopK(shape, 1).initial(dtype)
            assert init.dtype == dtype
            np.testing.assert_array_equal(init, np.eye(*shape))


def test_repr_names_the_parameters():
    assert repr(RowColumnTopK((3, 6), 5, k_col=2)) == (
        "RowColumnTopK(shape=(3, 6), k=5, k_col=2, normalized=True, nonnegative=False)"
    )
    assert repr(GlobalTopK((2, 2), 3, nonnegative=True)) == (
        "GlobalTopK(shape=(2, 2), k=3, normalized=True, nonnegative=True)"
    )
    assert (
        repr(RowTopK((2, 2), 1)) == "RowTopK(shape=(2, 2), k=1, normalized=True, nonnegative=False)"
    )
    assert repr(ColumnTopK((2, 2), 1, normalized=False)) == (
        "ColumnTopK(shape=(2, 2), k=1, normalized=False, nonnegative=False)"
    )
    assert repr(Identity((2, 3))) == "Identity(shape=(2, 3), normalized=False, nonnegative=False)"


def test_a_third_party_projection_gets_the_documented_defaults():
    class Diagonal(Projection):
        name = "diagonal"

        def _project(self, M):
            return np.diag(np.diag(M))

    p = Diagonal((3, 3))
    assert p.normalized and not p.nonnegative and not p.is_constant
    M = -np.diag([3.0, 4.0, 0.0])
    np.testing.assert_allclose(p(M), M / 5.0)  # negative entries kept, unit norm


def test_registry_records():
    infos = {i.name: i for i in sparsekit.list_components("projection")}
    aliases = {
        "global-top-k": {"sp", "top-k"},
        "splin": {"row-top-k"},
        "spcol": {"column-top-k"},
        "splincol": {"row-column-top-k"},
        "support": {"supp", "support-mask"},
        "constant": {"const"},
        "identity": {"id", "proj-id", "unconstrained"},
    }
    for name, names in aliases.items():
        info = infos[name]
        assert set(info.aliases) == names, name
        assert info.registration.accepts == "any", name
        assert info.summary.strip(), name
        for alias in names:
            assert sparsekit.default_registry().lookup("projection", alias).name == name


def test_float32_values_equal_the_float64_selection():
    M = np.random.default_rng(4).standard_normal((9, 7))
    M32 = M.astype(np.float32)
    for proj in (
        RowTopK((9, 7), 3),
        ColumnTopK((9, 7), 2),
        GlobalTopK((9, 7), 11),
        RowColumnTopK((9, 7), 2, k_col=3),
    ):
        got = proj(M32)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, proj(M32.astype(np.float64)), rtol=1e-6, atol=1e-7)


def test_support_mask_keeps_every_non_zero_entry_of_the_mask():
    """A mask's negative and fractional entries are non-zero, so they are in the support.

    Oracle: the definition ``P(M) = M ⊙ [mask != 0]`` (normalized), written with NumPy.
    """
    rng = np.random.default_rng(3)
    M = rng.standard_normal((3, 4))
    mask = np.array([[1, 0, -1, 0], [0, -2.5, 0, 0.5], [0, 0, 0, -1]])
    expect = np.where(mask != 0, M, 0.0)
    expect /= np.linalg.norm(expect)
    np.testing.assert_allclose(SupportMask(mask)(M), expect, rtol=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda s: GlobalTopK(s, s[0] * s[1], normalized=False),
        lambda s: RowTopK(s, s[1], normalized=False),
        lambda s: ColumnTopK(s, s[0], normalized=False),
        lambda s: SupportMask(np.ones(s), normalized=False),
        lambda s: Identity(s),
    ],
)
def test_unnormalized_projection_that_keeps_everything_returns_a_copy(make):
    """Writing into ``P(M)`` leaves ``M`` as it was, also when every entry is kept and nothing
    is rescaled (the value is ``M`` itself, so the oracle is a copy of ``M`` taken before)."""
    M = np.random.default_rng(4).standard_normal((3, 4))
    before = M.copy()
    out = make(M.shape).project_unchecked(M)
    np.testing.assert_array_equal(out, before)
    out[...] = 7.0
    np.testing.assert_array_equal(M, before)
