"""Value tests of the Dask backend's rules that the equality-with-memory tests leave open:
float32 Grams, −0.0 keys in the duplicate merge, the row blocks of the MMD sums, empty and
single-row chunks, row-chunked signals, seeds given as a RandomState, the inferred output dtype
of ``transform`` and the parameters recorded on the fitted k-means.

Everything runs on Dask's local schedulers (no cluster): the rules are about values, not about
where the tasks run."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from sklearn.metrics.pairwise import rbf_kernel  # noqa: E402

import sparsekit  # noqa: E402
import sparsekit.dask as skd  # noqa: E402
import sparsekit.dask.stats as dask_stats  # noqa: E402
from sparsekit.kernels.rbf import RBFKernel  # noqa: E402
from sparsekit.stats import NystromMMD  # noqa: E402


def _first_equal_rows(X):
    """Brute force: the index of the first row equal (entry by entry, ``==``) to each row."""
    return np.array([int(np.flatnonzero((X == X[i]).all(axis=1))[0]) for i in range(len(X))])


# -- gram: float32 end to end ------------------------------------------------------------------
def test_gram_of_float32_data_is_float32_with_the_rbf_values(rng):
    X = rng.standard_normal((70, 3)).astype(np.float32)
    Y = rng.standard_normal((45, 3)).astype(np.float32)
    G = skd.gram(
        "rbf",
        da.from_array(X, chunks=(20, -1)),
        da.from_array(Y, chunks=(15, -1)),
        kernel_params={"gamma": 0.4},
    )
    assert G.dtype == np.float32
    values = G.compute()
    assert values.dtype == np.float32  # declared and computed dtypes agree
    ref = rbf_kernel(X.astype(np.float64), Y.astype(np.float64), gamma=0.4)  # scikit-learn
    np.testing.assert_allclose(values, ref, rtol=2e-5, atol=1e-6)


def test_gram_of_integer_data_is_float64_with_the_rbf_values():
    X = np.random.default_rng(1).integers(-3, 4, size=(30, 2))
    G = skd.gram("rbf", da.from_array(X, chunks=(7, -1)), kernel_params={"gamma": 0.25})
    assert G.dtype == np.float64
    values = G.compute()
    assert values.dtype == np.float64
    np.testing.assert_allclose(values, rbf_kernel(X.astype(float), gamma=0.25), rtol=1e-12)


# -- the Nyström MMD: −0.0 keys, row blocks, chunks of one row ----------------------------------
def test_row_keys_count_minus_zero_as_zero(dtype):
    rows = np.array([[0.0, 1.5, 0.0], [-0.0, 1.5, -0.0], [0.0, 1.5, -0.0]], dtype=dtype)
    assert np.signbit(rows[1]).any()  # the pattern really holds −0.0
    keys = dask_stats.row_keys(rows)
    assert keys[0] == keys[1] == keys[2]
    assert dask_stats.row_keys(np.array([[0.0, 2.5]], dtype=dtype))[0] != keys[0]


def test_minus_zero_rows_are_one_point_in_the_chunked_mmd():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 2))
    Y = rng.standard_normal((25, 2)) + 0.5
    X[3] = [0.0, 1.0]
    Y[10] = [-0.0, 1.0]  # equal to X[3] (== holds), another bit pattern, another sample
    X[20] = [-0.0, -0.0]
    Y[0] = [0.0, 0.0]
    kw = dict(n_landmarks=8, lam=1e-3, kernel_params={"gamma": 0.5}, random_state=0)
    est = skd.nystrom_mmd_fit(
        da.from_array(X, chunks=(9, -1)), da.from_array(Y, chunks=(9, -1)), **kw
    )
    pool = np.concatenate([X, Y])
    expected = _first_equal_rows(pool)  # brute force
    assert expected[30 + 10] == 3 and expected[30] == 20
    np.testing.assert_array_equal(est.support_ids_, expected)
    ref = NystromMMD(**kw).fit(X, Y)
    assert est.mmd2(0, 1) == pytest.approx(ref.mmd2(0, 1), rel=1e-10)
    assert est.sq_norm_v(0, 1) == pytest.approx(ref.sq_norm_v(0, 1), rel=1e-12)


class _RecordingRBF(RBFKernel):
    """An RBF kernel that records how many rows each call gets (in this process)."""

    calls: list = []

    def __call__(self, X, Y=None):
        type(self).calls.append(len(X))
        return super().__call__(X, Y)


def test_mmd_chunk_sums_run_in_row_blocks_of_sum_block_bytes(monkeypatch):
    """A chunk's Σ K(x, S) is summed over row blocks of SUM_BLOCK_BYTES // (8 |S|) rows (the
    float64 block of K(x, S) within the bound, the fewest blocks); the sums equal the in-memory
    estimator's."""
    rng = np.random.default_rng(2)
    X, Y = rng.standard_normal((47, 3)), rng.standard_normal((31, 3)) - 0.2
    s = 6
    monkeypatch.setattr(dask_stats, "SUM_BLOCK_BYTES", 8 * s * 7 + 5)  # 7 rows of K(x, S)
    kernel = _RecordingRBF(gamma=0.3)
    _RecordingRBF.calls = []
    with dask.config.set(scheduler="sync"):
        est = skd.nystrom_mmd_fit(
            da.from_array(X, chunks=(20, -1)),
            da.from_array(Y, chunks=(31, -1)),
            kernel=kernel,
            n_landmarks=s,
            lam=1e-2,
            random_state=1,
        )
    chunk_blocks = []  # the row counts expected from the chunks 20, 20, 7 and 31
    for rows in (20, 20, 7, 31):
        chunk_blocks += [min(7, rows - r0) for r0 in range(0, rows, 7)]
    # the chunk tasks are the last kernel calls (in the order the scheduler ran them)
    assert sorted(_RecordingRBF.calls[-len(chunk_blocks) :]) == sorted(chunk_blocks)
    ref = NystromMMD(kernel=RBFKernel(gamma=0.3), n_landmarks=s, lam=1e-2, random_state=1)
    ref.fit(X, Y)
    np.testing.assert_allclose(est.embeddings_, ref.embeddings_, rtol=1e-12, atol=1e-14)
    assert est.mmd2(0, 1) == pytest.approx(ref.mmd2(0, 1), rel=1e-10)


def test_chunked_mmd_counts_chunks_of_one_row():
    rng = np.random.default_rng(3)
    X, Y = rng.standard_normal((21, 2)), rng.standard_normal((13, 2)) + 0.4
    Y[12] = X[0]  # the one-row chunk holds a point shared with X
    kw = dict(n_landmarks=5, lam=1e-3, kernel_params={"gamma": 0.7}, random_state=5)
    est = skd.nystrom_mmd_fit(
        da.from_array(X, chunks=((1, 10, 10), (2,))),
        da.from_array(Y, chunks=((12, 1), (2,))),
        **kw,
    )
    ref = NystromMMD(**kw).fit(X, Y)
    np.testing.assert_allclose(est.embeddings_, ref.embeddings_, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(est.support_ids_, _first_equal_rows(np.concatenate([X, Y])))
    assert est.mmd2(0, 1) == pytest.approx(ref.mmd2(0, 1), rel=1e-10)


# -- Nyström: a RandomState seed --------------------------------------------------------------
def test_nystroem_fit_with_a_random_state_object_equals_in_memory():
    X = np.random.default_rng(6).standard_normal((90, 3))
    kw = dict(kernel_params={"gamma": 0.2})
    ny = skd.nystroem_fit(
        da.from_array(X, chunks=(25, -1)),
        "rbf",
        "uniform",
        12,
        random_state=np.random.RandomState(7),
        **kw,
    )
    ref = sparsekit.Nystroem("rbf", "uniform", 12, random_state=np.random.RandomState(7), **kw)
    ref.fit(X)
    np.testing.assert_array_equal(ny.component_indices_, ref.component_indices_)
    np.testing.assert_allclose(ny.transform(X), ref.transform(X), rtol=1e-10, atol=1e-12)


# -- kernel k-means: recorded parameters, empty chunks ------------------------------------------
@pytest.fixture(scope="module")
def blobs():
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(90, centers=3, cluster_std=0.8, random_state=2)
    return X


def test_kernel_kmeans_fit_records_and_validates_its_parameters(blobs):
    X = blobs
    Xd = da.from_array(X, chunks=(30, -1))
    kw = dict(
        n_clusters=3,
        n_landmarks=10,
        n_init=1,
        max_iter=2,
        tol=1e-3,
        kernel_params={"gamma": 0.3},
        random_state=0,
    )
    km = skd.kernel_kmeans_fit(Xd, **kw)
    ref = sparsekit.KernelKMeans(method="nystrom", **kw)
    assert km.get_params() == ref.get_params()
    ref.fit(X)
    np.testing.assert_array_equal(km.labels_.compute(), ref.labels_)
    with pytest.raises(ValueError, match="max_iter"):
        skd.kernel_kmeans_fit(Xd, 3, max_iter=0, kernel_params={"gamma": 0.3})


def test_kernel_kmeans_skips_empty_chunks(blobs):
    X = blobs
    Xd = da.from_array(X, chunks=((30, 0, 45, 0, 15), (2,)))
    kw = dict(n_clusters=3, n_landmarks=10, n_init=2, kernel_params={"gamma": 0.3}, random_state=1)
    km = skd.kernel_kmeans_fit(Xd, **kw)
    ref = sparsekit.KernelKMeans(method="nystrom", **kw).fit(X)
    assert km.labels_.chunks == ((30, 45, 15),)
    np.testing.assert_array_equal(km.labels_.compute(), ref.labels_)
    assert km.inertia_ == pytest.approx(ref.inertia_, rel=1e-10)


# -- solve: row-chunked signals, non-dask input -------------------------------------------------
def test_solve_merges_row_chunks_of_the_signals():
    from sparsekit.solvers.dictionaries import make_sparse_coding_problem

    D, Y, _ = make_sparse_coding_problem(20, 40, 3, 9, 1)
    ref = sparsekit.get_solver("omp", n_nonzero_coefs=3).solve(D, Y).coef
    for chunks in [(7, -1), (7, 4)]:  # rows cut, columns whole or cut
        coef = skd.solve("omp", D, da.from_array(Y, chunks=chunks), n_nonzero_coefs=3)
        assert coef.chunks[1] == da.from_array(Y, chunks=chunks).chunks[1]
        np.testing.assert_allclose(coef.compute(), ref, rtol=1e-12, atol=1e-14)


def test_solve_refuses_row_chunks_that_hold_more_rows_than_declared():
    """A chunk built from a delayed piece may hold more rows than it declares: merging the row
    chunks keeps every row, so the signals no longer match the dictionary (never truncated)."""
    D = np.linalg.qr(np.random.default_rng(0).standard_normal((6, 6)))[0]
    pieces = [
        da.from_delayed(dask.delayed(lambda r=r: np.ones((r, 2)))(), (3, 2), float) for r in (4, 3)
    ]
    Yd = da.concatenate(pieces)  # declares 6 rows, holds 7
    with pytest.raises(ValueError, match=r"shape \(7, 2\) but the dictionary has 6 rows"):
        skd.solve("omp", D, Yd, n_nonzero_coefs=1).compute(scheduler="sync")


def test_solve_refuses_signals_that_are_not_a_dask_array():
    D = np.eye(4)
    with pytest.raises(TypeError, match=r"Yd must be a dask.array.Array, got ndarray"):
        skd.solve("omp", D, np.ones((4, 2)), n_nonzero_coefs=1)


# -- transform: the inferred width and dtype -----------------------------------------------------
class _Doubling:
    """A fitted transformer without get_feature_names_out: x -> [x, 2x] in float32."""

    def transform(self, X):
        X = np.asarray(X, dtype=np.float32)
        return np.hstack([X, 2 * X])


def test_transform_infers_width_and_dtype_from_one_row():
    X = np.random.default_rng(8).integers(0, 5, size=(23, 3))
    Xd = da.from_array(X, chunks=(6, -1))
    Z = skd.transform(_Doubling(), Xd)
    assert Z.shape == (23, 6) and Z.dtype == np.float32
    values = Z.compute()
    assert values.dtype == np.float32
    np.testing.assert_array_equal(values, np.hstack([X, 2 * X]).astype(np.float32))
    # width given, dtype inferred (and the reverse): the probe fills in only what is missing
    Z = skd.transform(_Doubling(), Xd, n_features_out=6)
    assert Z.dtype == np.float32 and Z.compute().dtype == np.float32
    Z = skd.transform(_Doubling(), Xd, dtype=np.float64)
    assert Z.shape == (23, 6) and Z.dtype == np.float64


# -- DAC-RLS: the block size --------------------------------------------------------------------
@pytest.mark.parametrize(
    "block_size, sizes", [(None, [6, 6, 2, 6, 6, 6, 4]), (5, [5, 5, 4] + [5] * 4 + [2])]
)
def test_dac_rls_scores_use_blocks_of_block_size_inside_each_chunk(block_size, sizes):
    """On b equal points the RBF Gram is the all-ones J_b, and diag J_b (J_b + λI)⁻¹ = 1/(b + λ)
    for every point (J_b has the eigenvalue b on the constant vector): each score reveals the size
    of its block. Default m = ⌈√36⌉ = 6; chunks of 14 and 22 rows, each cut into blocks of m and
    its remainder."""
    lam = 0.25
    X = np.ones((36, 2))
    scores = skd.dac_rls_scores(
        da.from_array(X, chunks=((14, 22), (2,))),
        "rbf",
        lam=lam,
        block_size=block_size,
        kernel_params={"gamma": 0.5},
        random_state=0,
    ).compute()
    expected = np.concatenate([np.full(b, 1 / (b + lam)) for b in sizes])
    np.testing.assert_allclose(np.sort(scores[:14]), np.sort(expected[:14]), rtol=1e-12)
    np.testing.assert_allclose(np.sort(scores[14:]), np.sort(expected[14:]), rtol=1e-12)


# -- input checks: empty and complex arrays -----------------------------------------------------
def test_empty_and_complex_arrays_are_refused_before_any_work():
    """The documented checks of ``check_chunked``: no rows is a ValueError naming the array and
    complex numbers a TypeError (a kernel of complex rows is not the real kernel)."""
    empty = da.zeros((0, 3), chunks=(5, -1))
    with pytest.raises(ValueError, match=r"X is empty \(shape \(0, 3\)\)"):
        skd.gram("rbf", empty)
    with pytest.raises(ValueError, match=r"X is empty"):
        skd.nystroem_fit(empty, "rbf", "uniform", 1)
    cplx = da.from_array(np.ones((6, 2)) + 1j, chunks=(3, -1))
    with pytest.raises(TypeError, match=r"X must hold real numbers, got dtype complex128"):
        skd.gram("rbf", cplx)


# -- kernel k-means against scikit-learn's Lloyd -------------------------------------------------
@pytest.mark.parametrize("chunks", [(30,), (7, 13, 10)])
def test_kernel_kmeans_with_linear_features_equals_sklearn_lloyd(chunks):
    """Oracle: scikit-learn's ``KMeans`` (Lloyd, the same seeds, ``tol=0``) on X itself. With
    the linear kernel and landmarks spanning R^d, the Nyström features are an isometry of the
    rows (Z Zᵀ = X Xᵀ), so kernel k-means is k-means on X. The seeds are the first rows of the
    chunks (7, 13, 10) and this data's Lloyd run changes one label at a time in several steps:
    it converges only when no label changes (max_iter and tol forwarded)."""
    from sklearn.cluster import KMeans

    X = np.random.default_rng(0).normal(size=(30, 2)) * [3, 1]
    seeds = np.array([0, 7, 20])
    ref = KMeans(3, init=X[seeds], n_init=1, max_iter=300, tol=0, algorithm="lloyd").fit(X)
    km = skd.kernel_kmeans_fit(
        da.from_array(X, chunks=(chunks, (2,))),
        3,
        kernel="linear",
        n_landmarks=6,
        init=seeds,
        n_init=1,
        tol=0.0,
        random_state=0,
    )
    np.testing.assert_array_equal(km.labels_.compute(), ref.labels_)
    assert km.n_iter_ == ref.n_iter_
    assert km.inertia_ == pytest.approx(ref.inertia_, rel=1e-9)
    Z = km.nystroem_.transform(X)
    for c in range(3):  # the centres are the means of their clusters (Lloyd's fixed point)
        np.testing.assert_allclose(
            km.cluster_centers_[c], Z[ref.labels_ == c].mean(axis=0), rtol=1e-9, atol=1e-12
        )


# -- Nyström: rank and eigen_floor, the output dtype ---------------------------------------------
def test_nystroem_fit_applies_rank_and_eigen_floor():
    """Oracle: NumPy's eigendecomposition of K_S. With ``rank=r`` the features are
    K(X, S) U_r Λ_r^{-1/2}, so Z Zᵀ = K(X, S) U_r Λ_r⁻¹ U_rᵀ K(S, X); with ``eigen_floor`` the
    eigenvalues at or below the floor are dropped from the same sum."""
    X = np.random.default_rng(9).standard_normal((40, 3))
    Xd = da.from_array(X, chunks=((11, 17, 12), (3,)))
    kw = dict(kernel_params={"gamma": 0.4}, random_state=2)

    def brute(S, keep):
        KS, KXS = rbf_kernel(S, gamma=0.4), rbf_kernel(X, S, gamma=0.4)
        w, U = np.linalg.eigh(KS)
        w, U = w[::-1], U[:, ::-1]
        U, w = U[:, keep(w)], w[keep(w)]
        return KXS @ U @ np.diag(1 / w) @ U.T @ KXS.T

    ny = skd.nystroem_fit(Xd, "rbf", "uniform", 8, rank=3, **kw)
    Z = skd.nystroem_transform(ny, Xd).compute()
    assert Z.shape == (40, 3)
    ref = brute(ny.components_, lambda w: np.arange(len(w)) < 3)
    np.testing.assert_allclose(Z @ Z.T, ref, rtol=1e-8, atol=1e-10)
    floor = 0.6
    ny = skd.nystroem_fit(Xd, "rbf", "uniform", 8, eigen_floor=floor, **kw)
    w = np.linalg.eigvalsh(rbf_kernel(ny.components_, gamma=0.4))
    assert (w <= floor).any() and (w > floor).any()  # the floor drops some, keeps some
    Z = skd.nystroem_transform(ny, Xd).compute()
    np.testing.assert_allclose(Z @ Z.T, brute(ny.components_, lambda w: w > floor), atol=1e-9)


def test_nystroem_transform_of_integer_data_declares_the_dtype_it_computes():
    """Oracle: the dtype of the computed values (float64: the map is float64) must be the one
    the lazy array declares; the values are K(X, S) M by scikit-learn's ``rbf_kernel``."""
    X = np.random.default_rng(1).integers(0, 4, size=(20, 3))
    Xd = da.from_array(X, chunks=(6, -1))
    ny = skd.nystroem_fit(Xd, "rbf", "uniform", 5, kernel_params={"gamma": 0.3}, random_state=0)
    Z = skd.nystroem_transform(ny, Xd)
    values = Z.compute()
    assert Z.dtype == values.dtype == np.float64
    ref = rbf_kernel(X.astype(float), X[ny.component_indices_].astype(float), gamma=0.3)
    np.testing.assert_allclose(values, ref @ ny.normalization_, rtol=1e-10, atol=1e-12)


# -- declared dtypes of mixed inputs --------------------------------------------------------------
def test_gram_of_float32_and_float64_data_declares_float64():
    """Oracle: NumPy's promotion (float32 with float64 is float64) and scikit-learn's
    ``rbf_kernel`` for the values; the declared dtype is the computed one."""
    rng = np.random.default_rng(2)
    X, Y = rng.standard_normal((12, 2)).astype(np.float32), rng.standard_normal((9, 2))
    G = skd.gram(
        "rbf",
        da.from_array(X, chunks=(5, -1)),
        da.from_array(Y, chunks=(4, -1)),
        kernel_params={"gamma": 0.5},
    )
    values = G.compute()
    assert G.dtype == values.dtype == np.float64
    np.testing.assert_allclose(values, rbf_kernel(X.astype(float), Y, gamma=0.5), rtol=1e-6)


def test_solve_declares_the_dtype_of_the_dictionary_and_signals():
    """Oracle: NumPy's promotion of a float64 dictionary with float32 signals (float64), the
    dtype the solver computes; the coefficients solve D x = y exactly for 1-sparse signals."""
    D = np.linalg.qr(np.random.default_rng(0).standard_normal((6, 6)))[0]
    Y = (D[:, [1, 4, 2]] * [2.0, -1.0, 0.5]).astype(np.float32)
    coef = skd.solve("omp", D, da.from_array(Y, chunks=(-1, 2)), n_nonzero_coefs=1)
    values = coef.compute()
    assert coef.dtype == values.dtype == np.float64
    expected = np.zeros((6, 3))
    expected[[1, 4, 2], [0, 1, 2]] = [2.0, -1.0, 0.5]
    np.testing.assert_allclose(values, expected, atol=1e-6)


def test_transform_refuses_a_width_other_than_the_fitted_one():
    """The fitted transformer's ``n_features_in_`` is checked when the graph is built (before
    any chunk runs), naming the array and both widths."""
    from sklearn.decomposition import PCA

    pca = PCA(2).fit(np.random.default_rng(0).standard_normal((20, 4)))
    with pytest.raises(ValueError, match="X has 3 features but 4 are expected"):
        skd.transform(pca, da.ones((10, 3), chunks=(5, -1)))


# -- empty chunks (a filtered array after compute_chunk_sizes) ------------------------------------
def _with_empty_chunks(X):
    """X cut into chunks of 10, 0, 25, 0 and the rest rows, as boolean filtering leaves them."""
    return da.from_array(X, chunks=((10, 0, 25, 0, len(X) - 35), (X.shape[1],)))


def test_gram_and_transforms_pass_over_empty_chunks():
    """Oracle: scikit-learn (``rbf_kernel``, ``PCA.transform``) on the whole array; an empty
    chunk gives an empty block, as kernel k-means and the MMD skip it."""
    from sklearn.decomposition import PCA

    X = np.random.default_rng(5).standard_normal((40, 3))
    Xd = _with_empty_chunks(X)
    G = skd.gram("rbf", Xd, kernel_params={"gamma": 0.3})
    assert G.chunks == (Xd.chunks[0], Xd.chunks[0])
    np.testing.assert_allclose(G.compute(), rbf_kernel(X, gamma=0.3), rtol=1e-12)
    pca = PCA(2).fit(X)
    np.testing.assert_allclose(skd.transform(pca, Xd).compute(), pca.transform(X), atol=1e-12)
    ny = skd.nystroem_fit(Xd, "rbf", "uniform", 6, kernel_params={"gamma": 0.3}, random_state=0)
    Z = skd.nystroem_transform(ny, Xd).compute()
    S = X[ny.component_indices_]
    np.testing.assert_allclose(Z, rbf_kernel(X, S, gamma=0.3) @ ny.normalization_, atol=1e-12)


def test_solve_passes_over_empty_chunks_of_signals():
    """Oracle: 1-sparse signals over an orthonormal dictionary, solved exactly by one OMP step;
    the empty chunk of signals gives no column."""
    D = np.linalg.qr(np.random.default_rng(0).standard_normal((6, 6)))[0]
    Y = D[:, [1, 4, 2, 0]] * [2.0, -1.0, 0.5, 3.0]
    coef = skd.solve("omp", D, da.from_array(Y, chunks=((6,), (2, 0, 2))), n_nonzero_coefs=1)
    expected = np.zeros((6, 4))
    expected[[1, 4, 2, 0], [0, 1, 2, 3]] = [2.0, -1.0, 0.5, 3.0]
    np.testing.assert_allclose(coef.compute(), expected, atol=1e-12)


# -- unknown row counts (boolean filtering without compute_chunk_sizes) ---------------------------
def test_unknown_row_counts_are_a_clear_error_where_n_is_needed():
    """The fits need n (landmark counts, seeds, partitions): a filtered array with NaN chunk
    sizes gets a ValueError naming the array and the fix, not a conversion error; the Gram
    matrix and the transforms do not need n and still work (scikit-learn's ``rbf_kernel`` on
    the filtered rows)."""
    X = np.random.default_rng(0).standard_normal((40, 3))
    Xd = da.from_array(X, chunks=(10, -1))
    Xu = Xd[Xd[:, 0] > -0.5]
    assert np.isnan(Xu.shape[0])
    says = r"X has an unknown number of rows .*X.compute_chunk_sizes\(\)"
    kw = dict(kernel_params={"gamma": 0.3}, random_state=0)
    for call in (
        lambda: skd.nystroem_fit(Xu, "rbf", "uniform", 5, **kw),
        lambda: skd.dac_rls_scores(Xu, "rbf", lam=0.1, **kw),
        lambda: skd.kernel_kmeans_fit(Xu, 2, n_landmarks=5, **kw),
        lambda: skd.nystrom_mmd_fit(Xu, Xd, n_landmarks=5, **kw),
    ):
        with pytest.raises(ValueError, match=says):
            call()
    with pytest.raises(ValueError, match=r"Y has an unknown number of rows"):
        skd.nystrom_mmd_fit(Xd, Xu, n_landmarks=5, **kw)
    kept = X[X[:, 0] > -0.5]
    G = skd.gram("rbf", Xu, kernel_params={"gamma": 0.3}).compute()
    np.testing.assert_allclose(G, rbf_kernel(kept, gamma=0.3), rtol=1e-12)
    ny = skd.nystroem_fit(Xd, "rbf", "uniform", 5, **kw)
    np.testing.assert_allclose(
        skd.nystroem_transform(ny, Xu).compute(), ny.transform(kept), rtol=1e-10, atol=1e-12
    )


def test_dac_rls_over_empty_chunks_scores_each_chunk_as_one_block():
    """Oracle: NumPy. With ``block_size`` at least the largest chunk, every chunk is one block
    whatever its permutation, so a row's score is diag K_c (K_c + λI)⁻¹ of its chunk c; the
    empty chunks add nothing, and the landmarks are drawn ∝ these scores."""
    from sparsekit.samplers import _draw

    X = np.random.default_rng(6).standard_normal((40, 3))
    Xd = _with_empty_chunks(X)
    lam = 0.1
    expected = []
    for lo, hi in [(0, 10), (10, 35), (35, 40)]:
        K = rbf_kernel(X[lo:hi], gamma=0.3)
        expected.append(np.diag(K @ np.linalg.inv(K + lam * np.eye(hi - lo))))
    expected = np.concatenate(expected)
    kw = dict(kernel_params={"gamma": 0.3}, random_state=3)
    scores = skd.dac_rls_scores(Xd, "rbf", lam=lam, block_size=25, **kw).compute()
    np.testing.assert_allclose(scores, expected, rtol=1e-10)
    ny = skd.nystroem_fit(
        Xd, "rbf", "dac-rls", 6, sampler_params={"lam": lam, "block_size": 25}, **kw
    )
    idx, _ = _draw.fixed_size(expected, 6, np.random.default_rng(3))
    np.testing.assert_array_equal(ny.component_indices_, idx)
