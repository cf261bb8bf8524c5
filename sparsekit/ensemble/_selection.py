"""Selecting and weighting trees: the sparse problem behind OMP forest pruning.

Given the tree-prediction matrix ``T`` (one column per tree, one row per sample) and the targets
``y``, pruning to ``m`` trees solves (Cherfaoui 2022, PhD thesis, §6.2, problem (6.1); Giffon
2020, PhD thesis, §4.2)::

    alpha* = argmin_alpha  1/2 ||T alpha - y||_2^2   s.t.  ||alpha||_0 <= m

greedily, with a sparse solver of the registry on the centred, column-normalised dictionary
(the intercept is learned, as in the thesis' experiments: columns and targets are centred
first). The weights on the original tree outputs are ``w_i = alpha_i / ||t_i - mean(t_i)||``,
the intercept ``b = mean(y) - sum_i w_i mean(t_i)``.

Several targets (one-vs-rest class indicators) are stacked into one signal, each block centred
on its own (one intercept per block), so that every tree gets one weight shared by all blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls


@dataclass
class Selection:
    """Trees kept, in order of selection, and their weights on the raw tree outputs.

    Attributes
    ----------
    order : ndarray of int, shape (k,)
        Indices of the selected trees, in the order the solver picked them.
    weights : ndarray, shape (n_trees,)
        Weight of every tree of the forest on its raw output (0 outside ``order``).
    intercepts : ndarray, shape (n_blocks,)
    path : ndarray, shape (k, k)
        ``path[j, s]``: weight of tree ``order[s]`` in the solution with the first ``j + 1``
        selected trees (raw-output scale, 0 for ``s > j``).
    path_intercepts : ndarray, shape (k, n_blocks)
    """

    order: np.ndarray
    weights: np.ndarray
    intercepts: np.ndarray
    path: np.ndarray
    path_intercepts: np.ndarray


def centred_dictionary(T_blocks, y_blocks):
    """Stack the blocks after centring each one; return the unit-norm dictionary and targets.

    Returns ``(D, y, means, norms, y_means)`` where ``D`` has unit-norm columns (a constant tree,
    whose centred column is 0, keeps a zero column and can never be selected).
    """
    means = np.stack([T.mean(axis=0) for T in T_blocks])  # (n_blocks, n_trees)
    y_means = np.array([y.mean() for y in y_blocks])
    D = np.concatenate([T - mu for T, mu in zip(T_blocks, means)], axis=0)
    y = np.concatenate([t - m for t, m in zip(y_blocks, y_means)])
    norms = np.sqrt(np.einsum("ij,ij->j", D, D))
    scale = np.where(norms > 0, norms, 1.0)
    D /= scale
    return D, y, means, norms, y_means


def _raw(alpha_sel, order, norms, means, y_means):
    """Weights and intercepts on the raw tree outputs from coefficients on unit-norm columns."""
    w = alpha_sel / np.where(norms[order] > 0, norms[order], 1.0)
    intercepts = y_means - means[:, order] @ w
    return w, intercepts


def select(T_blocks, y_blocks, solver, *, n_trees, uniform, rng=None) -> Selection:
    """Run the selection and compute the weights of every prefix of the selection order.

    ``solver`` is a solver object (``solve(D, y)``), or ``"random"`` for the baseline that
    draws ``n_trees`` trees uniformly without replacement (least-squares weights). The full
    selection keeps the solver's own coefficients; the weights of a shorter prefix come from
    the solver's path (OMP with ``return_path``), non-negative least squares (NN-OMP, whose
    ``k``-step solution is exactly that) or least squares on the prefix (other solvers). With
    ``uniform`` the selected trees are averaged (weight ``1/k`` each, no intercept): the "OMP
    without weights" variant.
    """
    D, y, means, norms, y_means = centred_dictionary(T_blocks, y_blocks)
    n_total = D.shape[1]
    # a tree that predicts one constant on these samples has a zero centred column: it can only
    # shift the intercept, so it is left out of the selection
    usable = np.flatnonzero(norms > 0)
    if usable.size == 0:
        raise ValueError(
            "every tree predicts a constant on these samples: nothing to select "
            "(too few samples, or a constant target)"
        )
    nnls_weights = False
    if isinstance(solver, str):  # "random"
        order = rng.choice(n_total, size=n_trees, replace=False)
        solved_path = None
    else:
        result = solver.solve(D[:, usable], y)
        support = np.asarray(result.support)
        support = usable[support[support >= 0].astype(np.int64)]
        # a solver that may pick a tree twice (MP, Frank-Wolfe): keep first appearances
        order = support[np.sort(np.unique(support, return_index=True)[1])]
        coef = np.zeros(n_total)
        coef[usable] = result.coef
        final_alpha = coef[order]
        solved_path = result.path
        nnls_weights = getattr(solver, "name", "") == "nn-omp"
        if order.size == 0:
            raise ValueError(
                f"solver {getattr(solver, 'name', solver)!r} selected no tree: the centred "
                "targets are 0 or no tree correlates with them"
            )
    k = order.size
    path = np.zeros((k, k))
    path_b = np.zeros((k, len(y_blocks)))
    for j in range(k):
        sel = order[: j + 1]
        if uniform:
            path[j, : j + 1] = 1.0 / (j + 1)
            path_b[j] = 0.0
            continue
        if j == k - 1 and not isinstance(solver, str):
            alpha = final_alpha  # the solver's own solution
        elif solved_path is not None:
            alpha = np.asarray(solved_path[j, : j + 1], dtype=np.float64)
        elif nnls_weights:
            alpha = nnls(D[:, sel], y)[0]
        else:
            alpha = np.linalg.lstsq(D[:, sel], y, rcond=None)[0]
        path[j, : j + 1], path_b[j] = _raw(alpha, sel, norms, means, y_means)
    weights = np.zeros(n_total)
    weights[order] = path[-1]
    return Selection(
        order=order, weights=weights, intercepts=path_b[-1], path=path, path_intercepts=path_b
    )
