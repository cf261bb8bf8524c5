"""Fastfood: random Fourier features of the Gaussian kernel in O(n_components log d) per sample.

Le, Sarlós & Smola (2013), as presented in Giffon 2020, PhD thesis, Ch. 1, Eq. 1.19–1.20 (the
thesis' "SHGIIHB" is S H G Π H B). The dense Gaussian frequency matrix of
:class:`~sparsekit.features.rff.RandomFourierFeatures` is replaced by stacked blocks, each acting
on x zero-padded to d' = 2^ceil(log2 d)::

    V_b = (1 / (sigma sqrt(d'))) S_b H G_b Π_b H B_b,     phi(x) = s^(-1/2) [cos(V x), sin(V x)]

with H the d' x d' Walsh–Hadamard matrix (entries ±1, applied by the fast transform of
:func:`sparsekit.features._cpu.fwht_inplace`), B_b random signs, Π_b a random permutation, G_b
i.i.d. N(0, 1) and S_b[j] = c_j / ‖G_b‖_2 with c_j ~ chi(d'). Given Π_b and B_b, every
coordinate of H G_b Π_b H B_b x is N(0, d' ‖x‖²); the chi / ‖G_b‖ rescaling gives the rows the
norms of Gaussian rows, so each [V x]_j ~ N(0, ‖x‖² / sigma²) exactly, as for a dense Gaussian
frequency: E[phi(x)ᵀ phi(z)] = exp(-‖x - z‖² / (2 sigma²)) (unbiased, tested). In the gamma form
of :mod:`sparsekit.kernels.rbf`, 1 / sigma² = 2 gamma.

An odd ``n_components`` adds one offset cosine (see
:class:`~sparsekit.features.rff.RandomFourierFeatures`). The
frequencies are the first rows of ceil(n_components / (2 d')) stacked
blocks (the rows of a block are exchangeable, so the last block may be cut). Only the Gaussian
kernel is provided (the construction relies on the spherical symmetry of its spectral density).
"""

from __future__ import annotations

import numpy as np

from .._random_features import cast_frequencies, safe_projection
from .._runtime.threads import with_n_jobs
from .._typing import DataLike, RandomStateLike
from . import _cpu
from ._fourier_map import FourierFeatureMap


class Fastfood(FourierFeatureMap):
    """Fastfood random features of the RBF kernel exp(-gamma ‖x − z‖²).

    Parameters
    ----------
    gamma : float > 0, optional
        Default 1 / n_features.
    sigma : float > 0, optional
        Bandwidth instead of gamma: gamma = 1 / (2 sigma^2).
    n_components : int >= 1, default 100
        Output width: ``n_components // 2`` frequencies each give a cos and a sin feature; an
        odd width adds one offset cosine sqrt(2) cos(vᵀx + b), b ~ U[0, 2 pi) (unbiased).
    random_state : None, int or numpy Generator
        Seeds the diagonal factors, permutations and offsets.
    n_jobs : int, optional
        Threads (Numba, BLAS and the library's pools) of each call, as
        :func:`sparsekit.thread_limit` (-1: every usable CPU); default: the setting in force.

    Attributes
    ----------
    gamma_ : float
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input with string column names only)
    n_frequencies_ : int
        ceil(n_components / 2).
    random_offset_ : float or None
        b of the offset cosine (odd ``n_components`` only).
    padded_dim_ : int
        d' = smallest power of two >= n_features.
    signs_, gaussians_, scales_ : ndarrays of shape (n_blocks, d')
        B_b, G_b and the diagonal of S_b / (sigma sqrt(d')), per block.
    permutations_ : int64 ndarray of shape (n_blocks, d')
    """

    _fitted_attribute = "scales_"

    def __init__(
        self,
        gamma: float | None = None,
        sigma: float | None = None,
        n_components: int = 100,
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
    ) -> None:
        self.gamma = gamma
        self.sigma = sigma
        self.n_components = n_components
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _draw(self, X, kernel, gamma, s, rng):
        """The diagonal factors and permutations for the dimension of ``X``."""
        d = X.shape[1]
        d_pad = 1 << max(0, int(np.ceil(np.log2(d))))
        n_blocks = -(-s // d_pad)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(n_blocks, d_pad))
        perms = np.argsort(rng.random((n_blocks, d_pad)), axis=1).astype(np.int64)
        gauss = rng.standard_normal((n_blocks, d_pad))
        chi = np.sqrt(rng.chisquare(d_pad, size=(n_blocks, d_pad)))
        g_norm = np.linalg.norm(gauss, axis=1, keepdims=True)
        scales = np.sqrt(2.0 * gamma) * chi / (g_norm * np.sqrt(d_pad))
        dt = X.dtype
        self.padded_dim_ = d_pad
        self.signs_ = np.ascontiguousarray(signs, dtype=dt)
        self.permutations_ = np.ascontiguousarray(perms)
        self.gaussians_ = np.ascontiguousarray(gauss, dtype=dt)
        self.scales_ = cast_frequencies(scales, X, gamma)

    @with_n_jobs
    def project(self, X: DataLike) -> np.ndarray:
        """Compute the projections V x of every row.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        ndarray of shape (n_samples, ``n_frequencies_``)
            The projections V x of every row, in the dtype of ``X``: ``±inf`` where a
            projection of float32 data exceeds the float32 range (the features of
            :meth:`transform` are computed from the float64 projection then).

        Raises
        ------
        ValueError
            A projection exceeds the float64 range.
        """
        self._check_is_fitted()
        X = self._validate_input(X, reset=False)
        with np.errstate(over="ignore"):
            return safe_projection(self._projection(X), X).astype(X.dtype, copy=False)

    def _project_into(self, X, out):
        dt = X.dtype
        _cpu.fastfood_project(
            X,
            self.signs_.astype(dt, copy=False),
            self.permutations_,
            self.gaussians_.astype(dt, copy=False),
            self.scales_.astype(dt, copy=False),
            self.n_frequencies_,
            out,
        )

    def _projection(self, X):
        s = self.n_frequencies_

        def project(block):
            P = np.empty((block.shape[0], s), dtype=block.dtype)
            self._project_into(block, P)
            return P

        return project


__all__ = ["Fastfood"]
