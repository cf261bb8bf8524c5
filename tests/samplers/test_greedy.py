"""Greedy residual-trace selection: exact form against brute force, sketch form, quality."""

import warnings

import numpy as np
import pytest

import sparsekit
from sparsekit.samplers import _greedy_cpu, rls as rls_module
from sparsekit.samplers.greedy import GreedyTraceSampler, greedy_exact_select, greedy_sketch_select

from .conftest import clustered


def _residual_trace(K, idx):
    idx = np.asarray(idx)
    F = K[:, idx] @ np.linalg.pinv(K[np.ix_(idx, idx)], hermitian=True) @ K[idx]
    return float(np.trace(K - F))


def _brute_force_greedy(K, n_landmarks):
    chosen = []
    for _ in range(n_landmarks):
        rest = [s for s in range(len(K)) if s not in chosen]
        chosen.append(min(rest, key=lambda s: _residual_trace(K, chosen + [s])))
    return chosen


@pytest.mark.parametrize(
    "kernel_name,params", [("rbf", {"gamma": 0.4}), ("polynomial", {"degree": 3})]
)
@pytest.mark.parametrize("row_bytes", [None, 8 * 40 * 6])
def test_exact_greedy_equals_brute_force_trace_minimization(
    monkeypatch, kernel_name, params, row_bytes
):
    if row_bytes is not None:  # rows of K streamed 6 at a time: blocks spread over 2 threads
        from sparsekit.samplers import rls

        monkeypatch.setattr(rls, "ROW_BLOCK_BYTES", row_bytes)
    X = clustered(40, d=3, seed=9)
    kernel = sparsekit.get_kernel(kernel_name, **params)
    want = _brute_force_greedy(kernel(X), 6)
    got = GreedyTraceSampler().sample(X, kernel, 6, random_state=0).indices
    np.testing.assert_array_equal(got, want)  # selection order kept
    cached = greedy_exact_select(X, kernel, 6, np.random.default_rng(0), cache_gram=True)
    np.testing.assert_array_equal(cached, want)
    parallel = greedy_exact_select(X, kernel, 6, np.random.default_rng(0), n_jobs=2)
    np.testing.assert_array_equal(parallel, want)


def test_sketch_with_exact_features_and_identity_sketch_is_the_exact_greedy():
    X = clustered(50, d=6, seed=2)
    kernel = sparsekit.get_kernel("linear")  # explicit feature map: X itself
    exact = greedy_exact_select(X, kernel, 5, np.random.default_rng(0))
    sketch = greedy_sketch_select(X, np.eye(50), 5, np.random.default_rng(0))
    np.testing.assert_array_equal(sketch, exact)


def test_greedy_stops_when_the_residual_vanishes():
    X = clustered(30, d=3, seed=1)
    kernel = sparsekit.get_kernel("linear")  # rank 3
    with pytest.warns(UserWarning, match="stopped after 3 of 5"):
        lm = GreedyTraceSampler().sample(X, kernel, 5)
    assert len(lm) == 3
    assert _residual_trace(kernel(X), lm.indices) < 1e-8 * np.trace(kernel(X))


def test_greedy_residual_trace_beats_uniform_and_the_sketch_is_close_to_exact():
    X = clustered(300, d=4, n_clusters=8, spread=0.4, seed=4)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    K = kernel(X)
    n_landmarks = 20
    exact = _residual_trace(K, GreedyTraceSampler().sample(X, kernel, n_landmarks).indices)
    approx = np.mean(
        [
            _residual_trace(
                K,
                GreedyTraceSampler(approximate=True, n_features=64, sketch_size=64)
                .sample(X, kernel, n_landmarks, random_state=s)
                .indices,
            )
            for s in range(3)
        ]
    )
    uniform = np.mean(
        [
            _residual_trace(
                K,
                sparsekit.get_sampler("uniform")
                .sample(X, kernel, n_landmarks, random_state=s)
                .indices,
            )
            for s in range(10)
        ]
    )
    assert exact <= approx < uniform
    assert approx < exact + 0.5 * (uniform - exact)


def test_approximate_greedy_needs_a_shift_invariant_vector_kernel(X_small):
    with pytest.raises(ValueError, match="rbf' or 'laplacian"):
        GreedyTraceSampler(approximate=True).sample(X_small, sparsekit.get_kernel("linear"), 5)
    lm = GreedyTraceSampler(approximate=True, n_features=32, sketch_size=16).sample(
        X_small, sparsekit.get_kernel("laplacian", gamma=0.2), 5, random_state=0
    )
    assert len(np.unique(lm.indices)) == 5


@pytest.mark.parametrize("n_landmarks", [1, 4, 9])
def test_exact_greedy_evaluates_the_kernel_n_squared_times_per_landmark(n_landmarks):
    """Oracle: a kernel function that counts the entries it returns. The exact form streams
    the n x n Gram matrix once for the first criterion and once per landmark, plus one column
    per landmark: (l + 1) n² + l n evaluations, Θ(n² l) as the guide states (it used to say
    O(n s²))."""
    n, seen = 150, []

    def rbf(A, B):
        seen.append(A.shape[0] * B.shape[0])
        return np.exp(-0.5 * ((A[:, None, :] - B[None]) ** 2).sum(-1))

    kernel = sparsekit.kernels.base.CallableKernel(rbf)
    X = clustered(n, seed=1)
    Xp = kernel.prepare(X)
    seen.clear()
    kernel.diag(Xp)  # k(x_i, x_i), read once (a function kernel evaluates its row blocks)
    diag = sum(seen)
    seen.clear()
    idx = greedy_exact_select(Xp, kernel, n_landmarks, np.random.default_rng(0))
    assert idx.size == n_landmarks
    assert sum(seen) == diag + (n_landmarks + 1) * n * n + n_landmarks * n


def test_exact_greedy_warns_above_1e10_kernel_evaluations_and_not_at_it(monkeypatch):
    """Oracle: n² s counted by hand on both sides of the documented limit (10¹⁰ kernel
    evaluations); the selection itself is replaced by a stub (the warning is decided before
    it runs). The approximate form, O(n s (f + s + ξ)), never warns."""
    from sparsekit.samplers import greedy

    monkeypatch.setattr(greedy, "greedy_exact_select", lambda Xp, k, s, *a, **kw: np.arange(s))
    n = 100_000  # n² = 10¹⁰
    X = np.zeros((n, 1))
    rbf = sparsekit.get_kernel("rbf", gamma=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GreedyTraceSampler().sample(X, rbf, 1)  # n² · 1 = 10¹⁰: at the limit, no warning
        GreedyTraceSampler().sample(X[:70_710], rbf, 2)  # 9.99997e9
    with pytest.warns(UserWarning, match=r"about n\^2 \* s = 2\.0e\+10 .*approximate=True") as w:
        GreedyTraceSampler().sample(X, rbf, 2)
    assert "show_progress" in str(w[0].message)
    assert w[0].filename == __file__  # points at the caller


def test_exact_greedy_breaks_ties_uniformly_at_random():
    """Ties of the criterion are broken uniformly at random (the poster's rule). Oracle, a
    symmetry: on the vertices of a regular hexagon every point has the same criterion
    Σ_j K_ij² / K_ii, so the first landmark is uniform over the six (loose bound over fixed
    seeds)."""
    t = 2 * np.pi * np.arange(6) / 6
    X = np.column_stack([np.cos(t), np.sin(t)])
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    Xp = kernel.prepare(X)
    first = [
        int(greedy_exact_select(Xp, kernel, 1, np.random.default_rng(s))[0]) for s in range(240)
    ]
    counts = np.bincount(first, minlength=6)
    assert counts.min() >= 20, counts


def test_exact_greedy_step_clips_a_negative_squared_norm_to_zero():
    # num[i] <- max(0, num[i] + c_i² ‖c‖² − 2 c_i (Rc)_i): a squared norm, so rounding that
    # drives the update below 0 must leave 0 (and criterion 0), not any other value
    num = np.array([1.0, 0.5])
    P = np.array([2.0, 2.0])
    c = np.array([1.0, 1.0])
    Rc = np.array([10.0, 0.1])
    crit = np.empty(2)
    _greedy_cpu.exact_step(num, P, c, Rc, 1.0, 1e-12, crit, n_jobs=1)
    np.testing.assert_allclose(num, [0.0, 1.0 + 0.5 - 0.2])
    np.testing.assert_allclose(P, [1.0, 1.0])
    np.testing.assert_allclose(crit, [0.0, 1.3])


class _CallLog:
    """Delegates to a kernel and records the (rows, cols) of every Gram block it evaluates."""

    accepts = "vectors"
    name = "call-log"

    def __init__(self, inner):
        self.inner = inner
        self.calls = []

    def prepare(self, X):
        return self.inner.prepare(X)

    def take(self, X, indices):
        return self.inner.take(X, indices)

    def n_samples(self, X):
        return self.inner.n_samples(X)

    def diag(self, X):
        return self.inner.diag(X)

    def __call__(self, A, B=None):
        self.calls.append((len(A), len(A) if B is None else len(B)))
        return self.inner(A, B)


@pytest.mark.parametrize("cache_gram", [False, True])
def test_greedy_forms_the_full_gram_only_with_cache_gram(monkeypatch, cache_gram):
    # cache_gram=False streams K in row blocks (O(n l) memory): no n x n block is evaluated
    monkeypatch.setattr(rls_module, "ROW_BLOCK_BYTES", 8 * 30 * 7)  # 7 rows per block
    X = clustered(30, d=3, seed=9)
    kernel = _CallLog(sparsekit.get_kernel("rbf", gamma=0.4))
    got = greedy_exact_select(X, kernel, 4, np.random.default_rng(0), cache_gram=cache_gram)
    full = [shape for shape in kernel.calls if shape == (30, 30)]
    assert len(full) == (1 if cache_gram else 0)
    # blocks of K against every point: 7 rows at a time when streamed
    rows_of_full_width = [rows for rows, cols in kernel.calls if cols == 30]
    assert max(rows_of_full_width) == (30 if cache_gram else 7)
    K = sparsekit.get_kernel("rbf", gamma=0.4)(X)
    # the first pick maximizes ‖K e_s‖² / K_ss (Lemma of the poster, S empty)
    assert got[0] == np.argmax(np.sum(K * K, axis=0) / np.diag(K))


def test_greedy_n_features_must_be_an_integer():
    with pytest.raises(TypeError, match="n_features"):
        GreedyTraceSampler(approximate=True, n_features=64.0)


def test_greedy_early_stop_warning_points_at_the_caller():
    X = clustered(30, d=3, seed=1)
    kernel = sparsekit.get_kernel("linear")  # rank 3: the selection stops after 3 points
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        GreedyTraceSampler().sample(X, kernel, 5)
    stopped = [w for w in caught if "stopped after 3 of 5" in str(w.message)]
    assert len(stopped) == 1
    assert stopped[0].filename == __file__
