"""Random Fourier features for the Gaussian (RBF) and Laplacian kernels (Rahimi & Recht 2008).

Bochner's theorem writes a shift-invariant kernel as k(x - z) = E_w[cos(wᵀ(x - z))] with w drawn
from the kernel's spectral density p (Giffon 2020, PhD thesis, Ch. 1, Eq. 1.17; Cherfaoui 2022,
PhD thesis, §3.1.2). With s frequencies w_1..w_s ~ p (the rows of W, stored as the columns of
``random_weights_``)::

    phi(x) = s^(-1/2) [cos(w_1ᵀx), ..., cos(w_sᵀx), sin(w_1ᵀx), ..., sin(w_sᵀx)]

so phi(x)ᵀ phi(z) = (1/s) sum_j cos(w_jᵀ(x - z)), whose expectation is exactly k(x, z).

Misprints (decided here and tested): both theses print a wrong factor. Giffon (Eq. 1.17) scales by
1/D' instead of 1/sqrt(D'); Cherfaoui (§3.1.2) scales [cos, sin] by sqrt(2/s), which makes
E[phi(x)ᵀ phi(z)] = 2 k(x, z). We use s^(-1/2) on the [cos, sin] pair, the unbiased choice.

Spectral densities, in the parameterisation of :mod:`sparsekit.kernels.rbf`:

- rbf: k = exp(-gamma ||x - z||_2^2), w ~ N(0, 2 gamma I) (gamma = 1 / (2 sigma^2) when
  ``sigma`` is given, which gives the N(0, sigma^-2 I) law of exp(-||x - z||^2 / (2 sigma^2)));
- laplacian: k = exp(-gamma ||x - z||_1) = prod_k ``exp(-gamma |x_k - z_k|)``, whose Fourier
  transform is a product of Cauchy densities: w_k ~ Cauchy(0, gamma) i.i.d.
"""

from __future__ import annotations

from .._random_features import cast_frequencies, draw_frequencies, gemm_projection
from .._typing import RandomStateLike
from ._fourier_map import FourierFeatureMap


class RandomFourierFeatures(FourierFeatureMap):
    """Random Fourier feature map of the RBF or Laplacian kernel.

    Parameters
    ----------
    kernel : {"rbf", "laplacian"} or kernel object, default "rbf"
        ``"gaussian"`` and ``"laplace"`` are aliases. A sparsekit ``RBFKernel`` /
        ``LaplacianKernel`` object may be given instead (its gamma is used; a bandwidth rule
        is resolved on the training data by a copy, the object is not modified).
    gamma : float > 0, optional
        Kernel parameter (see the module docstring); default 1 / n_features.
    sigma : float > 0, optional
        Bandwidth instead of gamma: rbf gamma = 1 / (2 sigma^2), laplacian gamma = 1 / sigma.
    n_components : int >= 1, default 100
        Number of output features: ``n_components // 2`` random frequencies each give a cos
        and a sin feature (scikit-learn's ``RBFSampler`` uses one cos with a random offset per
        feature instead; both are unbiased, the pair has lower variance). An odd width adds one
        offset cosine sqrt(2) cos(wᵀx + b), b ~ U[0, 2 pi), which keeps the map unbiased.
    random_state : None, int or numpy Generator
        Seeds the frequencies and the offset.
    n_jobs : int, optional
        Threads (Numba, BLAS and the library's pools) of each call, as
        :func:`sparsekit.thread_limit` (-1: every usable CPU); default: the setting in force.

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_features, ceil(n_components / 2))
        The frequencies w_j as columns (dtype of the training data); the last one is the
        offset cosine's when ``n_components`` is odd.
    random_offset_ : float or None
        b of the offset cosine (odd ``n_components`` only).
    gamma_ : float
    kernel_ : str
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input with string column names only)
    n_frequencies_ : int

    Notes
    -----
    Input may be a NumPy array, a pandas DataFrame or a ``scipy.sparse`` matrix (the projection
    is a sparse-dense product; nothing is densified).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).random((100, 3))
    >>> rff = RandomFourierFeatures("rbf", gamma=0.5, n_components=2000, random_state=0)
    >>> Z = rff.fit_transform(X)
    >>> K_approx = Z @ Z.T                # ≈ exp(-0.5 ||x - z||^2)
    >>> K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    >>> bool(np.abs(K_approx - K).max() < 0.1)
    True
    """

    _fitted_attribute = "random_weights_"
    _accepts_sparse = True

    def __init__(
        self,
        kernel: str | object = "rbf",
        gamma: float | None = None,
        sigma: float | None = None,
        n_components: int = 100,
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.sigma = sigma
        self.n_components = n_components
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _kernel_spec(self):
        return self.kernel

    def _draw(self, X, kernel, gamma, n_freq, rng):
        self.kernel_ = kernel
        self.random_weights_ = cast_frequencies(
            draw_frequencies(kernel, gamma, X.shape[1], n_freq, rng), X, gamma
        )

    def _projection(self, X):
        return gemm_projection(X, self.random_weights_)


__all__ = ["RandomFourierFeatures"]
