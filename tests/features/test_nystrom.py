"""Nystroem: K̂ = K_{X,S} K_S⁺ K_{S,X}, parity with scikit-learn, truncation, errors, graphs."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.metrics.pairwise import rbf_kernel

from sparsekit import Nystroem, UnknownComponentError, get_kernel
from sparsekit.exceptions import NotFittedError
from sparsekit.features.nystrom import inverse_sqrt_map
from sparsekit.kernels.base import Kernel
from sparsekit.samplers.base import Landmarks


class FixedSampler:
    """Returns given landmark positions (the first n_landmarks of them)."""

    name = "fixed"
    accepts = ("vectors", "graphs")

    def __init__(self, indices):
        self.indices = np.asarray(indices)

    def sample(self, X, kernel, n_landmarks, random_state=None):
        idx = self.indices[:n_landmarks]
        return Landmarks(idx, kernel.take(X, idx), np.ones(len(idx)))


class TinyUniform(FixedSampler):
    """Uniform without replacement (a stand-in for the registered sampler)."""

    def __init__(self):
        super().__init__([])

    def sample(self, X, kernel, n_landmarks, random_state=None):
        rng = np.random.default_rng(random_state)
        idx = np.sort(rng.choice(kernel.n_samples(X), n_landmarks, replace=False))
        return Landmarks(idx, kernel.take(X, idx), np.full(len(idx), 2.0))


class VectorOnly(TinyUniform):
    name = "vector-only"
    accepts = ("vectors",)


@pytest.fixture
def X():
    return np.random.default_rng(0).normal(size=(120, 4))


def nystrom_gram(K_XS, K_S):
    return K_XS @ np.linalg.pinv(K_S, hermitian=True) @ K_XS.T


@pytest.mark.parametrize(
    "name, params",
    [
        ("rbf", {"gamma": 0.3}),
        ("laplacian", {"gamma": 0.5}),
        ("polynomial", {"degree": 2}),
        ("linear", {}),  # rank 4 < 15 landmarks: K_S is singular, the floor matters
    ],
)
def test_features_reproduce_pseudo_inverse_formula(X, name, params):
    idx = np.arange(0, 120, 8)
    ny = Nystroem(name, sampler=FixedSampler(idx), n_components=15, kernel_params=params).fit(X)
    Z = ny.transform(X)
    kern = get_kernel(name, **params)
    expected = nystrom_gram(kern(X, X[idx]), kern(X[idx]))
    np.testing.assert_allclose(Z @ Z.T, expected, rtol=1e-7, atol=1e-7 * np.abs(expected).max())
    np.testing.assert_array_equal(ny.component_indices_, idx)
    np.testing.assert_array_equal(ny.components_, X[idx])
    assert ny.n_components_ == 15 and Z.shape == (120, 15)


@pytest.mark.parametrize(
    "name, params, sk_kernel",
    [
        ("rbf", {"gamma": 0.2}, "rbf"),
        ("laplacian", {"gamma": 0.3}, "laplacian"),
        ("polynomial", {"degree": 3, "gamma": 0.5, "coef0": 1.0}, "polynomial"),
        ("chi2", {"gamma": 0.5}, "chi2"),
    ],
)
def test_equals_scikit_learn_with_same_landmarks(X, name, params, sk_kernel):
    data = np.abs(X) if name == "chi2" else X
    sk = SkNystroem(kernel=sk_kernel, n_components=30, random_state=0, **params).fit(data)
    ny = Nystroem(
        name, sampler=FixedSampler(sk.component_indices_), n_components=30, kernel_params=params
    ).fit(data)
    # same map, not only the same Gram: scikit-learn's U S^-1/2 V is the symmetric root
    np.testing.assert_allclose(ny.transform(data), sk.transform(data), rtol=1e-8, atol=1e-9)


def test_eigen_floor_drops_null_directions(X):
    # duplicate landmarks make K_S exactly singular
    idx = np.array([0, 1, 2, 0, 1])
    ny = Nystroem("rbf", sampler=FixedSampler(idx), n_components=5).fit(X)
    assert np.sum(ny.eigenvalues_ > 1e-10) == 3
    kern = get_kernel("rbf")
    Z = ny.transform(X)
    np.testing.assert_allclose(Z @ Z.T, nystrom_gram(kern(X, X[idx]), kern(X[idx])), atol=1e-8)
    # the landmarks themselves are reproduced exactly
    np.testing.assert_allclose(Z[:3] @ Z[:3].T, kern(X[:3]), atol=1e-10)
    # an explicit floor above every eigenvalue but the largest keeps a rank-1 map
    ny1 = Nystroem(
        "rbf",
        sampler=FixedSampler(idx),
        n_components=5,
        eigen_floor=float(ny.eigenvalues_[1]) * 1.0001,
    ).fit(X)
    assert np.linalg.matrix_rank(ny1.transform(X), tol=1e-8) == 1


def test_rank_truncation(X):
    idx = np.arange(0, 120, 6)
    kern = get_kernel("rbf", gamma=0.5)
    K_S = kern(X[idx])
    lam, U = np.linalg.eigh(K_S)
    lam, U = lam[::-1], U[:, ::-1]
    errors = []
    for k in (2, 5, 10, 20):
        ny = Nystroem(
            "rbf", sampler=FixedSampler(idx), n_components=20, rank=k, kernel_params={"gamma": 0.5}
        ).fit(X)
        Z = ny.transform(X)
        assert Z.shape == (120, k) and ny.n_components_ == k
        C = kern(X, X[idx]) @ U[:, :k]
        np.testing.assert_allclose(Z @ Z.T, C @ np.diag(1 / lam[:k]) @ C.T, atol=1e-8)
        errors.append(ny.approximation_error(X))
    assert errors == sorted(errors, reverse=True) and errors[-1] < errors[0]


def test_inverse_sqrt_map_is_symmetric_root():
    A = np.random.default_rng(1).normal(size=(6, 6))
    K = A @ A.T + 0.1 * np.eye(6)
    M, evals, floor = inverse_sqrt_map(K)
    np.testing.assert_allclose(M, M.T, atol=1e-12)
    np.testing.assert_allclose(M @ K @ M, np.eye(6), atol=1e-10)
    assert np.all(np.diff(evals) <= 0) and 0 < floor < 1e-10


def test_dtype_kept(X, dtype):
    Z = Nystroem("rbf", sampler=TinyUniform(), n_components=20, random_state=0).fit_transform(
        X.astype(dtype)
    )
    assert Z.dtype == dtype
    Z64 = Nystroem("rbf", sampler=TinyUniform(), n_components=20, random_state=0).fit_transform(X)
    np.testing.assert_allclose(Z @ Z.T, Z64 @ Z64.T, atol=1e-3 if dtype == np.float32 else 1e-12)


def test_blocks_equal_one_shot(X, monkeypatch):
    from sparsekit.features import nystrom

    ny = Nystroem("rbf", sampler=TinyUniform(), n_components=10, random_state=0).fit(X)
    expected = ny.transform(X)
    monkeypatch.setattr(nystrom, "BLOCK_BYTES", 200)  # 2-3 rows per block
    np.testing.assert_allclose(ny.transform(X), expected, rtol=1e-12, atol=1e-14)


def test_kernel_by_name_with_bandwidth_rule_and_object_not_mutated(X):
    ny = Nystroem(
        "gaussian",
        sampler=TinyUniform(),
        n_components=10,
        kernel_params={"bandwidth": "mean-sq-dist"},
    ).fit(X)
    assert ny.kernel_.gamma_ == pytest.approx(
        get_kernel("rbf", bandwidth="mean-sq-dist").fit(X).gamma_
    )
    user_kernel = get_kernel("rbf", bandwidth="median")
    Nystroem(user_kernel, sampler=TinyUniform(), n_components=10).fit(X)
    assert user_kernel.gamma_ is None  # the estimator fitted its own copy
    np.testing.assert_allclose(ny.landmark_weights_, 2.0)


def exact_errors(K, Z):
    R = K - Z @ Z.T
    return {
        "fro": np.linalg.norm(R),
        "spectral": np.abs(np.linalg.eigvalsh(R)).max(),
        "trace": np.trace(R),
    }, {"fro": np.linalg.norm(K), "spectral": np.linalg.norm(K, 2), "trace": np.trace(K)}


@pytest.mark.parametrize("norm", ["fro", "spectral", "trace"])
def test_approximation_error_on_all_points(X, norm):
    ny = Nystroem("rbf", sampler=TinyUniform(), n_components=15, random_state=1).fit(X)
    err, ref = exact_errors(get_kernel("rbf")(X), ny.transform(X))
    assert ny.approximation_error(X, norm=norm) == pytest.approx(err[norm], rel=1e-9)
    assert ny.approximation_error(X, norm=norm, relative=True) == pytest.approx(
        err[norm] / ref[norm], rel=1e-9
    )


@pytest.mark.parametrize("norm", ["fro", "spectral", "trace"])
def test_approximation_error_on_a_subset(X, norm):
    ny = Nystroem("laplacian", sampler=TinyUniform(), n_components=15, random_state=1).fit(X)
    idx = np.sort(np.random.default_rng(7).choice(120, 50, replace=False))
    err, _ = exact_errors(get_kernel("laplacian")(X[idx]), ny.transform(X[idx]))
    got = ny.approximation_error(X, norm=norm, n_eval=50, random_state=7)
    assert got == pytest.approx(err[norm], rel=1e-9)


def test_spectral_error_by_lanczos_streamed_and_cached(monkeypatch):
    from sparsekit.stats import approximation

    monkeypatch.setattr(approximation, "_DENSE_SPECTRAL_MAX", 100)  # Lanczos above 100 points
    X = np.random.default_rng(3).normal(size=(300, 3))
    ny = Nystroem("rbf", sampler=TinyUniform(), n_components=20, random_state=0).fit(X)
    err, _ = exact_errors(get_kernel("rbf")(X), ny.transform(X))
    cached = ny.approximation_error(X, norm="spectral")
    streamed = ny.approximation_error(X, norm="spectral", max_memory=0)
    assert cached == pytest.approx(err["spectral"], rel=1e-6)
    assert streamed == pytest.approx(err["spectral"], rel=1e-6)


class BagOfLettersKernel(Kernel):
    """A non-vector kernel for the data protocol: k(a, b) = <letter counts of a, of b>."""

    name = "bag-of-letters"
    accepts = "graphs"  # any non-array input handled only through the kernel

    def prepare(self, X):
        if not all(isinstance(s, str) for s in X):
            raise TypeError("X must be a sequence of strings")
        return list(X)

    def take(self, X, indices):
        return [X[i] for i in np.asarray(indices)]

    def n_samples(self, X):
        return len(X)

    def _counts(self, X):
        return np.array([[s.count(c) for c in "abcdefgh"] for s in X], dtype=np.float64)

    def __call__(self, X, Y=None):
        A = self._counts(X)
        return A @ (A if Y is None else self._counts(Y)).T

    def diag(self, X):
        A = self._counts(X)
        return (A * A).sum(axis=1)


def test_non_vector_data_goes_through_the_kernel_protocol(rng):
    words = ["".join(rng.choice(list("abcdefgh"), size=rng.integers(1, 9))) for _ in range(40)]
    kern = BagOfLettersKernel()
    ny = Nystroem(kern, sampler=TinyUniform(), n_components=12, random_state=0).fit(words)
    assert ny.n_features_in_ is None and isinstance(ny.components_, list)
    Z = ny.transform(words)
    S = kern.take(words, ny.component_indices_)
    np.testing.assert_allclose(Z @ Z.T, nystrom_gram(kern(words, S), kern(S)), atol=1e-8)
    assert ny.approximation_error(words, norm="trace") == pytest.approx(
        np.trace(kern(words) - Z @ Z.T), abs=1e-8
    )
    with pytest.raises(ValueError, match="needs vectors but kernel 'bag-of-letters' takes graphs"):
        Nystroem(kern, sampler=VectorOnly(), n_components=5).fit(words)


def test_errors(X):
    ny = Nystroem("rbf", sampler=TinyUniform(), n_components=10)
    with pytest.raises(NotFittedError, match="not fitted"):
        ny.transform(X)
    with pytest.raises(NotFittedError, match="not fitted"):
        ny.approximation_error(X)
    ny.fit(X)
    with pytest.raises(ValueError, match="X has 5 features, but Nystroem is expecting 4 features"):
        ny.transform(np.ones((3, 5)))
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ny.transform(bad)
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match="inf"):
        Nystroem("rbf", sampler=TinyUniform(), n_components=10).fit(bad)
    with pytest.warns(UserWarning, match="n_components=121 is larger than the number of samples"):
        Nystroem("rbf", sampler=TinyUniform(), n_components=121).fit(X)
    with pytest.raises(ValueError, match="n_components must be >= 1"):
        Nystroem("rbf", sampler=TinyUniform(), n_components=0).fit(X)
    with pytest.raises(TypeError, match="n_components must be an integer"):
        Nystroem("rbf", sampler=TinyUniform(), n_components=3.0).fit(X)
    with pytest.raises(UnknownComponentError, match="Did you mean 'rbf'"):
        Nystroem("rbff", sampler=TinyUniform()).fit(X)
    with pytest.raises(UnknownComponentError, match="unknown sampler 'no-such-sampler'"):
        Nystroem("rbf", sampler="no-such-sampler").fit(X)
    with pytest.raises(TypeError, match="kernel_params can only be given with a kernel name"):
        Nystroem(get_kernel("rbf"), sampler=TinyUniform(), kernel_params={"gamma": 1.0}).fit(X)
    with pytest.raises(ValueError, match="rank=11 must be <= n_components=10"):
        Nystroem("rbf", sampler=TinyUniform(), n_components=10, rank=11).fit(X)
    with pytest.raises(ValueError, match="eigen_floor"):
        Nystroem("rbf", sampler=TinyUniform(), n_components=10, eigen_floor=-1.0).fit(X)
    with pytest.raises(ValueError, match="unknown norm 'frobenius'"):
        ny.approximation_error(X, norm="frobenius")
    with pytest.raises(ValueError, match="n_eval"):
        ny.approximation_error(X, n_eval=0)
    with pytest.raises(ValueError, match="non-negative|negative"):
        Nystroem("chi2", sampler=TinyUniform(), n_components=5).fit(X)
    with pytest.raises(ValueError, match="empty"):
        Nystroem("rbf", sampler=TinyUniform(), n_components=1).fit(np.ones((0, 4)))


# -- with the registered samplers and the shortest-path graph kernel ------------------------


def random_graphs(n_graphs, seed=0):
    rng = np.random.default_rng(seed)
    graphs = []
    for _ in range(n_graphs):
        m = int(rng.integers(3, 8))
        A = np.triu((rng.random((m, m)) < 0.5).astype(int), 1)
        A = A + A.T
        graphs.append((A, list(rng.choice(["C", "N", "O"], size=m))))
    return graphs


def test_registered_uniform_sampler_by_name_matches_sklearn_gram(X):
    ny = Nystroem(
        "rbf", sampler="uniform", n_components=25, kernel_params={"gamma": 0.3}, random_state=0
    ).fit(X)
    assert len(np.unique(ny.component_indices_)) == 25
    # scikit-learn's own fit on exactly these landmarks: given as many rows as components it
    # keeps them all, in the order of its permutation component_indices_
    landmarks = X[ny.component_indices_]
    sk = SkNystroem(kernel="rbf", gamma=0.3, n_components=25, random_state=0).fit(landmarks)
    assert sorted(sk.component_indices_) == list(range(25))
    ours = Nystroem(
        "rbf",
        sampler=FixedSampler(ny.component_indices_[sk.component_indices_]),
        n_components=25,
        kernel_params={"gamma": 0.3},
    ).fit(X)
    np.testing.assert_allclose(ours.transform(X), sk.transform(X), rtol=1e-8, atol=1e-10)
    # the order of the landmarks permutes the features only: the same Gram either way
    Z = ny.transform(X)
    np.testing.assert_allclose(Z @ Z.T, sk.transform(X) @ sk.transform(X).T, atol=1e-10)
    with_replacement = Nystroem(
        "rbf", sampler="uniform", sampler_params={"replace": True}, n_components=100, random_state=0
    ).fit(X)
    assert with_replacement.sampler_.replace is True


@pytest.mark.parametrize(
    "sampler, params", [("uniform", {}), ("dac-rls", {"lam": 1.0}), ("rls", {"lam": 1.0})]
)
def test_shortest_path_graph_kernel(sampler, params):
    graphs = random_graphs(30)
    ny = Nystroem(
        "shortest-path", sampler=sampler, sampler_params=params, n_components=10, random_state=0
    ).fit(graphs)
    kern = get_kernel("shortest-path")
    Gp = kern.prepare(graphs)
    S = kern.take(Gp, ny.component_indices_)
    Z = ny.transform(graphs)
    expected = nystrom_gram(kern(Gp, S), kern(S))
    np.testing.assert_allclose(Z @ Z.T, expected, rtol=1e-8, atol=1e-8 * np.abs(expected).max())
    assert ny.n_features_in_ is None
    err = ny.approximation_error(graphs, norm="fro")
    assert err == pytest.approx(np.linalg.norm(kern(Gp) - Z @ Z.T), rel=1e-8)


def test_vector_only_sampler_on_graphs_names_graph_samplers():
    graphs = random_graphs(10)
    with pytest.raises(ValueError, match="Samplers that accept graphs: .*uniform"):
        Nystroem("shortest-path", sampler=VectorOnly(), n_components=3).fit(graphs)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(5, 40),
    k=st.integers(1, 5),
    gamma=st.floats(0.05, 5.0),
)
def test_property_residual_is_psd_and_landmarks_are_exact(seed, n, k, gamma):
    """K̂ ⪯ K (the Nyström residual is PSD) and K̂ equals K on the landmarks."""
    X = np.random.default_rng(seed).normal(size=(n, 3))
    k = min(k, n)
    ny = Nystroem(
        "rbf",
        sampler=TinyUniform(),
        n_components=k,
        kernel_params={"gamma": gamma},
        random_state=seed,
    ).fit(X)
    Z = ny.transform(X)
    K = get_kernel("rbf", gamma=gamma)(X)
    assert np.linalg.eigvalsh(K - Z @ Z.T).min() > -1e-8
    S = ny.component_indices_
    np.testing.assert_allclose(Z[S] @ Z[S].T, K[np.ix_(S, S)], atol=1e-8)


# -- fit_landmarks: the normalization step on landmarks chosen elsewhere -----------------------
@pytest.mark.parametrize("rank", [None, 6])
def test_fit_landmarks_reproduces_the_pseudo_inverse_formula(X, rank):
    idx = np.arange(3, 120, 9)
    kernel = get_kernel("rbf", gamma=0.3)
    S = X[idx]
    ny = Nystroem(kernel, sampler="dac-rls", rank=rank).fit_landmarks(
        Landmarks(idx, S, np.full(len(idx), 0.5))
    )
    Z = ny.transform(X)
    K_XS, K_S = kernel(X, S), kernel(S)
    if rank is None:
        np.testing.assert_allclose(Z @ Z.T, nystrom_gram(K_XS, K_S), atol=1e-8)
    else:  # the best rank-r version: K_XS U_r Λ_r^-1 U_rᵀ K_SX
        evals, U = np.linalg.eigh(K_S)
        U_r, l_r = U[:, ::-1][:, :rank], evals[::-1][:rank]
        np.testing.assert_allclose(
            Z @ Z.T, K_XS @ U_r @ np.diag(1 / l_r) @ U_r.T @ K_XS.T, atol=1e-8
        )
    np.testing.assert_array_equal(ny.component_indices_, idx)
    np.testing.assert_array_equal(ny.landmark_weights_, 0.5)
    assert ny.n_features_in_ == X.shape[1] and ny.sampler_.name == "dac-rls"
    # fit with a sampler that returns the same landmarks gives the same map
    ref = Nystroem(kernel, sampler=FixedSampler(idx), n_components=len(idx), rank=rank).fit(X)
    np.testing.assert_allclose(ny.normalization_, ref.normalization_, rtol=1e-12, atol=1e-14)


def test_fit_landmarks_rejects_bad_landmarks(X):
    ny = Nystroem("rbf")
    with pytest.raises(TypeError, match="must be a sparsekit.samplers.Landmarks"):
        ny.fit_landmarks((np.arange(3), X[:3], np.ones(3)))
    with pytest.raises(ValueError, match="invalid landmark indices"):
        ny.fit_landmarks(Landmarks(np.arange(4), X[:3], np.ones(4)))
    with pytest.raises(ValueError, match="invalid landmark indices"):
        ny.fit_landmarks(Landmarks(np.array([-1, 0, 1]), X[:3], np.ones(3)))
    with pytest.raises(ValueError, match="rank=5 must be <= n_components=3"):
        Nystroem("rbf", rank=5).fit_landmarks(Landmarks(np.arange(3), X[:3], np.ones(3)))


@pytest.mark.parametrize(
    ("diag", "eigen_floor", "rcond"),
    [((1.0, 3e-16, 0.0), None, None), ((2.0, 0.5, 0.0), 0.0, 0.0), ((2.0, 0.5, 0.0), 0.5, 0.25)],
)
def test_inverse_sqrt_map_squares_to_numpy_pinv(diag, eigen_floor, rcond):
    """M Mᵀ = K_S⁺ with NumPy's ``pinv`` rank rule as the oracle: the default floor is
    k · eps · λ_max (``pinv``'s default rcond = max(shape) · eps), and an eigenvalue equal to the
    floor is dropped (``pinv`` keeps only singular values strictly above rcond · σ_max)."""
    K_S = np.diag(diag)
    M, _, _ = inverse_sqrt_map(K_S, eigen_floor=eigen_floor)
    kw = {} if rcond is None else {"rcond": rcond}
    assert np.all(np.isfinite(M))
    np.testing.assert_allclose(M @ M.T, np.linalg.pinv(K_S, hermitian=True, **kw), atol=1e-12)


def test_n_components_equal_to_n_samples_does_not_warn():
    """Only a width above the number of samples warns (scikit-learn's ``Nystroem`` rule, the
    oracle: it warns for n_components > n_samples and is silent at equality)."""
    import warnings

    X = np.random.default_rng(0).random((12, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SkNystroem(n_components=12, random_state=0).fit(X)
        assert Nystroem("rbf", n_components=12, random_state=0).fit(X).n_components_ == 12


def test_default_n_components_is_scikit_learns(X150):
    ours = Nystroem(random_state=0).fit(X150)
    theirs = SkNystroem(random_state=0).fit(X150)
    assert ours.n_components_ == theirs.components_.shape[0] == 100


def test_transform_evaluates_the_gram_block_once_when_it_fits_64_mib(X150):
    k = 8
    blocks = []

    def rbf(A, B):
        if len(B) == k:
            blocks.append(len(A))
        return rbf_kernel(A, B, gamma=0.5)

    ny = Nystroem(rbf, n_components=k, random_state=0).fit(X150)
    blocks.clear()
    Z = ny.transform(X150)
    assert 64 * 2**20 // (8 * k) >= len(X150)  # the 150 x 8 block is far below 64 MiB
    assert blocks == [len(X150)]
    S = ny.component_indices_
    K_XS = rbf_kernel(X150, X150[S], gamma=0.5)
    expected = K_XS @ np.linalg.pinv(K_XS[S], hermitian=True) @ K_XS.T
    np.testing.assert_allclose(Z @ Z.T, expected, atol=1e-8)


def test_transform_row_blocks_are_sized_by_the_number_of_landmarks(X150, monkeypatch):
    from sparsekit.features import nystrom

    k, rank = 12, 3
    blocks = []

    def rbf(A, B):
        if len(B) == k:
            blocks.append(len(A))
        return rbf_kernel(A, B, gamma=0.5)

    ny = Nystroem(rbf, n_components=k, rank=rank, random_state=0).fit(X150)
    # K(x, S) has k columns (not the rank): 10 of its float64 rows per block
    monkeypatch.setattr(nystrom, "BLOCK_BYTES", 10 * 8 * k)
    blocks.clear()
    Z = ny.transform(X150)
    assert blocks == [10] * 15
    monkeypatch.undo()
    np.testing.assert_allclose(Z, ny.transform(X150), rtol=1e-12)


class _OutOfRangeSampler:
    name = "out-of-range"
    accepts = ("vectors", "graphs")

    def sample(self, X, kernel, n_landmarks, random_state=None):
        idx = np.arange(n_landmarks) + kernel.n_samples(X)  # past the last sample
        return Landmarks(idx, X[:n_landmarks], np.ones(n_landmarks))


def test_bad_landmark_indices_name_the_sampler_that_returned_them(X150):
    with pytest.raises(ValueError, match=r"sampler _OutOfRangeSampler returned invalid landmark"):
        Nystroem(sampler=_OutOfRangeSampler(), n_components=5).fit(X150)


def test_precomputed_gram_gives_the_pseudo_inverse_formula(X150):
    K = rbf_kernel(X150, gamma=0.4)
    ny = Nystroem("precomputed", n_components=12, random_state=0).fit(K)
    S = ny.component_indices_
    assert len(S) == 12
    Z = ny.transform(K)
    expected = K[:, S] @ np.linalg.pinv(K[np.ix_(S, S)], hermitian=True) @ K[S]
    np.testing.assert_allclose(Z @ Z.T, expected, atol=1e-8)
    # new samples: their kernel with the training samples
    Y = np.random.default_rng(1).normal(size=(7, 3))
    K_new = rbf_kernel(Y, X150, gamma=0.4)
    np.testing.assert_allclose(
        ny.transform(K_new) @ Z.T,
        K_new[:, S] @ np.linalg.pinv(K[np.ix_(S, S)], hermitian=True) @ K[S],
        atol=1e-8,
    )
    with pytest.raises(ValueError, match="square Gram matrix"):
        Nystroem("precomputed", n_components=3).fit(K[:, :20])


def test_too_many_components_warns_at_the_callers_line(X150):
    for call in (Nystroem(n_components=500).fit, Nystroem(n_components=500).fit_transform):
        with pytest.warns(UserWarning, match="larger than the number of samples") as record:
            call(X150)
        assert record[0].filename == __file__


def test_eigen_floor_below_one_drops_exactly_the_eigenvalues_at_or_below_it(X150):
    S = np.arange(0, 150, 10)  # 15 landmarks
    K_XS = rbf_kernel(X150, X150[S], gamma=0.2)
    evals, U = np.linalg.eigh(K_XS[S])
    below_one = np.flatnonzero((evals > 1e-3) & (evals < 1.0))
    assert below_one.size >= 2
    floor = float(np.sqrt(evals[below_one[0]] * evals[below_one[1]]))  # between the two, < 1
    keep = evals > floor
    expected = (K_XS @ U[:, keep]) / evals[keep] @ (U[:, keep].T @ K_XS.T)
    for eigen_floor, kept in ((floor, keep), (0.0, evals > 0.0)):
        ny = Nystroem(kernel_params={"gamma": 0.2}, eigen_floor=eigen_floor)
        ny.fit_landmarks(Landmarks(S, X150[S], np.ones(len(S))))
        Z = ny.transform(X150)
        assert np.linalg.matrix_rank(ny.normalization_) == kept.sum()
        if eigen_floor > 0:
            np.testing.assert_allclose(Z @ Z.T, expected, atol=1e-8)
    with pytest.raises(ValueError, match="eigen_floor"):
        Nystroem(eigen_floor=-0.5).fit(X150)
