"""The tree selection behind OMP forest pruning (``sparsekit.ensemble._selection``) against
least squares with one intercept per block (NumPy), non-negative least squares (SciPy) and
scikit-learn's OMP."""

import numpy as np
import pytest
from scipy.optimize import nnls
from sklearn.linear_model import orthogonal_mp

from sparsekit.components import get_solver
from sparsekit.ensemble._selection import centred_dictionary, select


def _blocks(seed=0, n_trees=8, sizes=(14, 11), constant=None):
    """Tree outputs and targets of several blocks; tree ``constant`` predicts one value per
    block."""
    rng = np.random.default_rng(seed)
    T_blocks, y_blocks = [], []
    for b, n in enumerate(sizes):
        T = rng.normal(size=(n, n_trees)) + rng.normal(size=n_trees)
        if constant is not None:
            T[:, constant] = 2.0 + 3.0 * b
        y = T[:, :3] @ np.array([1.5, -0.7, 0.4]) + 0.1 * rng.normal(size=n) + 4.0 * b
        T_blocks.append(T)
        y_blocks.append(y)
    return T_blocks, y_blocks


def _ls_with_intercepts(T_blocks, y_blocks, cols):
    """Least squares of the stacked targets on the raw tree outputs ``cols`` plus one
    intercept per block: ``(weights, intercepts)``."""
    n_blocks = len(T_blocks)
    rows = []
    for b, T in enumerate(T_blocks):
        ind = np.zeros((T.shape[0], n_blocks))
        ind[:, b] = 1.0
        rows.append(np.hstack([T[:, cols], ind]))
    sol = np.linalg.lstsq(np.vstack(rows), np.concatenate(y_blocks), rcond=None)[0]
    return sol[: len(cols)], sol[len(cols) :]


def test_centred_dictionary_is_the_stacked_centred_blocks_with_unit_columns():
    T_blocks, y_blocks = _blocks(constant=5)
    D, y, means, norms, y_means = centred_dictionary(T_blocks, y_blocks)
    Dc = np.vstack([T - T.mean(0) for T in T_blocks])
    ref_norms = np.linalg.norm(Dc, axis=0)
    assert ref_norms[5] == 0.0
    np.testing.assert_allclose(norms, ref_norms, rtol=1e-12)
    np.testing.assert_allclose(
        D[:, ref_norms > 0],
        (Dc / np.where(ref_norms > 0, ref_norms, 1))[:, ref_norms > 0],
        rtol=1e-12,
    )
    np.testing.assert_array_equal(D[:, 5], 0.0)
    np.testing.assert_allclose(y, np.concatenate([t - t.mean() for t in y_blocks]), rtol=1e-12)
    np.testing.assert_allclose(means, np.stack([T.mean(0) for T in T_blocks]), rtol=1e-12)
    np.testing.assert_allclose(y_means, [t.mean() for t in y_blocks], rtol=1e-12)


def test_omp_selection_is_sklearns_and_every_prefix_is_least_squares_with_intercepts():
    T_blocks, y_blocks = _blocks(n_trees=10)
    k = 4
    sel = select(
        T_blocks,
        y_blocks,
        get_solver("omp", n_nonzero_coefs=k, return_path=True),
        n_trees=k,
        uniform=False,
    )
    D, y, *_ = centred_dictionary(T_blocks, y_blocks)
    sk_coef = orthogonal_mp(D, y, n_nonzero_coefs=k)
    assert sorted(sel.order) == sorted(np.flatnonzero(sk_coef))
    assert sel.path.shape == (k, k) and sel.path_intercepts.shape == (k, 2)
    for j in range(k):
        w, b = _ls_with_intercepts(T_blocks, y_blocks, sel.order[: j + 1])
        np.testing.assert_allclose(sel.path[j, : j + 1], w, rtol=1e-8, atol=1e-10)
        np.testing.assert_array_equal(sel.path[j, j + 1 :], 0.0)
        np.testing.assert_allclose(sel.path_intercepts[j], b, rtol=1e-8, atol=1e-10)
    weights = np.zeros(10)
    weights[sel.order] = sel.path[-1]
    np.testing.assert_array_equal(sel.weights, weights)
    np.testing.assert_array_equal(sel.intercepts, sel.path_intercepts[-1])


def test_nn_omp_prefixes_are_non_negative_least_squares_on_the_centred_trees():
    T_blocks, y_blocks = _blocks(seed=1, n_trees=9)
    k = 4
    sel = select(
        T_blocks, y_blocks, get_solver("nn-omp", n_nonzero_coefs=k), n_trees=k, uniform=False
    )
    Dc = np.vstack([T - T.mean(0) for T in T_blocks])
    yc = np.concatenate([t - t.mean() for t in y_blocks])
    means = np.stack([T.mean(0) for T in T_blocks])
    for j in range(sel.order.size):
        cols = sel.order[: j + 1]
        w = nnls(Dc[:, cols], yc)[0]  # column scaling by positive norms only rescales nnls
        np.testing.assert_allclose(sel.path[j, : j + 1], w, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(
            sel.path_intercepts[j], [t.mean() for t in y_blocks] - means[:, cols] @ w, atol=1e-8
        )
    assert (sel.weights >= 0).all()


def test_matching_pursuit_keeps_first_appearances_and_least_squares_prefixes():
    T_blocks, y_blocks = _blocks(seed=2, n_trees=6)
    solver = get_solver("mp", max_iter=12)
    D, y, *_ = centred_dictionary(T_blocks, y_blocks)
    steps = [int(s) for s in np.asarray(solver.solve(D, y).support) if s >= 0]
    first = list(dict.fromkeys(steps))
    assert len(first) < len(steps)  # MP picked some tree again
    sel = select(T_blocks, y_blocks, solver, n_trees=6, uniform=False)
    np.testing.assert_array_equal(sel.order, first)
    for j in range(len(first) - 1):
        w, b = _ls_with_intercepts(T_blocks, y_blocks, sel.order[: j + 1])
        np.testing.assert_allclose(sel.path[j, : j + 1], w, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(sel.path_intercepts[j], b, rtol=1e-8, atol=1e-10)
    # the full selection keeps MP's own coefficients (not least squares), on the raw outputs
    Dc = np.vstack([T - T.mean(0) for T in T_blocks])
    norms = np.linalg.norm(Dc, axis=0)
    yc = np.concatenate([t - t.mean() for t in y_blocks])
    coef = np.asarray(solver.solve(Dc / norms, yc).coef)
    w_mp = coef[sel.order] / norms[sel.order]
    assert not np.allclose(w_mp, _ls_with_intercepts(T_blocks, y_blocks, sel.order)[0])
    np.testing.assert_allclose(sel.path[-1], w_mp, rtol=1e-8, atol=1e-10)
    means = np.stack([T.mean(0) for T in T_blocks])
    np.testing.assert_allclose(
        sel.intercepts, [t.mean() for t in y_blocks] - means[:, sel.order] @ w_mp, atol=1e-8
    )


def test_random_baseline_draws_from_rng_with_least_squares_weights():
    T_blocks, y_blocks = _blocks(seed=3, n_trees=9)
    sel = select(
        T_blocks, y_blocks, "random", n_trees=5, uniform=False, rng=np.random.default_rng(4)
    )
    np.testing.assert_array_equal(
        sel.order, np.random.default_rng(4).choice(9, size=5, replace=False)
    )
    for j in range(5):
        w, b = _ls_with_intercepts(T_blocks, y_blocks, sel.order[: j + 1])
        np.testing.assert_allclose(sel.path[j, : j + 1], w, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(sel.path_intercepts[j], b, rtol=1e-8, atol=1e-10)


def test_uniform_weights_average_each_prefix_without_intercept():
    T_blocks, y_blocks = _blocks(seed=4)
    sel = select(
        T_blocks,
        y_blocks,
        get_solver("omp", n_nonzero_coefs=3, return_path=True),
        n_trees=3,
        uniform=True,
    )
    expected = np.tril(np.ones((3, 3))) / np.arange(1, 4)[:, None]
    np.testing.assert_array_equal(sel.path, expected)
    np.testing.assert_array_equal(sel.path_intercepts, 0.0)
    np.testing.assert_array_equal(sel.weights[sel.order], 1.0 / 3)


def test_a_constant_tree_is_never_selected():
    T_blocks, y_blocks = _blocks(seed=5, n_trees=6, constant=1)
    sel = select(T_blocks, y_blocks, get_solver("omp", n_nonzero_coefs=5), n_trees=5, uniform=False)
    assert 1 not in sel.order and sel.weights[1] == 0.0
    w, b = _ls_with_intercepts(T_blocks, y_blocks, sel.order)
    np.testing.assert_allclose(sel.weights[sel.order], w, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(sel.intercepts, b, rtol=1e-8, atol=1e-10)


def test_nothing_to_select_is_refused():
    T_blocks, y_blocks = _blocks(seed=6, n_trees=4)
    constant = [np.ones_like(T) * np.arange(4) for T in T_blocks]
    with pytest.raises(ValueError, match="every tree predicts a constant"):
        select(constant, y_blocks, get_solver("omp", n_nonzero_coefs=2), n_trees=2, uniform=False)
    flat = [np.full(len(y), 3.0) for y in y_blocks]  # centred targets are 0
    with pytest.raises(ValueError, match="selected no tree"):
        select(T_blocks, flat, get_solver("omp", n_nonzero_coefs=2), n_trees=2, uniform=False)
